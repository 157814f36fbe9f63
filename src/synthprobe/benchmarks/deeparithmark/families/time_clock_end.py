"""A start time plus two durations give the end time on the clock (depth 2)."""

from __future__ import annotations

import random
from functools import cache

from ..base import Problem, Steps, fmt_clock, register, require
from ._common_a import NAMES, clean_mistakes, hours_minutes, pick

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
