"""The twins of time_clock_end and two_rate_pay, read as text: what each kind must do to a drawn
original, worked out from the original's own numbers (not from the transforms' code).

For a few drawn problems of each family every registered twin is made directly (the family's
transform on the family's own problem, drawn as the builder draws: again on a rejected draw).
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
    NoTwin,
    Problem,
    decoy_problem,
    last_sentence_start,
)
from synthprobe.benchmarks.deeparithmark.checks import MAX_CTX_WORDS
from synthprobe.benchmarks.deeparithmark.steps import check_chain

FAMILIES_HERE = ("time_clock_end", "two_rate_pay")
PROBLEMS = 16


def problems(family: str, n: int = PROBLEMS, keep=lambda p: True, cap: int = 20000) -> list[Problem]:
    out = []
    for i in range(cap):
        try:
            p = FAMILIES[family].generate(random.Random(f"{family}/b/{i}"))
        except GenerationError:
            continue
        if keep(p):
            out.append(p)
            if len(out) == n:
                return out
    raise AssertionError(f"only {len(out)} fitting {family} problems in {cap} draws")


def make(family: str, kind: str, problem: Problem, tries: int = 300) -> Problem:
    for attempt in range(tries):
        try:
            return TWINS[family, kind](problem, random.Random(f"{kind}/{problem.ctx}/{attempt}"))
        except GenerationError:
            continue
    raise AssertionError(f"no {kind} twin of {problem.ctx!r}")


def numbers(ctx: str) -> Counter:
    """The whole numbers of a prompt, with their counts (a clock time gives hour and minutes)."""
    return Counter(int(x) for x in re.findall(r"\d+", ctx))


def steps_ok(p: Problem) -> None:
    check_chain(list(p.steps), p.answer, clock=p.kind == "clock")


def test_registered_kinds():
    assert {k for f, k in TWINS if f == "two_rate_pay"} == {
        "irrelevant_clause",
        "one_step_more",
        "reordered",
        "unit_change",
    }
    # a time of day has no unit to change (see the comment in time_clock_end.py)
    assert {k for f, k in TWINS if f == "time_clock_end"} == {"irrelevant_clause", "one_step_more", "reordered"}


@pytest.mark.parametrize("family", FAMILIES_HERE)
def test_irrelevant_clause_adds_a_new_number_and_its_value(family):
    signs = set()
    for p in problems(family, 24):
        tw = make(family, "irrelevant_clause", p)
        n = tw.params["irrelevant"]
        # the number is new to the prompt, and the twin tells exactly one number more
        assert n not in numbers(p.ctx)
        assert numbers(tw.ctx) == numbers(p.ctx) + Counter({n: 1})
        added = [s for s in re.split(r"(?<=\.) ", tw.ctx) if str(n) in re.findall(r"\d+", s)]
        assert len(added) == 1
        sentence = added[0]
        # the direction the sentence tempts, read from its words: money spent out of the pay
        # is taken off it; otherwise it ends in "more" or "later" (add) or "less" or "earlier"
        last = sentence.rstrip(".").split()[-1]
        if " spent " in sentence:
            sign = -1
        else:
            assert last in ("more", "later", "less", "earlier"), sentence
            sign = 1 if last in ("more", "later") else -1
        signs.add(sign)
        assert tw.mistakes[IRRELEVANT] == p.answer + sign * n
        assert decoy_problem(tw.answer, tw.mistakes[IRRELEVANT], tw.kind) is None
        assert list(tw.mistakes.values()).count(tw.mistakes[IRRELEVANT]) == 1
        assert {k: v for k, v in tw.mistakes.items() if k != IRRELEVANT} == dict(p.mistakes)
        assert (tw.answer, tuple(tw.steps), tw.depth) == (p.answer, tuple(p.steps), p.depth)
        # the sentence comes before the question, which still closes the prompt
        assert tw.ctx.index(sentence) < last_sentence_start(tw.ctx)
        assert len(tw.ctx.split()) <= MAX_CTX_WORDS
    assert signs == {1, -1}, "the sentences should tempt both directions"


def test_irrelevant_clause_keeps_the_reference_of_right_after_it():
    # the last time_clock_end template says "Right after it," of the first activity: with a
    # sentence put before it, the twin names the activity again
    ps = problems("time_clock_end", 6, keep=lambda p: p.params["template"] == 3)
    for p in ps:
        tw = make("time_clock_end", "irrelevant_clause", p)
        assert "Right after it," in p.ctx and "Right after it," not in tw.ctx
        assert f"Right after the {p.params['first'].split(' ', 1)[1]}," in tw.ctx


@pytest.mark.parametrize("family", FAMILIES_HERE)
def test_reordered_tells_the_same_numbers_in_another_order(family):
    for p in problems(family):
        tw = make(family, "reordered", p)
        assert numbers(tw.ctx) == numbers(p.ctx)
        order = lambda ctx: [int(x) for x in re.findall(r"\d+", ctx)]  # noqa: E731
        assert order(tw.ctx) != order(p.ctx)
        assert (tw.answer, tuple(tw.steps), dict(tw.mistakes)) == (p.answer, tuple(p.steps), dict(p.mistakes))
        assert len(tw.ctx.split()) <= MAX_CTX_WORDS


def test_two_rate_pay_reordered_tells_the_second_block_first():
    for p in problems("two_rate_pay", 8):
        tw = make("two_rate_pay", "reordered", p)
        s1, s2 = p.params["shifts"]
        assert tw.ctx.index(s2) < tw.ctx.index(s1) and p.ctx.index(s1) < p.ctx.index(s2)


def test_two_rate_pay_unit_change_is_the_pay_in_cents():
    for p in problems("two_rate_pay"):
        tw = make("two_rate_pay", "unit_change", p)
        q = p.params
        assert tw.answer == 100 * p.answer
        assert dict(tw.mistakes) == {k: 100 * v for k, v in p.mistakes.items()}
        assert "$" not in tw.ctx and "cents" in tw.ctx and tw.render(tw.answer) == f" {100 * p.answer} cents."
        assert f"{100 * q['rate1']} cents" in tw.ctx and f"{100 * q['rate2']} cents" in tw.ctx
        assert numbers(tw.ctx)[q["hours1"]] >= 1 and numbers(tw.ctx)[q["hours2"]] >= 1
        assert len(tw.steps) == len(p.steps) == tw.depth
        steps_ok(tw)


def test_two_rate_pay_one_step_more_takes_the_rent_off():
    for p in problems("two_rate_pay"):
        tw = make("two_rate_pay", "one_step_more", p)
        added = numbers(tw.ctx) - numbers(p.ctx)
        assert sum(added.values()) == 1, added
        rent = next(iter(added))
        assert f"${rent}" in tw.ctx
        assert tw.answer == p.answer - rent > 0
        assert list(tw.steps[: len(p.steps)]) == list(p.steps) and len(tw.steps) == len(p.steps) + 1
        assert tw.depth == p.depth + 1
        steps_ok(tw)
        for name, v in tw.mistakes.items():
            if name in p.mistakes:
                assert v == p.mistakes[name] - rent  # carried through the extra step
        assert tw.mistakes["added the rent instead of taking it off"] == p.answer + rent
        assert len(tw.ctx.split()) <= MAX_CTX_WORDS


def _third_minutes(p: Problem, tw: Problem) -> int:
    added = numbers(tw.ctx) - numbers(p.ctx)
    assert sum(added.values()) == 1, added
    return next(iter(added))


def test_time_clock_end_one_step_more_adds_a_third_activity():
    for p in problems("time_clock_end"):
        tw = make("time_clock_end", "one_step_more", p)
        d3 = _third_minutes(p, tw)
        assert tw.answer == p.answer + d3
        if not 660 <= p.answer < 720:  # room in the half day: no crossing noon
            assert (tw.answer < 720) == (p.answer < 720)
        if d3 > 60:
            assert tw.params["third"] in ("lunch", "coffee with a friend", "some shopping", "a nap", "tidying up")
        assert tw.params["third"] in tw.ctx and tw.params["third"] != p.params["second"]
        assert list(tw.steps[: len(p.steps)]) == list(p.steps) and len(tw.steps) == len(p.steps) + 1
        steps_ok(tw)
        for name, v in tw.mistakes.items():
            if name in p.mistakes:
                assert v == p.mistakes[name] + d3
        assert tw.mistakes["stopped before the third activity"] == p.answer
        assert len(tw.ctx.split()) <= MAX_CTX_WORDS


def test_time_clock_end_one_step_more_near_noon_and_midnight():
    # a morning story ending in the last minutes before noon: the third activity may carry the
    # answer into the afternoon (the decoys with it); an evening one after 11:50 p.m. stays
    # before midnight, which the solution lines cannot cross
    late = problems("time_clock_end", 3, keep=lambda p: 1430 <= p.answer < 1439, cap=60000)
    for p in late:
        tw = make("time_clock_end", "one_step_more", p)
        assert p.answer < tw.answer < 1440
        steps_ok(tw)
    noon = problems("time_clock_end", 3, keep=lambda p: 712 <= p.answer < 720, cap=60000)
    for p in noon:
        tw = make("time_clock_end", "one_step_more", p)
        assert tw.answer > p.answer
        assert all((v < 720) == (tw.answer < 720) for v in tw.mistakes.values())
        steps_ok(tw)


def test_time_clock_end_one_step_more_says_an_end_at_1159_pm_has_none():
    """No minute is left before midnight: the transform says so (NoTwin), so the twin builder
    leaves that original out of the file instead of stopping the build."""
    (p,) = problems("time_clock_end", 1, keep=lambda p: p.answer == 1439, cap=60000)
    with pytest.raises(NoTwin, match="11:59 p.m."):
        TWINS["time_clock_end", "one_step_more"](p, random.Random(0))
