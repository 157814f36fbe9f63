"""A stock, a percentage removed, the rest packed into whole packs (depth 3)."""

from __future__ import annotations

import random
from math import gcd

from ..base import Problem, Steps, register, require
from ._common_a import NAMES, clean_mistakes, pick

NAME = "stock_percent_pack"

#: (where, goods, pack word, how the percentage leaves the stock)
STOCKS = (
    ("A farm shop", "eggs", "boxes", "were cracked"), ("An orchard", "apples", "bags", "were bruised"),
    ("A bakery", "rolls", "trays", "were sold"), ("A market stall", "oranges", "crates", "had spoiled"),
    ("A nursery", "seedlings", "flats", "had wilted"), ("A warehouse", "light bulbs", "cartons",
                                                        "were broken"),
    ("A toy shop", "marbles", "pouches", "were given away"), ("A stationer", "pencils", "packs",
                                                               "were sold"),
    ("A greenhouse", "tomatoes", "punnets", "were too ripe"), ("A print shop", "postcards",
                                                               "bundles", "were misprinted"),
)
PERCENTS = (4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 25, 30, 35, 40, 45)

TEMPLATES = (
    "{where} had {stock} {goods} on Monday morning. {p}% of them {gone}, and the rest were packed "
    "into {packs} of {k}. The number of full {packs} was",
    "Of the {stock} {goods} that {where_low} had in stock this week, {p}% {gone}. The remaining "
    "{goods} were put into {packs} of {k} each, filling",
    "{name} counted {stock} {goods} at {where_low}. After {p}% of them {gone}, {name} packed the "
    "rest in {packs} of {k}. The number of full {packs} {name} made was",
    "{where} started the day with {stock} {goods}, but {p}% {gone}. The rest went into {packs} "
    "holding {k} each, and the full {packs} came to",
)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """A stock, a percentage removed, the rest packed into whole packs."""
    where, goods, packs, gone = pick(rng, STOCKS)
    p = pick(rng, PERCENTS)
    unit = 100 // gcd(p, 100)  # the stock is a multiple of this so p% of it is whole
    stock = unit * rng.randint(-(-180 // unit), 1800 // unit)
    # the pack size is drawn among those giving at least 8 full packs off the multiples of 5
    # (the commonest roundness class), so the draw rarely has to be redone
    left_exact = stock * (100 - p) // 100
    k = pick(rng, [k for k in range(6, 25) if left_exact // k >= 8 and (left_exact // k) % 5])
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)

    s = Steps()
    removed = s.pct("removed", p, stock)
    left = s.op("left to pack", stock, "-", removed)
    full, loose = s.divmod("full packs", left, k)
    require(full >= 8 and full % 5 != 0, "answer should be a fair count off the multiples of 5")

    mistakes = clean_mistakes(full, {
        "forgot the removed items": stock // k,
        "packed the removed items instead": removed // k,
        "took the percentage as a count": (stock - p) // k,
        "added the removed items": (stock + removed) // k,
        "took the percentage off twice": (stock - 2 * removed) // k,
        "stopped before packing": left,
        "gave the loose items left over": loose,
        "counted the loose items as a pack": full + 1 if loose else None,
    })

    ctx = template.format(where=where, where_low=where[0].lower() + where[1:], goods=goods,
                          packs=packs, gone=gone, stock=stock, p=p, k=k, name=name)
    return Problem(
        family=NAME, topic=NAME, depth=3, ctx=ctx, answer=full, unit=packs, ending=f" {{}} {packs}.",
        steps=tuple(s.lines), mistakes=mistakes, kind="count",
        params={"stock": stock, "percent": p, "pack_size": k, "goods": goods, "packs": packs,
                "name": name, "template": TEMPLATES.index(template)},
    )
