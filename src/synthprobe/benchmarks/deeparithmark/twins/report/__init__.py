"""The perturbation twins' section of the report (``synthprobe probe twins`` results), a section
Deep Arithmark owns (:mod:`synthprobe.report.sections`; its ``sections`` part): ``read`` checks
the block, ``figures`` draws ``twins.png`` (the paired difference per kind and depth) and
``twins_uptake.png`` (the irrelevant-number uptake), ``section`` writes the HTML and the
leaderboard.md part, ``items`` gives the item viewer the twins beside their originals.

The section appears only when an input file holds a ``twins`` block."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from synthprobe.benchmarks.deeparithmark.twins.report.read import parse

# No function here is named after a submodule (``section``, ``figures``, ``items``, ``read``):
# a submodule's first import sets the package attribute of its name and would replace it.

__all__ = [
    "AFTER",
    "KEY",
    "SHORT_TITLE",
    "TITLE",
    "draw",
    "markdown_body",
    "page_sections",
    "parse",
    "settings_table",
    "summary",
]

KEY = "twins"
#: shown after the per-step probe (synthprobe.report.sections)
AFTER = "steps"
TITLE = "Perturbation twins: does the answer survive a change that should not matter?"
SHORT_TITLE = "Perturbation twins"


def summary(results: Sequence) -> str:
    return f"Perturbation twins: {len(results)} model{'s' if len(results) != 1 else ''}"


def draw(results: Sequence) -> list:
    """``(name, make)`` per figure: ``twins.png`` always, ``twins_uptake.png`` when some
    irrelevant_clause twin was picked wrong."""
    from synthprobe.benchmarks.deeparithmark.twins.report import figures

    out = [(KEY, lambda: figures.difference_plot(results))]
    if figures.has_uptake(results):
        out.append((figures.UPTAKE, lambda: figures.uptake_plot(results)))
    return out


def page_sections(results: Sequence, figures: Mapping, *, alone: bool = True) -> list[tuple[str, str, str]]:
    from synthprobe.benchmarks.deeparithmark.twins.report.section import section as render

    return [(KEY, TITLE, render(results, figures))]


def settings_table(results: Sequence) -> str:
    from synthprobe.benchmarks.deeparithmark.twins.report.section import settings_table as render

    return render(results)


def markdown_body(results: Sequence) -> str:
    from synthprobe.benchmarks.deeparithmark.twins.report.section import markdown_body as render

    return render(results)
