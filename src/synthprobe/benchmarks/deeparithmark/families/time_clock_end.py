"""A start time plus two durations give the end time on the clock (depth 2)."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache

from ..base import (
    Problem,
    Steps,
    fmt_clock,
    insert_sentence,
    irrelevant_twin,
    no_twin,
    register,
    require,
    twin,
)
from ._common_a import NAMES, clean_mistakes, hours_minutes, pick
from ._common_b import MAX_CTX_WORDS, irrelevant_number

NAME = "time_clock_end"

#: First activity (lasts hours and minutes): noun phrase as used in the templates.
FIRST = (
    "a film",
    "a football match",
    "a hike",
    "a train journey",
    "a board game",
    "a concert",
    "a cooking class",
    "a museum tour",
    "a tennis lesson",
    "a study session",
)
#: Second activity (lasts whole minutes, a multiple of five).
SECOND = (
    "dinner",
    "coffee with a friend",
    "a walk home",
    "some shopping",
    "a swim",
    "a bus ride",
    "a phone call",
    "lunch",
    "a nap",
    "tidying up",
)

TEMPLATES = (
    "{name} started {first} at {start}, and it lasted {d1}. Then {second} took {d2} minutes. {name} was done at",
    "At {start}, {name} began {first} that ran for {d1}, followed by {second} lasting {d2} "
    "minutes. Everything ended at",
    "{name}'s plan: {first} from {start} lasting {d1}, then {second} for {d2} minutes. That left {name} free at",
    "{first_cap} began at {start} and took {d1}. Right after it, {name} spent {d2} minutes on {second}, finishing at",
)


@cache
def _ends(first_start: int, last_end: int) -> tuple[int, ...]:
    """End times off the multiples of 5 minutes that a story starting at ``first_start`` or
    later can reach by ``last_end``."""
    return tuple(t for t in range(first_start + 83, last_end + 1) if t % 5)


@cache
def _durations(room: int, odd: int) -> tuple[tuple[int, int], ...]:
    """(minutes past the first activity's hours, second activity) pairs that fit in ``room``
    minutes, the minutes congruent to ``odd`` modulo 5."""
    return tuple((m, 5 * k) for m in range(3, 58) if m % 5 == odd for k in range(4, 20) if room - m - 5 * k >= 0)


def _extra_mistakes(start: int, h1: int, m1: int, d2: int, end: int, half_end: int) -> dict[str, int]:
    """The role-balanced builder's wider pool (:mod:`..groups`): each of the two misreadings of
    the first activity's length (1 h 47 min read as 147 minutes, or as 47 minutes) made
    together with a slip on the second activity (stopped before it, counted it twice,
    subtracted it).

    The misreadings move the end time by whole hours (+40 or -60 per hour) and the second
    activity's slips by its own minutes, so their compounds put decoys on both sides of the
    key at the distances the single slips do, and the key can sit where a decoy sits in another
    item. The compounds with the first activity left out land on the multiples of 5 minutes
    (another roundness class), and those with it doubled or subtracted joined no group in
    100,000 catalogue draws, so neither is offered. Like the mistakes, a value outside the
    answer's half of the day (or the answer itself) is left out; nothing is drawn.
    """
    read = start + 100 * h1 + m1  # the first activity's hours and minutes run together as minutes
    minutes_only = start + m1  # the first activity's hours left out
    wrong = {
        "read the hours and minutes as one number of minutes and stopped after the first activity": read,
        "read the hours and minutes as one number of minutes and counted the second activity twice": read + 2 * d2,
        "read the hours and minutes as one number of minutes and subtracted the second activity": read - d2,
        "left out the hours of the first activity and stopped after it": minutes_only,
        "left out the hours of the first activity and counted the second activity twice": minutes_only + 2 * d2,
        "left out the hours of the first activity and subtracted the second activity": minutes_only - d2,
    }
    return {k: v for k, v in wrong.items() if half_end - 720 <= v < half_end and v != end}


@register(NAME, topic=NAME, depth=2)
def generate(rng: random.Random) -> Problem:
    """A start time plus two durations give the end time."""
    morning = rng.random() < 0.4
    # the end time is drawn first, evenly over the part of the half day the story can reach
    # (morning stories start at 6:00 or later and end before noon, afternoon ones start after
    # noon and end by 11:59 p.m., so a story never crosses 12:00), then durations and a start
    # on a multiple of 5 minutes that lead to it: the decoys (the second activity left out,
    # subtracted or doubled, ...) fall in every hour of that range, and so do the answers,
    # the early hours that only short durations reach included
    first_start, last_end = (6 * 60, 719) if morning else (12 * 60 + 5, 1439)
    end = pick(rng, _ends(first_start, last_end))
    h1 = pick(rng, [h for h in (1, 2) if end - 60 * h - 23 >= first_start])
    # odd minutes (the end is off the 5s) and a second activity of 20-95 minutes that keep
    # the start on a multiple of 5 minutes, no earlier than the half day allows
    m1, d2 = pick(rng, _durations(end - 60 * h1 - first_start, end % 5))
    start = end - 60 * h1 - m1 - d2
    first = pick(rng, FIRST)
    second = pick(rng, SECOND)
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)
    d1 = 60 * h1 + m1

    s = Steps()
    t1 = s.clock("end of the first activity", start, d1)
    end = s.clock("end of the second activity", t1, d2)
    half_end = 720 if start < 720 else 1440
    require(end < half_end, "the story must stay in one half of the day")

    carries = ((start % 60) + m1 >= 60) + ((t1 % 60) + d2 % 60 >= 60)
    wrong = {
        "stopped after the first activity": t1,
        "counted the second activity twice": end + d2,
        "read the hours and minutes as one number of minutes": end + (100 * h1 + m1) - d1,
        "left out the hours of the first activity": end - 60 * h1,
        "counted the first activity twice": end + d1,
        "subtracted the second activity": t1 - d2,
        "forgot to carry the hour": end - 60 * carries,
        "left out the first activity": start + d2,
    }

    # a clock decoy lives in the answer's half of the day, like the story itself
    mistakes = clean_mistakes(end, {k: v for k, v in wrong.items() if half_end - 720 <= v < half_end})

    ctx = template.format(
        name=name,
        first=first,
        first_cap=first[0].upper() + first[1:],
        start=fmt_clock(start),
        d1=hours_minutes(h1, m1),
        d2=d2,
        second=second,
    )
    return Problem(
        family=NAME,
        topic=NAME,
        depth=2,
        ctx=ctx,
        answer=end,
        unit="",
        ending=" {}",
        steps=s.solution(),
        mistakes=mistakes,
        kind="clock",
        extra_mistakes=_extra_mistakes(start, h1, m1, d2, end, half_end),
        params={
            "start": start,
            "first_hours": h1,
            "first_minutes": m1,
            "second_minutes": d2,
            "first": first,
            "second": second,
            "name": name,
            "template": TEMPLATES.index(template),
        },
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: A time difference that is not part of the story: (sentence, the sign with which a solver
#: who falls for it moves the end time). Later tempts an addition, earlier a subtraction.
IRRELEVANT_SENTENCES = (
    ("The day before, {name} had finished {k} minutes later.", 1),
    ("{name}'s brother was free {k} minutes later.", 1),
    ("The day before, {name} had finished {k} minutes earlier.", -1),
    ("{name}'s brother was free {k} minutes earlier.", -1),
)

#: One template per original template: the same two activities, in the same order of time,
#: told in another order (the second activity first, the start time last).
REORDERED = (
    "Straight after {first}, {name} spent {d2} minutes on {second}. The {first_noun} had started at "
    "{start} and lasted {d1}. {name} was done at",
    "Following {first} that ran for {d1}, {name} spent {d2} minutes on {second}. The {first_noun} "
    "had begun at {start}, and everything ended at",
    "{name}'s plan: {second} for {d2} minutes, right after {first} that starts at {start} and lasts "
    "{d1}. That left {name} free at",
    "Right after {first} that took {d1}, {name} spent {d2} minutes on {second}. The {first_noun} "
    "had begun at {start}, and {name} finished at",
)

#: One template per original template with a third activity of ``{d3}`` minutes at the end.
ONE_MORE = (
    "{name} started {first} at {start}, and it lasted {d1}. Then {second} took {d2} minutes, and "
    "{third} took {d3} more. {name} was done at",
    "At {start}, {name} began {first} that ran for {d1}, followed by {second} lasting {d2} "
    "minutes and {third} lasting {d3}. Everything ended at",
    "{name}'s plan: {first} from {start} lasting {d1}, then {second} for {d2} minutes, then "
    "{third} for {d3}. That left {name} free at",
    "{first_cap} began at {start} and took {d1}. Right after it, {name} spent {d2} minutes on "
    "{second} and {d3} on {third}, finishing at",
)


#: The activities of :data:`SECOND` that may well last 1½ to 3 hours (a long third activity).
LONG_THIRD = ("lunch", "coffee with a friend", "some shopping", "a nap", "tidying up")


def _fits(ctx: str) -> str:
    n = len(ctx.split())
    require(n <= MAX_CTX_WORDS, f"prompt of {n} words is longer than {MAX_CTX_WORDS}")
    return ctx


def _fields(p: dict, d1: str | None = None) -> dict:
    first = p["first"]
    return {
        "name": p["name"],
        "first": first,
        "first_cap": first[0].upper() + first[1:],
        "first_noun": first.split(" ", 1)[1],
        "start": fmt_clock(p["start"]),
        "d1": d1 or hours_minutes(p["first_hours"], p["first_minutes"]),
        "d2": p["second_minutes"],
        "second": p["second"],
    }


def _with_sentence(ctx: str, sentence: str, p: dict) -> str:
    """``ctx`` with ``sentence`` before its closing stem; the last template's stem opens with
    "Right after it", which then names the first activity again."""
    out = insert_sentence(ctx, sentence)
    if p["template"] == 3:
        out = out.replace(f"{sentence} Right after it,", f"{sentence} Right after the {_fields(p)['first_noun']},")
    return out


def _half_end(problem: Problem) -> int:
    return 720 if problem.answer < 720 else 1440


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Another day's or another person's finishing time; falling for it moves the end time."""
    p = dict(problem.params)
    sentence, sign = pick(rng, IRRELEVANT_SENTENCES)
    k, value = irrelevant_number(rng, problem, 6, 90, lambda k: problem.answer + sign * k)
    return irrelevant_twin(
        problem, _fits(_with_sentence(problem.ctx, sentence.format(name=p["name"], k=k), p)), k, value
    )


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """A third activity after the second: the end time moves on by its minutes.

    The third activity lasts 4 to 60 minutes, as long as the half of the day has room and the
    new end time stays off the multiples of 5 minutes (the answer's roundness class). A morning
    story ending within the hour before noon may also get a long one (1½ to 3 hours) that
    carries the answer, and the decoys with it, into the afternoon; an evening story ending
    after 11:55 p.m. gets the minutes left before midnight (the solution lines cannot cross
    midnight), so one ending at 11:59 p.m. has no such twin (:func:`..base.no_twin`: the twin
    file leaves it out and the manifest counts it)."""
    p = dict(problem.params)
    end = problem.answer
    half_end = _half_end(problem)
    lengths = [d for d in range(4, 61) if end + d < half_end and (end + d) % 5]
    if end < 720 and end + 60 >= 720:
        lengths += list(range(90, 185, 5))
    if not lengths:
        lengths = [d for d in range(1, 1440 - end) if (end + d) % 5]
    if not lengths:
        no_twin("it ends at 11:59 p.m.: no minute is left for a third activity before midnight")
    d3 = pick(rng, lengths)
    third = pick(rng, [a for a in (LONG_THIRD if d3 > 60 else SECOND) if a != p["second"]])
    s = Steps()
    s.keep(problem.steps)
    new_end = s.clock("end of the third activity", end, d3)
    new_half_end = 720 if new_end < 720 else 1440
    wrong = {
        **{name: v + d3 for name, v in problem.mistakes.items()},
        "stopped before the third activity": end,
        "subtracted the third activity": end - d3,
        "counted the third activity twice": new_end + d3,
    }
    mistakes = clean_mistakes(new_end, {k: v for k, v in wrong.items() if new_half_end - 720 <= v < new_half_end})
    d3_text = "1 minute" if d3 == 1 else f"{d3} minutes"
    ctx = _fits(ONE_MORE[p["template"]].format(**_fields(p), third=third, d3=d3_text))
    return replace(
        problem,
        depth=3,
        ctx=ctx,
        answer=new_end,
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes={},  # the original's extra values are not this answer's mistakes
        params={**p, "third": third, "third_minutes": d3},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The second activity told first and the start time last (the times themselves in order)."""
    p = dict(problem.params)
    return replace(problem, ctx=_fits(REORDERED[p["template"]].format(**_fields(p))))


# No unit_change: the answer is a time of day, which has no unit to convert. The one unit
# in the story is the first activity's duration ("1 hour 47 minutes"); told in minutes alone
# ("107 minutes") it leaves the answer and the solution lines as they are and takes away a
# conversion instead of changing the unit of anything asked, and the hour-and-minute misreadings
# go with it: near noon or midnight the mistakes left (stopping early, a forgotten carry, ...)
# then all fall below the answer, so such a twin cannot keep its original's answer rank.
