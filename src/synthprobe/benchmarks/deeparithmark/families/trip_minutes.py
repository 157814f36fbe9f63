"""A trip in legs given in hours and minutes, converted and summed to minutes (depth 3)."""

from __future__ import annotations

import random

from ..base import Problem, Steps, register, require
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
