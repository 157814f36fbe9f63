"""What the report's tables and pages (both benchmarks) share: the one model order (largest
first) and the number formats, which are :mod:`synthprobe.results`' (the scorer's printed table
and the README use the same)."""

from __future__ import annotations

from typing import Sequence

from synthprobe.results import DASH, MINUS, fmt_p, fmt_params  # noqa: F401 (the report's formats)


def ordered(results: Sequence) -> list:
    """Largest model first; unknown sizes last; ties by name."""
    return sorted(results, key=lambda r: (r.params is None, -(r.params or 0), r.model))
