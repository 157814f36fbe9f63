"""Two days of percentage sales, a delivery, then palletise (depth 5).

    A depot had 2400 compost bags. It sold 15% on Monday and 35% of the rest on Tuesday,
    then received 560 more. All were stacked on pallets of 48. The number of full pallets
    was → 39 pallets.

Steps: day-1 % of the stock, stock − day-1 sales, (100 − day-2 %) of what was left,
+ delivery, ÷ pallet size (whole pallets, remainder).

The stock is a multiple of the amount that keeps both days' percentages (and the
day-2 percentage of the original stock) whole, and the delivery keeps the day-2 percentage
of it whole, so every mistake's re-run counts whole items.
"""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction

from ..base import Problem, insert_sentence, irrelevant_twin, register, require, twin
from ._common_a import pick_log_uniform
from ._common_b import Calc, choose, finish_ctx, irrelevant_number, lcm_of_denominators, mistakes, sentence_case, solve

NAME = "inventory_percent_chain"

DAY2_OF_ORIGINAL = "day-2 percentage taken of the original stock"
DAY2_AFTER_DELIVERY = "took the day-2 percentage after the delivery"
FORGOT_DAY2 = "stopped after day 1"
FORGOT_DAY1 = "forgot the day-1 sales"
ADDED_DAY2 = "added the day-2 sales"
FORGOT_DELIVERY = "stopped before the delivery"
SUBTRACTED_DELIVERY = "subtracted the delivery"
DAY1_KEPT = "kept the day-1 percentage instead of selling it"
DAY2_KEPT = "kept the day-2 percentage instead of selling it"
DAY2_OF_DAY1_SALES = "day-2 percentage taken of the day-1 sales"
ADDED_DAY1 = "added the day-1 sales"
DELIVERY_TWICE = "counted the delivery twice"
LOOSE_AS_PALLET = "counted the leftover as a pallet"

MISTAKES = (
    DAY2_OF_ORIGINAL,
    DAY2_AFTER_DELIVERY,
    FORGOT_DAY2,
    FORGOT_DAY1,
    ADDED_DAY2,
    FORGOT_DELIVERY,
    SUBTRACTED_DELIVERY,
    DAY1_KEPT,
    DAY2_KEPT,
    DAY2_OF_DAY1_SALES,
    ADDED_DAY1,
    DELIVERY_TWICE,
    LOOSE_AS_PALLET,
)

PERCENTS = (10, 15, 20, 25, 30, 35, 40, 45)
#: (place, goods)
STOCKS = (
    ("A garden centre", "compost bags"),
    ("A depot", "cases of water"),
    ("A builders' yard", "cement bags"),
    ("A tile shop", "tile boxes"),
    ("A wholesaler", "rice sacks"),
    ("A paint store", "paint tins"),
    ("A pet store", "dog-food bags"),
    ("A farm", "apple crates"),
    ("A brewery", "beer kegs"),
    ("A stationer", "paper reams"),
)
DAYS = (
    ("on Monday", "on Tuesday"),
    ("on Friday", "on Saturday"),
    ("on Saturday", "on Sunday"),
    ("on day one", "on day two"),
    ("on Wednesday", "on Thursday"),
)


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
OPENINGS = ("{place} had {s} {goods}.", "{place} held {s} {goods} in stock.")
SALES = (
    "It sold {d1}% {first} and {d2}% of the rest {second}, then received {delivery} more.",
    "{First} {d1}% were sold, {second} {d2}% of the rest; then {delivery} more came.",
)
PACKINGS = ("All were stacked on pallets of {k}.", "All were loaded {k} to a pallet.")
QUESTIONS = ("The number of full pallets was", "The full pallets numbered", "The count of full pallets was")


def _fields(p: dict) -> dict:
    place, goods = p["where"]
    first, second = p["days"]
    return {
        "place": place,
        "goods": goods,
        "s": p["stock"],
        "d1": p["day1_pct"],
        "d2": p["day2_pct"],
        "delivery": p["delivery"],
        "k": p["pallet"],
        "first": first,
        "First": sentence_case(first),
        "second": second,
    }


def _story(rng: random.Random, p: dict) -> str:
    f = _fields(p)
    opening = choose(rng, p, "opening", OPENINGS).format(**f)
    sales = choose(rng, p, "sales", SALES).format(**f)
    packing = choose(rng, p, "packing", PACKINGS).format(**f)
    question = choose(rng, p, "question", QUESTIONS).format(**f)
    return finish_ctx(opening, sales, packing, question)


@register(NAME, topic="multi_step_inventory", depth=5)
def generate(rng: random.Random) -> Problem:
    """A stock loses p% one day and q% of the rest the next, gets a delivery, fills pallets of k."""
    d1, d2 = rng.choice(PERCENTS), rng.choice(PERCENTS)
    unit = lcm_of_denominators((Fraction(d1, 100), Fraction(d2, 100), Fraction((100 - d1) * (100 - d2), 10000)))
    # the stock is drawn evenly on a log scale over 300-6,000: the decoys (a day's sales
    # forgotten or added, the delivery left out or doubled) sit at ratios to the answer, and
    # answers spread the same way cover the low teens and the high 80s-90s as they do
    stock = pick_log_uniform(rng, range(unit * -(-300 // unit), 6001, unit))
    d_unit = Fraction(d2, 100).denominator
    delivery = d_unit * rng.randint(-(-120 // d_unit), 900 // d_unit)
    pallet = rng.randint(21, 64)
    p = {
        "stock": stock,
        "day1_pct": d1,
        "day2_pct": d2,
        "delivery": delivery,
        "pallet": pallet,
        "where": rng.choice(STOCKS),
        "days": rng.choice(DAYS),
    }

    def chain(c: Calc, m: str | None):
        if m == FORGOT_DAY1:
            left1 = stock
        else:
            sold1 = c.pct("sold on day 1", d1, stock)
            if m == DAY1_KEPT:
                left1 = sold1
            elif m == ADDED_DAY1:
                left1 = c.op("left after day 1", stock, "+", sold1)
            else:
                left1 = c.op("left after day 1", stock, "-", sold1)
        if m == DAY2_AFTER_DELIVERY:
            left1 = c.op("after the delivery", left1, "+", delivery)
        if m == FORGOT_DAY2:
            left2 = left1
        elif m in (DAY2_OF_ORIGINAL, DAY2_OF_DAY1_SALES):
            base = stock if m == DAY2_OF_ORIGINAL else c.pct("sold on day 1", d1, stock)
            left2 = c.op("left after day 2", left1, "-", c.pct("sold on day 2", d2, base))
        elif m == ADDED_DAY2:
            left2 = c.op("left after day 2", left1, "+", c.pct("sold on day 2", d2, left1))
        elif m == DAY2_KEPT:
            left2 = c.pct("sold on day 2", d2, left1)
        else:
            left2 = c.pct("left after day 2", 100 - d2, left1)
        if m in (FORGOT_DELIVERY, DAY2_AFTER_DELIVERY):
            total = left2
        elif m == SUBTRACTED_DELIVERY:
            total = c.op("after the delivery", left2, "-", delivery)
        else:
            total = c.op("after the delivery", left2, "+", delivery)
            if m == DELIVERY_TWICE:
                total = c.op("after the delivery again", total, "+", delivery)
        full, leftover = c.divmod("full pallets", total, pallet)
        if m == LOOSE_AS_PALLET:
            return full + (1 if leftover else 0)
        return full

    answer, steps = solve(chain)
    require(answer >= 8, "too few pallets")
    return Problem(
        family=NAME,
        topic="multi_step_inventory",
        depth=5,
        ctx=_story(rng, p),
        answer=answer,
        unit="pallets",
        ending=" {} pallets.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="count",
        params=p,
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------
# No one_step_more twin: the family is depth 5, the deepest tier. No unit_change twin: the
# story counts goods and pallets, which have no other unit.

#: Goods that play no part in these two days: (sentence, the sign with which a solver who
#: falls for them moves the goods stacked). Sales before the story tempt a subtraction, goods
#: still to come an addition. The short ones keep the longest prompts within the word limit.
IRRELEVANT_SENTENCES = (
    ("The week before, it had sold {n}.", -1),
    ("Last week it sold {n}.", -1),
    ("Another {n} are due next month.", 1),
    ("Next month, {n} more arrive.", 1),
)

#: The same story with the delivery told before the two days' sales, or the pallets first.
REORDERED = (
    "{opening} It received {delivery} more after selling {d1}% {first} and {d2}% of the rest {second}. {packing}",
    "{place} stacks its {goods} {k} to a pallet. It had {s}, sold {d1}% {first} and {d2}% of the rest "
    "{second}, then received {delivery} more.",
)


def _stacked(p: dict) -> int:
    """The goods stacked on pallets: what is left after the two days, plus the delivery."""
    return p["stock"] * (100 - p["day1_pct"]) * (100 - p["day2_pct"]) // 10000 + p["delivery"]


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Goods sold before or due after the story: falling for them changes the goods stacked."""
    p = dict(problem.params)
    k = p["pallet"]
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    stacked = _stacked(p)
    n, used = irrelevant_number(rng, problem, 2 * k + 1, 35 * k, lambda n: (stacked + sign * n) // k)
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, sentence.format(n=n))), n, used)


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The delivery told before the sales, or the pallet size before the stock."""
    p = dict(problem.params)
    f = _fields(p)
    f["opening"] = OPENINGS[p["opening"]].format(**f)
    f["packing"] = PACKINGS[p["packing"]].format(**f)
    return replace(problem, ctx=finish_ctx(rng.choice(REORDERED).format(**f), QUESTIONS[p["question"]]))
