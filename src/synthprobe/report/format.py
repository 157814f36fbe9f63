"""What the report's tables and pages (every benchmark's) share: the one model order (largest
first, or best first by a benchmark's score), the number formats, which are
:mod:`synthprobe.results`' (the scorer's printed table and the README use the same), and the one
percentage: :func:`percent` (a number) and :func:`fmt_pct` (text), which every report section,
probe and export uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from synthprobe.results import DASH, MINUS, fmt_p, fmt_params  # noqa: F401 (the report's formats)


def percent(x: float | None, digits: int | None = None, *, of: int | None = None) -> float | None:
    """``x`` in percent as a number: a fraction (``100 * x``) or, with ``of``, a count of ``of``
    items (``100 * x / of``); rounded to ``digits`` decimals when given; None for None or NaN."""
    if x is None or x != x:
        return None
    value = 100 * x if of is None else 100 * x / of
    return value if digits is None else round(value, digits)


def fmt_pct(
    x: float | None,
    digits: int = 2,
    unit: str = "",
    *,
    of: int | None = None,
    in_percent: bool = False,
    dash: str = DASH,
) -> str:
    """``x`` in percent as text: ``digits`` decimals, then ``unit`` (``" %"``, or nothing where
    the column or sentence says percent). ``x`` is a fraction, a count of ``of`` items, or with
    ``in_percent`` already a percentage; ``dash`` for None or NaN."""
    if x is None or x != x:
        return dash
    value = x if in_percent else percent(x, of=of)
    return f"{value:.{digits}f}{unit}"


def fmt_pct_ci(x: float, ci: Sequence[float], digits: int = 2) -> str:
    """``24.80 % [20.60, 29.30]``: a fraction and its interval's ends, in percent."""
    lo, hi = ci
    return f"{fmt_pct(x, digits)} % [{fmt_pct(lo, digits)}, {fmt_pct(hi, digits)}]"


def ordered(results: Sequence, score: Callable[[Any], float] | None = None) -> list:
    """The one model order of the report (leaderboard, figures, legends): largest model first,
    unknown sizes last, ties by name; given ``score`` (a benchmark's primary score of a row),
    highest score first, ties by size, then name."""
    if score is not None:
        return sorted(results, key=lambda r: (-score(r), r.params is None, -(r.params or 0), r.model))
    return sorted(results, key=lambda r: (r.params is None, -(r.params or 0), r.model))
