"""The per-step probe's section of the report (``synthprobe probe steps`` results), registered in
:mod:`synthprobe.report.sections`: ``read`` checks the block, ``figures`` draws ``steps.png``,
``section`` writes the HTML."""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from synthprobe.benchmarks.deeparithmark.step_probe.report.read import parse

# Load the renderer submodule ``section`` now: its first import sets the package attribute
# ``section`` to the module, which would replace the function of that name defined below if it
# happened later (the second report built in one process then failed: 'module' object is not
# callable).
importlib.import_module("synthprobe.benchmarks.deeparithmark.step_probe.report.section")

__all__ = ["KEY", "TITLE", "SHORT_TITLE", "parse", "figure", "section", "settings_table", "summary", "markdown_body"]

KEY = "steps"
#: shown after the paired comparison of models (synthprobe.report.sections)
AFTER = "comparison"
TITLE = "Per-step probe: where the chain breaks"
SHORT_TITLE = "Per-step probe"


def summary(results: Sequence) -> str:
    return f"Per-step probe: {len(results)} model{'s' if len(results) != 1 else ''}"


def figure(results: Sequence) -> bytes | None:
    from synthprobe.benchmarks.deeparithmark.step_probe.report.figures import steps_plots

    return steps_plots(results)


def section(results: Sequence, figure: bytes | None = None) -> str:
    from synthprobe.benchmarks.deeparithmark.step_probe.report.section import section as render

    return render(results, figure)


def settings_table(results: Sequence) -> str:
    from synthprobe.benchmarks.deeparithmark.step_probe.report.section import settings_table as render

    return render(results)


def markdown_body(results: Sequence) -> str:
    """Each model's step × depth table."""
    from synthprobe.benchmarks.deeparithmark.step_probe.metrics import step_depth_markdown

    return "\n".join(
        f"### {r.model}\n\nChain accuracy % by step × depth (isolation in brackets), "
        f"log-likelihood choice, {r.summary['probes']} probes from {r.summary['items']} items.\n\n"
        + step_depth_markdown(r.summary)
        + "\n"
        for r in results
    )
