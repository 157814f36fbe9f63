"""Paired model-vs-model comparison on the same items: for every pair of models, the
difference in accuracy with its 95 % interval (Newcombe's paired score interval,
:func:`synthprobe.metrics.stats.paired_diff_ci`) and the exact McNemar test
(:func:`synthprobe.metrics.stats.paired_difference`), overall and per group (a Deep Arithmark
depth, a GPT-3 task and setting), Holm-corrected across the pairs (:func:`synthprobe.metrics.stats.holm`).

The block this writes (a results document's ``comparisons.<benchmark>``, version 1)::

    {"version": 1, "metric": "acc_norm", "group_by": "depth", "correction": "holm",
     "models": [name, ...],
     "pairs": [{"a": name, "b": name,          # delta = b − a
                "n", "a_correct", "b_correct", "a_accuracy", "b_accuracy" (percent),
                "delta" (points), "ci95": [lo, hi] (points), "a_only", "b_only" (discordant items),
                "p_mcnemar", "p_holm",
                "same_weights": true,            # only where both models have one weights fingerprint
                "groups": {"<group>": {the same fields}}}],
     "same_weights": [[a, b], ...]}             # only where some pair has: their difference is the settings'

Models that were not scored on the same item ids are not paired (their pair is absent and
listed under ``not_paired`` with the reason). Pure numbers: imports nothing above the core.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from synthprobe.metrics.stats import holm, paired_diff_ci, paired_difference

COMPARISONS_VERSION = 1


def pair_stats(a: Sequence[bool], b: Sequence[bool]) -> dict[str, Any]:
    """One pair on the same items (``a[i]`` and ``b[i]``: item ``i`` right?): counts, accuracies
    (percent), ``delta`` = b − a (points) with its 95 % interval, discordant counts, McNemar p."""
    base = paired_difference(a, b)
    a_only, b_only = base["b"], base["c"]
    both = sum(1 for x, y in zip(a, b) if x and y)
    neither = base["n"] - both - a_only - b_only
    lo, hi = paired_diff_ci(both, a_only, b_only, neither)
    n = base["n"]
    return {
        "n": n,
        "a_correct": base["reference_correct"],
        "b_correct": base["correct"],
        "a_accuracy": base["reference_accuracy"],
        "b_accuracy": base["accuracy"],
        "delta": base["delta"],
        "ci95": None if n == 0 else [round(100 * lo, 4), round(100 * hi, 4)],
        "a_only": a_only,
        "b_only": b_only,
        "p_mcnemar": base["p_mcnemar"],
    }


def compare_models(
    outcomes: Mapping[str, Mapping[str, bool]],
    groups: Mapping[str, Any] | None = None,
    *,
    metric: str,
    group_by: str | None = None,
    keep: Callable[[str, str], bool] | None = None,
    fingerprints: Mapping[str, str | None] | None = None,
) -> dict[str, Any]:
    """Every pair of models in ``outcomes`` (model name → item id → right?, in model order).
    ``groups``: item id → group (depth, task); each pair also gets per-group results. Two models
    are paired only when they scored exactly the same item ids. ``keep(a, b)``: test only the
    pairs it accepts (Holm then counts only those). ``fingerprints``: model name → its weights'
    fingerprint; two names with the same one are the same weights, and their pair says so
    (``same_weights``): a difference between them is the settings', never the model's."""
    prints = {n: f for n, f in (fingerprints or {}).items() if f}
    names = list(outcomes)
    pairs: list[dict[str, Any]] = []
    not_paired: list[dict[str, Any]] = []
    for a, b in combinations(names, 2):
        if keep is not None and not keep(a, b):
            continue
        ids_a, ids_b = list(outcomes[a]), set(outcomes[b])
        if set(ids_a) != ids_b:
            not_paired.append(
                {
                    "a": a,
                    "b": b,
                    "reason": f"scored on different items ({len(ids_a)} and "
                    f"{len(ids_b)}, {len(ids_b & set(ids_a))} shared)",
                }
            )
            continue
        row = {"a": a, "b": b, **pair_stats([outcomes[a][i] for i in ids_a], [outcomes[b][i] for i in ids_a])}
        if a in prints and prints.get(a) == prints.get(b):
            row["same_weights"] = True
        if groups is not None:
            by: dict[str, list[str]] = {}
            for i in ids_a:
                by.setdefault(str(groups[i]), []).append(i)
            row["groups"] = {
                g: pair_stats([outcomes[a][i] for i in ids], [outcomes[b][i] for i in ids])
                for g, ids in sorted(by.items(), key=lambda kv: _group_key(kv[0]))
            }
        pairs.append(row)
    # Holm across the pairs: overall, and within each group
    for p, q in zip(pairs, holm([p["p_mcnemar"] for p in pairs])):
        p["p_holm"] = q
    for g in sorted({g for p in pairs for g in p.get("groups", {})}):
        having = [p for p in pairs if g in p.get("groups", {})]
        for p, q in zip(having, holm([p["groups"][g]["p_mcnemar"] for p in having])):
            p["groups"][g]["p_holm"] = q
    out: dict[str, Any] = {
        "version": COMPARISONS_VERSION,
        "metric": metric,
        "group_by": group_by,
        "correction": "holm",
        "models": names,
        "pairs": pairs,
    }
    same = [[p["a"], p["b"]] for p in pairs if p.get("same_weights")]
    if same:
        out["same_weights"] = same
    if not_paired:
        out["not_paired"] = not_paired
    return out


def _group_key(g: str) -> tuple:
    return (0, int(g), "") if g.isdigit() else (1, 0, g)
