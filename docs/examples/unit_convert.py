"""Unit conversion: a worked example of a Deep Arithmark family written outside synthprobe.

Two families in one module, one per depth tier:

* ``unit_convert`` (depth 2): a mixed quantity ("3 pounds 5 ounces") written in the small unit;
* ``unit_convert_batches`` (depth 3): the same quantity needed per batch, times the batches.

Build a balanced 4-way file from them alone (docs/write-a-family.md)::

    synthprobe build deeparithmark --family unit_convert.py --n 2000 --seed 3 --out units.jsonl --selftest

and its perturbation twins (the end of this file: an irrelevant clause, a unit change)::

    synthprobe build twins --data units.jsonl --family unit_convert.py --out units_twins/

The contract is the one every family of ours follows, imported from ``synthprobe.plugin`` (the
stable import):
``generate(rng)`` draws everything from ``rng`` (the builder's seeded per-item stream, so the
same seed gives the same file), computes the answer through ``Steps`` (which writes one
machine-checkable line per operation) and names the plausible mistakes with the exact wrong
value each one produces. The builder drops a mistake that cannot serve as a decoy (not a
positive whole number, equal to the answer or one off it, another roundness class), picks
three so that the answer's slot and rank are balanced, and redraws when ``require`` fails.
"""

from __future__ import annotations

import random
from dataclasses import replace

from synthprobe.plugin import (
    Problem,
    Steps,
    insert_sentence,
    irrelevant_twin,
    register,
    require,
    twin,
)

#: (big unit, its plural, small unit plural, small units per big one, what is measured, a batch
#: and its plural)
UNITS = (
    ("pound", "pounds", "ounces", 16, "flour", "loaf", "loaves"),
    ("foot", "feet", "inches", 12, "ribbon", "gift box", "gift boxes"),
    ("gallon", "gallons", "pints", 8, "paint", "room", "rooms"),
    ("day", "days", "hours", 24, "battery life", "lamp", "lamps"),
    ("stone", "stone", "pounds", 14, "sand", "sack", "sacks"),
)

NAMES = ("Ana", "Ben", "Chloe", "Dev", "Ema", "Farid", "Grace", "Hugo", "Ines", "Jon", "Kira", "Luis")

#: depth-2 prompts: {name}, {big}, {bigs}, {small}, {smalls}, {what}
SINGLE = (
    "{name} measured {big} {bigs} {small} {smalls} of {what}. Written in {smalls} only, that is",
    "A label reads {big} {bigs} {small} {smalls} of {what}. {name} converts it all to {smalls} and gets",
    "{name} has {big} {bigs} and {small} {smalls} of {what}, which in {smalls} comes to",
)

#: depth-3 prompts: the above plus {b} batches, {batch}, {batches}
BATCHES = (
    "Each {batch} takes {big} {bigs} {small} {smalls} of {what}. For {b} {batches}, {name} needs",
    "{name} uses {big} {bigs} {small} {smalls} of {what} per {batch}. Making {b} {batches} uses",
    "One {batch} needs {big} {bigs} and {small} {smalls} of {what}, so {b} {batches} need",
)


def _draw(rng: random.Random, top: int):
    unit, bigs, smalls, factor, what, batch, batches = rng.choice(UNITS)
    big = rng.randint(2, top)
    small = rng.randint(2, factor - 2)
    return unit, big, bigs, small, smalls, factor, what, batch, batches


def _converted(s: Steps, big: int, bigs: str, small: int, smalls: str, factor: int) -> int:
    in_small = s.op(f"{smalls} in {big} {bigs}", big, "×", factor)
    return s.op(f"{smalls} in all", in_small, "+", small)


def _mistakes(unit: str, bigs: str, smalls: str, big: int, small: int, factor: int) -> dict[str, int]:
    """The mixed quantity as a slip leaves it (each the exact wrong value).

    Every slip gives the right answer of a neighbouring problem of this family (one or two big
    units more or fewer; ``f - small`` extra units on one big unit fewer or one more), so decoys
    are spread over the same numbers as answers and their digits give nothing away. Each slip
    moves the answer by an even amount (every factor is even): one that moved it by ``small``
    ("added the extra twice") made most decoys even, and the audit's classifier learned that an
    odd last digit marks the answer."""
    right = big * factor + small
    return {
        f"counted one {unit} too many": right + factor,
        f"counted one {unit} too few": right - factor,
        f"counted two {bigs} too many": right + 2 * factor,
        f"counted two {bigs} too few": right - 2 * factor,
        f"took the extra {smalls} away instead of adding them": right - 2 * small,
        f"took the extra {smalls} away and counted one {unit} too many": right + 2 * factor - 2 * small,
    }


def _extra(unit: str, bigs: str, big: int, small: int, factor: int) -> dict[str, int]:
    """Slips the role-balanced build may also show (``Problem.extra_mistakes``): three big units
    more or fewer. With them, four values one big unit apart are each the answer of one draw and
    slips of the other three (the end values need a slip of three units), so the groups build
    finds groups; without them the family has none (docs/write-a-family.md, §3)."""
    right = big * factor + small
    return {f"counted three {bigs} too many": right + 3 * factor, f"counted three {bigs} too few": right - 3 * factor}


@register("unit_convert", topic="unit_convert", depth=2)
def generate(rng: random.Random) -> Problem:
    """A mixed quantity (big and small units) written in the small unit."""
    unit, big, bigs, small, smalls, factor, what, _, _ = _draw(rng, 60)
    name = rng.choice(NAMES)
    s = Steps()
    total = _converted(s, big, bigs, small, smalls, factor)
    require(total % 5 != 0, "answers stay off the multiples of 5 (decoys must share the class)")
    mistakes = {k: v for k, v in _mistakes(unit, bigs, smalls, big, small, factor).items() if v}
    template = rng.choice(SINGLE)
    ctx = template.format(name=name, big=big, bigs=bigs, small=small, smalls=smalls, what=what)
    return Problem(
        family="unit_convert",
        topic="unit_convert",
        depth=2,
        ctx=ctx,
        answer=total,
        unit=smalls,
        ending=f" {{}} {smalls}.",
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes={k: v for k, v in _extra(unit, bigs, big, small, factor).items() if v > 0},
        # what the story was drawn from, for the twins (params are not written to the file)
        params={"unit": unit, "big": big, "small": small, "name": name, "template": template},
    )


@register("unit_convert_batches", topic="unit_convert", depth=3)
def generate_batches(rng: random.Random) -> Problem:
    """The small units a number of batches needs, each needing a mixed quantity."""
    unit, big, bigs, small, smalls, factor, what, batch, batches = _draw(rng, 25)
    b = rng.randint(3, 12)
    name = rng.choice(NAMES)
    s = Steps()
    per = _converted(s, big, bigs, small, smalls, factor)
    total = s.op(f"{smalls} for {b} {batches}", per, "×", b)
    require(total % 5 != 0, "answers stay off the multiples of 5 (decoys must share the class)")
    # a slip in one batch's quantity, carried through every batch, or two batches miscounted
    mistakes = {k: v * b for k, v in _mistakes(unit, bigs, smalls, big, small, factor).items() if v}
    mistakes[f"counted two {batches} too many"] = per * (b + 2)
    mistakes[f"counted two {batches} too few"] = per * (b - 2)
    template = rng.choice(BATCHES)
    ctx = template.format(
        name=name, big=big, bigs=bigs, small=small, smalls=smalls, what=what, b=b, batch=batch, batches=batches
    )
    return Problem(
        family="unit_convert_batches",
        topic="unit_convert",
        depth=3,
        ctx=ctx,
        answer=total,
        unit=smalls,
        ending=f" {{}} {smalls}.",
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes={k: v * b for k, v in _extra(unit, bigs, big, small, factor).items() if v > 0},
        params={"unit": unit, "big": big, "small": small, "name": name, "template": template, "b": b},
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (docs/write-a-family.md, "Perturbation twins"): the drawn problem retold.
# Each transform gets the original Problem (its params say what the story was made of) and a
# seeded stream of its own; it returns the twin. Both families offer two kinds:
# irrelevant_clause and unit_change. (No one_step_more: a mixed quantity has no natural next
# step at depth 2 that is not the batches family itself; no reordered: the one sentence holds
# both parts of the quantity, so there is nothing to tell in another order.)
# ---------------------------------------------------------------------------------------

#: A quantity someone else had, which plays no part: (sentence, the sign with which a solver who
#: falls for it applies it to the answer). Both signs are offered: an answer at the lowest rank
#: needs a decoy above it, one at the highest rank a decoy below it.
IRRELEVANT_SENTENCES = (
    ("Last month {other} used {k} {smalls} more {what}.", 1),
    ("Last month {other} used {k} {smalls} less {what}.", -1),
    ("{other} has {k} {smalls} more {what} at home.", 1),
    ("{other} has {k} {smalls} less {what} at home.", -1),
)

#: The small unit → a smaller one and how many of it make one small unit: the unit_change twin
#: tells the same quantity with its small part in that unit (5 hours as 300 minutes) and asks
#: for the answer in it.
SMALLER = {
    "ounces": ("drams", 16),
    "inches": ("eighths of an inch", 8),
    "pints": ("fluid ounces", 16),
    "hours": ("minutes", 60),
    "pounds": ("ounces", 16),
}


def _row(unit: str):
    return next(r for r in UNITS if r[0] == unit)


def _irrelevant(problem: Problem, rng: random.Random) -> Problem:
    p = problem.params
    _, _, smalls, _, what, _, _ = _row(p["unit"])
    other = rng.choice([n for n in NAMES if n != p["name"]])
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    k = 2 * rng.randint(1, 20)  # even, like every other slip, so the last digit says nothing
    value = problem.answer + sign * k
    require(value % 5 != 0, "the irrelevant-number decoy shares the answer's roundness class")
    ctx = insert_sentence(problem.ctx, sentence.format(other=other, k=k, smalls=smalls, what=what))
    return irrelevant_twin(problem, ctx, k, value)


def _in_smaller_unit(problem: Problem, rng: random.Random) -> Problem:
    p = problem.params
    unit, bigs, smalls, factor, what, batch, batches = _row(p["unit"])
    sub, per = SMALLER[smalls]
    big, small = p["big"], p["small"] * per
    s = Steps()
    answer = _converted(s, big, bigs, small, sub, factor * per)
    if "b" in p:
        answer = s.op(f"{sub} for {p['b']} {batches}", answer, "×", p["b"])
    ctx = p["template"].format(
        name=p["name"],
        big=big,
        bigs=bigs,
        small=small,
        smalls=sub,
        what=what,
        b=p.get("b"),
        batch=batch,
        batches=batches,
    )
    return replace(
        problem,
        ctx=ctx,
        answer=answer,
        unit=sub,
        ending=f" {{}} {sub}.",
        steps=s.solution(),
        mistakes={name: v * per for name, v in problem.mistakes.items()},
        extra_mistakes={name: v * per for name, v in problem.extra_mistakes.items()},
        params={**p, "unit_change": sub},
    )


for _family in ("unit_convert", "unit_convert_batches"):
    twin(_family, "irrelevant_clause")(_irrelevant)
    twin(_family, "unit_change")(_in_smaller_unit)
