"""Metres converted to centimetres, a piece added, a piece cut off (depth 3)."""

from __future__ import annotations

import random
from functools import cache

from ..base import Problem, Steps, register, require
from ._common_a import NAMES, clean_mistakes, pick, pick_log_uniform

NAME = "measure_cm_cut"

#: (material, what is done to join a piece, what is done to remove one)
MATERIALS = (
    ("board", "glued", "sawed off"),
    ("rope", "tied", "cut off"),
    ("ribbon", "sewed", "snipped off"),
    ("pipe", "welded", "cut off"),
    ("garden hose", "joined", "cut off"),
    ("cable", "spliced", "trimmed off"),
    ("curtain rail", "screwed", "sawed off"),
    ("strip of fabric", "stitched", "cut off"),
    ("wooden beam", "bolted", "sawed off"),
    ("length of chain", "linked", "removed"),
)

TEMPLATES = (
    "{name} had a {mat} {m} m long. {name} {join} a {b} cm piece to one end, then {cut} {c} cm. "
    "In centimetres, the {mat} was now",
    "A {mat} measured {metres}. A {b} cm piece was {join} onto it, and later {c} cm was {cut}. "
    "The {mat}'s final length in centimetres was",
    "For a project, {name} took a {m} m {mat}, {join} on another {b} cm, and {cut} {c} cm that "
    "was not needed. Its length in centimetres was now",
    "Starting with a {mat} of {m} m, {name} {join} an extra {b} cm to it and then {cut} {c} cm. "
    "Measured in centimetres, it was",
)


#: The three-digit final lengths off the multiples of 5, in centimetres.
FINAL_LENGTHS = tuple(v for v in range(112, 1000) if v % 5)


@cache
def _cuts(diff: int) -> tuple[int, ...]:
    """The cuts of 12 to 98 cm whose added piece (the cut plus ``diff``) is 20 to 299 cm."""
    return tuple(c for c in range(12, 99) if 20 <= c + diff <= 299)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """Metres to centimetres, add a piece, cut a piece off."""
    mat, join, cut = pick(rng, MATERIALS)
    # the final length is drawn first, evenly on a log scale over the three-digit lengths off
    # the multiples of 5 (the commonest roundness class), then a length in whole metres, an
    # added piece and a shorter cut giving it: the decoys (the cut forgotten, the piece added
    # twice, the piece left out, ...) sit at ratios to the answer from about a half to twice
    # it, so answers spread the same way cover the 1xx and 9xx lengths as often as they do
    # (leaning to the short ones, which few decoys fit below and so are kept less often)
    final_cm = pick_log_uniform(rng, FINAL_LENGTHS, power=1.5)
    m = pick(rng, [m for m in range(1, 10) if 1 <= final_cm - 100 * m <= 280])
    diff = final_cm - 100 * m  # the added piece less the cut
    c = pick(rng, _cuts(diff))
    b = c + diff
    name = pick(rng, NAMES)
    template = pick(rng, TEMPLATES)

    s = Steps()
    cm = s.op("first length in centimetres", m, "×", 100)
    joined = s.op("after adding the piece", cm, "+", b)
    final = s.op("after the cut", joined, "-", c)
    require(100 <= final <= 999 and final % 5 != 0, "length must be three-digit and off the multiples of 5")

    mistakes = clean_mistakes(
        final,
        {
            "dropped the metre conversion": m + b - c,
            "used 10 cm per metre": 10 * m + b - c,
            "forgot the cut": cm + b,
            "left out the added piece": cm - c,
            "added the cut instead of subtracting it": cm + b + c,
            "subtracted the added piece": cm - b - c,
            "cut the piece off twice": cm + b - 2 * c,
            "added the piece twice": cm + 2 * b - c,
        },
    )

    ctx = template.format(
        name=name, mat=mat, join=join, cut=cut, m=m, b=b, c=c, metres=f"{m} metre" + ("" if m == 1 else "s")
    )
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=int(final),
        unit="cm",
        ending=" {} cm.",
        steps=s.solution(),
        mistakes=mistakes,
        kind="count",
        params={
            "metres": m,
            "added_cm": b,
            "cut_cm": c,
            "material": mat,
            "name": name,
            "template": TEMPLATES.index(template),
        },
    )
