"""Fill a tank at one rate, then drain it at another; the volume left (depth 4).

    A water tank held 143 litres. A pump filled it at 18 litres a minute for 25 minutes,
    then a valve drained 12 litres a minute for 35 minutes. The tank then held
    → 173 litres.

Steps: fill rate × filling time, + starting volume, drain rate × draining time, − drained.

Both times are multiples of 5 minutes and the starting volume is not a multiple of 5, so
the answer and every mistake that keeps the starting volume end in the same roundness class
(not a multiple of 5).
"""

from __future__ import annotations

import random

from ..base import Problem, register, require
from ._common_b import Calc, finish_ctx, mistakes, sentence_case, solve

NAME = "tank_fill"

FORGOT_DRAIN = "forgot the draining"
ADDED_DRAIN = "added the drained water"
DRAIN_FOR_FILL_TIME = "drained for the filling time"
FILL_FOR_DRAIN_TIME = "filled for the draining time"
SWAPPED_RATES = "swapped the two rates"
DRAINED_BOTH = "drained during the filling too"
FILLED_BOTH = "kept filling during the draining"
DRAIN_AT_FILL_RATE = "drained at the filling rate"
FILL_AT_DRAIN_RATE = "filled at the draining rate"

MISTAKES = (
    FORGOT_DRAIN,
    ADDED_DRAIN,
    DRAIN_FOR_FILL_TIME,
    FILL_FOR_DRAIN_TIME,
    SWAPPED_RATES,
    DRAINED_BOTH,
    FILLED_BOTH,
    DRAIN_AT_FILL_RATE,
    FILL_AT_DRAIN_RATE,
)

#: (the vessel, what fills it, what drains it)
VESSELS = (
    ("water tank", "a pump", "a valve"),
    ("rain barrel", "a hose", "a tap"),
    ("fish pond", "a hose", "a pump"),
    ("cistern", "a pipe", "an outlet"),
    ("paddling pool", "a hose", "a drain"),
    ("cattle trough", "a pipe", "a leak"),
    ("hot tub", "a pump", "a drain"),
    ("storage tank", "an inlet", "an outlet"),
)

#: Starting volumes in litres: 40 to 600, off the multiples of 5.
START_VOLUMES = tuple(v for v in range(40, 601) if v % 5)


def _story(rng: random.Random, p: dict) -> str:
    vessel, filler, drain = p["vessel"]
    v0, f, t1, d, t2 = p["start"], p["fill_rate"], p["fill_min"], p["drain_rate"], p["drain_min"]
    opening = rng.choice(
        (
            f"A {vessel} held {v0} litres.",
            f"A {vessel} had {v0} litres in it.",
        )
    )
    phases = rng.choice(
        (
            f"{sentence_case(filler)} filled it at {f} litres a minute for {t1} minutes, then "
            f"{drain} drained {d} litres a minute for {t2} minutes.",
            f"For {t1} minutes {filler} added {f} litres a minute; then for {t2} minutes {drain} removed {d} a minute.",
            f"{sentence_case(filler)} added {f} litres a minute for {t1} minutes, then "
            f"{drain} let out {d} litres a minute for {t2} minutes.",
        )
    )
    short = vessel.split()[-1]
    question = rng.choice(
        (
            f"The {short} then held",
            "The water left was",
            f"The {short} finished with",
        )
    )
    return finish_ctx(opening, phases, question)


@register(NAME, topic=NAME, depth=4)
def generate(rng: random.Random) -> Problem:
    """Fill at one rate for a while, drain at another for a while; how much water is left."""
    start = rng.choice(START_VOLUMES)
    fill_rate = rng.randint(8, 30)
    fill_min, drain_min = rng.sample(range(10, 65, 5), 2)
    # The drain is slower than the filler and must leave at least 30 litres.
    top = min(fill_rate - 2, (start + fill_rate * fill_min - 30) // drain_min)
    require(top >= 3, "the drain would empty the tank")
    drain_rate = rng.randint(3, top)
    p = {
        "start": start,
        "fill_rate": fill_rate,
        "fill_min": fill_min,
        "drain_rate": drain_rate,
        "drain_min": drain_min,
        "vessel": rng.choice(VESSELS),
    }

    def chain(c: Calc, m: str | None):
        f_rate = drain_rate if m in (SWAPPED_RATES, FILL_AT_DRAIN_RATE) else fill_rate
        d_rate = fill_rate if m in (SWAPPED_RATES, DRAIN_AT_FILL_RATE) else drain_rate
        f_min = drain_min if m == FILL_FOR_DRAIN_TIME else fill_min
        d_min = fill_min if m == DRAIN_FOR_FILL_TIME else drain_min
        if m == FILLED_BOTH:
            f_min = c.op("filling time", fill_min, "+", drain_min)
        if m == DRAINED_BOTH:
            d_min = c.op("draining time", fill_min, "+", drain_min)
        added = c.op("water added", f_rate, "×", f_min)
        level = c.op("after filling", start, "+", added)
        if m == FORGOT_DRAIN:
            return level
        drained = c.op("water drained", d_rate, "×", d_min)
        if m == ADDED_DRAIN:
            return c.op("at the end", level, "+", drained)
        return c.op("at the end", level, "-", drained)

    answer, steps = solve(chain)
    require(answer >= 30, "the tank is nearly empty")
    return Problem(
        family=NAME,
        topic=NAME,
        depth=4,
        ctx=_story(rng, p),
        answer=answer,
        unit="litres",
        ending=" {} litres.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="count",
        params=p,
    )
