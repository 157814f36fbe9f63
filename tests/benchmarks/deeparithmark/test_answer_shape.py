"""Deep Arithmark answer-shape table: what a shape is, the committed table, the calibration
step, and that the table really brings each family's answers closer to its decoys."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections import Counter

import pytest
from deeparithmark_calibrate_shape import MIN_WEIGHT, ROOT, counts, update

from synthprobe.benchmarks.deeparithmark.answer_shape import acceptance, answer_shape, load_table, shape_of
from synthprobe.benchmarks.deeparithmark.build import BuildStats, iter_items, load_families
from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES
from synthprobe.seeding import derive_seed


@pytest.mark.parametrize(
    "text, shape",
    [
        (" 127 crates.", "3:12"),
        (" $1,250.", "4:12"),
        (" 10:45 a.m.", "4:10"),
        (" 9:05 p.m.", "3:90"),
        (" 7 crates.", "1:7"),
        (" 26 crates.", "2:26"),
    ],
)
def test_shape_is_digit_count_and_first_two_digits(text, shape):
    assert shape_of(text) == shape


def test_committed_table_covers_every_family_with_weights_in_range():
    table = load_table()
    assert set(table) == {t.name for t in TEMPLATES}
    for name, row in table.items():
        assert row, name
        assert max(row.values()) == 1.0, name
        assert all(MIN_WEIGHT <= w <= 1.0 for w in row.values()), name
        assert all(re.fullmatch(r"\d+:\d{1,2}", s) for s in row), name
        # a table that keeps everything would not be doing anything
        assert min(row.values()) < 0.8, name


def test_acceptance_reads_the_family_row_and_defaults_to_keeping():
    fam = load_families()["share_then_split"]
    problem = fam.generate(random.Random(5))
    shape = answer_shape(problem)
    assert acceptance({"share_then_split": {shape: 0.25}}, problem) == 0.25
    assert acceptance({"share_then_split": {}}, problem) == 1.0
    assert acceptance({}, problem) == 1.0


def test_update_raises_shapes_the_decoys_hold_more_often_and_clips():
    # per item: 2:11 is held by answers ten times as often as by a decoy, 2:50 equally,
    # 2:90 twice as often by a decoy (three decoys per item)
    answers = Counter({"2:11": 300, "2:50": 300, "2:90": 300})
    decoys = Counter({"2:11": 90, "2:50": 900, "2:90": 1800})
    w = update({}, answers, decoys)
    assert w["2:90"] == 1.0 > w["2:50"] > w["2:11"] >= MIN_WEIGHT
    assert update({}, answers, decoys) == w  # deterministic
    assert update(w, answers, decoys)["2:11"] < w["2:11"]  # the next round goes further
    # a shape the answers hold far too often is thinned down to the floor, not to zero
    w2 = update({}, Counter({"2:11": 1000, "2:90": 300}), Counter({"2:11": 30, "2:90": 1800}))
    assert w2["2:11"] == MIN_WEIGHT and w2["2:90"] == 1.0


def _mismatch(answers: Counter, decoys: Counter) -> float:
    na, nd = sum(answers.values()), sum(decoys.values())
    return 0.5 * sum(abs(answers[s] / na - decoys[s] / nd) for s in set(answers) | set(decoys))


@pytest.mark.parametrize("template", ["share_then_split", "discount_tax_coupon_split", "schedule_sessions"])
def test_table_brings_answers_closer_to_their_decoys(template):
    # a sample the calibration never drew: the table must generalise, not remember
    seed = derive_seed("test/answer-shape", template)
    before = _mismatch(*counts(template, {}, seed, 1500))
    after = _mismatch(*counts(template, load_table(), seed, 1500))
    # the sampling floor at 1,500 items is about 0.1; these three start far above it
    assert after < before - 0.05, (before, after)


def test_build_thins_draws_with_the_table():
    """The legacy builder's draws are thinned by the table (``decoys="legacy"``); a role-balanced
    build needs none: a group's four values are each the key once, so answers and decoys share
    their shapes by construction."""
    stats = BuildStats()
    items = list(iter_items(7, 100, stats=stats, decoys="legacy"))
    assert len(items) == 100
    assert stats.discarded["answer shape thinned"] > 0


def test_calibration_command_runs_a_small_round_and_reports():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tools" / "deeparithmark_calibrate_shape.py"),
            "--families",
            "trip_minutes",
            "--rounds",
            "1",
            "--n",
            "40",
            "--jobs",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert re.search(r"trip_minutes\s+answer/decoy shape mismatch \d\.\d{3} -> \d\.\d{3}", out.stdout)
    assert "wrote" not in out.stdout
