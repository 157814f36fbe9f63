"""Mix a liquid with a multiple of another, take some out, share the rest (depth 4).

    Maya mixed 332 mL of lemon cordial with three times as much water. Then 140 mL was
    spilled; the rest was poured equally into 4 jugs. Each jug held → 297 mL.

Steps: first liquid × multiple, + first liquid, − amount taken out, ÷ containers (exact).

Every quantity is a multiple of the number of containers, so each mistake's re-run divides
out evenly too; the amount taken out is a multiple of 5 and the first liquid is not, and the
multiple avoids 4 and 5, so the answer and nearly every mistake end in the same roundness
class (not a multiple of 5) and all can serve as options.
"""

from __future__ import annotations

import random

from ..base import Problem, register, require
from ._common_a import PARITY_REDRAWS, parity_kept
from ._common_b import NAMES, NUMBER_WORDS, Calc, finish_ctx, mistakes, solve

NAME = "mix_split"

#: Share of odd shares kept (see :func:`._common_a.parity_kept`).
ODD_SHARE = 0.7

FORGOT_REMOVED = "forgot the amount taken out"
ADDED_REMOVED = "added the amount taken out"
REMOVED_TWICE = "took the amount out twice"
REMOVED_PER_CONTAINER = "took the amount out of every container"
LEFT_OUT_FIRST = "left out the first liquid"
FIRST_TWICE = "counted the first liquid twice"

MISTAKES = (FORGOT_REMOVED, ADDED_REMOVED, REMOVED_TWICE, REMOVED_PER_CONTAINER, LEFT_OUT_FIRST, FIRST_TWICE)

#: (first liquid, second liquid, how some was taken out, container, plural)
MIXES = (
    ("lemon cordial", "water", "{r} mL was spilled", "jug", "jugs"),
    ("blue paint", "white paint", "{r} mL went on a test patch", "tin", "tins"),
    ("plant food", "water", "{r} mL went on the seedlings", "can", "cans"),
    ("floor cleaner", "water", "{r} mL was used on the hall", "sprayer", "sprayers"),
    ("fruit syrup", "soda water", "{r} mL was tasted", "pitcher", "pitchers"),
    ("liquid fertiliser", "water", "{r} mL went on the roses", "bucket", "buckets"),
    ("mango juice", "water", "{r} mL was poured for the cook", "bottle", "bottles"),
    ("green dye", "water", "{r} mL was tested on a rag", "tub", "tubs"),
)
#: "m times as much": 4 and 5 would put the answer or a mistake on a multiple of 5.
MULTIPLES = (2, 3, 6, 7)
#: Amounts of the first liquid per container: 24 to 160, off the multiples of 5.
FIRST_AMOUNTS = tuple(v for v in range(24, 161) if v % 5)


def _story(rng: random.Random, p: dict) -> str:
    first, second, removal, one, many = p["mix"]
    name, j, r, n = p["name"], p["first_ml"], p["removed_ml"], p["containers"]
    m = "twice" if p["times"] == 2 else f"{NUMBER_WORDS[p['times']]} times"
    mixing = rng.choice(
        (
            f"{name} mixed {j} mL of {first} with {m} as much {second}.",
            f"{name} stirred {j} mL of {first} into {m} as much {second}.",
            f"{name} made a batch from {j} mL of {first} and {m} as much {second}.",
        )
    )
    removed = removal.format(r=r)
    sharing = rng.choice(
        (
            f"Then {removed}; the rest was poured equally into {n} {many}.",
            f"Then {removed}. The rest was shared equally among {n} {many}.",
            f"Then {removed}; {name} split the rest evenly into {n} {many}.",
        )
    )
    question = rng.choice(
        (
            f"Each {one} held",
            f"Each {one} then held",
            f"Each {one} contained",
        )
    )
    return finish_ctx(mixing, sharing, question)


@register(NAME, topic=NAME, depth=4)
def generate(rng: random.Random) -> Problem:
    """Mix a liquid with m times as much of another, take some out, share the rest evenly."""
    for _ in range(PARITY_REDRAWS):
        n = rng.randint(3, 8)
        times = rng.choice(MULTIPLES)
        per_first = rng.choice(FIRST_AMOUNTS)
        per_removed = 5 * rng.randint(2, (per_first - 5) // 5)
        # the decoys that double the first liquid or take the amount out of every container
        # lean even; so do the answers (each container's share is computed below)
        if parity_kept(rng, per_first * (1 + times) - per_removed, ODD_SHARE):
            break
    first_ml, removed_ml = n * per_first, n * per_removed
    p = {
        "containers": n,
        "times": times,
        "first_ml": first_ml,
        "removed_ml": removed_ml,
        "name": rng.choice(NAMES),
        "mix": rng.choice(MIXES),
    }

    def chain(c: Calc, m: str | None):
        second = c.op("second liquid", first_ml, "×", times)
        if m == LEFT_OUT_FIRST:
            mixture = second
        else:
            mixture = c.op("mixture", first_ml, "+", second)
            if m == FIRST_TWICE:
                mixture = c.op("mixture", mixture, "+", first_ml)
        if m == REMOVED_PER_CONTAINER:
            return c.op("each", c.op("each", mixture, "/", n), "-", removed_ml)
        if m == FORGOT_REMOVED:
            left = mixture
        elif m == ADDED_REMOVED:
            left = c.op("left", mixture, "+", removed_ml)
        else:
            left = c.op("left", mixture, "-", removed_ml)
            if m == REMOVED_TWICE:
                left = c.op("left", left, "-", removed_ml)
        return c.op(f"each {p['mix'][3]}", left, "/", n)

    answer, steps = solve(chain)
    require(answer >= 20, "too little in each container")
    return Problem(
        family=NAME,
        topic=NAME,
        depth=4,
        ctx=_story(rng, p),
        answer=answer,
        unit="mL",
        ending=" {} mL.",
        steps=steps,
        mistakes=mistakes(chain, MISTAKES, answer),
        kind="count",
        params=p,
    )
