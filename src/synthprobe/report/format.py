"""What the report's tables and pages (both benchmarks) share: the one model order (largest
first) and the number formats, which are :mod:`synthprobe.results`' (the scorer's printed table
and the README use the same)."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.results import DASH, MINUS, fmt_p, fmt_params  # noqa: F401 (the report's formats)


def score(r) -> float:
    """A Deep Arithmark result's primary score, acc_norm."""
    return r.overall.rate


def ordered(results: Sequence) -> list:
    """The one model order of the report (leaderboard, figures, legends). Deep Arithmark rows:
    highest primary score (:func:`score`) first, ties by size, then name. GPT-3 results (one
    column each beside the paper's sizes, which are ordered by size, and scored on rows that may
    differ per file): largest model first, unknown sizes last, ties by name."""
    if results and hasattr(results[0], "overall"):
        return sorted(results, key=lambda r: (-score(r), r.params is None, -(r.params or 0), r.model))
    return sorted(results, key=lambda r: (r.params is None, -(r.params or 0), r.model))


def test_set_letters(results: Sequence) -> dict[tuple, str]:
    """``r.test_set`` → a letter (A, B, …, in leaderboard order) when the results were scored on
    more than one set of items (another data file, limit or seed); ``{}`` when all share one."""
    keys = list(dict.fromkeys(r.test_set for r in ordered(results)))
    if len(keys) < 2:
        return {}
    return {k: (chr(ord("A") + i) if i < 26 else f"S{i + 1}") for i, k in enumerate(keys)}


NOT_COMPARABLE_NOTE = (
    "Rows with different letters in the n column were scored on different items (another "
    "data file, --limit or seed) and are not comparable with each other; compare only rows "
    "with the same letter."
)
