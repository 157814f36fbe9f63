"""The two statistics the report draws: Wilson 95 % intervals and exact binomial p-values."""

from __future__ import annotations

from functools import lru_cache

from synthprobe.report.model import Count


@lru_cache(maxsize=4096)
def _wilson(correct: int, n: int) -> tuple[float, float]:
    from scipy.stats import binomtest

    ci = binomtest(correct, n).proportion_ci(confidence_level=0.95, method="wilson")
    return float(ci.low), float(ci.high)


def wilson(count: Count) -> tuple[float, float]:
    """95 % Wilson score interval of ``count.rate``."""
    return _wilson(count.correct, count.n) if count.n else (float("nan"), float("nan"))


@lru_cache(maxsize=4096)
def _binom_p(correct: int, n: int, chance: float) -> float:
    from scipy.stats import binomtest

    return float(binomtest(correct, n, chance, alternative="two-sided").pvalue)


def binom_p(count: Count, chance: float) -> float:
    """Exact two-sided binomial p-value of ``count`` against ``chance``."""
    return _binom_p(count.correct, count.n, chance) if count.n else float("nan")
