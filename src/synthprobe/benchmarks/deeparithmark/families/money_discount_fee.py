"""Percent off a price, then a fixed fee added (depth 2)."""

from __future__ import annotations

import random
from fractions import Fraction
from functools import cache
from math import gcd

from ..base import Problem, Steps, fmt_num, register, require
from ._common_a import NAMES, PARITY_REDRAWS, clean_mistakes, exact_div, parity_kept, pick, pick_log_uniform, whole

NAME = "money_discount_fee"

#: Share of odd totals kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.8

#: (item, lowest price, highest price) in whole dollars. The ranges run to several times the
#: lowest price: the decoys that skip the discount or add it reach well above the answer, so
#: the answers have to reach the 300s-700s too or those leading digits would mark a decoy.
ITEMS = (
    ("jacket", 40, 600),
    ("desk lamp", 30, 320),
    ("backpack", 30, 360),
    ("pair of boots", 50, 600),
    ("coffee table", 80, 900),
    ("printer", 60, 800),
    ("rug", 50, 900),
    ("desk chair", 70, 800),
    ("tent", 60, 800),
    ("bicycle helmet", 30, 300),
    ("blender", 40, 450),
    ("suitcase", 60, 700),
    ("guitar", 90, 990),
    ("microwave", 60, 560),
)
FEES = ("shipping fee", "delivery charge", "service fee", "gift-wrapping fee", "handling fee")
#: Discounts of 20 % and more keep "took the discount amount as the price" from falling far
#: below the answer (a shorter number than every other option).
PERCENTS = (20, 25, 30, 35, 40, 45, 60)

TEMPLATES = (
    "{name} bought a {item} priced at ${price} during a {p}% off sale, and a ${fee} {feename} "
    "was added at checkout. In total, {name} paid",
    "A {item} normally costs ${price}. {name} got {p}% off it but also paid a ${fee} {feename}. "
    "Altogether, the {item} cost {name}",
    "A shop marked a ${price} {item} down by {p}%. {name} bought it and paid a ${fee} {feename} "
    "on top. {name}'s total came to",
    "With a {p}% discount, {name} ordered a {item} listed at ${price}, plus a ${fee} {feename}. "
    "The amount {name} paid in total was",
)


@cache
def _fees_off_fives(sale_price: Fraction) -> tuple[int, ...]:
    """The fees of 4 to 39 dollars that leave ``sale_price`` plus the fee off the multiples of 5."""
    return tuple(f for f in range(4, 40) if (sale_price + f) % 5 != 0)


@register(NAME, topic=NAME, depth=2)
def generate(rng: random.Random) -> Problem:
    """Percent off a price, then a fixed fee added."""
    item, lo, hi = pick(rng, ITEMS)
    p = pick(rng, PERCENTS)
    step = 100 // gcd(p, 100)  # price must be a multiple of this for a whole-dollar discount
    # evenly on a log scale, like the decoys that sit a fixed ratio off the answer
    for _ in range(PARITY_REDRAWS):
        price = pick_log_uniform(rng, range(step * -(-lo // step), hi + 1, step))
        sale_price = Fraction(price * (100 - p), 100)
        # the fee is drawn among those that leave a total off the multiples of 5, so the
        # answer and its decoys share the commonest roundness class without a redraw
        fee = pick(rng, _fees_off_fives(sale_price))
        # the decoys that double the fee or drop the discount lean even; so do the answers
        if sale_price.denominator > 1 or parity_kept(rng, int(sale_price) + fee, ODD_SHARE):
            break
    feename = pick(rng, FEES)
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)

    s = Steps()
    sale = s.pct("price after the discount", 100 - p, price, money=True)
    total = s.op("total with the fee", sale, "+", fee, money=True)
    answer = whole(total)
    require(answer is not None and answer > 0, "total must be whole dollars")
    require(answer % 5 != 0, "answer should not be a multiple of 5")

    discount = Fraction(price * p, 100)
    mistakes = clean_mistakes(
        answer,
        {
            "forgot the fee": sale,
            "subtracted the fee instead of adding it": sale - fee,
            "added the fee twice": sale + 2 * fee,
            "ignored the discount": price + fee,
            "took the discount amount as the price": discount + fee,
            "took the percentage off as dollars": price - p + fee,
            "added the discount instead of subtracting it": price + discount + fee,
            "discounted the fee too": exact_div((price + fee) * (100 - p), 100),
        },
    )

    ctx = template.format(name=name, item=item, price=fmt_num(price), p=p, fee=fee, feename=feename)
    return Problem(
        family=NAME,
        topic=NAME,
        depth=2,
        ctx=ctx,
        answer=answer,
        unit="$",
        ending=" ${}.",
        steps=s.solution(),
        mistakes=mistakes,
        kind="money",
        params={
            "price": price,
            "percent_off": p,
            "fee": fee,
            "item": item,
            "fee_name": feename,
            "name": name,
            "template": TEMPLATES.index(template),
        },
    )
