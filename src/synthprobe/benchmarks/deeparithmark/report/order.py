"""Deep Arithmark's model order in the report (best primary score first) and the letters that
tell test sets apart in its tables."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.report import format as fmt

NOT_COMPARABLE_NOTE = (
    "Rows with different letters in the n column were scored on different items (another "
    "data file, --limit or seed) and are not comparable with each other; compare only rows "
    "with the same letter."
)


def score(r) -> float:
    """A Deep Arithmark row's primary score (acc_norm, or accuracy for generated answers)."""
    return r.overall.rate


def ordered(results: Sequence) -> list:
    """Highest primary score (:func:`score`) first, ties by size, then name."""
    return fmt.ordered(results, score)


def test_set_letters(results: Sequence) -> dict[tuple, str]:
    """``r.test_set`` → a letter (A, B, …, in leaderboard order) when the results were scored on
    more than one set of items (another data file, limit or seed); ``{}`` when all share one."""
    keys = list(dict.fromkeys(r.test_set for r in ordered(results)))
    if len(keys) < 2:
        return {}
    return {k: (chr(ord("A") + i) if i < 26 else f"S{i + 1}") for i, k in enumerate(keys)}
