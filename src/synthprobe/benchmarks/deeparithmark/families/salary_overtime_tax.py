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
from fractions import Fraction
from math import gcd

from ..base import Problem, fmt_num, register, require
from ._common_a import PARITY_REDRAWS, parity_kept
from ._common_b import NAMES, Calc, finish_ctx, mistakes, solve

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


def _story(rng: random.Random, p: dict) -> str:
    name, r, r2, t = p["name"], p["rate"], p["overtime_rate"], p["tax"]
    h, o = p["hours"], p["overtime"]
    money = lambda x: fmt_num(x, money=True)  # noqa: E731
    opening = rng.choice(
        (
            f"{name} earns {money(r)} an hour {p['job']} and {money(r2)} an hour for overtime.",
            f"{name} is paid {money(r)} per hour {p['job']}, or {money(r2)} per overtime hour.",
        )
    )
    hours = rng.choice(
        (
            f"{p['period']} {name} worked {h} regular hours and {o} hours of overtime.",
            f"{p['period']} {name} logged {h} regular hours plus {o} overtime hours.",
        )
    )
    tax = rng.choice(
        (f"Tax took {t}% of the pay.", f"{t}% of the gross pay went on tax.", f"{t}% was deducted for tax.")
    )
    question = rng.choice((f"{name}'s take-home pay was", "The pay after tax was", "The net pay came to"))
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
        r_rate = overtime_rate if m == ALL_AT_OVERTIME else rate
        o_rate = rate if m == OVERTIME_AT_REGULAR else overtime_rate
        if m == PREMIUM_ONLY:
            o_rate = c.op("overtime premium", overtime_rate, "-", rate)
        # hours × hourly rate: plain numbers ("regular pay: 40 × 18 = 720")
        regular = c.op("regular pay", hours, "×", r_rate)
        extra = c.op("overtime pay", overtime, "×", o_rate)
        if m == FORGOT_OVERTIME:
            gross = regular
        else:
            gross = c.op("gross pay", regular, "+", extra, money=True)
        if m == FORGOT_TAX:
            return gross
        base = {TAX_ON_REGULAR: regular, TAX_ON_OVERTIME: extra}.get(m, gross)
        tax_due = c.pct("tax", tax, base, money=True)
        if m == ADDED_TAX:
            return c.op("net pay", gross, "+", tax_due, money=True)
        net = c.op("net pay", gross, "-", tax_due, money=True)
        if m == TAX_TWICE:
            net = c.op("net pay", net, "-", tax_due, money=True)
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
    )
