"""A trip in legs given in hours and minutes, converted and summed to minutes (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace

from ..base import (
    Problem,
    Steps,
    insert_sentence,
    irrelevant_twin,
    last_sentence_start,
    register,
    require,
    twin,
)
from ._common_a import NAMES, clean_mistakes, hhmm_as_number, hours_minutes, pick

NAME = "trip_minutes"

PLACES = (
    "the coast",
    "the airport",
    "a music festival",
    "the mountains",
    "a lakeside cabin",
    "the old town",
    "a cousin's wedding",
    "the national park",
    "a football final",
    "the science museum",
)
RIDES = ("bus", "train", "ferry", "coach", "tram", "shuttle")

#: Shape A: one leg of hours and minutes, then one leg of minutes.
TEMPLATES_A = (
    "{name}'s trip to {place} had two parts: a {ride1} ride of {hm}, then a {m2}-minute {ride2} "
    "ride. In minutes, the whole trip took",
    "Getting to {place}, {name} spent {hm} on the {ride1} and another {m2} minutes on the {ride2}. "
    "Counted in minutes, the journey lasted",
)
#: Shape B: minutes, then whole hours, then minutes.
TEMPLATES_B = (
    "{name} walked {m1} minutes to the station, rode the {ride1} for {hm}, then took a {m3}-minute "
    "{ride2} to {place}. In minutes, the trip took",
    "On the way to {place}, {name} waited {m1} minutes, travelled {hm} by {ride1}, and finished "
    "with {m3} minutes by {ride2}. The total in minutes was",
)


def _carry_slips(slip: str | None, hours: int, minutes: int) -> dict[str, int]:
    """The carry slips of adding the legs as hours and minutes, on a (possibly wrong) sum
    ``minutes`` of the minute parts: an hour carried that the minutes do not make, or, when
    they make one, a carried hour dropped or added twice. ``slip`` names the mistake that gave
    that sum (``None``: the right one, whose dropped hour is already a legacy mistake)."""
    out: dict[str, int] = {}
    lead = "" if slip is None else f"{slip} and "
    if minutes < 60:
        out[f"{lead}carried an hour the minutes did not make"] = 60 * hours + minutes + 60
    else:
        if slip is not None:
            out[f"{lead}dropped a carried hour"] = 60 * hours + minutes - 60
        out[f"{lead}added the carried hour twice"] = 60 * hours + minutes + 60
    return out


def extra_mistakes(shape: str, h: int, m1: int, last: int) -> dict[str, int]:
    """The role-balanced builder's further mistakes (:mod:`..groups`), from the drawn numbers
    alone (no draw of its own): the first leg's minutes counted twice or subtracted (as the
    legacy mistakes do with the last leg), and the carry slips of adding the minute parts
    (an hour carried that they do not make, the carried hour dropped or added twice), on the
    right sum of the minute parts and on the sums the legacy leg mistakes give.

    The legacy mistakes move the total by a leg or by a multiple of the hours, which ties every
    value to the answer's minutes past the hour; a value an hour off, on the right sum and on
    the wrong ones, lets four totals show one another's values."""
    first = "the minutes of the first leg" if shape == "A" else "the first leg"
    out = {
        f"counted {first} twice": 60 * h + 2 * m1 + last,
        f"subtracted {first}": 60 * h - m1 + last,
    }
    sums = {
        None: m1 + last,
        "left out the last leg": m1,
        ("left out the minutes of the first leg" if shape == "A" else "left out the first leg"): last,
        "counted the last leg twice": m1 + 2 * last,
        f"counted {first} twice": 2 * m1 + last,
    }
    for slip, minutes in sums.items():
        out.update(_carry_slips(slip, h, minutes))
    return out


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Legs in hours and minutes, converted and summed to total minutes."""
    place = pick(rng, PLACES)
    ride1, ride2 = rng.sample(RIDES, 2)
    name = pick(rng, NAMES)
    # trips of 1-15 hours: the decoys (100 minutes an hour, the hours added twice, the total
    # written as hours and minutes) run up to about twice the answer, so answers stopping at
    # eight hours would leave the 600s-900s to the decoys alone; trips are kept only when
    # the total has three digits, like the decoys
    h = rng.randint(1, 15)
    shape = "A" if rng.random() < 0.5 else "B"

    s = Steps()
    if shape == "A":
        m1 = rng.randint(5, 55)
        # the last leg is drawn so the total stays off the multiples of 5
        last = pick(rng, [m for m in range(12, 59) if (m1 + m) % 5])
        template = pick(rng, TEMPLATES_A)
        hour_min = s.op("hours in minutes", h, "×", 60)
        first = s.op("first leg in minutes", hour_min, "+", m1)
        total = s.op("whole trip", first, "+", last)
        text = template.format(name=name, place=place, ride1=ride1, ride2=ride2, hm=hours_minutes(h, m1), m2=last)
        dropped_minutes_name = "left out the minutes of the first leg"
    else:
        m1 = rng.randint(5, 40)
        last = pick(rng, [m for m in range(6, 59) if (m1 + m) % 5])
        template = pick(rng, TEMPLATES_B)
        hour_min = s.op("hours in minutes", h, "×", 60)
        first = s.op("first two legs", m1, "+", hour_min)
        total = s.op("whole trip", first, "+", last)
        text = template.format(name=name, place=place, ride1=ride1, ride2=ride2, hm=hours_minutes(h, 0), m1=m1, m3=last)
        dropped_minutes_name = "left out the first leg"
    require(total % 5 != 0 and 100 <= total <= 999, "answer should be three-digit, off the multiples of 5")

    mistakes = clean_mistakes(
        total,
        {
            "used 100 minutes per hour": total + 40 * h,
            "dropped the carried hour": total - 60 if m1 + last >= 60 else None,
            "left out the last leg": total - last,
            dropped_minutes_name: total - m1,
            "wrote the hours and minutes as one number": hhmm_as_number(total),
            "counted the last leg twice": total + last,
            "added the hours twice": total + 60 * h,
            "subtracted the last leg": total - 2 * last,
        },
    )

    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=text,
        answer=int(total),
        unit="minutes",
        ending=" {} minutes.",
        steps=s.solution(),
        mistakes=mistakes,
        extra_mistakes=extra_mistakes(shape, h, m1, last),
        kind="count",
        params={
            "shape": shape,
            "hours": h,
            "minutes_first": m1,
            "minutes_last": last,
            "place": place,
            "rides": [ride1, ride2],
            "name": name,
            "template": (TEMPLATES_A if shape == "A" else TEMPLATES_B).index(template),
        },
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

# No unit_change twin: the family is itself a unit conversion (hours and minutes into
# minutes); telling the legs in minutes only would drop that step (the depth changes), and
# seconds for rides of hours read unnaturally.

#: Minutes outside the trip's total: (sentence, the sign with which a solver who falls for them
#: applies them to the total). Packing before leaving tempts an addition, minutes spent reading
#: during a ride (still part of the ride) a subtraction.
IRRELEVANT_SENTENCES = (
    ("Before leaving, {name} spent {x} minutes packing.", 1),
    ("{name} spent {x} minutes of the {ride1} ride reading.", -1),
)

#: Per shape, one per template: the legs told from the last one back (the same operations).
REORDERED = {
    "A": (
        "{name}'s trip to {place} had two parts: a {m2}-minute {ride2} ride at the end, after a {ride1} "
        "ride of {hm}. In minutes, the whole trip took",
        "Getting to {place}, {name} spent {m2} minutes on the {ride2}, after {hm} on the {ride1}. "
        "Counted in minutes, the journey lasted",
    ),
    "B": (
        "{name} took a {m3}-minute {ride2} to {place}, after riding the {ride1} for {hm} and, before "
        "that, walking {m1} minutes to the station. In minutes, the trip took",
        "On the way to {place}, {name} finished with {m3} minutes by {ride2}, after travelling {hm} by "
        "{ride1} and, first, waiting {m1} minutes. The total in minutes was",
    ),
}


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Minutes spent packing beforehand or reading on the way; falling for them adds them to,
    or takes them off, the total."""
    p = dict(problem.params)
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    x = 5 * rng.randint(2, 12)
    value = problem.answer + sign * x
    text = sentence.format(name=p["name"], x=x, ride1=p["rides"][0])
    return irrelevant_twin(problem, insert_sentence(problem.ctx, text), x, value)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """The way back took as long: the round trip (the total doubled)."""
    p = dict(problem.params)
    total = problem.answer
    s = Steps()
    s.keep(problem.steps)
    both = s.op("there and back", total, "×", 2)
    mistakes = clean_mistakes(
        both,
        {
            **{name: 2 * v for name, v in problem.mistakes.items()},
            "left out the way back": total,
            "counted the way back twice": 3 * total,
            "added the last leg for the way back": total + p["minutes_last"],
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = f"{stem}{p['name']} came back the same way, which took just as long. In minutes, the round trip took"
    return replace(problem, depth=4, ctx=ctx, answer=both, steps=s.solution(), mistakes=mistakes, extra_mistakes={})


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The legs told from the last one back."""
    p = dict(problem.params)
    h, m1, last = p["hours"], p["minutes_first"], p["minutes_last"]
    ride1, ride2 = p["rides"]
    hm = hours_minutes(h, m1) if p["shape"] == "A" else hours_minutes(h, 0)
    ctx = REORDERED[p["shape"]][p["template"]].format(
        name=p["name"], place=p["place"], ride1=ride1, ride2=ride2, hm=hm, m1=m1, m2=last, m3=last
    )
    return replace(problem, ctx=ctx)
