"""Sessions, each with its set-up break, fitted into a time window (depth 3)."""

from __future__ import annotations

import random
from fractions import Fraction

from ..base import Problem, Steps, fmt_num, register, require
from ._common_a import NAMES, clean_mistakes, pick

NAME = "schedule_sessions"

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

#: (template, plural noun of a session); ``{b}`` is the set-up before each session, ``{m}`` the
#: session itself, so one complete session needs b + m minutes inside the window.
STORIES = (
    ("A tennis club booked a court for {hours} on {day}. Each match needs {b} minutes to set up, "
     "then {m} minutes of play. The number of complete matches was", "matches"),
    ("{name} runs pottery classes in a {hours_adj} slot. Every class starts with {b} minutes of "
     "setting up, then {m} minutes of teaching. The complete classes numbered", "classes"),
    ("On {day}, a bakery's oven is free for {hours}. Each batch takes {b} minutes to load and {m} "
     "minutes to bake. The number of fully baked batches is", "batches"),
    ("An escape room is open for {hours} on {day}. Each group gets a {b}-minute briefing, then "
     "{m} minutes in the room. The number of complete games is", "games"),
    ("{name}, a driving instructor, has {hours} free today. Each lesson begins with a {b}-minute "
     "car check, then {m} minutes of driving. The complete lessons number", "lessons"),
    ("A recording studio is booked for {hours} on {day}. Each take needs {b} minutes of sound "
     "checks and {m} minutes of recording. The complete takes number", "takes"),
)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Sessions with set-up breaks fitted into a window: number of complete sessions."""
    template, noun = pick(rng, STORIES)
    name = pick(rng, NAMES)
    day = pick(rng, DAYS)
    hours = Fraction(rng.randint(6, 20), 2)  # 3 to 10 hours in half hours
    window_min = int(hours * 60)
    b = rng.randint(2, 9)
    # the session length is drawn among those giving 12+ complete sessions off the multiples
    # of 5 (the commonest roundness class)
    m = pick(rng, [m for m in range(b + 4, 31)
                   if window_min // (m + b) >= 12 and (window_min // (m + b)) % 5])

    s = Steps()
    window = s.op("window in minutes", hours, "×", 60)
    block = s.op("one session with its set-up", b, "+", m)
    n, spare = s.divmod("complete sessions", window, block)
    require(n % 5 != 0, "answer should not be a multiple of 5")

    whole_hours = int(hours)
    half = hours != whole_hours
    mistakes = clean_mistakes(n, {
        "left out the set-up time": window // m,
        "counted the set-up only once": (window - b) // m,
        "divided by the set-up time alone": window // b,
        "used 100 minutes per hour": int(hours * 100) // block,
        "counted the set-up twice": window // (m + 2 * b),
        "counted the session length twice": window // (2 * m + b),
        "subtracted the set-up instead of adding it": window // (m - b),
        "rounded down hour by hour": whole_hours * (60 // block) + (30 // block if half else 0),
        "dropped the half hour": (60 * whole_hours) // block if half else None,
        "gave the spare minutes": spare,
        "skipped the first set-up": (window + b) // block,
        "counted the unfinished session": n + 1 if spare else None,
    })

    ctx = template.format(name=name, day=day, hours=f"{fmt_num(hours)} hours",
                          hours_adj=f"{fmt_num(hours)}-hour", b=b, m=m)
    return Problem(
        family=NAME, topic=NAME, depth=3, ctx=ctx, answer=n, unit=noun, ending=f" {{}} {noun}.",
        steps=tuple(s.lines), mistakes=mistakes, kind="count",
        params={"hours": fmt_num(hours), "setup_minutes": b, "session_minutes": m, "noun": noun,
                "name": name, "day": day, "story": [st[0] for st in STORIES].index(template)},
    )
