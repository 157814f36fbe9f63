"""Deep Arithmark's report part: its section of the page, in the protocol of
:mod:`synthprobe.report.sections` (a leaderboard: one row per scored model), with its reader
(:mod:`.read`), tables (:mod:`.table`, :mod:`.section`) and figures (:mod:`.figures`), each
imported only when the report asks for it."""

from __future__ import annotations

from collections.abc import Sequence

KEY = "deeparithmark"
TITLE = "Deep Arithmark"
#: its items are model rows: named apart and ordered by the report, its section headed when
#: another benchmark's leaderboard is on the page
LEADERBOARD = True
#: the figures it draws, in order, each written as NAME.png
FIGURES = ("depth_curve", "template_heatmap", "mistake_profile", "rank_preference")


def parse(results) -> list:
    """Every model's Deep Arithmark row of one read results document."""
    from synthprobe.benchmarks.deeparithmark.report.read import parse as read

    return read(results)


def ordered(items: Sequence) -> list:
    """The leaderboard's order: best primary score first."""
    from synthprobe.benchmarks.deeparithmark.report import order

    return order.ordered(items)


def check(items: Sequence) -> None:
    """Rows of different chance levels (4- and 5-way files) are not one leaderboard."""
    from synthprobe.errors import InputError

    chances = {round(r.chance, 9) for r in items}
    if len(chances) > 1:
        raise InputError(
            f"results mix tasks with different chance levels ({sorted(chances)}); report one task at a time"
        )


def draw(items: Sequence) -> list:
    """``(name, make)`` for each of :data:`FIGURES`; ``make()`` draws it (PNG bytes, or None)."""
    from synthprobe.benchmarks.deeparithmark.report import figures as plots

    def maker(name: str):
        return lambda: getattr(plots, name)(items)

    return [(name, maker(name)) for name in FIGURES]


def page_sections(items: Sequence, figures: dict, *, alone: bool) -> list[tuple[str, str, str]]:
    """Its sections of the page (leaderboard, depth, templates, mistakes, ...)."""
    from synthprobe.benchmarks.deeparithmark.report.section import sections

    shown = sections(items, figures)
    if shown and not alone:
        shown[0] = (shown[0][0], "Deep Arithmark leaderboard", shown[0][2])
    return shown


def _scored_on(items: Sequence) -> tuple[list[int], list[str]]:
    """The item counts and the data files' SHA-256 the rows were scored on."""
    return sorted({r.overall.n for r in items}), sorted({r.settings.get("dataset SHA-256", "") for r in items} - {""})


def summary(items: Sequence, *, alone: bool) -> str:
    """Its phrase of the page's subtitle: models, items, chance, the data files' SHA-256."""
    from synthprobe.report.format import fmt_pct

    n_items, datasets = _scored_on(items)
    sub = (
        ("" if alone else "Deep Arithmark: ")
        + f"{len(items)} model{'s' if len(items) != 1 else ''} · "
        + f"{', '.join(f'{n:,}' for n in n_items)} items"
        + (
            f" · chance {fmt_pct(items[0].chance, 0, ' %')}"
            if any(r.has_chance for r in items)
            else " · no chance level (free)"
        )
    )
    if datasets:
        sub += " · data SHA-256 " + ", ".join(f"{d[:12]}…" for d in datasets)
    return sub


def one_test_set(items: Sequence) -> bool:
    """Whether every row was scored on one data file and one number of items."""
    n_items, datasets = _scored_on(items)
    return len(datasets) <= 1 and len(n_items) <= 1


def settings_table(items: Sequence) -> str:
    from synthprobe.benchmarks.deeparithmark.report.section import settings_table as table

    return table(items)


def markdown_body(items: Sequence) -> str:
    from synthprobe.benchmarks.deeparithmark.report.table import markdown_body as body

    return body(items)


def sweep_counts(reader, entry, task: str) -> tuple[int, int, str, str]:
    """A sweep job's score (``synthprobe.report.sweep``): its primary metric's (acc_norm, or accuracy
    for generated answers) correct and total, the metric, and where they are."""
    from synthprobe.results import primary_metric

    block = entry.results.get(task)
    if block is None:
        raise reader.fail(f"{entry.at('results')}.{task}", f"missing; the sweep entry names task {task!r}")
    where = f"{block.where}.summary"
    summary = reader.get(block.data, "summary", block.where, dict)
    metrics = reader.get(summary, "metrics", where, dict)
    metric = primary_metric(summary)
    metric = metric if metric in metrics else "acc_norm"
    acc = reader.get(metrics, metric, f"{where}.metrics", dict)
    at = f"{where}.metrics.{metric}"
    return reader.get(acc, "correct", at, int), reader.get(acc, "total", at, int), metric, at
