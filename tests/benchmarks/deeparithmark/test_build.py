"""Deep Arithmark builder: composition, balance plan, determinism, release bytes, failures."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark import build as B
from synthprobe.benchmarks.deeparithmark.base import FAMILIES, GenerationError
from synthprobe.benchmarks.deeparithmark.composition import (
    DEPTHS,
    RELEASE_SEED,
    TEMPLATES,
    balance_plan,
    composition,
    depth_counts,
    tier_grid,
)
from synthprobe.io.read import sha256_file

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


# -- composition and plan ------------------------------------------------------------------


def test_release_table_matches_the_card():
    comp = composition(1000)
    assert comp == {t.name: t.count for t in TEMPLATES}
    assert len(comp) == 15 and len({t.topic for t in TEMPLATES}) == 14
    assert {t.name: t.topic for t in TEMPLATES}["inventory_boxes"] == "multi_step_inventory"
    assert {t.name: t.topic for t in TEMPLATES}["inventory_percent_chain"] == "multi_step_inventory"
    assert depth_counts(1000) == {2: 250, 3: 250, 4: 250, 5: 250}
    assert comp["money_discount_fee"] == 122 and comp["prize_ratio_charity"] == 83


@pytest.mark.parametrize("k", [2, 3, 7])
def test_multiples_of_1000_scale_exactly(k):
    assert composition(1000 * k) == {t.name: t.count * k for t in TEMPLATES}


@pytest.mark.parametrize("n", [1, 7, 15, 64, 199, 200, 999, 1001, 4321, 1_000_003])
def test_other_sizes_are_proportional_and_tier_balanced(n):
    comp = composition(n)
    assert sum(comp.values()) == n
    tiers = depth_counts(n)
    assert max(tiers.values()) - min(tiers.values()) <= 1
    for d in DEPTHS:
        assert sum(c for name, c in comp.items() if next(t for t in TEMPLATES if t.name == name).depth == d) == tiers[d]
    # largest remainder: every count is within one of its exact share
    for t in TEMPLATES:
        share = tiers[t.depth] * t.count / 250
        assert abs(comp[t.name] - share) < 1


def test_release_plan_matches_the_card():
    plan = balance_plan(1000)
    assert plan.slots == [252, 252, 248, 248]
    assert plan.ranks == [248, 252, 248, 252]
    assert plan.depths == {2: 250, 3: 250, 4: 250, 5: 250}
    cells = [c for g in plan.grid.values() for row in g for c in row]
    assert len(cells) == 64 and set(cells) == {15, 16}


@pytest.mark.parametrize("n", [1, 17, 200, 999, 1000, 2000, 3000, 12_345, 1_000_000])
def test_plan_cells_differ_by_at_most_one_and_tiers_share_one_split(n):
    plan = balance_plan(n)
    cells = [c for g in plan.grid.values() for row in g for c in row]
    assert sum(cells) == n and max(cells) - min(cells) <= 1
    assert sum(plan.slots) == sum(plan.ranks) == n
    splits = {}
    for d in DEPTHS:
        g = plan.grid[d]
        slot_sums = [sum(row) for row in g]
        rank_sums = [sum(g[s][r] for s in range(4)) for r in range(4)]
        assert max(slot_sums) - min(slot_sums) <= 1 and max(rank_sums) - min(rank_sums) <= 1
        # tiers of one size split slots and ranks the same way (rank uniform across depth)
        assert splits.setdefault(depth_counts(n)[d], (slot_sums, rank_sums)) == (slot_sums, rank_sums)
    # the global marginals stay within one item per tier of each other
    assert max(plan.slots) - min(plan.slots) <= len(DEPTHS)
    assert max(plan.ranks) - min(plan.ranks) <= len(DEPTHS)


def test_tier_grid_rotates_spare_cells_but_keeps_marginals():
    a, b = tier_grid(250, 0), tier_grid(250, 1)
    assert a != b
    assert [sum(r) for r in a] == [sum(r) for r in b] == [63, 63, 62, 62]
    assert [sum(a[s][r] for s in range(4)) for r in range(4)] == [62, 63, 62, 63]


# -- builds ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("build") / "s.jsonl"
    res = B.build(out, seed=11, n=200, progress=False)
    return res, [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_build_reports_the_file_hash_and_follows_the_plan(small_build):
    res, items = small_build
    assert res.sha256 == sha256_file(res.path) and res.n == len(items) == 200
    plan = balance_plan(200)
    assert [sum(1 for o in items if o["label"] == str(s)) for s in range(4)] == plan.slots
    assert [sum(1 for o in items if o["metadata"]["answer_rank"] == r) for r in range(4)] == plan.ranks
    assert Counter(o["metadata"]["template"] for o in items) == Counter(
        {k: v for k, v in composition(200).items() if v}
    )
    assert [o["ind"] for o in items] == list(range(200))
    # items are shuffled: templates are not in table order along the file
    first = [o["metadata"]["template"] for o in items[:30]]
    assert len(set(first)) > 5


def test_items_are_in_release_key_order_with_a_leading_space(small_build):
    _, items = small_build
    o = items[0]
    assert list(o) == [
        "ind",
        "activity_label",
        "ctx",
        "endings",
        "label",
        "source_id",
        "split",
        "split_type",
        "metadata",
    ]
    assert list(o["metadata"]) == [
        "answer",
        "unit",
        "topic",
        "depth",
        "option_values",
        "option_sources",
        "answer_rank",
        "solution_steps",
        "template",
        "group",  # a role-balanced build (the default, as the release) names each item's group
    ]
    for o in items:
        md = o["metadata"]
        assert md["group"].rpartition("#")[0] == md["template"]
        assert all(e.startswith(" ") for e in o["endings"])
        assert md["option_sources"][int(o["label"])] == "correct"
        assert o["source_id"] == f"deeparithmark_v1_{md['template']}_depth{md['depth']}_{o['ind']:04d}"
        assert len(md["solution_steps"]) == md["depth"]


def test_same_seed_same_bytes_other_seed_other_items(small_build, tmp_path):
    res, items = small_build
    again = B.render_bytes(seed=11, n=200)
    assert again == res.path.read_bytes()
    other = [json.loads(x) for x in B.render_bytes(seed=12, n=200).decode().splitlines()]
    shared = {o["ctx"] for o in items} & {o["ctx"] for o in other}
    assert len(shared) < 5  # hashed per-item streams, not seed + index


def test_determinism_across_processes_and_hash_seeds(tmp_path):
    outs = []
    for hs in ("0", "4242"):
        out = tmp_path / f"h{hs}.jsonl"
        env = {**os.environ, "PYTHONHASHSEED": hs, "HF_HUB_OFFLINE": "1"}
        proc = subprocess.run(
            [
                sys.executable,
                str(ROOT / "deeparithmark.py"),
                "build",
                "--seed",
                "5",
                "--n",
                "300",
                "--out",
                str(out),
                "--no-progress",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        assert f"sha256 {sha256_file(out)}" in proc.stdout
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_committed_release_rebuilds_byte_identically():
    assert B.render_bytes(seed=RELEASE_SEED, n=1000) == RELEASE.read_bytes()


# -- failures leave nothing behind -------------------------------------------------------


def _swap_family(monkeypatch, name, generate):
    B.load_families()
    monkeypatch.setitem(FAMILIES, name, dataclasses.replace(FAMILIES[name], generate=generate))


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_step_count_that_breaks_depth_fails_the_build(monkeypatch, tmp_path):
    B.load_families()
    real = FAMILIES["money_discount_fee"].generate

    def short_steps(rng):
        p = real(rng)
        return dataclasses.replace(p, steps=p.steps[:-1])

    _swap_family(monkeypatch, "money_discount_fee", short_steps)
    out = tmp_path / "x.jsonl"
    with pytest.raises(B.BuildError, match="solution steps = depth"):
        B.build(out, seed=3, n=100, progress=False)
    assert _leftovers(tmp_path) == []


def test_a_wrong_step_fails_the_build(monkeypatch, tmp_path):
    B.load_families()
    real = FAMILIES["tank_fill"].generate

    def wrong(rng):
        p = real(rng)
        first = p.steps[0]
        head, _, tail = first.rpartition("= ")
        return dataclasses.replace(p, steps=(f"{head}= 1{tail}",) + tuple(p.steps[1:]))

    _swap_family(monkeypatch, "tank_fill", wrong)
    with pytest.raises(B.BuildError, match="step re-evaluated"):
        B.build(tmp_path / "x.jsonl", seed=3, n=100, progress=False)
    assert _leftovers(tmp_path) == []


def test_an_exhausted_template_is_named(monkeypatch, tmp_path):
    """The legacy builder's attempt loop gives up on a template after 2,000 draws (pinned with
    ``decoys="legacy"``); a role-balanced build names the template whose catalogue draws its
    family no longer realises."""

    def never(rng):
        raise GenerationError("no")

    _swap_family(monkeypatch, "trip_minutes", never)
    with pytest.raises(B.BuildError, match=r"trip_minutes.*no usable draw in 2000 attempts"):
        B.build(tmp_path / "x.jsonl", seed=3, n=100, progress=False, decoys="legacy")
    assert _leftovers(tmp_path) == []
    with pytest.raises(B.BuildError, match=r"trip_minutes.*no longer realises group"):
        B.build(tmp_path / "x.jsonl", seed=3, n=100, progress=False)
    assert _leftovers(tmp_path) == []


def test_a_missing_family_is_named(monkeypatch):
    B.load_families()
    monkeypatch.delitem(FAMILIES, "mix_split")
    with pytest.raises(B.BuildError, match="mix_split.*no registered family"):
        B.load_families()


def test_decoy_sets_prefer_endings_as_long_as_the_answer():
    B.load_families()
    from synthprobe.benchmarks.deeparithmark.base import feasible_ranks
    from synthprobe.seeding import item_rng

    fam = FAMILIES["stock_percent_pack"]
    seen = 0
    for i in range(200):
        try:
            p = fam.generate(item_rng("test/decoys", 1, i))
        except GenerationError:
            continue
        width = len(p.render(p.answer))
        for r in feasible_ranks(p):
            off, sets = B.decoy_sets(p, r)
            assert sets
            for s in sets:
                assert sum(len(p.render(v)) != width for _, v in s) == off
                assert sum(v < p.answer for _, v in s) == r
            seen += 1
    assert seen > 100
