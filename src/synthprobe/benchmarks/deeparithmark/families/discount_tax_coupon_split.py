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
from dataclasses import replace
from fractions import Fraction

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
from ._common_a import PARITY_REDRAWS, clean_mistakes, exact_div, parity_kept
from ._common_b import (
    NAMES,
    NUMBER_WORDS,
    Calc,
    choose,
    finish_ctx,
    irrelevant_number,
    lcm_of_denominators,
    mistakes,
    sentence_case,
    solve,
)

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

# Extra mistakes (``Problem.extra_mistakes``, read only by the role-balanced groups). The legacy
# ones are either a slip on the rates (a fixed ratio of the share before the coupon) or a slip on
# the coupon (a fixed step of one coupon's share off the answer, most of them above it), so the
# key's place among them is set by those shapes. The extra ones are the coupon slips the other
# way (added instead of taken off, once or twice, or to every share; taken off the bill and every
# share) and every slip on the rates together with one slip on the coupon, each the chain below
# re-run with both errors: decoys then sit on both sides of the key at the single slips'
# distances, and the key can take their roles.
ADDED_COUPON = "added the coupon instead of taking it off"
ADDED_COUPON_TWICE = "added the coupon twice"
ADDED_COUPON_PER_PERSON = "added the coupon to every share"
COUPON_BILL_AND_SHARES = "took the coupon off the bill and again off every share"

RATE_SLIPS = (
    FORGOT_DISCOUNT,
    ADDED_DISCOUNT,
    FORGOT_TAX,
    SUBTRACTED_TAX,
    TAX_ON_ORIGINAL,
    DISCOUNT_TWICE,
    SWAPPED_RATES,
)
COUPON_SLIPS = (FORGOT_COUPON, COUPON_TWICE, COUPON_PER_PERSON, ADDED_COUPON)
#: A rate slip as the first half of a compound mistake's name.
RATE_SLIP_VERBS = {TAX_ON_ORIGINAL: "took the tax of the original bill"}

#: compound mistake's name -> (its slip on the rates, its slip on the coupon)
COMPOUNDS = {
    f"{RATE_SLIP_VERBS.get(rate, rate)} and {coupon}": (rate, coupon) for rate in RATE_SLIPS for coupon in COUPON_SLIPS
}
EXTRA_MISTAKES = (ADDED_COUPON, ADDED_COUPON_TWICE, ADDED_COUPON_PER_PERSON, COUPON_BILL_AND_SHARES, *COMPOUNDS)

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


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
BILL_TEXTS = (
    "The bill was {bill}, with {d}% off, and then {t}% tax was added.",
    "The {bill} bill got {offer} of {d}%, then {t}% tax.",
    "From a {bill} bill they got {d}% off; {t}% tax was then added.",
)
COUPON_TEXTS = (
    "They used a {coupon} coupon and split the rest equally.",
    "A {coupon} voucher came off, and they split the rest equally.",
)
QUESTIONS = ("Each person paid", "Each share came to", "{name}'s share was")


def _story(rng: random.Random, p: dict) -> str:
    name, k, bill, d, t, coupon = (p["name"], p["friends"], p["bill"], p["discount"], p["tax"], p["coupon"])
    occasion, offer = p["occasion"]
    friends = f"{NUMBER_WORDS[k]} friends"
    opening = f"{name} and {friends} {occasion}."
    bill_text = choose(rng, p, "bill_text", BILL_TEXTS).format(bill=fmt_num(bill, money=True), offer=offer, d=d, t=t)
    coupon_text = choose(rng, p, "coupon_text", COUPON_TEXTS).format(coupon=fmt_num(coupon, money=True))
    question = choose(rng, p, "question", QUESTIONS).format(name=name)
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
        # a compound mistake makes one slip on the rates and one on the coupon
        rate_m, coupon_m = COMPOUNDS.get(m, (m, m))
        off, add = (tax, discount) if rate_m == SWAPPED_RATES else (discount, tax)
        if rate_m == FORGOT_DISCOUNT:
            discounted = bill
        elif rate_m == ADDED_DISCOUNT:
            discounted = c.pct("after the discount", 100 + off, bill, money=True)
        else:
            discounted = c.pct("after the discount", 100 - off, bill, money=True)
            if rate_m == DISCOUNT_TWICE:
                discounted = c.pct("after the discount again", 100 - off, discounted, money=True)
        if rate_m == FORGOT_TAX:
            taxed = discounted
        elif rate_m == SUBTRACTED_TAX:
            taxed = c.pct("with tax", 100 - add, discounted, money=True)
        elif rate_m == TAX_ON_ORIGINAL:
            tax_due = c.pct("tax", add, bill, money=True)
            taxed = c.op("with tax", discounted, "+", tax_due, money=True)
        else:
            taxed = c.pct("with tax", 100 + add, discounted, money=True)
        if coupon_m in (COUPON_PER_PERSON, ADDED_COUPON_PER_PERSON):
            share = c.op("each", taxed, "/", people)
            return c.op("each", share, "-" if coupon_m == COUPON_PER_PERSON else "+", coupon, money=True)
        if coupon_m == FORGOT_COUPON:
            to_split = taxed
        elif coupon_m in (ADDED_COUPON, ADDED_COUPON_TWICE):
            to_split = c.op("after the coupon", taxed, "+", coupon, money=True)
            if coupon_m == ADDED_COUPON_TWICE:
                to_split = c.op("after the coupon again", to_split, "+", coupon, money=True)
        else:
            to_split = c.op("after the coupon", taxed, "-", coupon, money=True)
            if coupon_m == COUPON_TWICE:
                to_split = c.op("after the coupon again", to_split, "-", coupon, money=True)
        if coupon_m == COUPON_BILL_AND_SHARES:
            share = c.op("each", to_split, "/", people)
            return c.op("each", share, "-", coupon, money=True)
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
        extra_mistakes=mistakes(chain, EXTRA_MISTAKES, answer),
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: A sum of money that plays no part in the bill: (sentence, the sign with which a solver who
#: falls for it moves the amount split). The amount is a multiple of the head count, so the
#: share it moves is whole: an expired voucher tempts a subtraction, a waived charge an addition.
IRRELEVANT_SENTENCES = (
    ("{name} also had a {n} voucher, but it had expired.", -1),
    ("{name}'s {n} gift card had expired.", -1),
    ("A {n} service charge was waived.", 1),
    ("The venue waived its {n} booking fee for them.", 1),
)

#: The bill told with the tax before the discount, or the coupon and split before the bill (the
#: same operations, in the same order of working).
REORDERED = (
    "Tax of {t}% was added to the {bill} bill after {d}% came off it. {coupon_text}",
    "They took a {coupon} coupon off the final bill and split the rest equally. Before that, the {bill} "
    "bill had {d}% off, then {t}% tax.",
)

#: The story in cents (every amount × 100), in the original's wording.
BILL_CENTS = (
    "The bill was {bill} cents, with {d}% off, and then {t}% tax was added.",
    "The {bill}-cent bill got {offer} of {d}%, then {t}% tax.",
    "From a {bill}-cent bill they got {d}% off; {t}% tax was then added.",
)
COUPON_CENTS = (
    "They used a {coupon}-cent coupon and split the rest equally.",
    "A {coupon}-cent voucher came off, and they split the rest equally.",
)
QUESTIONS_CENTS = ("In cents, each person paid", "In cents, each share came to", "In cents, {name}'s share was")


def _opening(p: dict) -> str:
    return f"{p['name']} and {NUMBER_WORDS[p['friends']]} friends {p['occasion'][0]}."


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """A voucher that had expired or a charge that was waived: falling for it moves every share."""
    p = dict(problem.params)
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    people = p["people"]
    n, used = irrelevant_number(
        rng, problem, 3 * people, 40 * people, lambda n: problem.answer + sign * (n // people), step=people
    )
    text = sentence.format(name=p["name"], n=fmt_num(n, money=True))
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, sentence_case(text))), n, used)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """The asker also spent money on snacks: the share plus that amount (an addition keeps the
    mistakes on the same side of the answer, so the twin can keep its original's rank)."""
    p = dict(problem.params)
    share, people = problem.answer, p["people"]
    snacks = 5 * rng.randint(1, 8)
    s = Steps()
    s.keep(problem.steps)
    total = s.op(f"{p['name']}'s spending", share, "+", snacks, money=True)
    pool = clean_mistakes(
        total,
        {
            **{name: v + snacks for name, v in problem.mistakes.items()},
            "forgot the snacks": share,
            "took the snacks off instead of adding them": share - snacks,
            "added the snacks twice": share + 2 * snacks,
            "split the snacks among everyone": exact_div(share * people + snacks, people),
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = finish_ctx(f"{stem}{p['name']} also spent ${snacks} on snacks. In all, {p['name']} spent")
    return replace(
        problem,
        depth=5,
        ctx=ctx,
        answer=total,
        steps=s.solution(),
        mistakes=pool,
        params={**p, "snacks": snacks},
        extra_mistakes={},  # the original's extra values are not this answer's mistakes
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The tax told before the discount, or the coupon and the split before the bill."""
    p = dict(problem.params)
    coupon = fmt_num(p["coupon"], money=True)
    body = rng.choice(REORDERED).format(
        t=p["tax"],
        d=p["discount"],
        bill=fmt_num(p["bill"], money=True),
        coupon=coupon,
        coupon_text=COUPON_TEXTS[p["coupon_text"]].format(coupon=coupon),
    )
    question = problem.ctx[last_sentence_start(problem.ctx) :]
    return replace(problem, ctx=finish_ctx(_opening(p), body, question))


@twin(NAME, "unit_change")
def in_cents(problem: Problem, rng: random.Random) -> Problem:
    """Every amount in cents, the share too."""
    p = dict(problem.params)
    bill, coupon, people = 100 * p["bill"], 100 * p["coupon"], p["people"]
    s = Steps()
    discounted = s.pct("after the discount, in cents", 100 - p["discount"], bill)
    taxed = s.pct("with tax, in cents", 100 + p["tax"], discounted)
    rest = s.op("after the coupon, in cents", taxed, "-", coupon)
    share = s.op("each person, in cents", rest, "/", people)
    require(share == 100 * problem.answer, "the share in cents must be the share in dollars × 100")
    ctx = finish_ctx(
        _opening(p),
        BILL_CENTS[p["bill_text"]].format(bill=bill, offer=p["occasion"][1], d=p["discount"], t=p["tax"]),
        COUPON_CENTS[p["coupon_text"]].format(coupon=coupon),
        QUESTIONS_CENTS[p["question"]].format(name=p["name"]),
    )
    return replace(
        problem,
        ctx=ctx,
        answer=share,
        unit="cents",
        ending=" {} cents.",
        steps=s.solution(),
        mistakes={name: 100 * v for name, v in problem.mistakes.items()},
        kind="count",
        params={**p, "unit": "cents"},
        extra_mistakes={name: 100 * v for name, v in problem.extra_mistakes.items()},
    )
