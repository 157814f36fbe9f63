"""Regular pay plus overtime pay, less a percentage of tax (depth 5).

    Rosa earns $18 an hour at a bakery and $27 an hour for overtime. Last week Rosa worked
    40 regular hours and 5 hours of overtime. Tax took 20% of the pay. Rosa's take-home
    pay was → $684.

Steps: regular hours × rate, overtime hours × overtime rate, + (gross), tax% of gross,
gross − tax.

Every pay amount (and every pay amount a mistake produces) is a multiple of the step that
keeps the tax whole, so each mistake's re-run stays in whole dollars.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from math import gcd

from ..base import Problem, Steps, fmt_num, insert_sentence, irrelevant_twin, register, require, twin
from ._common_a import PARITY_REDRAWS, parity_kept
from ._common_b import NAMES, Calc, choose, finish_ctx, irrelevant_number, mistakes, solve

NAME = "salary_overtime_tax"

#: Share of odd net pays kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.5

FORGOT_TAX = "forgot the tax"
ADDED_TAX = "added the tax instead of taking it off"
TAX_TWICE = "took the tax off twice"
TAX_ON_REGULAR = "tax taken of the regular pay only"
TAX_ON_OVERTIME = "tax taken of the overtime pay only"
FORGOT_OVERTIME = "forgot the overtime"
OVERTIME_AT_REGULAR = "paid the overtime at the regular rate"
PREMIUM_ONLY = "paid only the overtime premium"
ALL_AT_OVERTIME = "paid every hour at the overtime rate"

MISTAKES = (
    FORGOT_TAX,
    ADDED_TAX,
    TAX_TWICE,
    TAX_ON_REGULAR,
    TAX_ON_OVERTIME,
    FORGOT_OVERTIME,
    OVERTIME_AT_REGULAR,
    PREMIUM_ONLY,
    ALL_AT_OVERTIME,
)

# Extra mistakes (``Problem.extra_mistakes``, read only by the role-balanced groups). The legacy
# ones are a slip on the pay (overtime left out or underpaid: below the key) or on the tax (a
# fixed ratio of the gross pay), so the key is nearly always the value with the pay slips below it
# and the tax slips at its own ratios. The extra ones are pay slips the other way (the overtime
# pay added twice; the overtime hours paid at both rates), the tax taken off again from the
# take-home pay (one more step of the ratio, below the key), and a slip on the pay together with
# a slip on the tax, each the chain below re-run with both errors; the pairs kept are those that
# give the role-balanced groups most (tried on 100,000 draws), not every pair.
OVERTIME_PAY_TWICE = "added the overtime pay twice"
BOTH_RATES = "paid the overtime hours at both rates"
TAX_OF_NET_AGAIN = "took the tax off the take-home pay again"

#: compound mistake's name -> (its slip on the pay, its slip on the tax)
COMPOUNDS = {
    f"{pay} and {tax_slip}": (pay, tax_slip)
    for pay, tax_slips in (
        (FORGOT_OVERTIME, (FORGOT_TAX, ADDED_TAX, TAX_OF_NET_AGAIN)),
        (OVERTIME_AT_REGULAR, (FORGOT_TAX, TAX_OF_NET_AGAIN)),
        (PREMIUM_ONLY, (FORGOT_TAX, TAX_OF_NET_AGAIN)),
        (ALL_AT_OVERTIME, (FORGOT_TAX, TAX_TWICE, TAX_OF_NET_AGAIN)),
        (OVERTIME_PAY_TWICE, (FORGOT_TAX, TAX_TWICE, TAX_OF_NET_AGAIN)),
        (BOTH_RATES, (FORGOT_TAX, TAX_TWICE, TAX_OF_NET_AGAIN)),
    )
    for tax_slip in tax_slips
}
EXTRA_MISTAKES = (OVERTIME_PAY_TWICE, BOTH_RATES, TAX_OF_NET_AGAIN, *COMPOUNDS)

TAX_RATES = (10, 20, 25, 30)
#: (period, regular hours range, overtime hours range)
PERIODS = (("Last week", (32, 45), (3, 14)), ("Over two weeks", (64, 88), (4, 20)), ("Last month", (128, 176), (6, 30)))
JOBS = (
    "at a bakery",
    "at a garage",
    "in a warehouse",
    "at a hotel",
    "at a call centre",
    "on a building site",
    "at a care home",
    "in a print shop",
    "at a cinema",
    "on a farm",
)


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
OPENINGS = (
    "{name} earns {r} an hour {job} and {r2} an hour for overtime.",
    "{name} is paid {r} per hour {job}, or {r2} per overtime hour.",
)
HOURS = (
    "{period} {name} worked {h} regular hours and {o} hours of overtime.",
    "{period} {name} logged {h} regular hours plus {o} overtime hours.",
)
TAXES = ("Tax took {t}% of the pay.", "{t}% of the gross pay went on tax.", "{t}% was deducted for tax.")
QUESTIONS = ("{name}'s take-home pay was", "The pay after tax was", "The net pay came to")


def _fields(p: dict, r: str, r2: str) -> dict:
    return {
        "name": p["name"],
        "job": p["job"],
        "period": p["period"],
        "r": r,
        "r2": r2,
        "h": p["hours"],
        "o": p["overtime"],
        "t": p["tax"],
    }


def _story(rng: random.Random, p: dict) -> str:
    f = _fields(p, fmt_num(p["rate"], money=True), fmt_num(p["overtime_rate"], money=True))
    opening = choose(rng, p, "opening", OPENINGS).format(**f)
    hours = choose(rng, p, "hours_text", HOURS).format(**f)
    tax = choose(rng, p, "tax_text", TAXES).format(**f)
    question = choose(rng, p, "question", QUESTIONS).format(**f)
    return finish_ctx(opening, hours, tax, question)


def _draw_whole(rng: random.Random, lo: int, hi: int, step: int, times: int) -> int:
    """A number in [lo, hi] whose product with ``times`` is a multiple of ``step``."""
    need = step // gcd(step, times)
    choices = [v for v in range(lo, hi + 1) if v % need == 0]
    require(bool(choices), "no whole-dollar amount in range")
    return rng.choice(choices)


@register(NAME, topic=NAME, depth=5)
def generate(rng: random.Random) -> Problem:
    """Regular hours at one rate, overtime at a higher one, then a flat tax percentage."""
    tax = rng.choice(TAX_RATES)
    step = 100 // gcd(100, tax)  # gross pay must be a multiple of this for whole-dollar tax
    for _ in range(PARITY_REDRAWS):
        rate = rng.randint(12, 38)
        overtime_rate = rate + rng.randint(4, max(5, rate // 2 + 4))
        period, (h_lo, h_hi), (o_lo, o_hi) = rng.choice(PERIODS)
        # regular pay, overtime pay and the mistakes' mixed products all multiples of ``step``
        hours = _draw_whole(rng, h_lo, h_hi, step, gcd(rate, overtime_rate))
        overtime = _draw_whole(rng, o_lo, o_hi, step, gcd(rate, overtime_rate))
        # the decoys (the gross pay, the pay without overtime, ...) lean even; so do the answers
        net = Fraction((hours * rate + overtime * overtime_rate) * (100 - tax), 100)
        if net.denominator > 1 or parity_kept(rng, int(net), ODD_SHARE):
            break
    p = {
        "name": rng.choice(NAMES),
        "job": rng.choice(JOBS),
        "period": period,
        "rate": rate,
        "overtime_rate": overtime_rate,
        "hours": hours,
        "overtime": overtime,
        "tax": tax,
    }

    def chain(c: Calc, m: str | None):
        # a compound mistake makes one slip on the pay and one on the tax
        pay_m, tax_m = COMPOUNDS.get(m, (m, m))
        r_rate = overtime_rate if pay_m == ALL_AT_OVERTIME else rate
        o_rate = rate if pay_m == OVERTIME_AT_REGULAR else overtime_rate
        if pay_m == PREMIUM_ONLY:
            o_rate = c.op("overtime premium", overtime_rate, "-", rate)
        elif pay_m == BOTH_RATES:
            o_rate = c.op("overtime rate", rate, "+", overtime_rate)
        # hours × hourly rate: plain numbers ("regular pay: 40 × 18 = 720")
        regular = c.op("regular pay", hours, "×", r_rate)
        extra = c.op("overtime pay", overtime, "×", o_rate)
        if pay_m == FORGOT_OVERTIME:
            gross = regular
        else:
            gross = c.op("gross pay", regular, "+", extra, money=True)
            if pay_m == OVERTIME_PAY_TWICE:
                gross = c.op("gross pay", gross, "+", extra, money=True)
        if tax_m == FORGOT_TAX:
            return gross
        base = {TAX_ON_REGULAR: regular, TAX_ON_OVERTIME: extra}.get(tax_m, gross)
        tax_due = c.pct("tax", tax, base, money=True)
        if tax_m == ADDED_TAX:
            return c.op("net pay", gross, "+", tax_due, money=True)
        net = c.op("net pay", gross, "-", tax_due, money=True)
        if tax_m == TAX_TWICE:
            net = c.op("net pay", net, "-", tax_due, money=True)
        elif tax_m == TAX_OF_NET_AGAIN:
            net = c.op("net pay", net, "-", c.pct("tax", tax, net, money=True), money=True)
        return net

    answer, steps = solve(chain)
    return Problem(
        family=NAME,
        topic=NAME,
        depth=5,
        ctx=_story(rng, p),
        answer=answer,
        unit="$",
        ending=" ${}.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="money",
        params=p,
        extra_mistakes=mistakes(chain, EXTRA_MISTAKES, answer),
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------
# No one_step_more twin: the family is depth 5, the deepest tier.

#: Money that is not this pay: (sentence, the sign with which a solver who falls for it moves
#: the take-home pay). Spending tempts a subtraction, someone else's pay or last year's bonus an
#: addition. The four-word ones keep the longest prompts within the word limit.
IRRELEVANT_SENTENCES = (
    ("{name}'s rent is {n}.", -1),
    ("{name} spent {n} on groceries.", -1),
    ("A colleague earned {n} more.", 1),
    ("{name}'s bonus last year was {n}.", 1),
    ("{name}'s savings are {n}.", 1),
)

#: The same story with the hours told before the rates, or the tax first.
REORDERED = (
    "{hours} {name} earns {r} an hour {job} and {r2} for each overtime hour. {tax}",
    "Tax takes {t}% of {name}'s pay {job}, where {name} earns {r} an hour and {r2} per overtime hour. {hours}",
)

#: The story in cents (every amount × 100), in the original's wording.
OPENINGS_CENTS = (
    "{name} earns {r} cents an hour {job}, {r2} cents an hour for overtime.",
    "{name} is paid {r} cents per hour {job}, or {r2} cents per overtime hour.",
)
QUESTIONS_CENTS = (
    "{name}'s take-home pay in cents was",
    "The pay after tax in cents was",
    "The net pay in cents came to",
)


def _money_fields(p: dict) -> dict:
    return _fields(p, fmt_num(p["rate"], money=True), fmt_num(p["overtime_rate"], money=True))


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Spending, or someone else's pay: falling for it moves the take-home pay."""
    p = dict(problem.params)
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    n, used = irrelevant_number(rng, problem, 10, max(40, problem.answer), lambda n: problem.answer + sign * n)
    text = sentence.format(name=p["name"], n=fmt_num(n, money=True))
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, text)), n, used)


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The hours told before the rates, or the tax rate first."""
    p = dict(problem.params)
    f = _money_fields(p)
    f["hours"] = HOURS[p["hours_text"]].format(**f)
    f["tax"] = TAXES[p["tax_text"]].format(**f)
    return replace(problem, ctx=finish_ctx(rng.choice(REORDERED).format(**f), QUESTIONS[p["question"]].format(**f)))


@twin(NAME, "unit_change")
def in_cents(problem: Problem, rng: random.Random) -> Problem:
    """The rates in cents, the take-home pay too."""
    p = dict(problem.params)
    rate, overtime_rate = 100 * p["rate"], 100 * p["overtime_rate"]
    s = Steps()
    regular = s.op("regular pay in cents", p["hours"], "×", rate)
    extra = s.op("overtime pay in cents", p["overtime"], "×", overtime_rate)
    gross = s.op("gross pay in cents", regular, "+", extra)
    tax_due = s.pct("tax in cents", p["tax"], gross)
    net = s.op("net pay in cents", gross, "-", tax_due)
    require(net == 100 * problem.answer, "the pay in cents must be the pay in dollars × 100")
    f = _fields(p, str(rate), str(overtime_rate))
    ctx = finish_ctx(
        OPENINGS_CENTS[p["opening"]].format(**f),
        HOURS[p["hours_text"]].format(**f),
        TAXES[p["tax_text"]].format(**f),
        QUESTIONS_CENTS[p["question"]].format(**f),
    )
    return replace(
        problem,
        ctx=ctx,
        answer=net,
        unit="cents",
        ending=" {} cents.",
        steps=s.solution(),
        mistakes={name: 100 * v for name, v in problem.mistakes.items()},
        kind="count",
        params={**p, "unit": "cents"},
        extra_mistakes={name: 100 * v for name, v in problem.extra_mistakes.items()},
    )
