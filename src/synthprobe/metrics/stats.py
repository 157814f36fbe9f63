"""Statistics, all in one place: exact binomial test against chance, Wilson interval (as a
fraction and in percent), the exact Clopper–Pearson interval, chi-square homogeneity, Holm's
correction, and the t-interval and two-sample t-test the study app reports. Imports nothing
from scoring, tasks or report."""

from __future__ import annotations

import gc
import math
import statistics
from collections.abc import Sequence
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=4096)
def binom_p(k: int, n: int, chance: float) -> float:
    """Exact two-sided binomial p-value of ``k`` successes in ``n`` trials at success rate ``chance``."""
    from scipy.stats import binomtest

    if n == 0:
        return float("nan")
    return float(binomtest(k, n, chance, alternative="two-sided").pvalue)


@lru_cache(maxsize=4096)
def wilson_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``k / n``."""
    from scipy.stats import binomtest

    if n == 0:
        return (float("nan"), float("nan"))
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))


@lru_cache(maxsize=4096)
def exact_ci(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) binomial interval for a proportion ``k / n``; NaNs when n is 0."""
    from scipy.stats import binomtest

    if n == 0:
        return (float("nan"), float("nan"))
    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    return (float(ci.low), float(ci.high))


def wilson_percent(correct: int, n: int) -> list[float] | None:
    """Wilson 95 % interval of ``correct / n``, in percent, as ``[lo, hi]`` rounded to 4 places;
    None when n is 0."""
    if n <= 0:
        return None
    lo, hi = wilson_ci(correct, n)
    return [round(100.0 * lo, 4), round(100.0 * hi, 4)]


def accuracy_block(k: int, n: int, chance: float) -> dict[str, Any]:
    """Counts, accuracy, Wilson 95 % CI and the two-sided binomial p against chance."""
    low, high = wilson_ci(k, n)
    return {
        "correct": k,
        "total": n,
        "acc": k / n if n else float("nan"),
        "ci95": [low, high],
        "chance": chance,
        "p_vs_chance": binom_p(k, n, chance),
    }


def chance_band(n: int, chance: float) -> tuple[float, float]:
    """Where a scorer at chance lands on ``n`` items 95 % of the time (normal approximation:
    ``chance ± 1.96·√(chance·(1 − chance)/n)``); NaNs when n is 0."""
    if n <= 0:
        return (float("nan"), float("nan"))
    half = 1.96 * math.sqrt(chance * (1 - chance) / n)
    return (chance - half, chance + half)


def paired_over_seeds(a: dict, b: dict) -> dict[str, Any]:
    """Two models' accuracies keyed by build seed: the seeds they share, the mean difference
    ``b − a`` and a paired t-test (scipy's ``ttest_rel``); ``t``, ``p`` and the difference are None
    with fewer than two shared seeds (or no variation)."""
    from scipy.stats import ttest_rel

    common = [s for s in a if s in b]
    out: dict[str, Any] = {"seeds": len(common), "mean_difference": None, "t": None, "p": None}
    if len(common) >= 2:
        t = ttest_rel([b[s] for s in common], [a[s] for s in common])
        out["mean_difference"] = statistics.fmean(b[s] - a[s] for s in common)
        out["t"] = None if t.statistic != t.statistic else float(t.statistic)
        out["p"] = None if t.pvalue != t.pvalue else float(t.pvalue)
    return out


def chi2_homogeneity(groups: Sequence[tuple[str, int, int]]) -> dict[str, Any]:
    """Chi-square test that accuracy is the same in every group.

    ``groups``: ``(name, correct, total)``. The contingency table is groups x {correct, wrong}
    with ``df = groups - 1`` (no continuity correction). With fewer than two groups, or when
    every item is right (or every item wrong), the test is undefined and ``chi2``/``p`` are None.
    """
    from scipy.stats import chi2_contingency

    rows = [(name, k, n) for name, k, n in groups if n > 0]
    out: dict[str, Any] = {"groups": len(rows), "df": max(len(rows) - 1, 0), "chi2": None, "p": None}
    if len(rows) < 2:
        out["note"] = "fewer than two non-empty groups"
        return out
    table = [[k, n - k] for _, k, n in rows]
    if all(r[0] == 0 for r in table) or all(r[1] == 0 for r in table):
        out["note"] = "accuracy is 0 or 1 in every group"
        return out
    res = chi2_contingency(table, correction=False)
    out["chi2"] = float(res.statistic)
    out["p"] = float(res.pvalue)
    out["df"] = int(res.dof)
    return out


#: the multiple-test correction the report applies to per-depth and per-template p-values
CORRECTION = "holm"
CORRECTION_NAME = "Holm"


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values (family-wise error), by statsmodels' ``multipletests``.

    NaN p-values (empty groups) stay NaN and are not counted as tests.
    """
    from statsmodels.stats.multitest import multipletests

    ps = [float(p) for p in pvalues]
    real = [i for i, p in enumerate(ps) if p == p]
    out = [float("nan")] * len(ps)
    if real:
        # statsmodels' Holm branch ends in gc.collect(): a full collection of every object alive,
        # 0.1-0.2 s a call once torch and matplotlib are loaded, for a report's hundreds of calls.
        # Frozen objects are left out of it (the result is the same), so it sees only the call's own.
        gc.freeze()
        try:
            adjusted = multipletests([ps[i] for i in real], method=CORRECTION)[1]
        finally:
            gc.unfreeze()
        for i, q in zip(real, adjusted):
            out[i] = float(q)
    return out


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float | None, float | None, float | None]:
    """Mean and the t-distribution confidence interval (``None`` bounds for fewer than 2 values)."""
    from scipy import stats

    n = len(values)
    if n == 0:
        return None, None, None
    m = statistics.fmean(values)
    if n < 2:
        return m, None, None
    sem = stats.sem(values)
    if sem == 0:
        return m, m, m
    lo, hi = stats.t.interval(confidence, n - 1, loc=m, scale=sem)
    return m, float(lo), float(hi)


def t_test(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """Student's two-sample t-test (t, two-sided p); ``None`` when it is not defined."""
    from scipy import stats

    if len(a) < 2 or len(b) < 2:
        return None, None
    if len(set(a)) == 1 and len(set(b)) == 1:  # no spread in either group: t is 0/0 or infinite
        return None, None
    res = stats.ttest_ind(a, b, equal_var=True)
    t, p = float(res.statistic), float(res.pvalue)
    if not (math.isfinite(t) and math.isfinite(p)):
        return None, None
    return t, p


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value of a paired 2×2 table whose discordant cells are ``b``
    (right before, wrong after) and ``c`` (wrong before, right after), from statsmodels; 1.0
    when no pair is discordant."""
    from statsmodels.stats.contingency_tables import mcnemar

    if b + c == 0:
        return 1.0
    return float(mcnemar([[0, b], [c, 0]], exact=True).pvalue)


def paired_difference(reference: Sequence[bool], other: Sequence[bool]) -> dict[str, Any]:
    """The same items scored two ways: accuracies (percent), the difference ``other −
    reference`` in points, the discordant counts ``b`` (right in ``reference`` only) and ``c``
    (right in ``other`` only) and the exact McNemar p-value."""
    if len(reference) != len(other):
        raise ValueError(f"paired lists differ in length: {len(reference)} and {len(other)}")
    n = len(reference)
    ref = sum(1 for x in reference if x)
    got = sum(1 for x in other if x)
    b = sum(1 for x, y in zip(reference, other) if x and not y)
    c = sum(1 for x, y in zip(reference, other) if y and not x)
    acc = 100.0 * got / n if n else None
    ref_acc = 100.0 * ref / n if n else None
    return {
        "n": n,
        "correct": got,
        "accuracy": None if acc is None else round(acc, 4),
        "reference_correct": ref,
        "reference_accuracy": None if ref_acc is None else round(ref_acc, 4),
        "delta": None if acc is None else round(acc - ref_acc, 4),
        "b": b,
        "c": c,
        "p_mcnemar": mcnemar_exact(b, c),
    }


def paired_diff_ci(
    both: int, ref_only: int, other_only: int, neither: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Confidence interval (fractions) of the paired difference ``other − reference`` of two
    proportions measured on the same items: Newcombe's hybrid score interval (1998, method 10),
    built from the two Wilson intervals (:func:`wilson_ci`) and the phi correlation of the
    paired outcomes. The cells: ``both`` right, right in ``reference`` only, in ``other`` only,
    ``neither``. NaNs when there are no items."""
    n = both + ref_only + other_only + neither
    if n == 0:
        return (float("nan"), float("nan"))
    p_ref, p_other = (both + ref_only) / n, (both + other_only) / n
    l_ref, u_ref = wilson_ci(both + ref_only, n, confidence)
    l_oth, u_oth = wilson_ci(both + other_only, n, confidence)
    margins = (both + ref_only) * (other_only + neither) * (both + other_only) * (ref_only + neither)
    phi = 0.0
    if margins > 0:
        cross = both * neither - ref_only * other_only
        cross = max(cross - n / 2, 0.0) if cross > 0 else cross
        phi = cross / math.sqrt(margins)
    d = p_other - p_ref
    lower = d - math.sqrt(
        max((p_other - l_oth) ** 2 - 2 * phi * (p_other - l_oth) * (u_ref - p_ref) + (u_ref - p_ref) ** 2, 0.0)
    )
    upper = d + math.sqrt(
        max((u_oth - p_other) ** 2 - 2 * phi * (u_oth - p_other) * (p_ref - l_ref) + (p_ref - l_ref) ** 2, 0.0)
    )
    return (max(lower, -1.0), min(upper, 1.0))
