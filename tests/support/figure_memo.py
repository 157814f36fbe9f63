"""The report's figures, drawn once per test process for each distinct input.

A report figure is a function of the results it is given alone: matplotlib's default style inside
an rc context, a fixed DPI, no time stamp in the PNG (synthprobe/report/figures.py). Many tests
render reports of the same committed results, and redrawing the same figures was about a tenth of
the CPU time of `make check`. So while a test runs, each figure function of :data:`FUNCTIONS`
is keyed on its pickled arguments and hands back the PNG bytes it drew the first time for them
in this process; any other input is drawn afresh. A test marked ``fresh_figures`` (the reruns
that prove the figures' bytes repeat) draws every figure itself.

The functions are wrapped once their module has been imported by a test (:func:`install` runs
before each test), so this module imports nothing heavy.
"""

from __future__ import annotations

import functools
import pickle
import sys

#: module -> the figure functions in it that return PNG bytes (or None) for their arguments
FUNCTIONS = {
    "synthprobe.benchmarks.deeparithmark.report.figures": (
        "depth_curve",
        "template_heatmap",
        "mistake_profile",
        "rank_preference",
    ),
    "synthprobe.benchmarks.gpt3.report.figures": ("gpt3_curves",),
    "synthprobe.benchmarks.deeparithmark.step_probe.report.figures": ("steps_plots",),
}

_STATE = {"on": True}
_DRAWN: dict[bytes, bytes | None] = {}


def _memo(func):
    @functools.wraps(func)
    def drawn_once(*args, **kwargs):
        if not _STATE["on"]:
            return func(*args, **kwargs)
        try:
            key = pickle.dumps((func.__module__, func.__qualname__, args, sorted(kwargs.items())), protocol=5)
        except Exception:  # noqa: BLE001 - an argument that cannot be pickled is simply drawn
            return func(*args, **kwargs)
        if key not in _DRAWN:
            _DRAWN[key] = func(*args, **kwargs)
        return _DRAWN[key]

    drawn_once._memo_of = func
    return drawn_once


def install(*, fresh: bool = False) -> None:
    """Wrap the figure functions of the modules imported so far; ``fresh``: for the next test,
    draw every figure (and keep nothing it draws)."""
    _STATE["on"] = not fresh
    for name, functions in FUNCTIONS.items():
        module = sys.modules.get(name)
        if module is None:
            continue
        for function in functions:
            current = getattr(module, function)
            if not hasattr(current, "_memo_of"):
                setattr(module, function, _memo(current))
