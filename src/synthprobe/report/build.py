"""``synthprobe report``: results JSON files → one self-contained HTML page, PNGs, leaderboard.

The inputs may be Deep Arithmark results (``synthprobe score deeparithmark``), GPT-3
synthetic-task results (``synthprobe score gpt3``) or a mix. Output folder::

    index.html             the page: CSS inline, every figure embedded as base64 PNG, no
                           scripts, nothing fetched; opens offline
    leaderboard.md         the card's table (Model, Params, Deep, soft, d2–d5, ArithMark-3, Δ, p),
                           and the GPT-3 table (task × setting, one column per model, the paper's
                           figures per GPT-3 size) when GPT-3 files are given
    depth_curve.png        the primary metric (acc_norm; accuracy for generated answers) per
                           depth per model, 95 % Wilson intervals, chance line
    template_heatmap.png   template × model acc_norm
    mistake_profile.png    per template, the pick rate of each named mistake when offered
    rank_preference.png    share of picks by numeric rank of the options
    comparison.png         the paired differences (B − A with its 95 % interval, per pair and
                           depth or task) when two models were scored on the same items
    gpt3_curves.png        per GPT-3 task: each model's accuracy (95 % CI) against the paper's
                           curves over GPT-3 sizes
    items.html             the item viewer (:mod:`synthprobe.report.viewer`), when a file holds saved
                           predictions: every scored item of every model, filters, one item
                           opened with its prompt, endings, log-likelihoods and named mistakes;
                           its data embedded as JSON, a small script of our own, nothing fetched
    steps.png              per-step probe (``synthprobe probe steps``): step × depth, isolation
                           vs chain per operation, first broken step
    validity.png           ``synthprobe validate`` (a ``validity`` section): adversary accuracy
                           against training size with chance's interval and the positive
                           controls, learnability, training loss, leave-one-family-out bars

A results file written by ``synthprobe sweep`` adds a "Sweep" section (page and leaderboard.md):
per model the mean and sd of acc_norm across seeds and the rank agreement between seeds.

The four Deep Arithmark figures are written only with Deep Arithmark inputs, gpt3_curves.png
only with GPT-3 inputs. A file written by ``synthprobe contamination`` adds a Contamination
section (contaminated share per task, clean-subset scores) to the page;
steps.png only with per-step probe inputs. A file written by ``synthprobe validate`` adds a
Validity section (:mod:`synthprobe.report.validity`) and validity.png.

Same inputs → byte-identical files: no time stamps anywhere, PNG metadata stripped.
Every input is read and validated before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.write import check_output_dir, write_tree
from synthprobe.report import extras as extra_sections
from synthprobe.report import page, viewer
from synthprobe.report.format import ordered
from synthprobe.report.model import Gpt3Result, ModelResult
from synthprobe.report.reader import parse, read_document

FIGURES = ("depth_curve", "template_heatmap", "mistake_profile", "rank_preference")
GPT3_FIGURES = ("gpt3_curves",)


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder; expected an output folder", path=out, field="--out")


def unique_names(results: list) -> list:
    """Two rows with the same model name are never merged: each is shown with its results file's
    name (its path when the file names agree too, and ``#k`` when one file holds the name twice),
    as the paired comparison (:func:`synthprobe.report.compare.display_names`) shows them; for
    Deep Arithmark model rows and GPT-3 results alike."""
    from dataclasses import replace

    from synthprobe.report.compare import Outcomes, display_names

    family = "gpt3" if results and not hasattr(results[0], "overall") else "deeparithmark"
    shown = display_names([Outcomes(family, (), r.model, r.source) for r in results])
    counts: dict[tuple[str, str], int] = {}
    for r in results:
        counts[(r.model, r.source)] = counts.get((r.model, r.source), 0) + 1
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in results:
        name = shown[(family, r.model, r.source)]
        if counts[(r.model, r.source)] > 1:
            seen[(r.model, r.source)] = seen.get((r.model, r.source), 0) + 1
            inner = name[:-1] if name.endswith(")") and name != r.model else f"{name} ({Path(r.source).name}"
            name = f"{inner}#{seen[(r.model, r.source)]})"
        out.append(replace(r, model=name) if name != r.model else r)
    return out


def default_leaderboard_title(
    results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result], extras: extra_sections.Extras | None = None
) -> str:
    if not results and not gpt3 and extra_sections.only_title(extras):
        return extra_sections.only_title(extras)
    if results and gpt3:
        return "Deep Arithmark and GPT-3 synthetic tasks leaderboard"
    if results:
        return extra_sections.leaderboard("deeparithmark", "table").DEFAULT_TITLE
    return "GPT-3 synthetic tasks leaderboard"


def markdown(
    results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result], title: str, extras: extra_sections.Extras | None = None
) -> str:
    """leaderboard.md: the Deep Arithmark table, the GPT-3 table, or both under their own headings;
    then the part of each extra section (:mod:`synthprobe.report.extras`) that has one."""
    parts = [f"# {title}\n"]
    if results:
        parts.append(
            ("## Deep Arithmark\n\n" if gpt3 else "")
            + extra_sections.leaderboard("deeparithmark", "table").markdown_body(results)
        )
    if gpt3:
        parts.append(
            ("## GPT-3 synthetic tasks\n\n" if results else "")
            + extra_sections.leaderboard("gpt3", "table").markdown_body(gpt3)
        )
    for mod, items in extra_sections.present(extras):
        body = getattr(mod, "markdown_body", None)
        if body is not None:
            parts.append((f"## {mod.TITLE}\n\n" if len(parts) > 1 else "") + body(items))
    return "\n".join(parts)


def render_files(
    results: Sequence[ModelResult],
    *,
    sources: Sequence[str],
    title: str | None = None,
    progress: bool | None = None,
    gpt3: Sequence[Gpt3Result] = (),
    extras: extra_sections.Extras | None = None,
    runs: Sequence[viewer.Run] = (),
    data_files: Sequence[Path] = (),
) -> dict[str, bytes]:
    """Relative path → bytes for every output file. ``runs``: saved predictions for the item
    viewer (``items.html``, written only when there are some); ``data_files``: where to look
    first for the data files they name (``synthprobe report --data``)."""
    from tqdm.auto import tqdm

    if not results and not gpt3 and not extra_sections.present(extras):
        raise InputError("expected at least one results JSON file")
    # named apart per benchmark, as the leaderboards are; a model's runs of several benchmarks share its name
    by_benchmark: dict[str, list[viewer.Run]] = {}
    for r in runs:
        by_benchmark.setdefault(r.benchmark, []).append(r)
    runs = [r for group in by_benchmark.values() for r in unique_names(group)]
    # one order everywhere (page, plots, legend): the leaderboard's, largest model first
    results = ordered(unique_names(list(results)))
    gpt3 = ordered(unique_names(list(gpt3)))
    chances = {round(r.chance, 9) for r in results}
    if len(chances) > 1:
        raise InputError(
            f"results mix tasks with different chance levels ({sorted(chances)}); report one task at a time"
        )
    plots = extra_sections.leaderboard("deeparithmark", "figures")
    gpt3_figures = extra_sections.leaderboard("gpt3", "figures")
    makers = {
        "depth_curve": plots.depth_curve,
        "template_heatmap": plots.template_heatmap,
        "mistake_profile": plots.mistake_profile,
        "rank_preference": plots.rank_preference,
    }
    todo = [(name, lambda f=makers[name]: f(results)) for name in FIGURES if results]
    todo += [("gpt3_curves", lambda: gpt3_figures.gpt3_curves(gpt3))] if gpt3 else []
    todo += [
        (mod.KEY, lambda m=mod, its=its: m.figure(its))
        for mod, its in extra_sections.present(extras)
        if hasattr(mod, "figure")
    ]
    figures: dict[str, bytes | None] = {}
    for name, make in tqdm(todo, desc="report figures", unit="fig", disable=None if progress is None else not progress):
        figures[name] = make()
    files: dict[str, bytes] = {}
    page_title = title or page.default_title(results, gpt3, extras)
    items_page = None
    if runs:
        data = viewer.viewer_data(runs, data_files=data_files, title=page_title)
        files[viewer.PAGE] = viewer.render_data(data, css=page.CSS).encode("utf-8")
        items_page = (viewer.PAGE, *viewer.counts(data))  # every model's answers, of every benchmark
    files["index.html"] = page.render(
        results, figures, sources=sources, title=page_title, gpt3=gpt3, extras=extras, items_page=items_page
    ).encode("utf-8")
    files["leaderboard.md"] = markdown(
        results, gpt3, title or default_leaderboard_title(results, gpt3, extras), extras
    ).encode("utf-8")
    for name, png in figures.items():
        if png is not None:
            files[f"{name}.png"] = png
    return files


def build_report(
    paths: Sequence[str | Path],
    out: str | Path,
    *,
    title: str | None = None,
    progress: bool | None = None,
    overwrite: bool = False,
    tables: Sequence[str] = (),
    data_files: Sequence[str | Path] = (),
) -> list[Path]:
    """Read every results file (Deep Arithmark or GPT-3 synthetic tasks, in any mix), then write
    the report folder; returns the written paths. A folder that already holds a report file is
    refused unless ``overwrite``; a results file among the outputs always is. ``tables``: also
    write the paper-ready tables (:mod:`synthprobe.report.tables`) in these formats (``csv``,
    ``latex``, ``markdown``) under ``tables/``. ``data_files``: item files the item viewer takes
    prompts from (matched by SHA-256), before the paths the results files record."""
    out = Path(out)
    _check_out(out)
    inputs = [(p, "RESULTS.json") for p in paths] + [(p, "--data") for p in data_files]
    for p in data_files:
        if not Path(p).is_file():
            raise InputError(
                "does not exist or is not a file; expected a Deep Arithmark JSONL data file", path=p, field="--data"
            )
    check_output_dir(out, ["index.html", "leaderboard.md", viewer.PAGE], inputs, overwrite=overwrite)
    if not paths:
        raise InputError("expected at least one results JSON file")
    results: list[ModelResult] = []
    gpt3: list[Gpt3Result] = []
    docs = [read_document(p) for p in paths]
    for doc in docs:
        deep, g = parse(doc)
        results += deep
        gpt3 += g
    extras = extra_sections.collect(docs)
    files = render_files(
        results,
        sources=[str(p) for p in paths],
        title=title,
        progress=progress,
        gpt3=gpt3,
        extras=extras,
        runs=viewer.collect(docs),
        data_files=[Path(p) for p in data_files],
    )
    if tables:
        from synthprobe.report import tables as paper_tables

        # each benchmark's report items, for its `tables` part: the two leaderboards' rows, then
        # what the sections parsed (those of registered benchmarks have their names)
        items = {
            "deeparithmark": ordered(unique_names(list(results))),
            "gpt3": ordered(unique_names(list(gpt3))),
            **extras,
        }
        files.update(paper_tables.files(items, list(dict.fromkeys(tables))))
    return write_tree(out, files, inputs=inputs, overwrite=overwrite)
