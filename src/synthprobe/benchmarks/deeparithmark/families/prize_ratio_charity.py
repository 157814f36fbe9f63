"""A prize minus a charity share, split in a ratio, then shared or spent (depth 5).

    Ava and Leo won $6000 in a quiz. They gave 20% to charity and split the rest 3 : 5
    between them. Ava then shared that part equally with two cousins. Ava's own share was
    → $600.

Steps: (100 − charity)% of the prize, ratio parts added, rest ÷ parts, one part × own
parts, then ÷ people sharing (or − an amount spent).

The prize is built backwards from the value of one ratio part, so every step of the
correct solution stays in whole dollars; a mistake whose re-run leaves whole dollars offers
an option, the others are left out.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from functools import partial
from math import gcd

from ..base import Problem, Steps, fmt_num, insert_sentence, irrelevant_twin, register, require, twin
from ._common_a import pick_log_uniform
from ._common_b import NAMES, NUMBER_WORDS, Calc, choose, finish_ctx, irrelevant_number, mistakes, solve

NAME = "prize_ratio_charity"

FORGOT_CHARITY = "forgot the charity share"
ADDED_CHARITY = "added the charity share"
CHARITY_TWICE = "took the charity share off twice"
CHARITY_FROM_PART = "took the charity off one part only"
CHARITY_AGAIN_ON_PART = "took the charity percentage off the part again"
OTHER_PART = "took the other winner's part"
EQUAL_HALVES = "split the rest in half instead of by the ratio"
RATIO_AS_FRACTION = "divided by the other ratio term, not the total parts"
ONE_PART = "gave one ratio part instead of the winner's part"
# final step: shared equally with cousins
FORGOT_SHARING = "forgot to share the part"
LEFT_SELF_OUT = "left the sharer out of the split"
# final step: an amount spent
FORGOT_SPENDING = "forgot the amount spent"
ADDED_SPENDING = "added the amount spent"
SPENT_TWICE = "took the amount spent off twice"
SPENT_BEFORE_RATIO = "took the spending off before the ratio split"

# errors that only the extra mistakes below make (alone or with the ones above)
SKIPPED_RATIO = "skipped the ratio split"
SHARER_TWICE = "counted the sharer twice"

COMMON = (
    FORGOT_CHARITY,
    ADDED_CHARITY,
    CHARITY_TWICE,
    CHARITY_FROM_PART,
    CHARITY_AGAIN_ON_PART,
    OTHER_PART,
    EQUAL_HALVES,
    RATIO_AS_FRACTION,
    ONE_PART,
)
MISTAKES = {
    "share": COMMON + (FORGOT_SHARING, LEFT_SELF_OUT),
    "spend": COMMON + (FORGOT_SPENDING, ADDED_SPENDING, SPENT_TWICE, SPENT_BEFORE_RATIO),
}

#: More named mistakes for the role-balanced groups (``Problem.extra_mistakes``), per final step:
#: each the errors it makes together. A share's legacy decoys are its own part shared, not shared
#: or shared among too few, and the partner's part shared; these give the partner's part, one
#: ratio part, half and all of the rest the same treatments, and the sharer counted twice (the
#: other direction of leaving the sharer out). The problems with the same prize told with the
#: other ratio order, another ratio of the same total parts or one cousin more or fewer have
#: these values as keys and offer the key back, so the same four values can be the options of
#: four problems.
EXTRA = {
    "share": {
        "took the other winner's part and left the sharer out": (OTHER_PART, LEFT_SELF_OUT),
        "took the other winner's part and counted the sharer twice": (OTHER_PART, SHARER_TWICE),
        "took the other winner's part and forgot to share": (OTHER_PART, FORGOT_SHARING),
        "gave one ratio part and left the sharer out": (ONE_PART, LEFT_SELF_OUT),
        "split the rest in half and left the sharer out": (EQUAL_HALVES, LEFT_SELF_OUT),
        "skipped the ratio split and shared the whole rest": (SKIPPED_RATIO,),
        "skipped the ratio split and left the sharer out": (SKIPPED_RATIO, LEFT_SELF_OUT),
        SHARER_TWICE: (SHARER_TWICE,),
    },
    "spend": {
        "took the other winner's part and forgot the amount spent": (OTHER_PART, FORGOT_SPENDING),
        "gave one ratio part and forgot the amount spent": (ONE_PART, FORGOT_SPENDING),
        "took the charity share off twice and forgot the amount spent": (CHARITY_TWICE, FORGOT_SPENDING),
        "forgot the charity share and took the amount spent off twice": (FORGOT_CHARITY, SPENT_TWICE),
    },
}

CHARITY = (5, 10, 12, 15, 20, 25, 30)
#: (winner's parts, partner's parts), coprime; the winner usually has the larger part
LARGER = tuple((a, b) for a in range(2, 8) for b in range(1, a) if gcd(a, b) == 1)
SMALLER = tuple((b, a) for a, b in LARGER)
CONTESTS = (
    "a quiz",
    "a raffle",
    "a chess tournament",
    "a photo contest",
    "a hackathon",
    "a baking contest",
    "a robotics league",
    "a science fair",
    "a pub quiz",
    "a fun run",
)
PURCHASES = ("a bike", "a laptop", "a guitar", "new tyres", "a camera", "a course", "a holiday")


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
OPENINGS = ("{me} and {other} won {won} in {contest}.", "{me} and {other} shared a {won} prize from {contest}.")
SPLITS = (
    "They gave {c}% to charity and split the rest {a} : {b} between them.",
    "After giving {c}% to charity, they split the rest in the ratio {a} : {b}.",
)
#: per final step ("share" or "spend"): its sentences, and the questions
LASTS = {
    "share": ("{me} then shared that part equally with {k} cousins.", "{me} split that part evenly with {k} cousins."),
    "spend": ("{me} then spent {spent} of it on {purchase}.", "Out of that part, {me} paid {spent} for {purchase}."),
}
QUESTIONS = {"share": ("{me}'s own share was", "{me} kept"), "spend": ("{me} had left", "What {me} had left was")}


def _fields(p: dict, won: str, spent: str) -> dict:
    a, b = p["ratio"]
    return {
        "me": p["winner"],
        "other": p["partner"],
        "won": won,
        "spent": spent,
        "contest": p["contest"],
        "purchase": p["purchase"],
        "c": p["charity"],
        "a": a,
        "b": b,
        "k": NUMBER_WORDS[p["cousins"]],
    }


def _story(rng: random.Random, p: dict) -> str:
    f = _fields(p, fmt_num(p["prize"], money=True), fmt_num(p["spent"], money=True))
    opening = choose(rng, p, "opening", OPENINGS).format(**f)
    split = choose(rng, p, "split", SPLITS).format(**f)
    last = choose(rng, p, "last", LASTS[p["final"]]).format(**f)
    question = choose(rng, p, "question", QUESTIONS[p["final"]]).format(**f)
    return finish_ctx(opening, split, last, question)


@register(NAME, topic=NAME, depth=5)
def generate(rng: random.Random) -> Problem:
    """Charity off a prize, the rest split a : b, then one winner shares or spends part."""
    charity = rng.choice(CHARITY)
    a, b = rng.choice(LARGER if rng.random() < 2 / 3 else SMALLER)
    parts = a + b
    final = rng.choice(("share", "spend"))
    cousins = rng.randint(2, 4)
    people = cousins + 1
    # One ratio part is a multiple of (100 - charity) / gcd(100, 100 - charity), so the prize,
    # the charity share and the prize per ratio part are whole; times the number of people
    # sharing, so that every re-run's share divides evenly.
    unit = Fraction(100 - charity, 100).numerator
    if final == "share":
        unit *= people
    # on a log scale: the decoys sit at ratios to the answer, so small prizes must be as
    # common as the small decoys that large prizes give
    part = unit * pick_log_uniform(rng, range(-(-30 // unit), 1500 // unit + 1))
    rest = part * parts
    prize = rest * 100 // (100 - charity)
    require(300 <= prize <= 20000, "prize out of range")
    # the amount spent (a tenth to three fifths of the winner's part) is a multiple of the
    # parts, so the "before the ratio" re-run stays whole
    mine = part * a
    spent = parts * rng.randint(max(1, mine // (10 * parts)), max(1, mine * 3 // (5 * parts)))
    winner, partner = rng.sample(NAMES, 2)
    p = {
        "winner": winner,
        "partner": partner,
        "prize": prize,
        "charity": charity,
        "ratio": (a, b),
        "final": final,
        "cousins": cousins,
        "people": people,
        "spent": spent,
        "contest": rng.choice(CONTESTS),
        "purchase": rng.choice(PURCHASES),
    }

    extra = EXTRA[final]
    chain = partial(_chain, p)

    answer, steps = solve(chain)
    require(answer >= 10, "too little left")
    return Problem(
        family=NAME,
        topic=NAME,
        depth=5,
        ctx=_story(rng, p),
        answer=answer,
        unit="$",
        ending=" ${}.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES[final], answer),
        kind="money",
        params=p,
        extra_mistakes=mistakes(chain, extra, answer),
    )


def _chain(p: dict, c: Calc, m: str | None):
    """The solution of ``p`` worked through ``c``, or its wrong value under the named mistake
    ``m`` (an extra mistake makes several errors at once)."""
    errors = EXTRA[p["final"]].get(m, (m,))
    left = _after_charity(c, p, errors)
    if SPENT_BEFORE_RATIO in errors:
        left = c.op("after spending", left, "-", p["spent"], money=True)
    mine = _winners_part(c, p, left, errors)
    return _last_step(c, p, mine, errors)


def _after_charity(c: Calc, p: dict, errors) -> int:
    """The prize less the charity's share (or as a mistake takes it)."""
    prize, charity = p["prize"], p["charity"]
    if FORGOT_CHARITY in errors or CHARITY_FROM_PART in errors:
        return prize
    if ADDED_CHARITY in errors:
        return c.pct("with charity added", 100 + charity, prize, money=True)
    if CHARITY_TWICE in errors:
        gift = c.pct("charity", charity, prize, money=True)
        return c.op("after charity", c.op("after charity", prize, "-", gift), "-", gift)
    return c.pct("after charity", 100 - charity, prize, money=True)


def _winners_part(c: Calc, p: dict, left, errors):
    """The winner's part of ``left`` by the ratio (ratio arithmetic in plain numbers:
    "one part: 4800 / 8 = 600")."""
    (a, b), winner = p["ratio"], p["winner"]
    total_parts = c.op("total parts", a, "+", b)
    if EQUAL_HALVES in errors:
        mine = c.op(f"{winner}'s part", left, "/", 2)
    elif SKIPPED_RATIO in errors:
        mine = left
    else:
        divisor = b if RATIO_AS_FRACTION in errors else total_parts
        one_part = c.op("one part", left, "/", divisor)
        if ONE_PART in errors:
            mine = one_part
        else:
            mine = c.op(f"{winner}'s part", one_part, "×", b if OTHER_PART in errors else a)
    if CHARITY_FROM_PART in errors:
        mine = c.op(f"{winner}'s part", mine, "-", c.pct("charity", p["charity"], p["prize"]))
    elif CHARITY_AGAIN_ON_PART in errors:
        mine = c.pct(f"{winner}'s part", 100 - p["charity"], mine)
    return mine


def _last_step(c: Calc, p: dict, mine, errors):
    """Each person's share of the winner's part, or what is left after the purchase."""
    spent = p["spent"]
    if p["final"] == "share":
        if FORGOT_SHARING in errors:
            return mine
        if LEFT_SELF_OUT in errors:
            return c.op("each share", mine, "/", p["cousins"])
        return c.op("each share", mine, "/", p["people"] + 1 if SHARER_TWICE in errors else p["people"])
    if FORGOT_SPENDING in errors or SPENT_BEFORE_RATIO in errors:
        return mine
    if ADDED_SPENDING in errors:
        return c.op("left", mine, "+", spent, money=True)
    left_over = c.op("left", mine, "-", spent, money=True)
    if SPENT_TWICE in errors:
        left_over = c.op("left", left_over, "-", spent, money=True)
    return left_over


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------
# No one_step_more twin: the family is depth 5, the deepest tier.

#: Money that is not this part of this prize: (sentence, the sign with which a solver who falls
#: for it moves the amount asked). Other winnings tempt an addition, the partner's spending a
#: subtraction. The four-word ones keep the longest prompts within the word limit.
IRRELEVANT_SENTENCES = (
    ("{other} later won {n}.", 1),
    ("The year before, {me} had won {n} in another contest.", 1),
    ("{other} later spent {n}.", -1),
    ("{other} spent {n} on a new phone.", -1),
)

#: The split told before the charity share taken off first.
REORDERED_SPLIT = "They split the rest {a} : {b}, once {c}% had gone to charity."

#: The story in cents (every amount × 100), in the original's wording.
OPENINGS_CENTS = (
    "{me} and {other} won {won} cents in {contest}.",
    "{me} and {other} shared a {won}-cent prize from {contest}.",
)
LASTS_CENTS = {
    "share": LASTS["share"],
    "spend": (
        "{me} then spent {spent} cents of it on {purchase}.",
        "Out of that part, {me} paid {spent} cents for {purchase}.",
    ),
}
QUESTIONS_CENTS = {
    "share": ("In cents, {me}'s own share was", "In cents, {me} kept"),
    "spend": ("In cents, {me} had left", "In cents, what {me} had left was"),
}


def _money_fields(p: dict) -> dict:
    return _fields(p, fmt_num(p["prize"], money=True), fmt_num(p["spent"], money=True))


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Another person's money, or another year's prize: falling for it moves the amount asked."""
    p = dict(problem.params)
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    n, used = irrelevant_number(rng, problem, 10, max(40, problem.answer), lambda n: problem.answer + sign * n)
    text = sentence.format(me=p["winner"], other=p["partner"], n=fmt_num(n, money=True))
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, text)), n, used)


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The ratio split told before the charity share that came off first."""
    p = dict(problem.params)
    f = _money_fields(p)
    final = p["final"]
    return replace(
        problem,
        ctx=finish_ctx(
            OPENINGS[p["opening"]].format(**f),
            REORDERED_SPLIT.format(**f),
            LASTS[final][p["last"]].format(**f),
            QUESTIONS[final][p["question"]].format(**f),
        ),
    )


@twin(NAME, "unit_change")
def in_cents(problem: Problem, rng: random.Random) -> Problem:
    """Every amount in cents, the answer too."""
    p = dict(problem.params)
    prize, spent, final = 100 * p["prize"], 100 * p["spent"], p["final"]
    a, b = p["ratio"]
    s = Steps()
    left = s.pct("after charity, in cents", 100 - p["charity"], prize)
    parts = s.op("total parts", a, "+", b)
    one = s.op("one part, in cents", left, "/", parts)
    mine = s.op(f"{p['winner']}'s part, in cents", one, "×", a)
    if final == "share":
        answer = s.op("each share, in cents", mine, "/", p["people"])
    else:
        answer = s.op("left, in cents", mine, "-", spent)
    require(answer == 100 * problem.answer, "the answer in cents must be the answer in dollars × 100")
    f = _fields(p, str(prize), str(spent))
    ctx = finish_ctx(
        OPENINGS_CENTS[p["opening"]].format(**f),
        SPLITS[p["split"]].format(**f),
        LASTS_CENTS[final][p["last"]].format(**f),
        QUESTIONS_CENTS[final][p["question"]].format(**f),
    )
    return replace(
        problem,
        ctx=ctx,
        answer=answer,
        unit="cents",
        ending=" {} cents.",
        steps=s.solution(),
        mistakes={name: 100 * v for name, v in problem.mistakes.items()},
        kind="count",
        params={**p, "unit": "cents"},
        extra_mistakes={name: 100 * v for name, v in problem.extra_mistakes.items()},
    )
