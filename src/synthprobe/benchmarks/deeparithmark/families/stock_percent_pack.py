"""A stock, a percentage removed, the rest packed into whole packs (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from functools import cache
from math import gcd

from ..base import Problem, Steps, insert_sentence, irrelevant_twin, register, require, twin
from ._common_a import NAMES, clean_mistakes, exact_div, pick, pick_log_uniform, whole

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


def _full(items, k: int) -> int | None:
    """Full packs of ``k`` from a wrong item count; ``None`` when the count is not a whole
    number of items (or is negative), which no solver would pack."""
    n = whole(items)
    return None if n is None or n < 0 else n // k


def _rounded_up(items, k: int) -> int | None:
    """Packs of ``k`` from a wrong item count with the loose items counted as one more pack
    (only when some are loose: otherwise it is the plain mistake)."""
    n = whole(items)
    if n is None or n < 0:
        return None
    full, loose = divmod(n, k)
    return full + 1 if loose else None


def _loose(items, k: int) -> int | None:
    """The loose items left over from a wrong item count (the remainder given as the answer)."""
    n = whole(items)
    return None if n is None or n < 0 else n % k


def extra_mistakes(stock: int, p: int, k: int) -> dict[str, int]:
    """The role-balanced builder's further mistakes (:mod:`..groups`), from the drawn numbers
    alone (no draw of its own): the percentage added as a count, taken off the rest again as
    a count or twice as a count, taken from another base, divided by instead of multiplied;
    the removed items of a double removal packed; and every wrong item count compounded with
    the slips of the last division (the loose items counted as a pack, the loose items given
    as the answer, each loose item counted as a pack).

    The legacy mistakes put every wrong count but the loose pack above the answer or far
    below it, so the largest value of a group found nothing just below itself; these add
    wrong counts on both sides, near and far.
    """
    removed = stock * p // 100  # whole by the choice of stock (see _packings)
    left = stock - removed
    again = Fraction(left * p, 100)  # the percentage of the rest, taken off a second time
    #: the legacy wrong item counts, compounded below with the slips of the last division
    legacy = {
        "forgot the removed items": stock,
        "packed the removed items instead": removed,
        "took the percentage as a count": stock - p,
        "added the removed items": stock + removed,
        "took the percentage off twice": stock - 2 * removed,
        "took the percentage off the rest again": left - again,
    }
    new = {
        "added the percentage as a count": stock + p,
        "took the percentage off the rest again as a count": left - p,
        "took the percentage off twice as a count": stock - 2 * p,
        "took the percentage of the rest off the stock": stock - again,
        "divided by one plus the percentage instead of taking it off": Fraction(stock * 100, 100 + p),
        "divided by the share left instead of multiplying by it": Fraction(stock * 100, 100 - p),
        "took a tenth of the percentage (moved its decimal point)": stock - Fraction(stock * p, 1000),
        "took the percentage off twice and packed the removed items": 2 * removed,
        "took the percentage off the rest again and packed all the removed items": removed + again,
    }
    out: dict[str, int | None] = {name: _full(items, k) for name, items in new.items()}
    for name, items in {**legacy, **new}.items():
        out[f"{name} and counted the loose items as a pack"] = _rounded_up(items, k)
    out["gave the loose items instead of the full packs"] = _loose(left, k)
    for name in ("forgot the removed items", "took the percentage as a count", "added the removed items"):
        out[f"{name} and gave the loose items"] = _loose(legacy[name], k)
    out["counted each loose item as a pack"] = left // k + left % k
    out["packed the stock first and took the percentage off as a count of packs"] = stock // k - p
    out["packed the stock first, its loose items as a pack, and took the percentage off as a count of packs"] = (
        -(-stock // k) - p
    )
    return {name: v for name, v in out.items() if v is not None}


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
        extra_mistakes=extra_mistakes(stock, p, k),
        kind="count",
        params={
            "stock": stock,
            "percent": p,
            "pack_size": k,
            "goods": goods,
            "packs": packs,
            "place": place,
            "gone": gone,
            "name": name,
            "day": day,
            "template": TEMPLATES.index(template),
        },
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

# No unit_change twin: the stock, the pack size and the answer are counts of things, with no
# other unit to tell them in.

#: Goods outside the day's stock: (sentence, the sign with which a solver who falls for it
#: applies it to the goods packed). A delivery still to come tempts an addition, goods thrown
#: away the week before a subtraction.
IRRELEVANT_SENTENCES = (
    ("A delivery of {x} {goods} was due at the {place} the following week.", 1),
    ("The week before, the {place} had thrown away {x} {goods}.", -1),
)
#: Templates whose closing stem carries the pack size: the irrelevant sentence opens the
#: story there instead of coming before the stem.
OPENING_INSERT = (1, 3)

#: Pack words in the singular.
SINGULAR = {
    "boxes": "box",
    "bags": "bag",
    "trays": "tray",
    "crates": "crate",
    "flats": "flat",
    "cartons": "carton",
    "pouches": "pouch",
    "packs": "pack",
    "punnets": "punnet",
    "bundles": "bundle",
}

#: One per template: the same story, each full pack then sold at a price.
ONE_STEP_MORE = (
    "{name}'s {place} had {stock} {goods} on {day}. {p}% of them {gone}, and the rest were packed "
    "into {packs} of {k}. Each full {pack} sold for ${c}, so the full {packs} brought in",
    "Of the {stock} {goods} that {name}'s {place} had on {day}, {p}% {gone}. The remaining "
    "{goods} were put into {packs} of {k} each, and each full {pack} sold for ${c}. The full {packs} brought in",
    "{name} counted {stock} {goods} at the {place}. After {p}% of them {gone}, {name} packed the "
    "rest in {packs} of {k}. Each full {pack} sold for ${c}, so the full {packs} brought in",
    "On {day}, {name}'s {place} started with {stock} {goods}, but {p}% {gone}. The rest went into "
    "{packs} holding {k} each, and each full {pack} sold for ${c}. The full {packs} brought in",
)

#: One per template: the pack size told first (the same three operations).
REORDERED = (
    "{name}'s {place} packs its {goods} into {packs} of {k}. On {day} it had {stock} {goods}, and "
    "{p}% of them {gone}. The number of full {packs} was",
    "The {goods} at {name}'s {place} go into {packs} of {k} each. Of the {stock} it had on {day}, "
    "{p}% {gone}, and the remaining {goods} filled",
    "{name} packs {goods} in {packs} of {k} at the {place}. {name} counted {stock} {goods}, and "
    "{p}% of them {gone}. The number of full {packs} {name} made from the rest was",
    "On {day}, {name}'s {place} packed its {goods} into {packs} holding {k} each. It had {stock} "
    "{goods}, but {p}% {gone}. The full {packs} made from the rest came to",
)


def _fields(p: dict) -> dict:
    return {
        "name": p["name"],
        "place": p["place"],
        "goods": p["goods"],
        "packs": p["packs"],
        "pack": SINGULAR[p["packs"]],
        "gone": p["gone"],
        "stock": p["stock"],
        "p": p["percent"],
        "k": p["pack_size"],
        "day": p["day"],
    }


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Goods outside the day's stock; falling for them adds them to, or takes them off, the
    goods packed."""
    p = dict(problem.params)
    k = p["pack_size"]
    left = p["stock"] - p["stock"] * p["percent"] // 100
    x = rng.randint(2 * k, min(6 * k, left // 2))
    sentence, sign = pick(rng, IRRELEVANT_SENTENCES)
    value = (left + sign * x) // k
    require(value % 5 != 0 and abs(value - problem.answer) >= 2, "the irrelevant value must be a usable decoy")
    text = sentence.format(x=x, goods=p["goods"], place=p["place"])
    ctx = f"{text} {problem.ctx}" if p["template"] in OPENING_INSERT else insert_sentence(problem.ctx, text)
    return irrelevant_twin(problem, ctx, x, value)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Each full pack sold at a price: what the full packs brought in."""
    p = dict(problem.params)
    c = pick(rng, [c for c in range(2, 13) if c % 5])
    s = Steps()
    s.keep(problem.steps)
    takings = s.op("takings in dollars", problem.answer, "×", c)
    left = p["stock"] - p["stock"] * p["percent"] // 100
    mistakes = clean_mistakes(
        takings,
        {
            **{name: v * c for name, v in problem.mistakes.items()},
            "added the price instead of multiplying": problem.answer + c,
            "priced every item instead of every pack": left * c,
        },
    )
    ctx = ONE_STEP_MORE[p["template"]].format(**_fields(p), c=c)
    return replace(
        problem,
        depth=4,
        ctx=ctx,
        answer=takings,
        unit="$",
        ending=" ${}.",
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes={},
        kind="money",
        params={**p, "price": c},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The pack size told before the stock and the percentage."""
    p = dict(problem.params)
    return replace(problem, ctx=REORDERED[p["template"]].format(**_fields(p)))
