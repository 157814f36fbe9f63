"""Is an accuracy *at* chance, not merely "not significantly above" it?

A choices-only audit must show that an adversary's accuracy is close to chance, and "we found no
significant difference" does not show that (Lakens 2017). These functions give the pieces of the
equivalence argument for ``k`` correct of ``n`` items at a chance rate ``chance`` with a margin
``margin`` (Deep Arithmark: 0.25 ± 0.02):

* :func:`clopper_pearson` — the exact two-sided interval; at 90 % its bounds are the two one-sided
  5 % tests of TOST, so "the 90 % interval lies inside [chance − margin, chance + margin]" *is* the
  exact TOST at α = 0.05 (:func:`equivalence_block` uses it as the pass rule);
* :func:`tost` — ``statsmodels.stats.proportion.binom_tost``'s p-value, reported beside it;
* :func:`tost_power`, :func:`items_needed`, :func:`best_margin` — how many items the criterion
  needs (≈ 4,070 at ± 2 points and 80 % power; the exact test's power saw-tooths, so
  :func:`items_needed` returns the size from which it *stays* above the target: 4,097);
* :func:`cluster_interval` — when items come in correlated groups (the same four values in four
  items), the interval on the cluster totals (a ratio estimator with a cluster-robust standard
  error and a t quantile on clusters − 1 degrees of freedom): items in a group are not independent,
  so the binomial interval would be too narrow or too wide;
* :func:`above_chance_p` and :func:`holm_screen` — the one-sided exact test per stratum, Holm-
  corrected across strata, because one template at 100 % can hide in a 30 % average.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from synthprobe.metrics.stats import exact_ci

#: the two-sided confidence of the equivalence interval (TOST at α = 0.05 on each side)
CONFIDENCE = 0.90

#: the default equivalence margin around chance, as a fraction
MARGIN = 0.02

#: the power the minimum-size helpers aim for
POWER = 0.80

#: the level of each one-sided test of the TOST (0.05: the 90 % interval)
ALPHA = (1 - CONFIDENCE) / 2


def clopper_pearson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of ``k / n``; NaNs when ``n`` is 0."""
    return exact_ci(int(k), int(n), confidence)


@lru_cache(maxsize=4096)
def above_chance_p(k: int, n: int, chance: float) -> float:
    """One-sided exact binomial p-value of ``k`` or more correct of ``n`` at rate ``chance``."""
    from scipy.stats import binomtest

    if n <= 0:
        return 1.0
    return float(binomtest(int(k), int(n), chance, alternative="greater").pvalue)


def bounds(chance: float, margin: float) -> tuple[float, float]:
    """The equivalence region ``[chance − margin, chance + margin]``, rounded against float noise."""
    return round(chance - margin, 12), round(chance + margin, 12)


def tost(k: int, n: int, chance: float, margin: float = MARGIN) -> float:
    """The exact TOST p-value (``binom_tost``) that ``k / n`` lies within ``chance ± margin``."""
    from statsmodels.stats.proportion import binom_tost

    if n <= 0:
        return 1.0
    low, upp = bounds(chance, margin)
    return float(binom_tost(int(k), int(n), low, upp)[0])


@lru_cache(maxsize=65536)
def tost_power(n: int, chance: float, margin: float = MARGIN, alpha: float = ALPHA) -> float:
    """Power of the exact TOST on ``n`` items when the truth is exactly ``chance``
    (``power_binom_tost``; ``alpha`` per one-sided test: 0.05 is the 90 % interval's rule)."""
    from statsmodels.stats.proportion import power_binom_tost

    low, upp = bounds(chance, margin)
    return float(power_binom_tost(low, upp, int(n), p_alt=chance, alpha=alpha))


def _normal_size(chance: float, margin: float, power: float, alpha: float) -> int:
    """The normal-approximation size of the TOST at the truth ``chance`` (a starting point)."""
    from scipy.stats import norm

    z = norm.ppf(1 - alpha) + norm.ppf(1 - (1 - power) / 2)
    return max(1, math.ceil(z * z * chance * (1 - chance) / (margin * margin)))


@lru_cache(maxsize=256)
def items_needed(margin: float = MARGIN, chance: float = 0.25, power: float = POWER, alpha: float = ALPHA) -> int:
    """The fewest items from which the exact TOST keeps at least ``power`` for every larger size
    up to 30 % beyond (the exact test's power saw-tooths by about a point, so the first size that
    reaches it is not enough: 4,040 first touches 80 % at ± 2 points, 4,097 stays there)."""
    guess = _normal_size(chance, margin, power, alpha)
    last_short = None
    for n in range(max(1, int(guess * 0.9)), int(guess * 1.3) + 1):
        if tost_power(n, chance, margin, alpha) < power:
            last_short = n
    return (last_short + 1) if last_short is not None else max(1, int(guess * 0.9))


def best_margin(n: int, chance: float = 0.25, power: float = POWER, alpha: float = ALPHA) -> float:
    """The smallest margin (in steps of 0.001) the exact TOST shows with ``power`` on ``n`` items."""
    if n <= 0:
        return float("nan")
    for step in range(1, int(chance * 1000)):
        margin = step / 1000
        if tost_power(n, chance, margin, alpha) >= power:
            return margin
    return chance


def cluster_interval(counts: Sequence[tuple[int, int]], confidence: float = CONFIDENCE) -> dict[str, Any]:
    """A cluster-robust interval for an accuracy from ``(correct, items)`` per cluster.

    The estimate is the ratio Σ correct / Σ items (with equal cluster sizes, the mean of the
    clusters' accuracies); its standard error the cluster-robust one,
    ``√(C / (C − 1) · Σ (k_c − p·n_c)²) / Σ n_c``, and the interval ``p ± t(C − 1) · se``, clipped
    to [0, 1]. With fewer than two clusters the interval is [0, 1] (nothing can be said)."""
    from scipy.stats import t as student_t

    clusters = [(int(k), int(m)) for k, m in counts if m > 0]
    c = len(clusters)
    total = sum(m for _, m in clusters)
    if c == 0:
        return {"clusters": 0, "items": 0, "accuracy": float("nan"), "se": float("nan"), "interval": [0.0, 1.0]}
    p = sum(k for k, _ in clusters) / total
    if c < 2:
        return {"clusters": c, "items": total, "accuracy": p, "se": float("nan"), "interval": [0.0, 1.0]}
    se = math.sqrt(c / (c - 1) * sum((k - p * m) ** 2 for k, m in clusters)) / total
    half = float(student_t.ppf(1 - (1 - confidence) / 2, c - 1)) * se
    return {
        "clusters": c,
        "items": total,
        "accuracy": p,
        "se": se,
        "interval": [max(0.0, p - half), min(1.0, p + half)],
    }


def equivalence_block(
    k: int,
    n: int,
    chance: float,
    *,
    margin: float = MARGIN,
    clusters: Sequence[tuple[int, int]] | None = None,
    power: float = POWER,
) -> dict[str, Any]:
    """Everything the audit reports of ``k`` correct of ``n`` against ``chance ± margin``.

    ``applies``: whether ``n`` is large enough for the criterion (:func:`items_needed`); where it
    is not, ``passes`` is None (the equivalence cannot be shown at the stated power) and
    ``best_margin`` says what could be. With ``clusters`` (per cluster ``(correct, items)``), the
    pass rule reads the cluster interval instead of the binomial one."""
    lo, hi = clopper_pearson(k, n, CONFIDENCE)
    low, upp = bounds(chance, margin)
    needed = items_needed(margin, chance, power, ALPHA)
    block: dict[str, Any] = {
        "n": int(n),
        "correct": int(k),
        "accuracy": k / n if n else float("nan"),
        "cp90": [lo, hi],
        "p_above_chance": above_chance_p(int(k), int(n), chance),
        "tost_p": tost(k, n, chance, margin),
        "power_at_chance": tost_power(int(n), chance, margin, ALPHA) if n else 0.0,
        "items_needed": needed,
        "applies": n >= needed,
        "best_margin": best_margin(int(n), chance, power, ALPHA),
        "clusters": None,
    }
    interval = (lo, hi)
    if clusters is not None:
        block["clusters"] = cluster_interval(clusters, CONFIDENCE)
        interval = tuple(block["clusters"]["interval"])
    inside = low <= interval[0] and interval[1] <= upp
    block["interval_used"] = "clusters" if clusters is not None else "clopper-pearson"
    block["passes"] = inside if block["applies"] else None
    return block


def holm_screen(strata: Sequence[Mapping[str, Any]], chance: float, alpha: float = 0.05) -> list[dict[str, Any]]:
    """The per-stratum screen: each stratum (a mapping with ``correct`` and ``n``, other keys
    kept) gets its one-sided exact p-value "above chance", Holm-corrected across all the strata
    given (``statsmodels.stats.multitest.multipletests(method="holm")``), and ``flagged`` when the
    corrected p is below ``alpha``. Returned in the order given."""
    from statsmodels.stats.multitest import multipletests

    rows = [dict(s) for s in strata]
    if not rows:
        return rows
    ps = [above_chance_p(int(r["correct"]), int(r["n"]), chance) for r in rows]
    reject, corrected, _, _ = multipletests(ps, alpha=alpha, method="holm")
    for r, p, q, flag in zip(rows, ps, corrected, reject):
        r["accuracy"] = r["correct"] / r["n"] if r["n"] else float("nan")
        r["p"] = p
        r["p_holm"] = float(q)
        r["flagged"] = bool(flag)
    return rows
