"""The twins block's statistics: pure functions from paired per-item outcomes to the numbers.

A *pair* is one original item and one of its twins (or, for the A/A check, one original and
its partner from an independent build), each scored under the same protocol::

    {"kind", "family", "depth",                       # depth: the original's
     "original": {"pick": slot or None, "correct": bool},
     "twin":     {"pick": slot or None, "correct": bool, "pick_source": option_sources[pick] or None}}

``pick`` is None when a generated answer (``letters``/``free``) names no option: it counts as
wrong (``correct`` False) and is counted in ``no_option``, never as a wrong pick.

:func:`cell` gives one CELL of the spec: accuracies (fractions), the paired difference
twin − original with its 95 % interval (Newcombe's hybrid score interval for a difference of
paired proportions, method 10 of Newcombe 1998, *Statistics in Medicine* 17:2635, built from
the two Wilson score intervals and the phi correlation of the 2×2 table), the exact two-sided
McNemar p (``scipy.stats.binomtest`` on the discordant pairs, p = 1/2), the four consistency
counts and, for ``irrelevant_clause`` twins, the *uptake*: of the twin's wrong picks (one of
the three decoys), how many are the irrelevant-number decoy, against 1/3 (a uniform choice
among the three decoys), with a one-sided exact binomial test (share > 1/3).

:func:`summarise` groups pairs by protocol and kind, with ``by_depth`` and ``by_family``
cells, and adjusts the top-level McNemar p-values of one protocol across its kinds by Holm's
step-down method (:func:`holm`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from synthprobe.benchmarks.deeparithmark.base import IRRELEVANT

#: the kind whose twins carry the irrelevant-number decoy (uptake is reported for it)
UPTAKE_KIND = "irrelevant_clause"
#: the share of wrong picks the irrelevant-number decoy gets if a wrong pick is uniform over
#: the three decoys
UPTAKE_EXPECTED = 1 / 3
#: the two-sided normal quantile of the 95 % intervals
Z95 = 1.959963984540054
CI_METHOD = (
    "Newcombe's hybrid score interval for a paired difference (method 10, Newcombe 1998): Wilson "
    "score limits of each accuracy combined with the phi correlation of the paired 2x2 table"
)
MCNEMAR_METHOD = "exact two-sided McNemar: binomial test of the discordant pairs against 1/2"
HOLM_METHOD = "Holm step-down across the kinds of one protocol (top-level cells only)"


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials (``n`` > 0)."""
    p = k / n
    centre = (2 * n * p + z * z) / (2 * (n + z * z))
    half = z * math.sqrt(z * z + 4 * n * p * (1 - p)) / (2 * (n + z * z))
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_interval(both_right: int, right_to_wrong: int, wrong_to_right: int, both_wrong: int) -> tuple[float, float]:
    """95 % interval of twin accuracy − original accuracy over ``n`` pairs (Newcombe's method 10).

    With the twin accuracy ``p1 = (a + c) / n`` and the original's ``p2 = (a + b) / n`` (a both
    right, b right → wrong, c wrong → right, d both wrong), Wilson limits ``(l1, u1)`` and
    ``(l2, u2)`` and ``phi = (a d − b c) / sqrt((a + b)(c + d)(a + c)(b + d))`` (0 when a margin
    is empty)::

        lower = (p1 − p2) − sqrt((p1 − l1)² − 2 phi (p1 − l1)(u2 − p2) + (u2 − p2)²)
        upper = (p1 − p2) + sqrt((u1 − p1)² − 2 phi (u1 − p1)(p2 − l2) + (p2 − l2)²)
    """
    a, b, c, d = both_right, right_to_wrong, wrong_to_right, both_wrong
    n = a + b + c + d
    if n == 0:
        raise ValueError("no pairs")
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = wilson(a + c, n)
    l2, u2 = wilson(a + b, n)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(denom) if denom else 0.0
    theta = p1 - p2
    lo = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    hi = theta + math.sqrt(max(0.0, (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2))
    return max(-1.0, lo), min(1.0, hi)


def mcnemar_exact(right_to_wrong: int, wrong_to_right: int) -> float:
    """Exact two-sided McNemar p: the discordant pairs against a fair coin (1.0 with none)."""
    from scipy.stats import binomtest

    m = right_to_wrong + wrong_to_right
    if m == 0:
        return 1.0
    return float(binomtest(wrong_to_right, m, 0.5, alternative="two-sided").pvalue)


def holm(pvalues: Mapping[str, float | None]) -> dict[str, float | None]:
    """Holm's step-down adjustment of a family of p-values (None: not tested, stays None).

    Sorted ascending ``p(1) <= ... <= p(m)``, the adjusted ``p(i) = max over j <= i of
    min(1, (m − j + 1) p(j))``; ties keep their input order."""
    tested = sorted(((p, k) for k, p in pvalues.items() if p is not None), key=lambda t: t[0])
    m = len(tested)
    out: dict[str, float | None] = dict.fromkeys(pvalues)
    running = 0.0
    for j, (p, key) in enumerate(tested):
        running = max(running, min(1.0, (m - j) * p))
        out[key] = running
    return out


def uptake(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How often a wrong twin pick is the irrelevant-number decoy, against 1/3."""
    from scipy.stats import binomtest

    wrong = [p["twin"] for p in pairs if p["twin"]["pick"] is not None and not p["twin"]["correct"]]
    hits = sum(1 for t in wrong if t.get("pick_source") == IRRELEVANT)
    n = len(wrong)
    return {
        "wrong_picks": n,
        "irrelevant": hits,
        "share": hits / n if n else None,
        "expected": UPTAKE_EXPECTED,
        "p": float(binomtest(hits, n, UPTAKE_EXPECTED, alternative="greater").pvalue) if n else None,
    }


def cell(pairs: Sequence[Mapping[str, Any]], *, with_uptake: bool = False) -> dict[str, Any]:
    """One CELL (module docstring) over ``pairs``; with no pairs, the rates are None."""
    a = b = c = d = 0
    no_orig = no_twin = 0
    for p in pairs:
        o, t = bool(p["original"]["correct"]), bool(p["twin"]["correct"])
        if o and t:
            a += 1
        elif o:
            b += 1
        elif t:
            c += 1
        else:
            d += 1
        no_orig += p["original"]["pick"] is None and not o
        no_twin += p["twin"]["pick"] is None and not t
    n = a + b + c + d
    out: dict[str, Any] = {
        "n": n,
        "original": (a + b) / n if n else None,
        "twin": (a + c) / n if n else None,
        "difference": (c - b) / n if n else None,
        "ci": list(paired_interval(a, b, c, d)) if n else None,
        "p_mcnemar": mcnemar_exact(b, c) if n else None,
        "both_right": a,
        "both_wrong": d,
        "right_to_wrong": b,
        "wrong_to_right": c,
        "no_option": {"original": no_orig, "twin": no_twin},
    }
    if with_uptake:
        out["uptake"] = uptake(pairs)
    return out


def _key(value: Any) -> tuple:
    return (0, value, "") if isinstance(value, int) else (1, 0, str(value))


def kind_cell(pairs: Sequence[Mapping[str, Any]], kind: str) -> dict[str, Any]:
    """A kind's top-level CELL with its ``by_depth`` and ``by_family`` cells (these carry their
    own McNemar p, no Holm p)."""
    uptake_too = kind == UPTAKE_KIND
    out = cell(pairs, with_uptake=uptake_too)
    for field, name in (("depth", "by_depth"), ("family", "by_family")):
        groups: dict[Any, list] = {}
        for p in pairs:
            groups.setdefault(p[field], []).append(p)
        out[name] = {str(k): cell(groups[k], with_uptake=uptake_too) for k in sorted(groups, key=_key)}
    return out


def summarise(pairs: Iterable[Mapping[str, Any]], protocols: Sequence[str], kinds: Sequence[str]) -> dict[str, Any]:
    """``{protocol: {kind: CELL + by_depth + by_family}}`` for every protocol and kind given (a
    kind without pairs gets an empty cell), each top-level cell with ``p_holm`` across the kinds
    of its protocol. ``pairs`` carry a ``protocol`` field besides the pair's own."""
    grouped: dict[tuple[str, str], list] = {}
    for p in pairs:
        grouped.setdefault((p["protocol"], p["kind"]), []).append(p)
    out: dict[str, Any] = {}
    for protocol in protocols:
        cells = {kind: kind_cell(grouped.get((protocol, kind), []), kind) for kind in kinds}
        adjusted = holm({kind: c["p_mcnemar"] for kind, c in cells.items()})
        for kind, c in cells.items():
            c["p_holm"] = adjusted[kind]
        out[protocol] = cells
    return out


__all__ = [
    "CI_METHOD",
    "answers_read",
    "HOLM_METHOD",
    "MCNEMAR_METHOD",
    "UPTAKE_EXPECTED",
    "cell",
    "holm",
    "kind_cell",
    "mcnemar_exact",
    "paired_interval",
    "summarise",
    "uptake",
    "wilson",
]


def answers_read(runs: list[dict[str, Any]]) -> list[str]:
    """One line per generative protocol: how each set's generated answers were read (the outcome
    counts of ``score deeparithmark``'s extraction), so a twin accuracy is never shown without
    how many of its answers were unparsed, inconsistent, an echo or cut off."""
    from synthprobe.metrics.extract import PROTOCOL_OUTCOMES

    by_protocol: dict[str, list[str]] = {}
    for run in runs:
        outcomes = run.get("outcomes")
        if outcomes is None:
            continue
        shown = PROTOCOL_OUTCOMES.get(run["protocol"], tuple(outcomes))
        counts = ", ".join(f"{k.replace('_', ' ')} {outcomes.get(k, 0)}" for k in shown)
        by_protocol.setdefault(run["protocol"], []).append(f"{run['set']} (n {run['items']}): {counts}")
    return [f"answers read ({protocol}): " + "; ".join(parts) for protocol, parts in by_protocol.items()]
