"""Percent off a price, then a fixed fee added (depth 2)."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from functools import cache
from math import gcd

from ..base import (
    Problem,
    Steps,
    fmt_num,
    insert_sentence,
    irrelevant_twin,
    last_sentence_start,
    register,
    require,
    twin,
)
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


def _price_slips(price: int, p: int, discount: int) -> dict[str, int | None]:
    """The slips a solver can make on the discount, each as the price it leads to in place of
    the sale price (for the compound mistakes of :func:`_extra_mistakes`)."""
    return {
        "ignored the discount": price,
        "added the discount instead of subtracting it": price + discount,
        "took the discount amount as the price": discount,
        "took the percentage off as dollars": price - p,
        "subtracted the discount twice": price - 2 * discount,
        "took the discount off the sale price again": exact_div((price - discount) * (100 - p), 100),
    }


#: The slips of :func:`_price_slips` that are new on their own (the others are ``mistakes``).
NEW_PRICE_SLIPS = ("subtracted the discount twice", "took the discount off the sale price again")


def _extra_mistakes(answer: int, price: int, p: int, fee: int) -> dict[str, int]:
    """The role-balanced builder's wider pool (:mod:`..groups`): the discount taken off twice
    (the same amount again, or the percentage again off the sale price), and every slip on the
    discount made together with a slip on the fee (forgot it, subtracted it, added it twice).

    The slips on the discount and on the fee move the total by different amounts, so their
    compounds put decoys on both sides of the key at the distances the single slips do, and
    the key can sit where a decoy sits in another item. Each value is exact; one that is not a
    whole positive number of dollars (or is the answer) is left out, and nothing is drawn.
    """
    discount = exact_div(price * p, 100)  # whole: the price is drawn a multiple of 100/gcd(p, 100)
    if discount is None:
        return {}
    fee_slips = (("forgot the fee", 0), ("subtracted the fee", -fee), ("added the fee twice", 2 * fee))
    candidates: dict[str, int] = {}
    for slip, value in _price_slips(price, p, discount).items():
        if value is None:
            continue
        if slip in NEW_PRICE_SLIPS:
            candidates[slip] = value + fee
        for fee_slip, fee_value in fee_slips:
            candidates[f"{slip} and {fee_slip}"] = value + fee_value
    return {name: v for name, v in candidates.items() if v > 0 and v != answer}


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
        extra_mistakes=_extra_mistakes(answer, price, p, fee),
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


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: A price seen elsewhere, in dollars, that plays no part in what was paid: (sentence, the sign
#: with which a solver who falls for it applies it to the total). Cheaper elsewhere tempts a
#: subtraction, dearer elsewhere an addition; the twin builder needs both, as an answer at the
#: lowest rank can only have a decoy above it, and one at the highest one below it.
IRRELEVANT_SENTENCES = (
    ("The week before, the same {item} had been ${n} cheaper at another shop.", -1),
    ("A friend of {name}'s had paid ${n} less for a {item} last year.", -1),
    ("At another shop, the same {item} cost ${n} more.", 1),
    ("A friend of {name}'s had paid ${n} more for a {item} last year.", 1),
)

#: The same story with the fee told first (the same two operations).
REORDERED = (
    "A ${fee} {feename} was added at checkout when {name} bought a {item} priced at ${price} during a {p}% off sale.",
    "{name} paid a ${fee} {feename} on a {item} that normally costs ${price} and got {p}% off it.",
    "{name} paid a ${fee} {feename} on top when buying a ${price} {item} that a shop had marked down by {p}%.",
    "{name} ordered a {item} listed at ${price}, plus a ${fee} {feename}, with a {p}% discount.",
)

#: The story in cents (every amount × 100).
IN_CENTS = (
    "{name} bought a {item} priced at {price} cents during a {p}% off sale, and a {fee}-cent "
    "{feename} was added at checkout. In cents, {name} paid",
    "A {item} normally costs {price} cents. {name} got {p}% off it but also paid a {fee}-cent "
    "{feename}. Altogether, in cents, the {item} cost {name}",
    "A shop marked a {price}-cent {item} down by {p}%. {name} bought it and paid a {fee}-cent "
    "{feename} on top. {name}'s total in cents came to",
    "With a {p}% discount, {name} ordered a {item} listed at {price} cents, plus a {fee}-cent "
    "{feename}. The amount {name} paid in cents was",
)


def _params(problem: Problem) -> dict:
    return dict(problem.params)


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """A price seen elsewhere, in dollars; falling for it moves the total by that much."""
    p = _params(problem)
    n = rng.randint(4, 60)
    sentence, sign = pick(rng, IRRELEVANT_SENTENCES)
    return irrelevant_twin(
        problem,
        insert_sentence(problem.ctx, sentence.format(item=p["item"], name=p["name"], n=n)),
        n,
        problem.answer + sign * n,
    )


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Paid from a gift card: what was left on it (the total taken off the card's balance)."""
    p = _params(problem)
    total = problem.answer
    card = rng.randint(total + 40, 2 * total + 100)
    s = Steps()
    s.keep(problem.steps)
    left = s.op("left on the gift card", card, "-", total, money=True)
    require(left % 5 != 0, "answer should not be a multiple of 5")
    mistakes = clean_mistakes(
        left,
        {
            **{name: card - v for name, v in problem.mistakes.items()},
            "added the total to the card instead of taking it off": card + total,
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = f"{stem}{p['name']} paid it all from a ${card} gift card. Left on the card was"
    return replace(
        problem,
        depth=3,
        ctx=ctx,
        answer=left,
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes={},  # the original's extra values are not this answer's mistakes
        params={**p, "card": card},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The fee told before the discount."""
    p = _params(problem)
    story = REORDERED[p["template"]].format(
        name=p["name"],
        item=p["item"],
        price=fmt_num(p["price"]),
        p=p["percent_off"],
        fee=p["fee"],
        feename=p["fee_name"],
    )
    return replace(problem, ctx=f"{story} {problem.ctx[last_sentence_start(problem.ctx) :]}")


@twin(NAME, "unit_change")
def in_cents(problem: Problem, rng: random.Random) -> Problem:
    """Every amount in cents, the answer too."""
    p = _params(problem)
    price, fee, pct = 100 * p["price"], 100 * p["fee"], p["percent_off"]
    s = Steps()
    sale = s.pct("price after the discount, in cents", 100 - pct, price)
    total = s.op("total with the fee, in cents", sale, "+", fee)
    ctx = IN_CENTS[p["template"]].format(
        name=p["name"], item=p["item"], price=price, p=pct, fee=fee, feename=p["fee_name"]
    )
    return replace(
        problem,
        ctx=ctx,
        answer=total,
        unit="cents",
        ending=" {} cents.",
        steps=s.solution(),
        mistakes={name: 100 * v for name, v in problem.mistakes.items()},
        extra_mistakes={},  # in cents "the percentage off as dollars" is no longer 100 times its value
        kind="count",
        params={**p, "unit": "cents"},
    )
