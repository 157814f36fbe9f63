"""Receive, ship, write off damaged units, pack the rest into crates (depth 4).

    A warehouse held 420 units. A delivery added 260, then 210 units were shipped out, and
    40 were found damaged. The rest were packed into crates of 16. The number of full
    crates packed was → 26 crates.

Steps: stock + delivery, − shipped, − damaged, ÷ crate size (whole crates, remainder).
"""

from __future__ import annotations

import random
from dataclasses import replace

from ..base import (
    Problem,
    Steps,
    insert_sentence,
    irrelevant_twin,
    last_sentence_start,
    register,
    require,
    twin,
)
from ._common_a import clean_mistakes
from ._common_b import Calc, choose, finish_ctx, irrelevant_number, mistakes, solve

NAME = "inventory_boxes"

FORGOT_DAMAGED = "forgot the damaged units"
ADDED_DAMAGED = "added the damaged units"
DAMAGED_TWICE = "subtracted the damaged units twice"
FORGOT_SHIPPED = "forgot the shipped units"
ADDED_SHIPPED = "added the shipped units"
SHIPPED_TWICE = "subtracted the shipped units twice"
FORGOT_DELIVERY = "forgot the delivery"
SUBTRACTED_DELIVERY = "subtracted the delivery"
LOOSE_AS_CRATE = "counted the loose units as a crate"

MISTAKES = (
    FORGOT_DAMAGED,
    ADDED_DAMAGED,
    DAMAGED_TWICE,
    FORGOT_SHIPPED,
    ADDED_SHIPPED,
    SHIPPED_TWICE,
    FORGOT_DELIVERY,
    SUBTRACTED_DELIVERY,
    LOOSE_AS_CRATE,
)

#: (goods, word for the damaged ones)
GOODS = (
    ("units", "damaged"),
    ("jars", "cracked"),
    ("tins", "dented"),
    ("bottles", "broken"),
    ("seed packets", "torn"),
    ("tea boxes", "crushed"),
    ("light bulbs", "broken"),
    ("mugs", "chipped"),
    ("flour bags", "split"),
    ("paint cans", "dented"),
    ("candles", "snapped"),
    ("toy cars", "faulty"),
    ("lamps", "faulty"),
    ("plates", "chipped"),
)
PLACES = (
    "A warehouse",
    "A depot",
    "A shop",
    "A stockroom",
    "A farm shop",
    "A hardware store",
    "A bakery",
    "A garden centre",
    "A market stall",
    "A school store",
)
#: container (plural) → singular
CONTAINERS = {"crates": "crate", "cartons": "carton", "boxes": "box", "cases": "case", "trays": "tray"}


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
OPENINGS = ("{place} held {s} {goods}.", "{place} had {s} {goods}.", "{place} stocked {s} {goods}.")
MIDDLES = (
    "A delivery added {d}, then {h} were shipped out and {g} were found {bad}.",
    "A lorry brought {d} more, {h} were sent to customers and {g} were {bad}.",
    "After a delivery of {d}, it shipped {h} and threw out {g} {bad} ones.",
    "It received {d} more, sold {h}, and found {g} of them {bad}.",
)
PACKINGS = (
    "The rest were packed into {box} of {k}.",
    "The rest went into {box} of {k}.",
    "The rest were packed {k} to a {crate}.",
)
QUESTIONS = ("The number of full {box} packed was", "The number of full {box} was", "The full {box} numbered")


def _fields(p: dict) -> dict:
    return {
        "place": p["place"],
        "goods": p["goods"],
        "bad": p["bad"],
        "s": p["stock"],
        "d": p["delivery"],
        "h": p["shipped"],
        "g": p["damaged"],
        "k": p["size"],
        "box": p["box"],
        "crate": CONTAINERS[p["box"]],
    }


def _story(rng: random.Random, p: dict) -> str:
    f = _fields(p)
    opening = choose(rng, p, "opening", OPENINGS).format(**f)
    middle = choose(rng, p, "middle", MIDDLES).format(**f)
    packing = choose(rng, p, "packing", PACKINGS).format(**f)
    question = choose(rng, p, "question", QUESTIONS).format(**f)
    return finish_ctx(opening, middle, packing, question)


@register(NAME, topic="multi_step_inventory", depth=4)
def generate(rng: random.Random) -> Problem:
    """Receive, ship, discard damaged units, then pack the rest into crates of k."""
    size = rng.randint(8, 25)
    # Each movement is worth 2-10 crates, so every mistake lands within a few crates of
    # the answer, on either side, and a magnitude guess cannot rule it out.
    delivery = rng.randint(2 * size + 1, 10 * size)
    shipped = rng.randint(2 * size + 1, 10 * size)
    damaged = rng.randint(2 * size + 1, 5 * size)
    # 11 to 95 crates: the mistakes reach some 20 crates either side of the answer, so answers
    # stopping short of the two-digit range's ends would leave those crate counts to the
    # decoys alone
    to_pack = rng.randint(11 * size, 96 * size - 1)
    stock = to_pack - delivery + shipped + damaged
    goods, bad = rng.choice(GOODS)
    p = {
        "stock": stock,
        "delivery": delivery,
        "shipped": shipped,
        "damaged": damaged,
        "size": size,
        "goods": goods,
        "bad": bad,
        "place": rng.choice(PLACES),
        "box": rng.choice(sorted(CONTAINERS)),
    }

    def chain(c: Calc, m: str | None) -> int:
        if m == FORGOT_DELIVERY:
            after_delivery = stock
        elif m == SUBTRACTED_DELIVERY:
            after_delivery = c.op("after delivery", stock, "-", delivery)
        else:
            after_delivery = c.op("after delivery", stock, "+", delivery)
        if m == FORGOT_SHIPPED:
            after_shipping = after_delivery
        elif m == ADDED_SHIPPED:
            after_shipping = c.op("after shipping", after_delivery, "+", shipped)
        else:
            after_shipping = c.op("after shipping", after_delivery, "-", shipped)
            if m == SHIPPED_TWICE:
                after_shipping = c.op("after shipping again", after_shipping, "-", shipped)
        if m == FORGOT_DAMAGED:
            good = after_shipping
        elif m == ADDED_DAMAGED:
            good = c.op("good units", after_shipping, "+", damaged)
        else:
            good = c.op("good units", after_shipping, "-", damaged)
            if m == DAMAGED_TWICE:
                good = c.op("good units again", good, "-", damaged)
        crates, loose = c.divmod(f"full {p['box']}", good, size)
        if m == LOOSE_AS_CRATE:
            return crates + (1 if loose else 0)
        return crates

    answer, steps = solve(chain)
    require(answer >= 8, "too few crates for a believable packing run")
    return Problem(
        family=NAME,
        topic="multi_step_inventory",
        depth=4,
        ctx=_story(rng, p),
        answer=answer,
        unit=p["box"],
        ending=f" {{}} {p['box']}.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="count",
        params=p,
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------
# No unit_change twin: the story counts goods and containers, which have no other unit.

#: Goods that play no part in this packing run: (sentence, the sign with which a solver who
#: falls for it moves the goods packed). Goods shipped or broken before the story tempt a
#: subtraction, goods elsewhere or still to come an addition.
IRRELEVANT_SENTENCES = (
    ("The week before, it had shipped {n} {goods}.", -1),
    ("Last year, {n} {goods} had been found {bad}.", -1),
    ("Another branch received {n} {goods}.", 1),
    ("Next month, another {n} {goods} are due.", 1),
)

#: The stock's movements told with the delivery last (the count does not depend on the order).
REORDERED_MIDDLES = (
    "It shipped {h}, threw out {g} {bad} ones and then received {d} more.",
    "It sold {h} and found {g} of them {bad}; a delivery then brought {d} more.",
)


def _packed(p: dict) -> int:
    """The goods packed (the stock after every movement)."""
    return p["stock"] + p["delivery"] - p["shipped"] - p["damaged"]


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Goods shipped before, or expected later: falling for them changes the goods packed."""
    p = dict(problem.params)
    k = p["size"]
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    packed = _packed(p)
    n, used = irrelevant_number(rng, problem, 2 * k + 1, 35 * k, lambda n: (packed + sign * n) // k)
    text = sentence.format(n=n, goods=p["goods"], bad=p["bad"])
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, text)), n, used)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Some of the full containers are sent on: the full ones left."""
    p = dict(problem.params)
    full, box = problem.answer, p["box"]
    sent = rng.randint(2, full // 2)
    s = Steps()
    s.keep(problem.steps)
    left = s.op(f"full {box} left", full, "-", sent)
    pool = clean_mistakes(
        left,
        {
            **{name: v - sent for name, v in problem.mistakes.items()},
            f"forgot the {box} sent away": full,
            f"added the {box} sent away": full + sent,
            f"took the {box} sent away off twice": full - 2 * sent,
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = finish_ctx(f"{stem}Then {sent} full {box} were sent to another branch. The full {box} left numbered")
    return replace(
        problem, depth=5, ctx=ctx, answer=left, steps=s.solution(), mistakes=pool, params={**p, "sent": sent}
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The shipping and the damaged goods told before the delivery."""
    p = dict(problem.params)
    f = _fields(p)
    return replace(
        problem,
        ctx=finish_ctx(
            OPENINGS[p["opening"]].format(**f),
            rng.choice(REORDERED_MIDDLES).format(**f),
            PACKINGS[p["packing"]].format(**f),
            QUESTIONS[p["question"]].format(**f),
        ),
    )
