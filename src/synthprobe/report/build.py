"""``synthprobe report``: results JSON files → one self-contained HTML page, PNGs, leaderboard.

Output folder::

    index.html             the page: CSS inline, every figure embedded as base64 PNG, no
                           scripts, nothing fetched; opens offline
    leaderboard.md         the card's table (Model, Params, Deep, soft, d2–d5, ArithMark-3, Δ, p)
    depth_curve.png        acc_norm per depth per model, 95 % Wilson intervals, chance line
    template_heatmap.png   template × model acc_norm
    mistake_profile.png    per template, the pick rate of each named mistake when offered
    rank_preference.png    share of picks by numeric rank of the options

Same inputs → byte-identical files: no time stamps anywhere, PNG metadata stripped.
Every input is read and validated before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from synthprobe.errors import InputError
from synthprobe.export._files import write_tree
from synthprobe.report import leaderboard, page, plots
from synthprobe.report.model import ModelResult
from synthprobe.report.results import load_results

FIGURES = ("depth_curve", "template_heatmap", "mistake_profile", "rank_preference")


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder; expected an output folder", path=out, field="--out")


def unique_names(results: list[ModelResult]) -> list[ModelResult]:
    """Two rows with the same model name are told apart by their source."""
    from dataclasses import replace

    counts: dict[str, int] = {}
    for r in results:
        counts[r.model] = counts.get(r.model, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for r in results:
        if counts[r.model] > 1:
            seen[r.model] = seen.get(r.model, 0) + 1
            r = replace(r, model=f"{r.model} ({Path(r.source).name}#{seen[r.model]})")
        out.append(r)
    return out


def render_files(results: Sequence[ModelResult], *, sources: Sequence[str],
                 title: str | None = None, progress: bool | None = None) -> dict[str, bytes]:
    """Relative path → bytes for every output file."""
    from tqdm.auto import tqdm

    # one order everywhere (page, plots, legend): the leaderboard's, largest model first
    results = leaderboard.ordered(unique_names(list(results)))
    chances = {round(r.chance, 9) for r in results}
    if len(chances) > 1:
        raise InputError(f"results mix tasks with different chance levels ({sorted(chances)}); "
                         "report one task at a time")
    makers = {"depth_curve": plots.depth_curve, "template_heatmap": plots.template_heatmap,
              "mistake_profile": plots.mistake_profile, "rank_preference": plots.rank_preference}
    figures: dict[str, bytes | None] = {}
    for name in tqdm(FIGURES, desc="report figures", unit="fig", disable=None if progress is None
                     else not progress):
        figures[name] = makers[name](results)
    files: dict[str, bytes] = {}
    files["index.html"] = page.render(results, figures, sources=sources,
                                      title=title or page.DEFAULT_TITLE).encode("utf-8")
    files["leaderboard.md"] = leaderboard.markdown(results, title=title or leaderboard.DEFAULT_TITLE).encode("utf-8")
    for name, png in figures.items():
        if png is not None:
            files[f"{name}.png"] = png
    return files


def build_report(paths: Sequence[str | Path], out: str | Path, *, title: str | None = None,
                 progress: bool | None = None) -> list[Path]:
    """Read every results file, then write the report folder; returns the written paths."""
    out = Path(out)
    _check_out(out)
    if not paths:
        raise InputError("expected at least one results JSON file")
    results: list[ModelResult] = []
    for p in paths:
        results += load_results(p)
    files = render_files(results, sources=[str(p) for p in paths], title=title, progress=progress)
    return write_tree(out, files)
