"""The two statistics the report draws, from :mod:`synthprobe.metrics.stats` (the same
functions the scorer's summaries use): Wilson 95 % intervals and exact binomial p-values."""

from __future__ import annotations

from synthprobe.metrics.stats import binom_p as _binom_p
from synthprobe.metrics.stats import wilson_ci
from synthprobe.report.model import Count


def wilson(count: Count) -> tuple[float, float]:
    """95 % Wilson score interval of ``count.rate``."""
    return wilson_ci(count.correct, count.n)


def binom_p(count: Count, chance: float) -> float:
    """Exact two-sided binomial p-value of ``count`` against ``chance``."""
    return _binom_p(count.correct, count.n, chance)


def adjusted(counts: dict, chance: float) -> dict:
    """Per group (depth tier or template) of one model: ``(p, p_holm)``, the exact binomial
    p-value against chance and its Holm adjustment over that model's non-empty groups (the
    family of 4 depth tiers, or of 15 templates). Empty groups get ``(nan, nan)``."""
    from synthprobe.metrics.stats import holm

    keys = list(counts)
    ps = [binom_p(counts[k], chance) if counts[k].n else float("nan") for k in keys]
    return dict(zip(keys, zip(ps, holm(ps))))


def contains_chance(count: Count, chance: float) -> bool:
    """Whether the 95 % Wilson interval of ``count`` holds ``chance`` (the cell cannot be told
    from guessing)."""
    lo, hi = wilson(count)
    return lo <= chance <= hi
