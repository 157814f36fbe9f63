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
Validity section (:mod:`synthprobe.validity.report`) and validity.png.

Same inputs → byte-identical files: no time stamps anywhere, PNG metadata stripped.
Every input is read and validated before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.write import check_output_dir, write_tree
from synthprobe.report import page, viewer
from synthprobe.report import sections as parts
from synthprobe.report.reader import check, read_document


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder; expected an output folder", path=out, field="--out")


def default_leaderboard_title(extras: parts.Extras | None) -> str:
    """leaderboard.md's title: after the leaderboards in it, else its first section's short title."""
    return parts.default_title(extras, "leaderboard", bare=True)


def markdown(extras: parts.Extras, title: str) -> str:
    """leaderboard.md: each present section's part (its ``markdown_body``), in page order; a
    leaderboard is headed with its short title when another is in the file, any other section
    with its title when something comes before it."""
    shown = parts.present(extras)
    alone = len(parts.leaderboards(shown)) <= 1
    out = [f"# {title}\n"]
    for mod, items in shown:
        body = getattr(mod, "markdown_body", None)
        if body is None:
            continue
        if parts.is_leaderboard(mod):
            heading = "" if alone else f"## {parts.short_title(mod)}\n\n"
        else:
            heading = f"## {mod.TITLE}\n\n" if len(out) > 1 else ""
        out.append(heading + body(items))
    return "\n".join(out)


def render_files(
    extras: parts.Extras,
    *,
    sources: Sequence[str],
    title: str | None = None,
    progress: bool | None = None,
    runs: Sequence[viewer.Run] = (),
    data_files: Sequence[Path] = (),
) -> dict[str, bytes]:
    """Relative path → bytes for every output file, from every section's items (``extras``:
    section KEY → items, as :func:`synthprobe.report.sections.collect` gives them). ``runs``:
    saved predictions for the item viewer (``items.html``, written only when there are some);
    ``data_files``: where to look first for the data files they name (``synthprobe report --data``)."""
    from tqdm.auto import tqdm

    shown = parts.present(extras)
    if not shown:
        raise InputError("expected at least one results JSON file")
    # named apart per benchmark, as the leaderboards are; a model's runs of several benchmarks share its name
    by_benchmark: dict[str, list[viewer.Run]] = {}
    for r in runs:
        by_benchmark.setdefault(r.benchmark, []).append(r)
    runs = [r for name, group in by_benchmark.items() for r in parts.unique_names(group, name)]
    todo = [made for mod, items in shown for made in parts.figure_makers(mod, items)]
    figures: dict[str, bytes | None] = {}
    for name, make in tqdm(todo, desc="report figures", unit="fig", disable=None if progress is None else not progress):
        figures[name] = make()
    files: dict[str, bytes] = {}
    page_title = title or page.default_title(extras)
    items_page = None
    if runs:
        data = viewer.viewer_data(runs, data_files=data_files, title=page_title)
        files[viewer.PAGE] = viewer.render_data(data, css=page.css()).encode("utf-8")
        items_page = (viewer.PAGE, *viewer.counts(data))  # every model's answers, of every benchmark
    files["index.html"] = page.render(extras, figures, sources=sources, title=page_title, items_page=items_page).encode(
        "utf-8"
    )
    files["leaderboard.md"] = markdown(extras, title or default_leaderboard_title(extras)).encode("utf-8")
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
    docs = [read_document(p) for p in paths]
    for doc in docs:
        check(doc)
    extras = parts.collect(docs)
    files = render_files(
        extras,
        sources=[str(p) for p in paths],
        title=title,
        progress=progress,
        runs=viewer.collect(docs),
        data_files=[Path(p) for p in data_files],
    )
    if tables:
        from synthprobe.report import tables as paper_tables

        # each section's items for its benchmark's `tables` part (a leaderboard's rows as shown)
        files.update(paper_tables.files(extras, list(dict.fromkeys(tables))))
    return write_tree(out, files, inputs=inputs, overwrite=overwrite)
