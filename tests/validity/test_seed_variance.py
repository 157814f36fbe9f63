"""Seed variance's statistics on hand-made per-seed scores, its seed list, and its refusals."""

from __future__ import annotations

import pytest

from synthprobe.errors import InputError
from synthprobe.validity.seeds import paired, seed_list, summarise


def _seed(seed, acc, d2, d3):
    return {
        "seed": seed,
        "n": 100,
        "correct": round(100 * acc),
        "accuracy": acc,
        "by_depth": {"2": d2, "3": d3},
        "by_template": {"t": acc},
    }


def test_mean_sd_range_and_where_the_release_falls():
    per = [_seed(1, 0.20, 0.1, 0.3), _seed(2, 0.25, 0.2, 0.3), _seed(3, 0.30, 0.3, 0.3)]
    out = summarise(per, {"accuracy": 0.35})
    assert out["overall"]["mean"] == pytest.approx(0.25) and out["overall"]["sd"] == pytest.approx(0.05)
    assert (out["overall"]["min"], out["overall"]["max"]) == (0.20, 0.30)
    assert out["by_depth"]["2"]["mean"] == pytest.approx(0.2) and out["by_depth"]["3"]["sd"] == 0
    assert out["release"]["z"] == pytest.approx(2.0) and out["release"]["share_below"] == 1.0
    assert "2.00 sd above the mean of 3 fresh builds" in out["release"]["verdict"]


def test_seeds_are_deterministic_distinct_and_not_a_bare_counter():
    a, b = seed_list(0, 5), seed_list(0, 5)
    assert a == b and len(set(a)) == 5 and a != list(range(1, 6))
    assert seed_list(1, 5) != a


def test_one_build_is_no_variance():
    with pytest.raises(InputError, match="at least two builds"):
        seed_list(0, 1)


def test_two_models_are_paired_over_the_same_seeds():
    a = {"per_seed": [_seed(s, acc, 0, 0) for s, acc in ((1, 0.2), (2, 0.3), (3, 0.25))]}
    b = {"per_seed": [_seed(s, acc, 0, 0) for s, acc in ((1, 0.3), (2, 0.41), (3, 0.33))]}
    out = paired(a, b)
    assert out["seeds"] == 3 and out["mean_difference"] == pytest.approx(0.0967, abs=1e-4) and out["p"] < 0.05
    with pytest.raises(InputError, match="fewer than two seeds"):
        paired(a, {"per_seed": [_seed(9, 0.3, 0, 0)]})
