"""The GPT-3 synthetic tasks' report part: their section of the page, in the protocol of
:mod:`synthprobe.report.sections` (a leaderboard: one column per scored model beside the paper's
sizes), with its reader (:mod:`.read`), table (:mod:`.table`, :mod:`.section`) and figure
(:mod:`.figures`), each imported only when the report asks for it."""

from __future__ import annotations

from collections.abc import Sequence

KEY = "gpt3"
TITLE = "GPT-3 synthetic tasks"
#: its items are model results: named apart and ordered by the report, its section headed when
#: another benchmark's leaderboard is on the page
LEADERBOARD = True
#: its figure, written as gpt3_curves.png
FIGURE = "gpt3_curves"
#: its rules for the page's style sheet (its table's cells hold several lines)
CSS = "table.gpt3 td { vertical-align: top; }"


def parse(results) -> list:
    """Every model's GPT-3 results of one read results document."""
    from synthprobe.benchmarks.gpt3.report.read import parse as read

    return read(results)


def ordered(items: Sequence) -> list:
    """Largest model first (the paper's sizes are ordered by size), unknown sizes last."""
    from synthprobe.report.format import ordered as by_size

    return by_size(items)


def draw(items: Sequence) -> list:
    """``[(FIGURE, make)]``: per task, each model's accuracy against the paper's curves."""
    from synthprobe.benchmarks.gpt3.report.figures import gpt3_curves

    return [(FIGURE, lambda: gpt3_curves(items))]


def page_sections(items: Sequence, figures: dict, *, alone: bool) -> list[tuple[str, str, str]]:
    from synthprobe.benchmarks.gpt3.report.section import section

    return [(KEY, TITLE, section(items, figures.get(FIGURE)))]


def summary(items: Sequence, *, alone: bool) -> str:
    """Its phrase of the page's subtitle: models and task × setting rows."""
    from synthprobe.benchmarks.gpt3.report.table import lines

    rows = len(lines(items))
    return (
        f"GPT-3 synthetic tasks: {len(items)} model{'s' if len(items) != 1 else ''} · "
        f"{rows} task × setting row{'s' if rows != 1 else ''}"
    )


def settings_table(items: Sequence) -> str:
    from synthprobe.benchmarks.gpt3.report.section import settings_table as table

    return table(items)


def markdown_body(items: Sequence) -> str:
    from synthprobe.benchmarks.gpt3.report.table import markdown_body as body

    return body(items)


def sweep_counts(reader, entry, task: str) -> tuple[int, int, str, str]:
    """A sweep job's score (``synthprobe.report.sweep``): the one row of its task, correct of n, and where."""
    block = entry.results.get(KEY)
    if block is None:
        raise reader.fail(f"{entry.at('results')}.{KEY}", f"missing; the sweep entry names task {task!r}")
    rows = reader.get(block.data, "rows", block.where, list)
    if len(rows) != 1 or not isinstance(rows[0], dict):
        raise reader.fail(f"{block.where}.rows", "expected the one row of the sweep job's task")
    at = f"{block.where}.rows[0]"
    return reader.get(rows[0], "correct", at, int), reader.get(rows[0], "n", at, int), "accuracy", at
