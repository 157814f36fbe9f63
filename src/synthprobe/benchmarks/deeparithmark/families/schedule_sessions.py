"""Sessions, each with its set-up break, fitted into a time window (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from functools import cache

from ..base import (
    Problem,
    Steps,
    fmt_num,
    insert_sentence,
    irrelevant_twin,
    last_sentence_start,
    register,
    require,
    twin,
)
from ._common_a import NAMES, clean_mistakes, pick

NAME = "schedule_sessions"

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

#: (template, plural noun of a session); ``{b}`` is the set-up before each session, ``{m}`` the
#: session itself, so one complete session needs b + m minutes inside the window.
STORIES = (
    (
        "{name}'s go-kart track is open for {hours} on {day}. Each race needs a {b}-minute safety "
        "briefing, then {m} minutes of driving. The number of complete races is",
        "races",
    ),
    (
        "{name} bakes cookies in one oven for {hours}. Each tray takes {b} minutes to load, "
        "then bakes for {m} minutes. The number of fully baked trays is",
        "trays",
    ),
    (
        "A fairground ride run by {name} operates for {hours} on {day}. Each ride takes {b} minutes "
        "to board, then lasts {m} minutes. The number of complete rides is",
        "rides",
    ),
    (
        "{name}'s car wash is open for {hours} on {day}. Each car needs {b} minutes of preparation "
        "and {m} minutes of washing. The number of cars fully washed is",
        "cars",
    ),
    (
        "{name} runs blitz chess games for {hours} on {day}. Each game needs {b} minutes to set up, "
        "then {m} minutes of play. The number of complete games is",
        "games",
    ),
    (
        "{name}'s climbing wall is open for {hours} on {day}. Each climber spends {b} minutes being "
        "harnessed, then {m} minutes on the wall. The number of complete climbs is",
        "climbs",
    ),
)


@cache
def _sessions(window_min: int) -> tuple[tuple[int, ...], dict[int, list[tuple[int, int]]]]:
    """For a window of ``window_min`` minutes: the admissible numbers of complete sessions,
    ascending, and for each the (set-up, session length) pairs giving it, in drawing order."""
    pairs_for: dict[int, list[tuple[int, int]]] = {}
    for b in range(2, 10):
        for m in range(b + 3, 41):
            n = window_min // (m + b)
            if 11 <= n <= 99 and n % 5:
                pairs_for.setdefault(n, []).append((b, m))
    return tuple(sorted(pairs_for)), pairs_for


def extra_mistakes(hours: Fraction, b: int, m: int) -> dict[str, int]:
    """The role-balanced builder's further mistakes (:mod:`..groups`), from the drawn numbers
    alone (no draw of its own): the decimal part of the hours taken as minutes (4.25 hours as
    4 h 25 min, 4.5 as 4 h 50 min), and the legacy mistakes two at a time - a wrong window
    (100 minutes per hour, the part hour dropped, the decimal part as minutes) with a wrong
    session (the set-up left out, doubled or subtracted, the session doubled), or with the
    set-up counted only once; either with the unfinished session counted; the hour-by-hour
    rounding with a wrong session.

    The legacy mistakes change the window or the session, one at a time, so they sit at a few
    fixed ratios to the answer; two at a time they fill the gaps, on both sides, so that four
    counts can show one another's values."""
    window = int(hours * 60)
    block = b + m
    whole_hours = int(hours)
    part = hours - whole_hours
    part_minutes = int(part * 60)
    decimal = "took the decimal part of the hours as minutes"
    windows = {"used 100 minutes per hour": int(hours * 100)}
    if part:
        windows["dropped the part hour"] = 60 * whole_hours
        windows[decimal] = 60 * whole_hours + int(part * 100)
    sessions = {
        "left out the set-up time": m,
        "counted the set-up twice": m + 2 * b,
        "counted the session length twice": 2 * m + b,
        "subtracted the set-up instead of adding it": m - b,
    }
    out: dict[str, int] = {}
    if part:
        out[decimal] = windows[decimal] // block
    for wrong_window, minutes in windows.items():
        for wrong_session, length in sessions.items():
            out[f"{wrong_window} and {wrong_session}"] = minutes // length
        out[f"{wrong_window} and counted the set-up only once"] = (minutes - b) // m
    # the unfinished session counted, after a wrong session or a wrong window
    divisions = {name: (window, length) for name, length in sessions.items()}
    divisions.update({name: (minutes, block) for name, minutes in windows.items()})
    for wrong, (minutes, length) in divisions.items():
        full, spare = divmod(minutes, length)
        if spare:
            out[f"{wrong} and counted the unfinished session"] = full + 1
    for wrong_session, length in sessions.items():
        out[f"rounded down hour by hour and {wrong_session}"] = whole_hours * (60 // length) + part_minutes // length
    return out


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Sessions with set-up breaks fitted into a window: number of complete sessions."""
    template, noun = pick(rng, STORIES)
    name = pick(rng, NAMES)
    day = pick(rng, DAYS)
    # 4.5 to 12 hours in quarter hours: with windows in whole half hours (multiples of 30
    # minutes) some counts, such as 29 or 59, can never come out of window // block, while
    # the decoys, dividing by other amounts, still land on them
    hours = Fraction(rng.randint(18, 48), 4)
    window_min = int(hours * 60)
    # the number of complete sessions is drawn first, evenly over the two-digit counts off the
    # multiples of 5 (the commonest roundness class) that this window allows, then a set-up and
    # session length giving it: the answers then spread over the same 11-99 range as the
    # decoys, in size and in final digit, instead of bunching just above the smallest count a
    # long session allows
    targets, pairs_for = _sessions(window_min)
    target = pick(rng, targets)
    b, m = pick(rng, pairs_for[target])

    s = Steps()
    window = s.op("window in minutes", hours, "×", 60)
    block = s.op("one session with its set-up", b, "+", m)
    n, spare = s.divmod("complete sessions", window, block)
    require(n % 5 != 0, "answer should not be a multiple of 5")

    whole_hours = int(hours)
    part_hour = int((hours - whole_hours) * 60)  # 0, 15, 30 or 45 minutes
    mistakes = clean_mistakes(
        n,
        {
            "left out the set-up time": window // m,
            "counted the set-up only once": (window - b) // m,
            "divided by the set-up time alone": window // b,
            "used 100 minutes per hour": int(hours * 100) // block,
            "counted the set-up twice": window // (m + 2 * b),
            "counted the session length twice": window // (2 * m + b),
            "subtracted the set-up instead of adding it": window // (m - b),
            "rounded down hour by hour": whole_hours * (60 // block) + part_hour // block,
            "dropped the part hour": (60 * whole_hours) // block if part_hour else None,
            "skipped the first set-up": (window + b) // block,
            "counted the unfinished session": n + 1 if spare else None,
        },
    )

    ctx = template.format(
        name=name, day=day, hours=f"{fmt_num(hours)} hours", hours_adj=f"{fmt_num(hours)}-hour", b=b, m=m
    )
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=n,
        unit=noun,
        ending=f" {{}} {noun}.",
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes=extra_mistakes(hours, b, m),
        kind="count",
        params={
            "hours": fmt_num(hours),
            "setup_minutes": b,
            "session_minutes": m,
            "noun": noun,
            "name": name,
            "day": day,
            "story": [st[0] for st in STORIES].index(template),
        },
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

# No unit_change twin: the answer is a count of sessions, and restating the window in minutes
# drops the hours-to-minutes step (the depth changes), while seconds for sessions of up to
# 40 minutes read unnaturally.

#: Per story (STORIES order): a longer opening on another day, which tempts adding its
#: minutes to the window.
LONGER_BEFORE = (
    "The day before, the track stayed open {n} minutes longer.",
    "The day before, {name} baked for {n} minutes longer.",
    "The day before, the ride ran for {n} minutes longer.",
    "The day before, the car wash stayed open {n} minutes longer.",
    "The day before, the games went on {n} minutes longer.",
    "The day before, the wall stayed open {n} minutes longer.",
)
#: Tidying up after the window, which tempts taking its minutes off the window.
TIDY_AFTER = "Tidying up afterwards takes another {n} minutes."

#: Per story: (one complete session, complete sessions) as the closing stem names them.
SESSION_WORDS = (
    ("complete race", "complete races"),
    ("fully baked tray", "fully baked trays"),
    ("complete ride", "complete rides"),
    ("fully washed car", "fully washed cars"),
    ("complete game", "complete games"),
    ("complete climb", "complete climbs"),
)

#: Per story: the session told first, the window after it (the same three operations).
REORDERED = (
    "Each race at {name}'s go-kart track needs a {b}-minute safety briefing, then {m} minutes of "
    "driving. The track is open for {hours} on {day}. The number of complete races is",
    "Each tray of {name}'s cookies takes {b} minutes to load, then bakes for {m} minutes. {name} "
    "bakes in one oven for {hours}. The number of fully baked trays is",
    "Each ride on {name}'s fairground ride takes {b} minutes to board, then lasts {m} minutes. The "
    "ride operates for {hours} on {day}. The number of complete rides is",
    "Each car at {name}'s car wash needs {b} minutes of preparation and {m} minutes of washing. The "
    "car wash is open for {hours} on {day}. The number of cars fully washed is",
    "Each blitz chess game {name} runs needs {b} minutes to set up, then {m} minutes of play. {name} "
    "runs games for {hours} on {day}. The number of complete games is",
    "Each climber at {name}'s climbing wall spends {b} minutes being harnessed, then {m} minutes on "
    "the wall. The wall is open for {hours} on {day}. The number of complete climbs is",
)


def _window_block(p: dict) -> tuple[int, int]:
    return int(Fraction(p["hours"]) * 60), p["setup_minutes"] + p["session_minutes"]


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Minutes outside the window (a longer day before, tidying up after): falling for them
    adds them to, or takes them off, the window."""
    p = dict(problem.params)
    window, block = _window_block(p)
    n = 5 * rng.randint(max(2, -(-2 * block // 5)), 6 * block // 5)  # 2 to 6 sessions' worth
    if rng.random() < 0.5:
        sentence, value = LONGER_BEFORE[p["story"]], (window + n) // block
    else:
        sentence, value = TIDY_AFTER, (window - n) // block
    require(value % 5 != 0 and abs(value - problem.answer) >= 2, "the irrelevant value must be a usable decoy")
    return irrelevant_twin(problem, insert_sentence(problem.ctx, sentence.format(name=p["name"], n=n)), n, value)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Each complete session brings in a price: the takings (sessions × price)."""
    p = dict(problem.params)
    one, many = SESSION_WORDS[p["story"]]
    price = pick(rng, [c for c in range(3, 16) if c % 5])
    s = Steps()
    s.keep(problem.steps)
    takings = s.op("takings in dollars", problem.answer, "×", price)
    mistakes = clean_mistakes(
        takings,
        {
            **{name: v * price for name, v in problem.mistakes.items()},
            "added the price instead of multiplying": problem.answer + price,
            "priced every minute of the window": _window_block(p)[0] * price,
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = f"{stem}Each {one} brings in ${price}. Together, the {many} bring in"
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
        params={**p, "price": price},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The session told before the window."""
    p = dict(problem.params)
    ctx = REORDERED[p["story"]].format(
        name=p["name"],
        day=p["day"],
        hours=f"{p['hours']} hours",
        b=p["setup_minutes"],
        m=p["session_minutes"],
    )
    return replace(problem, ctx=ctx)
