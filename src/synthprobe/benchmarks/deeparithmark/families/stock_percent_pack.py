"""A stock, a percentage removed, the rest packed into whole packs (depth 3)."""

from __future__ import annotations

import random
from functools import cache
from math import gcd

from ..base import Problem, Steps, register, require
from ._common_a import NAMES, clean_mistakes, exact_div, pick, pick_log_uniform

NAME = "stock_percent_pack"

#: (place, goods, pack word, how the percentage leaves the stock)
STOCKS = (
    ("farm shop", "eggs", "boxes", "were cracked"),
    ("orchard", "apples", "bags", "were bruised"),
    ("bakery", "rolls", "trays", "were sold"),
    ("market stall", "oranges", "crates", "had spoiled"),
    ("plant nursery", "seedlings", "flats", "had wilted"),
    ("warehouse", "light bulbs", "cartons", "were broken"),
    ("toy shop", "marbles", "pouches", "were given away"),
    ("stationery shop", "pencils", "packs", "were sold"),
    ("greenhouse", "tomatoes", "punnets", "were too ripe"),
    ("print shop", "postcards", "bundles", "were misprinted"),
)
PERCENTS = (20, 25, 30, 40)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

TEMPLATES = (
    "{name}'s {place} had {stock} {goods} on {day}. {p}% of them {gone}, and the rest were packed "
    "into {packs} of {k}. The number of full {packs} was",
    "Of the {stock} {goods} that {name}'s {place} had on {day}, {p}% {gone}. The remaining "
    "{goods} were put into {packs} of {k} each, filling",
    "{name} counted {stock} {goods} at the {place}. After {p}% of them {gone}, {name} packed the "
    "rest in {packs} of {k}. The number of full {packs} {name} made was",
    "On {day}, {name}'s {place} started with {stock} {goods}, but {p}% {gone}. The rest went into "
    "{packs} holding {k} each, and the full {packs} came to",
)


@cache
def _packings(p: int) -> tuple[tuple[int, ...], dict[int, list[tuple[int, int]]]]:
    """For ``p`` % removed: the admissible numbers of full packs, ascending, and for each the
    (stock, pack size) pairs giving it, in drawing order (a fixed table per percentage)."""
    # the stock is a multiple of ``unit`` so that p% of it, and p% of what is left after that,
    # are whole numbers (the second for the take-the-percentage-again mistake)
    unit = 10000 // gcd(p * (100 - p), 10000)
    pairs_for: dict[int, list[tuple[int, int]]] = {}
    for stock in range(unit * -(-250 // unit), 1501, unit):
        for k in range(8, 25):
            full = stock * (100 - p) // 100 // k
            if 11 <= full <= 99 and full % 5:
                pairs_for.setdefault(full, []).append((stock, k))
    return tuple(sorted(pairs_for)), pairs_for


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """A stock, a percentage removed, the rest packed into whole packs."""
    place, goods, packs, gone = pick(rng, STOCKS)
    p = pick(rng, PERCENTS)
    # the number of full packs is drawn first, evenly on a log scale over the two-digit counts
    # off the multiples of 5 (the commonest roundness class), then a stock and a pack size
    # giving it: the decoys (the removed items packed, the stock packed, ...) sit at a fixed
    # ratio to the answer, so answers spread like that keep their size, leading digit and
    # final digit from standing out among them, and the two-digit decoys give no length cue;
    # it leans to the small counts, which few two-digit decoys fit below and so are kept less
    targets, pairs_for = _packings(p)
    target = pick_log_uniform(rng, targets, power=1.5)
    stock, k = pick(rng, pairs_for[target])
    name = pick(rng, NAMES)
    day = pick(rng, DAYS)
    template = pick(rng, TEMPLATES)

    s = Steps()
    removed = s.pct("removed", p, stock)
    left = s.op("left to pack", stock, "-", removed)
    full, loose = s.divmod("full packs", left, k)
    require(11 <= full <= 99 and full % 5 != 0, "answer should be two-digit, off the multiples of 5")

    mistakes = clean_mistakes(
        full,
        {
            "forgot the removed items": stock // k,
            "packed the removed items instead": removed // k,
            "took the percentage as a count": (stock - p) // k,
            "added the removed items": (stock + removed) // k,
            "took the percentage off twice": (stock - 2 * removed) // k,
            "took the percentage off the rest again": exact_div(left * (100 - p), 100) // k,
            "counted the loose items as a pack": full + 1 if loose else None,
        },
    )

    ctx = template.format(place=place, goods=goods, packs=packs, gone=gone, stock=stock, p=p, k=k, name=name, day=day)
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=full,
        unit=packs,
        ending=f" {{}} {packs}.",
        steps=s.solution(),
        mistakes=mistakes,
        kind="count",
        params={
            "stock": stock,
            "percent": p,
            "pack_size": k,
            "goods": goods,
            "packs": packs,
            "name": name,
            "day": day,
            "template": TEMPLATES.index(template),
        },
    )
