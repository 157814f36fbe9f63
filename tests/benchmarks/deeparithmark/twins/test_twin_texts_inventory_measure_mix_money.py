"""The twins of discount_tax_coupon_split, inventory_boxes, inventory_percent_chain, measure_cm_cut,
mix_split, prize_ratio_charity and salary_overtime_tax, read as text: what each kind must do to a drawn original.

For a few drawn problems of each family, every registered twin is made directly (the family's
transform on the family's own problem) and checked for properties that a wrong transform would
break: the irrelevant number is new to the prompt and its decoy is the value of using it; a
reordered prompt tells the same numbers; a unit change multiplies the answer by the factor;
one step more keeps the original's steps and carries its mistakes through the extra step.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers every family and its twins)
from synthprobe.benchmarks.deeparithmark.base import (
    FAMILIES,
    IRRELEVANT,
    TWINS,
    GenerationError,
    Problem,
    decoy_problem,
    last_sentence_start,
)
from synthprobe.benchmarks.deeparithmark.checks import MAX_CTX_WORDS
from synthprobe.benchmarks.deeparithmark.families._common_b import irrelevant_number, numbers_in

A_FAMILIES = (
    "discount_tax_coupon_split",
    "inventory_boxes",
    "inventory_percent_chain",
    "measure_cm_cut",
    "mix_split",
    "prize_ratio_charity",
    "salary_overtime_tax",
)
#: family -> (unit of the unit_change twin, factor), or None where the family has no unit twin
UNIT = {
    "discount_tax_coupon_split": ("cents", 100),
    "inventory_boxes": None,
    "inventory_percent_chain": None,
    "measure_cm_cut": ("mm", 10),
    "mix_split": None,
    "prize_ratio_charity": ("cents", 100),
    "salary_overtime_tax": ("cents", 100),
}
PROBLEMS = 12


def problems(family: str, n: int = PROBLEMS) -> list[Problem]:
    out, i = [], 0
    while len(out) < n:
        i += 1
        try:
            out.append(FAMILIES[family].generate(random.Random(f"{family}/{i}")))
        except GenerationError:
            continue
    return out


def make(family: str, kind: str, problem: Problem, tries: int = 200) -> Problem:
    """The first draw of the twin that the transform accepts (as the builder draws them)."""
    for attempt in range(tries):
        try:
            return TWINS[family, kind](problem, random.Random(f"{kind}/{problem.ctx}/{attempt}"))
        except GenerationError:
            continue
    raise AssertionError(f"no {kind} twin of {problem.ctx!r}")


def words(ctx: str) -> int:
    return len(ctx.split())


def sentences(ctx: str) -> list[str]:
    return re.split(r"(?<=\.) ", ctx)


def test_each_family_registers_the_kinds_it_should():
    for family in A_FAMILIES:
        depth = FAMILIES[family].depth
        assert (family, "irrelevant_clause") in TWINS
        assert (family, "reordered") in TWINS
        assert ((family, "one_step_more") in TWINS) == (depth < 5), family
        assert ((family, "unit_change") in TWINS) == (UNIT[family] is not None), family


@pytest.mark.parametrize("family", A_FAMILIES)
def test_irrelevant_clause_adds_one_sentence_with_a_new_number(family):
    for p in problems(family):
        tw = make(family, "irrelevant_clause", p)
        n = tw.params["irrelevant"]
        assert n not in numbers_in(p.ctx) and n in numbers_in(tw.ctx)
        # exactly one sentence was added, just before the closing stem; the rest is untouched
        added = [s for s in sentences(tw.ctx) if s not in sentences(p.ctx)]
        assert len(added) == 1 and str(n) in added[0].replace(",", "")
        assert tw.ctx.replace(added[0] + " ", "", 1) == p.ctx
        assert tw.ctx[last_sentence_start(tw.ctx) :] == p.ctx[last_sentence_start(p.ctx) :]
        assert (tw.answer, tuple(tw.steps)) == (p.answer, tuple(p.steps))
        # the decoy of using the number is a usable value of its own, on neither side the answer
        used = tw.mistakes[IRRELEVANT]
        assert decoy_problem(tw.answer, used, tw.kind) is None
        assert list(tw.mistakes.values()).count(used) == 1
        assert {k: v for k, v in tw.mistakes.items() if k != IRRELEVANT} == dict(p.mistakes)
        assert words(tw.ctx) <= MAX_CTX_WORDS


def _used_value(family: str, p: Problem, n: int) -> set[int]:
    """The values a solver gets by adding or subtracting the irrelevant number, worked out from
    the original's parameters (not from the twin's code)."""
    q = p.params
    if family in ("measure_cm_cut", "prize_ratio_charity", "salary_overtime_tax"):
        return {p.answer + n, p.answer - n}
    if family == "discount_tax_coupon_split":
        return {p.answer + n // q["people"], p.answer - n // q["people"]}
    if family == "mix_split":
        return {p.answer + n // q["containers"], p.answer - n // q["containers"]}
    if family == "inventory_boxes":
        packed = q["stock"] + q["delivery"] - q["shipped"] - q["damaged"]
        return {(packed + n) // q["size"], (packed - n) // q["size"]}
    if family == "inventory_percent_chain":
        left = q["stock"] * (100 - q["day1_pct"]) * (100 - q["day2_pct"]) // 10000 + q["delivery"]
        return {(left + n) // q["pallet"], (left - n) // q["pallet"]}
    raise AssertionError(family)


@pytest.mark.parametrize("family", A_FAMILIES)
def test_irrelevant_decoy_is_the_value_of_using_the_number(family):
    signs = Counter()
    for p in problems(family, 30):
        tw = make(family, "irrelevant_clause", p)
        used = tw.mistakes[IRRELEVANT]
        assert used in _used_value(family, p, tw.params["irrelevant"])
        signs[used > p.answer] += 1
    assert signs[True] and signs[False], "the irrelevant sentences tempt both directions"


@pytest.mark.parametrize("family", A_FAMILIES)
def test_reordered_tells_the_same_numbers_in_another_order(family):
    changed = 0
    for p in problems(family):
        tw = make(family, "reordered", p)
        assert Counter(re.findall(r"\d[\d,.]*\d|\d", tw.ctx)) == Counter(re.findall(r"\d[\d,.]*\d|\d", p.ctx))
        assert tw.ctx[last_sentence_start(tw.ctx) :] == p.ctx[last_sentence_start(p.ctx) :]
        assert (tw.answer, tuple(tw.steps), dict(tw.mistakes)) == (p.answer, tuple(p.steps), dict(p.mistakes))
        assert words(tw.ctx) <= MAX_CTX_WORDS
        # the numbers come in another order
        changed += re.findall(r"\d+", tw.ctx) != re.findall(r"\d+", p.ctx)
    assert changed >= PROBLEMS // 2


@pytest.mark.parametrize("family", [f for f in A_FAMILIES if UNIT[f]])
def test_unit_change_converts_the_answer_and_the_story(family):
    unit, factor = UNIT[family]
    for p in problems(family):
        tw = make(family, "unit_change", p)
        assert tw.answer == p.answer * factor
        assert tw.unit == unit and tw.render(tw.answer) == f" {tw.answer} {unit}."
        assert len(tw.steps) == len(p.steps) and tw.steps[-1].endswith(f"= {tw.answer}")
        assert unit.replace("mm", "millimetres") in tw.ctx and "$" not in tw.ctx
        if unit == "cents":  # every amount of money reads in cents, every other number stays
            assert dict(tw.mistakes) == {k: factor * v for k, v in p.mistakes.items()}
            money = {int(x.replace(",", "")) for x in re.findall(r"\$(\d[\d,]*)", p.ctx)}
            assert {factor * m for m in money} <= numbers_in(tw.ctx)
        else:  # the pieces in millimetres; the mistakes redone, most of them the cm ones × 10
            cm = {p.params["added_cm"], p.params["cut_cm"]}
            assert {10 * c for c in cm} <= numbers_in(tw.ctx) and not cm & numbers_in(tw.ctx)
            assert len({10 * v for v in p.mistakes.values()} & set(tw.mistakes.values())) >= len(p.mistakes) - 1
        assert words(tw.ctx) <= MAX_CTX_WORDS


#: family -> (the parameter of the extra step, the sign with which it moves the answer)
EXTRA = {
    "discount_tax_coupon_split": ("snacks", 1),
    "inventory_boxes": ("sent", -1),
    "measure_cm_cut": ("more", 1),
    "mix_split": ("top_up", 1),
}


@pytest.mark.parametrize("family", sorted(EXTRA))
def test_one_step_more_extends_the_original(family):
    key, sign = EXTRA[family]
    for p in problems(family):
        tw = make(family, "one_step_more", p)
        x = tw.params[key]
        assert tw.depth == p.depth + 1
        assert tuple(tw.steps[: len(p.steps)]) == tuple(p.steps) and len(tw.steps) == len(p.steps) + 1
        assert tw.answer == p.answer + sign * x
        assert tw.steps[-1].endswith(f"= {'$' if p.kind == 'money' else ''}{tw.answer}")
        # the story up to the original's question is kept, the number of the extra step is told
        stem = p.ctx[: last_sentence_start(p.ctx)]
        assert tw.ctx.startswith(stem) and x in numbers_in(tw.ctx[len(stem) :])
        # the original's mistakes carried through the extra step, where still usable values
        carried = {p.mistakes[k] + sign * x for k in p.mistakes}
        assert {v for v in carried if v > 0 and v != tw.answer} <= set(tw.mistakes.values())
        assert p.answer in tw.mistakes.values()  # forgetting the extra step is offered
        assert words(tw.ctx) <= MAX_CTX_WORDS


def test_irrelevant_number_prefers_usable_same_length_values():
    p = problems("measure_cm_cut", 1)[0]
    for seed in range(20):
        n, v = irrelevant_number(random.Random(seed), p, 12, 98, lambda n: p.answer + n)
        assert v == p.answer + n and n not in numbers_in(p.ctx)
        assert n != p.answer and n not in p.mistakes.values()  # there are numbers that echo no option
        assert decoy_problem(p.answer, v, p.kind) is None and v not in p.mistakes.values()
        assert len(str(v)) == len(str(p.answer))
    with pytest.raises(GenerationError):
        irrelevant_number(random.Random(0), p, 12, 98, lambda n: None)
