"""Receive, ship, write off damaged units, pack the rest into crates (depth 4).

    A warehouse held 420 units. A delivery added 260, then 210 units were shipped out, and
    40 were found damaged. The rest were packed into crates of 16. The number of full
    crates packed was → 26 crates.

Steps: stock + delivery, − shipped, − damaged, ÷ crate size (whole crates, remainder).
"""

from __future__ import annotations

import random

from ..base import Problem, register, require
from ._common_b import Calc, finish_ctx, mistakes, solve

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


def _story(rng: random.Random, p: dict) -> str:
    goods, bad = p["goods"], p["bad"]
    s, d, h, g, k, box = p["stock"], p["delivery"], p["shipped"], p["damaged"], p["size"], p["box"]
    opening = rng.choice(
        (
            f"{p['place']} held {s} {goods}.",
            f"{p['place']} had {s} {goods}.",
            f"{p['place']} stocked {s} {goods}.",
        )
    )
    middle = rng.choice(
        (
            f"A delivery added {d}, then {h} were shipped out and {g} were found {bad}.",
            f"A lorry brought {d} more, {h} were sent to customers and {g} were {bad}.",
            f"After a delivery of {d}, it shipped {h} and threw out {g} {bad} ones.",
            f"It received {d} more, sold {h}, and found {g} of them {bad}.",
        )
    )
    packing = rng.choice(
        (
            f"The rest were packed into {box} of {k}.",
            f"The rest went into {box} of {k}.",
            f"The rest were packed {k} to a {CONTAINERS[box]}.",
        )
    )
    question = rng.choice(
        (
            f"The number of full {box} packed was",
            f"The number of full {box} was",
            f"The full {box} numbered",
        )
    )
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
