"""What the report's tables and pages (every benchmark's) share: the one model order (largest
first, or best first by a benchmark's score), and the number formats, which are
:mod:`synthprobe.results`' (the scorer's printed table and the README use the same), among them
the one percentage: :func:`~synthprobe.results.percent` (a number) and
:func:`~synthprobe.results.fmt_pct` (text), which every report section, probe, export and the
study app use."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from synthprobe.results import DASH, MINUS, fmt_p, fmt_params, fmt_pct, fmt_pct_ci, percent  # noqa: F401 (the report's formats)


def ordered(results: Sequence, score: Callable[[Any], float] | None = None) -> list:
    """The one model order of the report (leaderboard, figures, legends): largest model first,
    unknown sizes last, ties by name; given ``score`` (a benchmark's primary score of a row),
    highest score first, ties by size, then name."""
    if score is not None:
        return sorted(results, key=lambda r: (-score(r), r.params is None, -(r.params or 0), r.model))
    return sorted(results, key=lambda r: (r.params is None, -(r.params or 0), r.model))
