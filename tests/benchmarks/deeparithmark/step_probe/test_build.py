"""The per-step probes against every shortcut of the release's audit (issue 16 follow-up): the
text-level strategies (longest / shortest option text, the char-3-gram classifier) as well as
the value-level ones, on the release's probes and per operation, with every wrong option still
the value of the named mistake it claims."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.audit import CHANCE, CLASSIFIER, score, strategy_picks, tolerance
from synthprobe.benchmarks.deeparithmark.base import fmt_clock
from synthprobe.benchmarks.deeparithmark.step_probe.build import (
    SHORTCUTS,
    audit_items,
    audit_probes,
    build_probes,
    divisors,
    step_mistakes,
)
from synthprobe.benchmarks.deeparithmark.steps import check_step
from synthprobe.formats.arithmark3 import load_arithmark3

ROOT = Path(__file__).resolve().parents[4]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture(scope="module")
def release_probes():
    return build_probes(load_arithmark3(RELEASE), path=RELEASE)


def test_release_probes_pass_every_strategy_of_the_audit(release_probes):
    """All rows, the classifier and longest/shortest text included (they scored 33.6 % and
    21.9 % before the decoys were chosen for them)."""
    probes, _ = release_probes
    rows = audit_probes(probes, classifier=True)
    names = {r.name for r in rows}
    assert {CLASSIFIER, "longest ending text", "shortest ending text"} <= names
    tol = tolerance(len(probes))
    bad = [(r.name, round(r.percent, 2)) for r in rows if abs(r.percent - CHANCE) > tol]
    assert not bad, f"outside ±{tol:.1f} points of chance: {bad}"


def test_value_and_text_shortcuts_are_at_chance_within_each_operation(release_probes):
    """The prompt names the operation, so a shortcut must not work for one operation either:
    rank, slot and text length are balanced per operation."""
    probes, _ = release_probes
    by_op: dict[str, list] = {}
    for p in probes:
        by_op.setdefault(p.op, []).append(p)
    for op, group in by_op.items():
        items = audit_items(group)
        picks = strategy_picks(items, classifier=False)
        for name in (
            "pick largest value",
            "pick smallest value",
            "fixed slot 0",
            "fixed slot 3",
            "longest ending text",
            "shortest ending text",
        ):
            s = score(name, picks[name], items)
            assert abs(s.percent - CHANCE) <= tolerance(len(group)), (op, name, s.percent)


def test_the_builders_own_shortcuts_are_at_chance_over_all_probes(release_probes):
    """Longest/shortest text and most/fewest small divisors over all operations (per operation
    the divisors cannot be balanced for multiplications and percents: README says so)."""
    probes, _ = release_probes
    for name, pick in SHORTCUTS.items():
        hits = sum(pick(p.options, p.values) == p.label for p in probes)
        assert abs(100 * hits / len(probes) - CHANCE) <= tolerance(len(probes)), (name, hits, len(probes))


def test_without_the_balance_the_answer_has_the_most_divisors_more_often_than_chance(release_probes):
    """Why divisors are balanced: a correct result of arithmetic on round operands is "nicer"
    than the carry and borrow errors next to it. The plain step mistakes of multiplications
    show it (the answer beats the mean decoy), so the balance is doing real work."""
    probes, _ = release_probes
    items = {it.id: it for it in load_arithmark3(RELEASE)}
    nicer = total = 0
    for p in probes:
        if p.op != "×":
            continue
        step = check_step(items[p.item].metadata["solution_steps"][p.step - 1])
        col = [int(v) for name, v in step_mistakes(step).items() if "error in the" in name and v > 0]
        mean = sum(divisors(v) for v in col) / len(col)
        nicer += divisors(p.values[p.label]) > mean
        total += 1
    assert nicer / total > 0.6


def test_every_wrong_option_is_the_value_of_its_named_mistake(release_probes):
    probes, _ = release_probes
    items = {it.id: it for it in load_arithmark3(RELEASE)}
    kinds: Counter[str] = Counter()
    for p in probes:
        step = check_step(items[p.item].metadata["solution_steps"][p.step - 1])
        assert p.answer == step.rhs
        if p.op == "divmod":
            continue  # quotient/remainder pairs: covered by the options' "(remainder r)" texts
        named = step_mistakes(step)
        for i, (src, v) in enumerate(zip(p.sources, p.values)):
            if i == p.label:
                continue
            kinds[src] += 1
            if p.op == "clock":
                assert named[src] == v and p.options[i] == fmt_clock(v)
            else:
                assert named[src] == v
    # the decoys are not only the column errors next to the answer
    column = sum(n for k, n in kinds.items() if "error in the" in k)
    assert len(kinds) >= 20 and column < 0.8 * sum(kinds.values())


def test_a_private_variant_keeps_text_length_shortcuts_at_chance(tmp_path):
    from synthprobe.benchmarks.deeparithmark.build import build

    out = tmp_path / "private.jsonl"
    build(out, seed=8, n=200, progress=False)
    probes, _ = build_probes(load_arithmark3(out), path=out)
    rows = {r.name: r for r in audit_probes(probes, classifier=False)}
    tol = tolerance(len(probes))
    for name in ("longest ending text", "shortest ending text", "pick largest value", "pick smallest value"):
        assert abs(rows[name].percent - CHANCE) <= tol, (name, rows[name].percent)
