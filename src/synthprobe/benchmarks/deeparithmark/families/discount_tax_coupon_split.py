"""A bill with a percent discount, then tax, then a coupon, split evenly (depth 4).

    Nina and three friends had dinner out. The bill was $300, with 20% off, and then 10% tax
    was added. They used a $12 coupon and split the rest equally. Each person paid → $63.

Steps: (100 − discount)% of the bill, (100 + tax)% of that, − coupon, ÷ people (exact).

The bill and the coupon are multiples of the number of people and the bill is a multiple of
the amount that keeps every percentage whole, so the answer and most mistakes come out in
whole dollars.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from ..base import Problem, fmt_num, register, require
from ._common_a import PARITY_REDRAWS, parity_kept
from ._common_b import NAMES, NUMBER_WORDS, Calc, finish_ctx, lcm_of_denominators, mistakes, solve

NAME = "discount_tax_coupon_split"

#: Share of odd shares kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.7

FORGOT_DISCOUNT = "forgot the discount"
ADDED_DISCOUNT = "added the discount instead of taking it off"
FORGOT_TAX = "forgot the tax"
SUBTRACTED_TAX = "took the tax off instead of adding it"
TAX_ON_ORIGINAL = "tax taken of the original bill"
DISCOUNT_TWICE = "took the discount off twice"
SWAPPED_RATES = "swapped the discount and tax rates"
FORGOT_COUPON = "forgot the coupon"
COUPON_TWICE = "used the coupon twice"
COUPON_PER_PERSON = "took the coupon off every share"
PAYER_LEFT_OUT = "left the organiser out of the split"

MISTAKES = (
    FORGOT_DISCOUNT,
    ADDED_DISCOUNT,
    FORGOT_TAX,
    SUBTRACTED_TAX,
    TAX_ON_ORIGINAL,
    DISCOUNT_TWICE,
    SWAPPED_RATES,
    FORGOT_COUPON,
    COUPON_TWICE,
    COUPON_PER_PERSON,
    PAYER_LEFT_OUT,
)

DISCOUNTS = (10, 15, 20, 25, 30, 40)
TAXES = (5, 6, 8, 10, 12, 15, 20)


def _step_unit(discount: int, tax: int) -> int:
    """The smallest per-person amount that keeps the discounted and taxed bill whole."""
    return lcm_of_denominators((Fraction(100 - discount, 100), Fraction((100 - discount) * (100 + tax), 10000)))


#: (discount, tax) pairs whose per-person step is small enough to give many different bills.
RATES = tuple((d, t) for d in DISCOUNTS for t in TAXES if _step_unit(d, t) <= 50)

#: (occasion, what the discount is called)
OCCASIONS = (
    ("had dinner out", "a happy-hour discount"),
    ("ordered takeaway", "a promotion"),
    ("went go-karting", "an off-peak discount"),
    ("booked an escape room", "a group discount"),
    ("rented a cabin", "an early-booking discount"),
    ("bought concert tickets", "a student discount"),
    ("went bowling", "a weekday discount"),
    ("hired bikes", "a loyalty discount"),
)


def _story(rng: random.Random, p: dict) -> str:
    name, k, bill, d, t, coupon = (p["name"], p["friends"], p["bill"], p["discount"], p["tax"], p["coupon"])
    occasion, offer = p["occasion"]
    friends = f"{NUMBER_WORDS[k]} friends"
    opening = f"{name} and {friends} {occasion}."
    bill_text = rng.choice(
        (
            f"The bill was {fmt_num(bill, money=True)}, with {d}% off, and then {t}% tax was added.",
            f"The {fmt_num(bill, money=True)} bill got {offer} of {d}%, then {t}% tax.",
            f"From a {fmt_num(bill, money=True)} bill they got {d}% off; {t}% tax was then added.",
        )
    )
    coupon_text = rng.choice(
        (
            f"They used a {fmt_num(coupon, money=True)} coupon and split the rest equally.",
            f"A {fmt_num(coupon, money=True)} voucher came off, and they split the rest equally.",
        )
    )
    question = rng.choice(("Each person paid", "Each share came to", f"{name}'s share was"))
    return finish_ctx(opening, bill_text, coupon_text, question)


@register(NAME, topic=NAME, depth=4)
def generate(rng: random.Random) -> Problem:
    """Percent off a bill, tax on the discounted bill, a coupon, then an equal split."""
    for _ in range(PARITY_REDRAWS):
        discount, tax = rng.choice(RATES)
        friends = rng.randint(2, 5)
        people = friends + 1
        unit = _step_unit(discount, tax)
        # shares drawn log-uniformly from about $15 to $330, and a coupon of up to $14 a head:
        # the answers then cover the range their ratio-scaled decoys (no discount, no tax, ...)
        # spill into and every final digit, instead of bunching in a few multiples of the step
        per_person = unit * max(1, round(math.exp(rng.uniform(math.log(15), math.log(330))) / unit))
        bill = per_person * people
        # the coupon stays under about a quarter of a share, so small bills still leave a share
        # that the mistakes can land on either side of
        coupon = people * rng.randint(2, max(3, min(14, per_person // 4)))
        # the decoys (no coupon, the coupon twice, no tax, ...) lean even; so do the answers
        share = (Fraction(bill * (100 - discount) * (100 + tax), 10000) - coupon) / people
        if share.denominator > 1 or parity_kept(rng, int(share), ODD_SHARE):
            break
    p = {
        "name": rng.choice(NAMES),
        "friends": friends,
        "people": people,
        "bill": bill,
        "discount": discount,
        "tax": tax,
        "coupon": coupon,
        "occasion": rng.choice(OCCASIONS),
    }

    def chain(c: Calc, m: str | None):
        off, add = (tax, discount) if m == SWAPPED_RATES else (discount, tax)
        if m == FORGOT_DISCOUNT:
            discounted = bill
        elif m == ADDED_DISCOUNT:
            discounted = c.pct("after the discount", 100 + off, bill, money=True)
        else:
            discounted = c.pct("after the discount", 100 - off, bill, money=True)
            if m == DISCOUNT_TWICE:
                discounted = c.pct("after the discount again", 100 - off, discounted, money=True)
        if m == FORGOT_TAX:
            taxed = discounted
        elif m == SUBTRACTED_TAX:
            taxed = c.pct("with tax", 100 - add, discounted, money=True)
        elif m == TAX_ON_ORIGINAL:
            tax_due = c.pct("tax", add, bill, money=True)
            taxed = c.op("with tax", discounted, "+", tax_due, money=True)
        else:
            taxed = c.pct("with tax", 100 + add, discounted, money=True)
        if m == COUPON_PER_PERSON:
            share = c.op("each", taxed, "/", people)
            return c.op("each", share, "-", coupon, money=True)
        if m == FORGOT_COUPON:
            to_split = taxed
        else:
            to_split = c.op("after the coupon", taxed, "-", coupon, money=True)
            if m == COUPON_TWICE:
                to_split = c.op("after the coupon again", to_split, "-", coupon, money=True)
        # the head count is not money: this line reads "each person: 780 / 6 = 130"
        return c.op("each person", to_split, "/", people - 1 if m == PAYER_LEFT_OUT else people)

    answer, steps = solve(chain)
    require(answer >= 8, "a share too small to be believable")
    return Problem(
        family=NAME,
        topic=NAME,
        depth=4,
        ctx=_story(rng, p),
        answer=answer,
        unit="$",
        ending=" ${}.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="money",
        params=p,
    )
