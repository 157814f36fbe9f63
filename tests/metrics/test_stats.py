"""Statistics and summaries over per-item records, against known values."""

from __future__ import annotations

import math

import pytest

from synthprobe.backends.base import EndingScore
from synthprobe.benchmarks.deeparithmark.scoring.metrics import mistake_profile, rank_preference, summarise
from synthprobe.metrics.choice import argmax_first, softmax
from synthprobe.metrics.stats import accuracy_block, binom_p, chi2_homogeneity, wilson_ci
from synthprobe.scoring.records import item_record, value_rank


def test_binomial_p_against_chance_matches_the_card():
    # The card: 21.3 % -> p = 0.007, 29.2 % -> p = 0.0027 (1,000 items, chance 25 %).
    assert binom_p(213, 1000, 0.25) == pytest.approx(0.007, abs=0.0006)
    assert binom_p(292, 1000, 0.25) == pytest.approx(0.0027, abs=0.0002)
    assert binom_p(200, 1000, 0.25) == pytest.approx(0.0002, abs=0.0001)
    assert binom_p(250, 1000, 0.25) == pytest.approx(1.0)
    # Two-sided: equally far below and above chance give similar p.
    assert binom_p(210, 1000, 0.25) == pytest.approx(binom_p(291, 1000, 0.25), rel=0.35)


def test_wilson_interval_matches_the_formula():
    k, n, z = 250, 1000, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low, high = wilson_ci(k, n)
    assert low == pytest.approx(centre - half, abs=1e-9) and high == pytest.approx(centre + half, abs=1e-9)
    # About +-2.7 points at chance, as the card's limitations section says.
    assert (high - low) / 2 == pytest.approx(0.027, abs=0.001)
    lo0, hi0 = wilson_ci(0, 20)
    assert lo0 == 0.0 and 0 < hi0 < 0.2


def test_accuracy_block_fields():
    b = accuracy_block(292, 1000, 0.25)
    assert b["correct"] == 292 and b["total"] == 1000 and b["acc"] == pytest.approx(0.292)
    assert b["ci95"][0] < 0.292 < b["ci95"][1] and b["p_vs_chance"] < 0.01


def test_chi2_homogeneity_by_hand():
    groups = [("a", 30, 100), ("b", 20, 100), ("c", 10, 100)]
    out = chi2_homogeneity(groups)
    # Expected correct per group 20, wrong 80: chi2 = 2*(100/20 + 100/80) = 12.5
    assert out["chi2"] == pytest.approx(12.5) and out["df"] == 2
    assert out["p"] == pytest.approx(math.exp(-12.5 / 2), rel=1e-9)  # chi2 with 2 df: p = exp(-x/2)
    assert chi2_homogeneity([("a", 3, 10)])["chi2"] is None
    assert chi2_homogeneity([("a", 0, 10), ("b", 0, 5)])["p"] is None


def test_argmax_ties_go_to_the_lowest_index():
    assert argmax_first([1.0, 3.0, 3.0, 2.0]) == 1
    assert argmax_first([-1.0, -1.0]) == 0
    assert sum(softmax([0.0, math.log(3.0)])) == pytest.approx(1.0)
    assert softmax([0.0, math.log(3.0)])[1] == pytest.approx(0.75)
    assert value_rank([26, 29, 27, 31], 3) == 3 and value_rank(["10:55", "11:05"], 0) is None


class Item:
    def __init__(self, label, metadata, category="cat", id_="x"):
        self.label, self.raw, self.category, self.id, self.line = label, {"metadata": metadata}, category, id_, 1

    @property
    def metadata(self):
        return self.raw["metadata"]


def scores(logprobs, ntoks, nchars=(4, 4, 4, 4)):
    return [EndingScore(lp, n, c, False) for lp, n, c in zip(logprobs, ntoks, nchars)]


def test_item_record_metrics_can_disagree():
    md = {
        "depth": 3,
        "template": "t",
        "topic": "tp",
        "option_values": [5, 50, 500, 9],
        "option_sources": ["correct", "m1", "m2", "m3"],
        "answer_rank": 0,
    }
    # Sums: ending 1 best (-4); per token: ending 2 best (-9/9 = -1); per char: ending 3 best (-6/20)
    r = item_record(Item(0, md), scores([-5.0, -4.0, -9.0, -6.0], [2, 2, 9, 3], [4, 4, 4, 20]))
    assert (r["pred_acc"], r["pred_acc_norm"], r["pred_acc_char"]) == (1, 2, 3)
    assert not r["correct_acc"] and not r["correct_acc_norm"] and not r["correct_acc_char"]
    assert r["chosen_source"] == "m2" and r["chosen_rank"] == 3
    assert r["per_token"] == [-2.5, -2.0, -1.0, -2.0]
    assert r["soft"] == pytest.approx(softmax([-2.5, -2.0, -1.0, -2.0])[0])
    assert (r["depth"], r["template"], r["topic"]) == (3, "t", "tp")


def make_records(n_correct_by_template: dict[str, tuple[int, int]], depth: int = 2):
    recs = []
    for t, (k, n) in n_correct_by_template.items():
        for i in range(n):
            label = 0
            pred = 0 if i < k else 1 + i % 3
            lp = [-5.0] * 4
            lp[pred] = -1.0
            md = {
                "depth": depth,
                "template": t,
                "topic": t,
                "option_values": [10, 20, 30, 40],
                "option_sources": ["correct", "a", "b", "c"],
                "answer_rank": 0,
            }
            recs.append(item_record(Item(label, md, id_=f"{t}{i}"), scores(lp, [1, 1, 1, 1])))
    return recs


def test_summarise_breakdowns_and_homogeneity():
    recs = make_records({"t1": (30, 100), "t2": (20, 100), "t3": (10, 100)})
    s = summarise(recs)
    assert s["n"] == 300 and s["chance"] == 0.25
    assert s["metrics"]["acc_norm"]["correct"] == 60
    assert s["metrics"]["acc_norm"]["p_vs_chance"] == pytest.approx(binom_p(60, 300, 0.25))
    assert s["by_template"]["t1"]["acc_norm"] == pytest.approx(0.3)
    assert s["by_depth"]["2"]["n"] == 300
    assert s["template_homogeneity"]["chi2"] == pytest.approx(12.5)
    # Every correct answer is the smallest value here: rank preference sees it.
    rp = s["rank_preference"]
    assert rp["chosen_rank_counts"][0] == 60 and rp["pick_smallest"] == pytest.approx(0.2)
    assert sum(rp["chosen_rank_counts"]) == 300 and rp["answer_rank_counts"] == [300, 0, 0, 0]
    mp = s["mistake_profile"]["t3"]["sources"]
    assert mp["correct"]["chosen"] == 10 and mp["a"]["offered"] == 100
    assert sum(v["chosen"] for v in mp.values()) == 100


def test_records_without_metadata_leave_breakdowns_empty():
    recs = [item_record(Item(1, {}), scores([-3.0, -1.0], [1, 1], [2, 2]))]
    s = summarise(recs)
    assert s["by_depth"] == {} and s["by_template"] == {}
    assert s["by_category"]["cat"]["n"] == 1 and s["chance"] == 0.5
    assert rank_preference(recs) is None and mistake_profile(recs) is None
