"""Deep Arithmark shortcut audit: bounds on the release, and that each strategy can fail."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.audit import (
    CLASSIFIER,
    AuditItem,
    audit,
    by_template,
    classifier_picks,
    format_table,
    load_audit_items,
    strategy_picks,
    tolerance,
)
from synthprobe.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture(scope="module")
def release():
    items = load_audit_items(RELEASE)
    picks = strategy_picks(items)
    return items, picks, {name: sum(p == it.label for p, it in zip(ps, items)) for name, ps in picks.items()}


def test_tolerance_is_the_cards_bound_at_1000_and_the_guessers_interval_below():
    assert tolerance(1000) == 2.7
    assert tolerance(1_000_000) == 2.7
    assert tolerance(200) == pytest.approx(100 * 1.96 * (0.1875 / 200) ** 0.5)
    assert 5.9 < tolerance(200) < 6.1


def test_release_strategies_stay_at_chance(release):
    items, _, correct = release
    assert len(correct) == 10 and CLASSIFIER in correct
    for name, c in correct.items():
        assert abs(100 * c / len(items) - 25) <= 2.7, (name, c)


def test_slot_and_rank_strategies_equal_the_balance_counts(release):
    items, _, correct = release
    slots = Counter(it.label for it in items)
    assert [correct[f"fixed slot {s}"] for s in range(4)] == [slots[s] for s in range(4)] == [252, 252, 248, 248]
    ranks = Counter(sum(v < it.values[it.label] for v in it.values) for it in items)
    assert correct["pick largest value"] == ranks[3] == 252
    assert correct["pick smallest value"] == ranks[0] == 248


def test_roundest_number_is_slot_zero_when_every_item_has_one_class(release):
    _, picks, correct = release
    assert set(picks["pick the roundest number"]) == {0}
    assert correct["pick the roundest number"] == correct["fixed slot 0"]


def test_classifier_is_deterministic(release):
    items, picks, _ = release
    assert classifier_picks(items[:300]) == classifier_picks(items[:300])


def _synthetic(n: int, correct_ending, seed: int = 0) -> list[AuditItem]:
    """Items whose correct option is placed at random, with a chosen surface form."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        vals = rng.sample(range(11, 99), 4)
        label = rng.randrange(4)
        endings = tuple(correct_ending(v) if i == label else f" {v} apples." for i, v in enumerate(vals))
        out.append(AuditItem(endings=endings, values=tuple(vals), label=label, kind="count"))
    return out


def test_classifier_finds_a_surface_tell():
    items = _synthetic(400, lambda v: f" {v} apples!")
    rows = {r.name: r for r in audit(items)}
    assert rows[CLASSIFIER].percent > 90
    assert not rows[CLASSIFIER].within(tolerance(400))
    # the same items without the tell give it nothing to learn (chance ± sampling noise)
    fair = {r.name: r for r in audit(_synthetic(400, lambda v: f" {v} apples."))}
    assert fair[CLASSIFIER].percent < 35


def test_value_and_length_strategies_catch_a_biased_file():
    rng = random.Random(1)
    items = []
    for _ in range(300):
        vals = sorted(rng.sample(range(11, 99), 3))
        big = rng.randrange(100, 999)  # the answer is the largest and the longest
        order = vals + [big]
        rng.shuffle(order)
        items.append(
            AuditItem(
                endings=tuple(f" {v} kg." for v in order), values=tuple(order), label=order.index(big), kind="count"
            )
        )
    rows = {r.name: r for r in audit(items, classifier=False)}
    assert rows["pick largest value"].percent == 100 and rows["longest ending text"].percent == 100
    assert rows["pick smallest value"].percent == 0 and rows["shortest ending text"].percent == 0
    table = format_table(list(rows.values()), title="biased")
    assert table.count("FAIL") >= 4


def test_by_template_breakdown_lists_every_template(release):
    items, picks, _ = release
    text = by_template(items, picks)
    assert len({it.template for it in items}) == 15
    for t in {it.template for it in items}:
        assert t in text


def test_audit_needs_option_values(tmp_path):
    rows = [json.loads(x) for x in RELEASE.read_text("utf-8").splitlines()[:20]]
    del rows[3]["metadata"]["option_values"]
    path = tmp_path / "no_values.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError, match=r"no_values\.jsonl:4: field 'metadata\.option_values'"):
        load_audit_items(path)
