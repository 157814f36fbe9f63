"""Paired model-vs-model statistics (:mod:`synthprobe.metrics.compare`, :func:`paired_diff_ci`)."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from synthprobe.metrics.compare import compare_models, pair_stats
from synthprobe.metrics.stats import paired_diff_ci


def _lists(both, a_only, b_only, neither):
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return a, b


def test_pair_stats_counts_interval_and_exact_mcnemar():
    a, b = _lists(30, 4, 14, 52)
    s = pair_stats(a, b)
    assert (s["n"], s["a_correct"], s["b_correct"], s["a_only"], s["b_only"]) == (100, 34, 44, 4, 14)
    assert s["delta"] == pytest.approx(10.0)
    # the exact McNemar test is the two-sided binomial test of the discordant pairs at 1/2
    assert s["p_mcnemar"] == pytest.approx(binomtest(4, 18, 0.5).pvalue)
    lo, hi = s["ci95"]
    assert lo < 10.0 < hi and lo > 0  # significant: the interval excludes 0, as p < 0.05 says
    assert s["p_mcnemar"] < 0.05


def test_interval_properties():
    # swapping the two models mirrors the interval
    lo, hi = paired_diff_ci(30, 4, 14, 52)
    lo2, hi2 = paired_diff_ci(30, 14, 4, 52)
    assert (lo, hi) == pytest.approx((-hi2, -lo2))
    # no discordant pair: centred on 0, and it narrows as n grows
    w_small = paired_diff_ci(5, 0, 0, 5)
    w_big = paired_diff_ci(500, 0, 0, 500)
    assert w_small[0] == pytest.approx(-w_small[1]) and w_small[1] > w_big[1] > 0
    assert all(-1 <= x <= 1 for x in paired_diff_ci(0, 0, 10, 0))
    assert paired_diff_ci(0, 0, 10, 0)[0] > 0


def test_compare_models_pairs_groups_and_holm():
    ids = [str(i) for i in range(40)]
    depth = {i: 2 + int(i) % 2 for i in ids}
    strong = {i: True for i in ids}
    weak = {i: int(i) % 4 == 0 for i in ids}
    other = {i: int(i) % 3 == 0 for i in ids}
    out = compare_models({"strong": strong, "weak": weak, "other": other}, depth, metric="acc_norm", group_by="depth")
    assert [(p["a"], p["b"]) for p in out["pairs"]] == [("strong", "weak"), ("strong", "other"), ("weak", "other")]
    for p in out["pairs"]:
        assert p["p_holm"] >= p["p_mcnemar"]
        assert list(p["groups"]) == ["2", "3"]
        assert sum(g["n"] for g in p["groups"].values()) == p["n"]
        assert all(g["p_holm"] >= g["p_mcnemar"] for g in p["groups"].values())
    # the smallest of three p-values is multiplied by 3 under Holm
    ps = sorted(p["p_mcnemar"] for p in out["pairs"])
    assert min(p["p_holm"] for p in out["pairs"]) == pytest.approx(min(1.0, 3 * ps[0]))


def test_models_on_different_items_are_not_paired():
    out = compare_models({"a": {"1": True, "2": False}, "b": {"1": True, "3": True}}, metric="acc_norm")
    assert out["pairs"] == [] and "different items" in out["not_paired"][0]["reason"]


def test_two_names_for_the_same_weights_are_said_to_be_the_same_weights():
    """Two names for one checkpoint: their pair (and the block) say so, the printed comparison
    says so, and the report's row names it; a pair of different weights says nothing."""
    from synthprobe.report.compare import rows
    from synthprobe.scoring.console import format_comparisons

    right = {str(i): i % 3 == 0 for i in range(30)}
    other = {str(i): i % 2 == 0 for i in range(30)}
    block = compare_models(
        {"a": right, "b": dict(right), "c": other},
        metric="acc_norm",
        fingerprints={"a": "158b3579", "b": "158b3579", "c": "0d9e2a11"},
    )
    same = {(p["a"], p["b"]): p.get("same_weights", False) for p in block["pairs"]}
    assert same == {("a", "b"): True, ("a", "c"): False, ("b", "c"): False}
    assert block["same_weights"] == [["a", "b"]]
    printed = format_comparisons({"deeparithmark": block})
    assert "a and b are the same weights" in printed and printed.count("same weights") == 1
    assert rows(block)[0][0] == "b − a (the same weights)" and "same weights" not in rows(block)[1][0]
    # no fingerprint (a server that gives none): nothing is claimed
    plain = compare_models({"a": right, "b": dict(right)}, metric="acc_norm", fingerprints={"a": "", "b": ""})
    assert "same_weights" not in plain and "same_weights" not in plain["pairs"][0]
