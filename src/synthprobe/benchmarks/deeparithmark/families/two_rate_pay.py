"""Hours at one hourly rate plus hours at another give the total pay (depth 3)."""

from __future__ import annotations

import random
from fractions import Fraction

from ..base import Problem, Steps, register, require
from ._common_a import NAMES, PARITY_REDRAWS, clean_mistakes, parity_kept, pick, pick_log_uniform

NAME = "two_rate_pay"

#: Share of odd totals kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.55

#: (first block, second block, whether the second rate is always the higher one)
SHIFTS = (
    ("on weekdays", "on the weekend", True),
    ("on day shifts", "on night shifts", True),
    ("at the café", "at the bookshop", False),
    ("tutoring maths", "tutoring piano", False),
    ("in regular hours", "in overtime", True),
    ("at the front desk", "in the kitchen", False),
    ("stacking shelves", "driving deliveries", False),
    ("at the garden centre", "at the cinema", False),
)

TEMPLATES = (
    "Last week {name} worked {h1} hours {s1} at ${r1} an hour and {h2} hours {s2} at ${r2} an hour. "
    "Altogether, {name} earned",
    "{name} is paid ${r1} an hour {s1} and ${r2} an hour {s2}. This month {name} put in {h1} hours "
    "{s1} and {h2} hours {s2}, earning",
    "For {h1} hours {s1} {name} earns ${r1} per hour, and for {h2} hours {s2} ${r2} per hour. "
    "{name}'s total pay for the week was",
    "In one week, {name} logged {h1} hours {s1}, paid at ${r1} an hour, plus {h2} hours {s2}, paid "
    "at ${r2} an hour. The pay came to",
)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Hours at one rate plus hours at another rate give the total pay."""
    s1, s2, premium = pick(rng, SHIFTS)
    for _ in range(PARITY_REDRAWS):
        # on a log scale, short weeks and low rates included: leaving out a block gives small
        # decoys, so the answers must reach down into the low hundreds as often as they do
        h1 = pick_log_uniform(rng, range(4, 39))
        h2 = pick(rng, [h for h in range(3, 19) if h != h1 and h % 5])
        r1 = pick_log_uniform(rng, range(11, 30))
        # weekend, night and overtime hours pay more; between two jobs either may pay more.
        # The second rate is drawn among those that keep the total off the multiples of 5, so
        # the answer sits in the commonest roundness class
        sign = 1 if premium else pick(rng, (-1, 1))
        r2 = pick(
            rng, [r1 + sign * d for d in range(3, 15) if r1 + sign * d >= 9 and (h1 * r1 + h2 * (r1 + sign * d)) % 5]
        )
        # most decoys are products of hours and a rate, even more often than the answer
        if parity_kept(rng, h1 * r1 + h2 * r2, ODD_SHARE):
            break
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)

    s = Steps()
    pay1 = s.op("first block of hours", h1, "×", r1)
    pay2 = s.op("second block of hours", h2, "×", r2)
    total = s.op("total pay", pay1, "+", pay2, money=True)
    require(total % 5 != 0, "answer should not be a multiple of 5")

    mistakes = clean_mistakes(
        total,
        {
            "paid every hour at the first rate": (h1 + h2) * r1,
            "paid every hour at the second rate": (h1 + h2) * r2,
            "left out the second block of hours": pay1,
            "left out the first block of hours": pay2,
            "swapped the two rates": h1 * r2 + h2 * r1,
            "averaged the two rates": Fraction((h1 + h2) * (r1 + r2), 2),
            "counted the second block twice": pay1 + 2 * pay2,
            "multiplied all the hours by both rates added": (h1 + h2) * (r1 + r2),
        },
    )

    ctx = template.format(name=name, h1=h1, h2=h2, r1=r1, r2=r2, s1=s1, s2=s2)
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=int(total),
        unit="$",
        ending=" ${}.",
        steps=s.solution(),
        mistakes=mistakes,
        kind="money",
        params={
            "hours1": h1,
            "rate1": r1,
            "hours2": h2,
            "rate2": r2,
            "shifts": [s1, s2],
            "name": name,
            "template": TEMPLATES.index(template),
        },
    )
