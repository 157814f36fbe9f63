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
from dataclasses import replace

from ..base import Problem, Steps, insert_sentence, irrelevant_twin, register, require, twin
from ._common_b import MAX_CTX_WORDS, Calc, finish_ctx, mistakes, sentence_case, solve

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

# more named mistakes for the role-balanced groups (``Problem.extra_mistakes``): the other
# direction of forgetting a step. "Forgot the draining" puts the key a drain's volume below a
# decoy and "added the drained water" two below; taking the drain off twice, or dropping or
# doubling the water added, puts decoys the same volumes below and above the key, so the key is
# no longer always the low end of the drain's evenly spaced run
DRAIN_TWICE = "took the drained water off twice"
FORGOT_FILL = "forgot the water added"
FILL_TWICE = "counted the water added twice"

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
EXTRA_MISTAKES = (DRAIN_TWICE, FORGOT_FILL, FILL_TWICE)

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


#: The story's sentences: an opening, the two phases, the closing stem (``{unit}``: litres).
OPENINGS = ("A {vessel} held {v0} {unit}.", "A {vessel} had {v0} {unit} in it.")
PHASES = (
    "{Filler} filled it at {f} {unit} a minute for {t1} minutes, then {drain} drained {d} {unit} a minute "
    "for {t2} minutes.",
    "For {t1} minutes {filler} added {f} {unit} a minute; then for {t2} minutes {drain} removed {d} a minute.",
    "{Filler} added {f} {unit} a minute for {t1} minutes, then {drain} let out {d} {unit} a minute for {t2} minutes.",
)
QUESTIONS = ("The {short} then held", "The water left was", "The {short} finished with")


def _fields(p: dict, scale: int = 1, unit: str = "litres") -> dict:
    """The story's fields; ``scale`` multiplies every volume (1000 for millilitres)."""
    vessel, filler, drain = p["vessel"]
    return {
        "vessel": vessel,
        "filler": filler,
        "Filler": sentence_case(filler),
        "the_filler": "the " + filler.split(" ", 1)[1],
        "drain": drain,
        "short": vessel.split()[-1],
        "v0": p["start"] * scale,
        "f": p["fill_rate"] * scale,
        "t1": p["fill_min"],
        "d": p["drain_rate"] * scale,
        "t2": p["drain_min"],
        "unit": unit,
    }


def _story(rng: random.Random, p: dict) -> str:
    """The prompt; the sentences chosen are recorded in ``p`` (for the twins)."""
    # (a choice among indices draws exactly as the same choice among the sentences)
    p["opening"] = rng.choice(range(len(OPENINGS)))
    p["phases"] = rng.choice(range(len(PHASES)))
    p["question"] = rng.choice(range(len(QUESTIONS)))
    return _told(p)


def _told(p: dict, scale: int = 1, unit: str = "litres") -> str:
    f = _fields(p, scale, unit)
    return finish_ctx(
        OPENINGS[p["opening"]].format(**f), PHASES[p["phases"]].format(**f), QUESTIONS[p["question"]].format(**f)
    )


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
        if m == FORGOT_FILL:
            level = start
        elif m == FILL_TWICE:
            level = c.op("after filling", c.op("after filling", start, "+", added), "+", added)
        else:
            level = c.op("after filling", start, "+", added)
        if m == FORGOT_DRAIN:
            return level
        drained = c.op("water drained", d_rate, "×", d_min)
        if m == ADDED_DRAIN:
            return c.op("at the end", level, "+", drained)
        end = c.op("at the end", level, "-", drained)
        if m == DRAIN_TWICE:
            end = c.op("at the end", end, "-", drained)
        return end

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
        extra_mistakes=mistakes(chain, EXTRA_MISTAKES, answer),
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: Water that came or went the day before the story (so before its starting volume): (sentence,
#: the sign with which a solver who falls for it applies it to the volume left).
IRRELEVANT_SENTENCES = (
    ("Rain had added {x} litres the day before.", 1),
    ("The {short} had leaked {x} litres the day before.", -1),
)

#: One per PHASES sentence: the two phases told first, the starting volume after them.
REORDERED_PHASES = (
    "{Filler} filled a {vessel} at {f} litres a minute for {t1} minutes, then {drain} drained {d} litres "
    "a minute for {t2} minutes.",
    "For {t1} minutes {filler} added {f} litres a minute to a {vessel}; then for {t2} minutes {drain} "
    "removed {d} a minute.",
    "{Filler} added {f} litres a minute to a {vessel} for {t1} minutes, then {drain} let out {d} litres a "
    "minute for {t2} minutes.",
)
REORDERED_START = "The {short} had held {v0} litres before {the_filler} started."


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Water topped up or leaked the day before; falling for it adds it to, or takes it off,
    the volume left."""
    p = dict(problem.params)
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    x = 5 * rng.randint(2, 24)
    value = problem.answer + sign * x
    require(value >= 10, "the tempting volume must stay positive")
    ctx = insert_sentence(problem.ctx, sentence.format(short=_fields(p)["short"], x=x))
    require(len(ctx.split()) <= MAX_CTX_WORDS, "the prompt is too long")
    return irrelevant_twin(problem, ctx, x, value)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Then some water drawn off in buckets: what is left after that."""
    p = dict(problem.params)
    answer = problem.answer
    y = 5 * rng.randint(2, max(2, min(answer - 20, 150) // 5))
    s = Steps()
    s.keep(problem.steps)
    left = s.op("after the buckets", answer, "-", y)
    require(left >= 10, "the buckets would empty the tank")
    mistakes = {
        **{name: v - y for name, v in problem.mistakes.items() if v - y > 0},
        "forgot the buckets": answer,
        "added the water drawn off": answer + y,
        "drew off the buckets twice": answer - 2 * y,
    }
    ctx = insert_sentence(problem.ctx, f"Buckets then took out {y} litres.")
    require(len(ctx.split()) <= MAX_CTX_WORDS, "the prompt is too long")
    return replace(
        problem,
        depth=5,
        ctx=ctx,
        answer=left,
        steps=s.solution(),
        mistakes={k: v for k, v in mistakes.items() if v > 0 and v != left},
        params={**p, "buckets": y},
        extra_mistakes={},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The filling and the draining told first, the starting volume after them."""
    p = dict(problem.params)
    f = _fields(p)
    ctx = finish_ctx(
        REORDERED_PHASES[p["phases"]].format(**f), REORDERED_START.format(**f), QUESTIONS[p["question"]].format(**f)
    )
    return replace(problem, ctx=ctx)


@twin(NAME, "unit_change")
def in_millilitres(problem: Problem, rng: random.Random) -> Problem:
    """Every volume and rate in millilitres (× 1000), the answer too. Millilitres are unusual for
    tanks of hundreds of litres, but the numbers stay exact and the story reads the same."""
    p = dict(problem.params)
    f = _fields(p, 1000, "millilitres")
    s = Steps()
    added = s.op("water added, in millilitres", f["f"], "×", f["t1"])
    level = s.op("after filling, in millilitres", f["v0"], "+", added)
    drained = s.op("water drained, in millilitres", f["d"], "×", f["t2"])
    end = s.op("at the end, in millilitres", level, "-", drained)
    return replace(
        problem,
        ctx=_told(p, 1000, "millilitres"),
        answer=end,
        unit="millilitres",
        ending=" {} millilitres.",
        steps=s.solution(),
        mistakes={name: 1000 * v for name, v in problem.mistakes.items()},
        params={**p, "unit": "millilitres"},
        extra_mistakes={name: 1000 * v for name, v in problem.extra_mistakes.items()},
    )
