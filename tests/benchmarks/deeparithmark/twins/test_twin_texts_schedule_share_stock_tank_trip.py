"""The perturbation twins of schedule_sessions, share_then_split, stock_percent_pack, tank_fill and
trip_minutes, on drawn problems: what each kind must do to the text, the answer and the steps.

(The build-level checks — every twin of a seed builds and passes the item rules — are in
test_families_twins.py; these check the transforms' own promises, which those rules cannot see.)"""

from __future__ import annotations

import random
import re
from collections import Counter
from fractions import Fraction

import pytest

import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers the families and twins)
from synthprobe.benchmarks.deeparithmark.base import FAMILIES, IRRELEVANT, TWINS, GenerationError, Problem
from synthprobe.benchmarks.deeparithmark.steps import check_chain

OURS = ("schedule_sessions", "share_then_split", "stock_percent_pack", "tank_fill", "trip_minutes")
#: Items drawn per family (each twin kind is made of each).
ITEMS = 12


def _numbers(text: str) -> Counter:
    return Counter(re.findall(r"[0-9]+(?:\.[0-9]+)?", text))


def _originals(family: str) -> list[Problem]:
    out, seed = [], 0
    while len(out) < ITEMS:
        seed += 1
        try:
            out.append(FAMILIES[family].generate(random.Random(seed)))
        except GenerationError:
            continue
    return out


def _twin(family: str, kind: str, problem: Problem, seed: int = 0) -> Problem:
    for attempt in range(300):
        try:
            return TWINS[family, kind](problem, random.Random(f"{seed}/{attempt}"))
        except GenerationError:
            continue
    raise AssertionError(f"no {kind} twin of {family} in 300 draws")


def _without_one_sentence(twin_ctx: str, original_ctx: str) -> bool:
    """Whether taking one whole sentence out of ``twin_ctx`` gives ``original_ctx``."""
    parts = twin_ctx.split(". ")
    return any(". ".join(parts[:i] + parts[i + 1 :]) == original_ctx for i in range(len(parts) - 1))


@pytest.fixture(scope="module", params=OURS)
def family(request):
    return request.param, _originals(request.param)


def test_the_kinds_each_family_offers():
    kinds = {f: {k for fam, k in TWINS if fam == f} for f in OURS}
    for f in OURS:
        assert {"irrelevant_clause", "one_step_more", "reordered"} <= kinds[f], f
    # a unit only where one converts naturally (see the comments in the family modules)
    assert [f for f in OURS if "unit_change" in kinds[f]] == ["tank_fill"]


def _tempting_value(family: str, p: dict, answer: int, sign: int) -> int:
    """The value a solver gets by using the irrelevant number ``p['irrelevant']`` (recomputed
    here from the story's numbers, not taken from the twin)."""
    x = p["irrelevant"]
    if family == "schedule_sessions":
        window = int(Fraction(p["hours"]) * 60)
        return (window + sign * x) // (p["setup_minutes"] + p["session_minutes"])
    if family == "share_then_split":
        num, den = p["share_numerator"], p["share_denominator"]
        return int(Fraction((p["total"] + sign * x) * (den - num), den * p["parts"]))
    if family == "stock_percent_pack":
        left = p["stock"] - p["stock"] * p["percent"] // 100
        return (left + sign * x) // p["pack_size"]
    return answer + sign * x  # tank_fill, trip_minutes: the total moved by the number itself


def test_irrelevant_clause_adds_one_sentence_with_one_new_number(family):
    name, originals = family
    signs = set()
    for i, o in enumerate(originals):
        t = _twin(name, "irrelevant_clause", o, i)
        x = t.params["irrelevant"]
        # exactly one sentence more, and the twin's numbers are the original's plus that number
        assert _without_one_sentence(t.ctx, o.ctx), (o.ctx, t.ctx)
        assert _numbers(t.ctx) - _numbers(o.ctx) == Counter({str(x): 1}), (o.ctx, t.ctx)
        assert not _numbers(o.ctx) - _numbers(t.ctx)
        assert (t.answer, tuple(t.steps), t.depth) == (o.answer, tuple(o.steps), o.depth)
        value = t.mistakes[IRRELEVANT]
        sign = 1 if value > t.answer else -1
        assert value == _tempting_value(name, t.params, o.answer, sign)
        signs.add(sign)
        assert len(t.ctx.split()) <= 45
    assert signs == {1, -1}, "the tempting value must fall on both sides of the answer over draws"


def test_reordered_keeps_the_numbers_and_the_solution(family):
    name, originals = family
    for i, o in enumerate(originals):
        t = _twin(name, "reordered", o, i)
        assert t.ctx != o.ctx
        assert _numbers(t.ctx) == _numbers(o.ctx), (o.ctx, t.ctx)
        assert (t.answer, tuple(t.steps), dict(t.mistakes), t.ending) == (
            o.answer,
            tuple(o.steps),
            dict(o.mistakes),
            o.ending,
        )
        # another order: the first sentence is not the original's
        assert t.ctx.split(". ")[0] != o.ctx.split(". ")[0]
        assert len(t.ctx.split()) <= 45


#: The extra operation of each family's one_step_more twin: (twin answer from the original's
#: answer and the twin's params, the number the story adds).
EXTRA = {
    "schedule_sessions": (lambda a, p: a * p["price"], "price"),
    "share_then_split": (lambda a, p: a - p["taken"], "taken"),
    "stock_percent_pack": (lambda a, p: a * p["price"], "price"),
    "tank_fill": (lambda a, p: a - p["buckets"], "buckets"),
    "trip_minutes": (lambda a, p: 2 * a, None),
}


def test_one_step_more_extends_the_solution_by_one_line(family):
    name, originals = family
    extra, key = EXTRA[name]
    for i, o in enumerate(originals):
        t = _twin(name, "one_step_more", o, i)
        assert t.depth == o.depth + 1
        assert tuple(t.steps[: len(o.steps)]) == tuple(o.steps) and len(t.steps) == len(o.steps) + 1
        assert t.answer == extra(o.answer, t.params)
        checked = check_chain(list(t.steps), t.answer)
        assert Fraction(o.answer) in checked[-1].operands  # the new line works on the old answer
        if key is not None:
            assert str(t.params[key]) in _numbers(t.ctx)
        assert t.answer not in t.mistakes.values()
        assert len(t.ctx.split()) <= 45


def test_tank_fill_in_millilitres_scales_every_volume_and_the_answer():
    for i, o in enumerate(_originals("tank_fill")):
        t = _twin("tank_fill", "unit_change", o, i)
        p = o.params
        assert t.answer == 1000 * o.answer
        assert dict(t.mistakes) == {k: 1000 * v for k, v in o.mistakes.items()}
        volumes = [p["start"], p["fill_rate"], p["drain_rate"]]
        want = Counter(str(1000 * v) for v in volumes) + Counter(str(m) for m in (p["fill_min"], p["drain_min"]))
        assert _numbers(t.ctx) == want, t.ctx
        assert "litres" not in t.ctx.replace("millilitres", "") and t.ending == " {} millilitres."
        assert len(t.steps) == len(o.steps) == t.depth
        check_chain(list(t.steps), t.answer)
        # the same words around the numbers: only the unit and the numbers changed
        assert re.sub(r"[0-9]+", "N", t.ctx.replace("millilitres", "litres")) == re.sub(r"[0-9]+", "N", o.ctx)
