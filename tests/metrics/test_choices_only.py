"""Trained choices-only adversaries and the equivalence statistics (synthprobe.metrics.choices_only,
synthprobe.metrics.equivalence): each adversary finds a planted leak and stays at chance where the
labels are independent of the options; the intervals, TOST, power, Holm and cluster figures agree
with values computed by hand; role-balanced groups score exactly chance and pass on clusters."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from synthprobe.errors import InputError
from synthprobe.metrics.choices_only import (
    ADVERSARIES,
    FEATURES,
    ChoiceItem,
    Control,
    char_ngram_embedder,
    labels,
    make_adversary,
    option_features,
    run_audit,
    verdict,
)
from synthprobe.metrics.equivalence import (
    above_chance_p,
    clopper_pearson,
    cluster_interval,
    equivalence_block,
    holm_screen,
    items_needed,
    tost,
    tost_power,
)

GROUPS = ("apples", "crates", "litres")


def run_item(rng: random.Random, *, key_largest: bool) -> ChoiceItem:
    """An evenly spaced run of four values; the key is the largest, or a random slot."""
    start, step = rng.randint(10, 900), rng.randint(1, 60)
    values = [start + j * step for j in range(4)]
    rng.shuffle(values)
    label = values.index(max(values)) if key_largest else rng.randrange(4)
    group = rng.choice(GROUPS)
    endings = tuple(f" {v} {group}." for v in values)
    return ChoiceItem(endings, tuple(values), label, group, depth=rng.choice((2, 3)))


def planted(n: int, seed: int) -> list[ChoiceItem]:
    rng = random.Random(seed)
    return [run_item(rng, key_largest=True) for _ in range(n)]


def independent(n: int, seed: int) -> list[ChoiceItem]:
    """Random distinct values and a label drawn apart from them."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        values = rng.sample(range(5, 2000), 4)
        group = rng.choice(GROUPS)
        out.append(ChoiceItem(tuple(f" {v} {group}." for v in values), tuple(values), rng.randrange(4), group, 2))
    return out


def text_leak(n: int, seed: int) -> list[ChoiceItem]:
    """Values carry nothing; the key's ending says 'boxes' where the decoys say 'crates'."""
    out = []
    for it in independent(n, seed):
        endings = tuple(f" {v} {'boxes' if i == it.label else 'crates'}." for i, v in enumerate(it.values))
        out.append(ChoiceItem(endings, it.values, it.label, it.group, it.depth))
    return out


def accuracy(adv, items) -> float:
    return float(np.mean(np.array(adv.predict(items)) == labels(items)))


@pytest.mark.parametrize("name", ["trees", "knn", "deepsets", "gap_order"])
def test_each_numeric_adversary_finds_the_planted_leak_and_stays_at_chance_without_one(name):
    leak = make_adversary(name).fit(planted(600, 1))
    assert accuracy(leak, planted(300, 2)) > 0.9  # chance is 0.25
    null = make_adversary(name).fit(independent(600, 3))
    test = independent(400, 4)
    hits = int(round(accuracy(null, test) * len(test)))
    assert above_chance_p(hits, len(test), 0.25) > 0.01, hits


def test_the_embedding_probe_reads_the_text_of_the_endings():
    adv = make_adversary("embedding", embed=char_ngram_embedder()).fit(text_leak(400, 5))
    assert accuracy(adv, text_leak(200, 6)) > 0.9
    null = make_adversary("embedding", embed=char_ngram_embedder()).fit(independent(400, 7))
    assert accuracy(null, independent(400, 8)) < 0.32
    with pytest.raises(InputError, match="needs an embedder"):
        make_adversary("embedding")


def test_missing_and_equal_values_do_not_crash_and_give_the_missing_flag():
    rng = random.Random(9)
    items = []
    for _ in range(120):
        values = [rng.choice([None, 0, 7, 7, 70, 3.5]) for _ in range(4)]
        items.append(ChoiceItem(tuple(f" {v} x." for v in values), tuple(values), rng.randrange(4), "g", None))
    feats = option_features(items)
    assert feats.shape == (120, 4, len(FEATURES) + 2 * (4 - 1) - 2) and np.isfinite(feats).all()
    missing = np.array([[v is None for v in it.values] for it in items])
    assert (feats[:, :, -1] == missing).all()
    assert (feats[missing][:, :-4] == 0).all()  # value features 0 beside the flag
    for name in ADVERSARIES:
        adv = make_adversary(name, embed=char_ngram_embedder(32)).fit(items)
        picks = adv.predict(items)
        assert len(picks) == 120 and set(picks) <= {0, 1, 2, 3}


def test_relation_features_see_the_times_ten_and_progression_roles():
    item = ChoiceItem((" 12 m.", " 120 m.", " 24 m.", " 36 m."), (12, 120, 24, 36), 0, "g")
    feats = dict(zip(_names(4), option_features([item])[0].T))
    assert list(feats["times10_out"]) == [1, 0, 0, 0] and list(feats["times10_in"]) == [0, 1, 0, 0]
    assert list(feats["times2_out"]) == [1, 0, 0, 0] and list(feats["ap_mid"]) == [0, 0, 1, 0]
    assert list(feats["rank"]) == [0, 3, 1, 2] and list(feats["is_max"]) == [0, 1, 0, 0]
    assert list(feats["trailing_zeros"]) == [0, 1, 0, 0] and list(feats["same_shape"]) == [3, 3, 3, 3]


def _names(k: int) -> list[str]:
    out = []
    for f in FEATURES:
        out += [f"{f}{j}" for j in range(k - 1)] if f.endswith("_sorted") else [f]
    return out


def test_fits_are_deterministic():
    train, test = planted(300, 10) + independent(300, 11), independent(200, 12)
    for name in ("trees", "deepsets", "knn"):
        assert make_adversary(name).fit(train).predict(test) == make_adversary(name).fit(train).predict(test)


# ---------------------------------------------------------------------------------------
# Statistics, against values computed by hand
# ---------------------------------------------------------------------------------------


def test_clopper_pearson_matches_its_closed_forms_and_definition():
    # 0 of n: upper = 1 − (α/2)^(1/n); n of n: lower = (α/2)^(1/n); at 90 %, α/2 = 0.05
    assert clopper_pearson(0, 10) == pytest.approx((0.0, 1 - 0.05 ** (1 / 10)))
    assert clopper_pearson(10, 10) == pytest.approx((0.05 ** (1 / 10), 1.0))
    lo, hi = clopper_pearson(30, 100)

    def tail_ge(k, n, p):
        return sum(math.comb(n, x) * p**x * (1 - p) ** (n - x) for x in range(k, n + 1))

    assert tail_ge(30, 100, lo) == pytest.approx(0.05, abs=1e-9)
    assert 1 - tail_ge(31, 100, hi) == pytest.approx(0.05, abs=1e-9)


def test_tost_is_the_larger_of_the_two_exact_one_sided_p_values():
    def pmf(x, n, p):
        return math.comb(n, x) * p**x * (1 - p) ** (n - x)

    k, n = 25, 100
    p_low = sum(pmf(x, n, 0.23) for x in range(k, n + 1))  # H0: p <= 0.23
    p_upp = sum(pmf(x, n, 0.27) for x in range(0, k + 1))  # H0: p >= 0.27
    assert tost(k, n, 0.25, 0.02) == pytest.approx(max(p_low, p_upp), rel=1e-9)


def test_items_needed_for_two_points_is_where_the_power_stays_above_80_percent():
    assert items_needed(0.02) == 4097
    assert tost_power(4097, 0.25, 0.02) >= 0.8 > tost_power(4096, 0.25, 0.02)
    assert tost_power(4070, 0.25, 0.02) == pytest.approx(0.80, abs=0.002)  # the reference's ≈ 4,070
    assert items_needed(0.03) == 1825


def test_equivalence_block_passes_inside_the_margin_and_says_when_too_small():
    ok = equivalence_block(1025, 4100, 0.25)
    assert ok["applies"] and ok["passes"] and ok["cp90"][0] > 0.23 and ok["cp90"][1] < 0.27
    high = equivalence_block(1150, 4100, 0.25)
    assert high["applies"] and high["passes"] is False
    small = equivalence_block(250, 1000, 0.25)
    assert not small["applies"] and small["passes"] is None and small["best_margin"] == pytest.approx(0.041)


def test_holm_screen_matches_the_hand_computed_correction():
    strata = [{"name": "a", "correct": 40, "n": 100}, {"name": "b", "correct": 30, "n": 100}]
    strata.append({"name": "c", "correct": 25, "n": 100})
    rows = holm_screen(strata, 0.25, alpha=0.05)
    p = [above_chance_p(s["correct"], 100, 0.25) for s in strata]
    order = sorted(range(3), key=p.__getitem__)
    expected, running = [0.0] * 3, 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (3 - i) * p[j]))
        expected[j] = running
    assert [r["p_holm"] for r in rows] == pytest.approx(expected)
    assert [r["flagged"] for r in rows] == [True, False, False] and rows[0]["name"] == "a"


def test_cluster_interval_by_hand():
    # four clusters of four: 1, 2, 0, 1 correct → p = 0.25, se = √(4/3 · 2) / 16, t(3) = 2.35336
    out = cluster_interval([(1, 4), (2, 4), (0, 4), (1, 4)])
    se = math.sqrt(4 / 3 * 2) / 16
    assert out["clusters"] == 4 and out["accuracy"] == 0.25 and out["se"] == pytest.approx(se)
    assert out["interval"] == pytest.approx([0.25 - 2.353363 * se, 0.25 + 2.353363 * se], abs=1e-6)
    assert cluster_interval([(1, 4)] * 50)["interval"] == [0.25, 0.25]


# ---------------------------------------------------------------------------------------
# The audit runner
# ---------------------------------------------------------------------------------------


def balanced_groups(n_groups: int, seed: int) -> list[ChoiceItem]:
    """Role-balanced groups: four items show the same four values, each value the key of one."""
    rng = random.Random(seed)
    out = []
    for g in range(n_groups):
        base = run_item(rng, key_largest=True)
        for member in range(4):
            values = list(base.values)
            rng.shuffle(values)
            label = values.index(sorted(base.values)[member])
            out.append(ChoiceItem(base.endings, tuple(values), label, base.group, base.depth, cluster=f"g{g}"))
    return out


def test_balanced_groups_score_exactly_chance_and_pass_on_clusters():
    report = run_audit(planted(400, 13), {"groups": balanced_groups(1025, 14)}, adversaries=("gap_order", "knn"))
    block = report["test_sets"]["groups"]
    for b in block["adversaries"].values():
        assert b["correct"] == 1025 and b["clusters"]["clusters"] == 1025 and b["interval_used"] == "clusters"
        assert b["clusters"]["interval"] == [0.25, 0.25] and b["passes"] is True
    assert block["status"] == "passes" and report["verdict"]["status"] == "passes"


def test_run_audit_controls_and_verdict():
    controls = [
        Control("leak", planted(400, 15), planted(300, 16), "fail"),
        Control("null", None, independent(300, 17), "pass"),
    ]
    steps = []
    report = run_audit(
        independent(400, 18), {"test": independent(300, 19)}, ("gap_order", "trees"), controls, step=steps.append
    )
    json.dumps(report, allow_nan=False)  # plain JSON
    leak, null = report["controls"]
    assert leak["outcome"] == "fail" and leak["best_accuracy"] > 0.9 and leak["as_expected"]
    assert null["outcome"] == "pass" and null["as_expected"] and null["train_n"] is None
    assert report["test_sets"]["test"]["status"] == "screen only"
    assert report["verdict"]["status"] == "inconclusive" and report["verdict"]["power"] is True
    assert "fit trees" in steps and all(
        s >= 0 for s in (leak["seconds"], report["adversaries"]["trees"]["fit_seconds"])
    )


def test_verdict_precedence():
    ok_set, bad_set, small = {"status": "passes"}, {"status": "fails"}, {"status": "screen only"}
    leak_ok = {"name": "leak", "expect": "fail", "as_expected": True}
    leak_missed = {"name": "leak", "expect": "fail", "as_expected": False}
    null_ok = {"name": "null", "expect": "pass", "as_expected": True}
    null_bad = {"name": "null", "expect": "pass", "as_expected": False}
    assert verdict({"a": ok_set}, [leak_ok, null_ok])["status"] == "passes"
    assert verdict({"a": bad_set}, [leak_ok, null_bad])["status"] == "no power"
    assert verdict({"a": bad_set}, [leak_missed, null_ok])["status"] == "fails"
    assert verdict({"a": ok_set}, [leak_missed, null_ok])["status"] == "no power"
    assert verdict({"a": small}, [leak_ok, null_ok])["status"] == "inconclusive"


def test_bad_items_are_refused():
    with pytest.raises(InputError, match="same number"):
        run_audit([ChoiceItem((" 1.", " 2."), (1, 2), 0), ChoiceItem((" 1.", " 2.", " 3."), (1, 2, 3), 0)], {})
    with pytest.raises(InputError, match="label 4 outside"):
        run_audit([{"endings": [" 1.", " 2."], "values": [1, 2], "label": 4}], {})
    with pytest.raises(InputError, match="no adversary 'forest'"):
        run_audit(planted(10, 1), {}, adversaries=("forest",))
