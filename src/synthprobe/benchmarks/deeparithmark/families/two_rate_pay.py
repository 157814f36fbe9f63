"""Hours at one hourly rate plus hours at another give the total pay (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction

from ..base import Problem, Steps, insert_sentence, irrelevant_twin, register, require, twin
from ._common_a import NAMES, PARITY_REDRAWS, clean_mistakes, parity_kept, pick, pick_log_uniform
from ._common_b import MAX_CTX_WORDS, irrelevant_number

NAME = "two_rate_pay"

#: Share of odd totals kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.55

#: (first block, second block, whether the second rate is always the higher one)
SHIFTS = (
    ("on weekdays", "on the weekend", True),
    ("on day shifts", "on night shifts", True),
    ("at the café", "at the bookshop", False),
    ("tutoring maths", "tutoring piano", False),
    ("in regular hours", "in overtime", True),
    ("at the front desk", "in the kitchen", False),
    ("stacking shelves", "driving deliveries", False),
    ("at the garden centre", "at the cinema", False),
)

TEMPLATES = (
    "Last week {name} worked {h1} hours {s1} at ${r1} an hour and {h2} hours {s2} at ${r2} an hour. "
    "Altogether, {name} earned",
    "{name} is paid ${r1} an hour {s1} and ${r2} an hour {s2}. This month {name} put in {h1} hours "
    "{s1} and {h2} hours {s2}, earning",
    "For {h1} hours {s1} {name} earns ${r1} per hour, and for {h2} hours {s2} ${r2} per hour. "
    "{name}'s total pay for the week was",
    "In one week, {name} logged {h1} hours {s1}, paid at ${r1} an hour, plus {h2} hours {s2}, paid "
    "at ${r2} an hour. The pay came to",
)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Hours at one rate plus hours at another rate give the total pay."""
    s1, s2, premium = pick(rng, SHIFTS)
    for _ in range(PARITY_REDRAWS):
        # on a log scale, short weeks and low rates included: leaving out a block gives small
        # decoys, so the answers must reach down into the low hundreds as often as they do
        h1 = pick_log_uniform(rng, range(4, 39))
        h2 = pick(rng, [h for h in range(3, 19) if h != h1 and h % 5])
        r1 = pick_log_uniform(rng, range(11, 30))
        # weekend, night and overtime hours pay more; between two jobs either may pay more.
        # The second rate is drawn among those that keep the total off the multiples of 5, so
        # the answer sits in the commonest roundness class
        sign = 1 if premium else pick(rng, (-1, 1))
        r2 = pick(
            rng, [r1 + sign * d for d in range(3, 15) if r1 + sign * d >= 9 and (h1 * r1 + h2 * (r1 + sign * d)) % 5]
        )
        # most decoys are products of hours and a rate, even more often than the answer
        if parity_kept(rng, h1 * r1 + h2 * r2, ODD_SHARE):
            break
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)

    s = Steps()
    pay1 = s.op("first block of hours", h1, "×", r1)
    pay2 = s.op("second block of hours", h2, "×", r2)
    total = s.op("total pay", pay1, "+", pay2, money=True)
    require(total % 5 != 0, "answer should not be a multiple of 5")

    mistakes = clean_mistakes(
        total,
        {
            "paid every hour at the first rate": (h1 + h2) * r1,
            "paid every hour at the second rate": (h1 + h2) * r2,
            "left out the second block of hours": pay1,
            "left out the first block of hours": pay2,
            "swapped the two rates": h1 * r2 + h2 * r1,
            "averaged the two rates": Fraction((h1 + h2) * (r1 + r2), 2),
            "counted the second block twice": pay1 + 2 * pay2,
            "multiplied all the hours by both rates added": (h1 + h2) * (r1 + r2),
        },
    )

    # more named mistakes for the role-balanced groups (``Problem.extra_mistakes``). The legacy
    # ones (a block left out or counted twice, every hour at one rate) sit at fixed offsets from
    # the key; these add one block's hours to the other's, or take them out of it (read as the
    # total hours), with the rates as given or swapped: the problems whose hours were drawn that
    # way, or whose rates were drawn in the other order, have these values as keys and offer the
    # key back among theirs. Taking hours out only where the block has more of them
    extra = {
        "paid the second block at both rates": h1 * r1 + h2 * (r1 + r2),
        "paid the first block at both rates": h1 * (r1 + r2) + h2 * r2,
        "took the second block's hours out of the first block's": (h1 - h2) * r1 + h2 * r2 if h1 > h2 else None,
        "took the first block's hours out of the second block's": h1 * r1 + (h2 - h1) * r2 if h2 > h1 else None,
        "swapped the rates and paid the second block at both rates": h1 * r2 + h2 * (r1 + r2),
        "swapped the rates and paid the first block at both rates": h1 * (r1 + r2) + h2 * r1,
        "swapped the rates and took the second block's hours out of the first block's": (
            (h1 - h2) * r2 + h2 * r1 if h1 > h2 else None
        ),
        "swapped the rates and took the first block's hours out of the second block's": (
            h1 * r2 + (h2 - h1) * r1 if h2 > h1 else None
        ),
    }

    ctx = template.format(name=name, h1=h1, h2=h2, r1=r1, r2=r2, s1=s1, s2=s2)
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=int(total),
        unit="$",
        ending=" ${}.",
        steps=s.solution(),
        mistakes=mistakes,
        kind="money",
        params={
            "hours1": h1,
            "rate1": r1,
            "hours2": h2,
            "rate2": r2,
            "shifts": [s1, s2],
            "name": name,
            "template": TEMPLATES.index(template),
        },
        extra_mistakes={k: v for k, v in extra.items() if v is not None and v > 0 and v != total},
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: A sum of money that is not part of the pay: (sentence, the sign with which a solver who
#: falls for it applies it to the total). Someone else's pay tempts an addition when it is
#: higher and a subtraction when it is lower; money spent out of the pay tempts a subtraction.
IRRELEVANT_SENTENCES = (
    ("A coworker earned ${n} more.", 1),
    ("A year earlier, {name} had earned ${n} more.", 1),
    ("A coworker earned ${n} less.", -1),
    ("{name} later spent ${n} of it on groceries.", -1),
)

#: One template per original template, the second block of hours told first (the steps still
#: take the first block first: the same two products and one sum).
REORDERED = (
    "Last week {name} worked {h2} hours {s2} at ${r2} an hour and {h1} hours {s1} at ${r1} an hour. "
    "Altogether, {name} earned",
    "{name} is paid ${r2} an hour {s2} and ${r1} an hour {s1}. This month {name} put in {h2} hours "
    "{s2} and {h1} hours {s1}, earning",
    "For {h2} hours {s2} {name} earns ${r2} per hour, and for {h1} hours {s1} ${r1} per hour. "
    "{name}'s total pay for the week was",
    "In one week, {name} logged {h2} hours {s2}, paid at ${r2} an hour, plus {h1} hours {s1}, paid "
    "at ${r1} an hour. The pay came to",
)

#: One template per original template, with a sum paid out of the pay (``{k}`` dollars) and
#: what is left asked for.
ONE_MORE = (
    "Last week {name} worked {h1} hours {s1} at ${r1} an hour and {h2} hours {s2} at ${r2} an hour, "
    "then paid ${k} of it in rent. {name} had left",
    "{name} is paid ${r1} an hour {s1} and ${r2} an hour {s2}. This month {name} put in {h1} hours "
    "{s1} and {h2} hours {s2}, then spent ${k} of the pay, keeping",
    "For {h1} hours {s1} {name} earns ${r1} per hour, and for {h2} hours {s2} ${r2} per hour. "
    "After paying ${k} in rent, {name} kept",
    "In one week, {name} logged {h1} hours {s1}, paid at ${r1} an hour, plus {h2} hours {s2}, paid "
    "at ${r2} an hour. After ${k} of it went on rent, what was left came to",
)

#: The story in cents (every rate × 100, so every amount of pay × 100).
IN_CENTS = (
    "Last week {name} worked {h1} hours {s1} at {r1} cents an hour and {h2} hours {s2} at {r2} cents "
    "an hour. Altogether, in cents, {name} earned",
    "{name} is paid {r1} cents an hour {s1} and {r2} cents an hour {s2}. This month {name} put in "
    "{h1} hours {s1} and {h2} hours {s2}, earning in cents",
    "For {h1} hours {s1} {name} earns {r1} cents per hour, and for {h2} hours {s2} {r2} cents per "
    "hour. {name}'s total pay for the week in cents was",
    "In one week, {name} logged {h1} hours {s1}, paid at {r1} cents an hour, plus {h2} hours {s2}, "
    "paid at {r2} cents an hour. In cents, the pay came to",
)


def _fits(ctx: str) -> str:
    n = len(ctx.split())
    require(n <= MAX_CTX_WORDS, f"prompt of {n} words is longer than {MAX_CTX_WORDS}")
    return ctx


def _with_sentence(ctx: str, sentence: str, p: dict) -> str:
    """``ctx`` with ``sentence`` before its closing stem. The second template's last sentence
    holds the hours and ends in ", earning": there the sentence follows the hours, and the
    closing stem is a sentence of its own ("Omar earned")."""
    if p["template"] == 1:
        head, ending = ctx.rsplit(", earning", 1)
        require(not ending, "the second template ends in ', earning'")
        return f"{head}. {sentence} {p['name']} earned"
    return insert_sentence(ctx, sentence)


def _fields(p: dict) -> dict:
    s1, s2 = p["shifts"]
    return {
        "name": p["name"],
        "h1": p["hours1"],
        "h2": p["hours2"],
        "r1": p["rate1"],
        "r2": p["rate2"],
        "s1": s1,
        "s2": s2,
    }


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Someone else's pay, or money spent out of the pay; falling for it moves the total."""
    p = dict(problem.params)
    sentence, sign = pick(rng, IRRELEVANT_SENTENCES)
    n, value = irrelevant_number(rng, problem, 6, 90, lambda k: problem.answer + sign * k)
    return irrelevant_twin(
        problem, _fits(_with_sentence(problem.ctx, sentence.format(name=p["name"], n=n), p)), n, value
    )


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Rent paid out of the pay: what is left (the total less a whole number of $5)."""
    p = dict(problem.params)
    total = problem.answer
    # a multiple of $5 keeps the new answer, and every mistake carried through, in the
    # original's roundness class (not a multiple of 5)
    k = 5 * rng.randint(4, max(4, (total - 20) // 5))
    s = Steps()
    s.keep(problem.steps)
    left = s.op("left after the rent", total, "-", k, money=True)
    require(left >= 20, "something must be left")
    mistakes = clean_mistakes(
        left,
        {
            **{name: v - k for name, v in problem.mistakes.items()},
            "added the rent instead of taking it off": total + k,
            "took the rent off twice": total - 2 * k,
        },
    )
    ctx = _fits(ONE_MORE[p["template"]].format(**_fields(p), k=k))
    return replace(
        problem,
        depth=4,
        ctx=ctx,
        answer=left,
        steps=s.solution(),
        mistakes=mistakes,
        params={**p, "rent": k},
        extra_mistakes={},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The second block of hours told before the first."""
    p = dict(problem.params)
    return replace(problem, ctx=_fits(REORDERED[p["template"]].format(**_fields(p))))


@twin(NAME, "unit_change")
def in_cents(problem: Problem, rng: random.Random) -> Problem:
    """Both rates in cents, the pay asked in cents."""
    p = dict(problem.params)
    f = _fields(p)
    r1, r2 = 100 * f["r1"], 100 * f["r2"]
    s = Steps()
    pay1 = s.op("first block of hours, in cents", f["h1"], "×", r1)
    pay2 = s.op("second block of hours, in cents", f["h2"], "×", r2)
    total = s.op("total pay, in cents", pay1, "+", pay2)
    return replace(
        problem,
        ctx=_fits(IN_CENTS[p["template"]].format(**{**f, "r1": r1, "r2": r2})),
        answer=total,
        unit="cents",
        ending=" {} cents.",
        steps=s.solution(),
        mistakes={name: 100 * v for name, v in problem.mistakes.items()},
        kind="count",
        params={**p, "unit": "cents"},
        extra_mistakes={name: 100 * v for name, v in problem.extra_mistakes.items()},
    )
