"""Metres converted to centimetres, a piece added, a piece cut off (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache

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
from ._common_a import NAMES, clean_mistakes, pick, pick_log_uniform
from ._common_b import finish_ctx, irrelevant_number

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


#: The slips on each of the three steps, as the factor they put on its number in place of the
#: right one (100 cm per metre, +1 on the piece, -1 on the cut), for
#: :func:`_extra_mistakes`. All but "left out the starting length" are ``mistakes`` on their own.
CONVERSION_SLIPS = (
    ("dropped the metre conversion", 1),
    ("used 10 cm per metre", 10),
    ("left out the starting length", 0),
)
PIECE_SLIPS = (("left out the added piece", 0), ("added the piece twice", 2), ("subtracted the added piece", -1))
CUT_SLIPS = (("forgot the cut", 0), ("cut the piece off twice", -2), ("added the cut instead of subtracting it", 1))


def _extra_mistakes(m: int, b: int, c: int, final: int) -> dict[str, int]:
    """The role-balanced builder's wider pool (:mod:`..groups`): the starting length left out
    (only the change, the piece less the cut, given), and every two slips on different steps
    made together (the conversion and the piece, the conversion and the cut, the piece and
    the cut: "used 10 cm per metre and forgot the cut").

    The slips move the length by multiples of the piece, of the cut and of the metres, so their
    compounds put decoys on both sides of the key at the distances the single slips do, and
    the key can sit where a decoy sits in another item. A value that is not a positive length
    (or is the answer) is left out; nothing is drawn.
    """
    wrong = {"left out the starting length": b - c}
    for conv, k in CONVERSION_SLIPS:
        for piece, x in PIECE_SLIPS:
            wrong[f"{conv} and {piece}"] = k * m + x * b - c
        for cut, y in CUT_SLIPS:
            wrong[f"{conv} and {cut}"] = k * m + b + y * c
    for piece, x in PIECE_SLIPS:
        for cut, y in CUT_SLIPS:
            wrong[f"{piece} and {cut}"] = 100 * m + x * b + y * c
    return {name: v for name, v in wrong.items() if v > 0 and v != final}


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
        extra_mistakes=_extra_mistakes(m, b, c, final),
        params={
            "metres": m,
            "added_cm": b,
            "cut_cm": c,
            "material": mat,
            "name": name,
            "template": TEMPLATES.index(template),
        },
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

#: A length that plays no part in this one: (sentence, the sign with which a solver who falls
#: for it moves the final length). A spare piece or a longer one tempts an addition, an offcut
#: thrown away or a shorter one a subtraction.
IRRELEVANT_SENTENCES = (
    ("A spare {n} cm piece stayed in the toolbox.", 1),
    ("Another {mat} in the shed was {n} cm longer than the first.", 1),
    ("An old {n} cm offcut was thrown away.", -1),
    ("Another {mat} in the shed was {n} cm shorter than the first.", -1),
)

#: Per template: the cut told before the piece that was joined first.
REORDERED = (
    "{name} had a {mat} {m} m long. Before {name} {cut} {c} cm, a {b} cm piece had been {join} to one end. "
    "In centimetres, the {mat} was now",
    "A {mat} measured {metres}. Later {c} cm was {cut}, but first a {b} cm piece was {join} onto it. "
    "The {mat}'s final length in centimetres was",
    "For a project, {name} took a {m} m {mat} and {cut} {c} cm that was not needed, having first {join} on "
    "another {b} cm. Its length in centimetres was now",
    "Starting with a {mat} of {m} m, {name} {cut} {c} cm, having first {join} an extra {b} cm to it. "
    "Measured in centimetres, it was",
)

#: Per template: the pieces in millimetres, the answer too.
IN_MM = (
    "{name} had a {mat} {m} m long. {name} {join} a {b} mm piece to one end, then {cut} {c} mm. "
    "In millimetres, the {mat} was now",
    "A {mat} measured {metres}. A {b} mm piece was {join} onto it, and later {c} mm was {cut}. "
    "The {mat}'s final length in millimetres was",
    "For a project, {name} took a {m} m {mat}, {join} on another {b} mm, and {cut} {c} mm that "
    "was not needed. Its length in millimetres was now",
    "Starting with a {mat} of {m} m, {name} {join} an extra {b} mm to it and then {cut} {c} mm. "
    "Measured in millimetres, it was",
)


def _fields(p: dict, b: int, c: int) -> dict:
    mat, join, cut = next(x for x in MATERIALS if x[0] == p["material"])
    m = p["metres"]
    return {
        "name": p["name"],
        "mat": mat,
        "join": join,
        "cut": cut,
        "m": m,
        "b": b,
        "c": c,
        "metres": f"{m} metre" + ("" if m == 1 else "s"),
    }


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """A spare piece or another length nearby: falling for it moves the final length."""
    p = dict(problem.params)
    sentence, sign = pick(rng, IRRELEVANT_SENTENCES)
    n, used = irrelevant_number(rng, problem, 12, 98, lambda n: problem.answer + sign * n)
    text = sentence.format(n=n, mat=p["material"])
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, text)), n, used)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """A second length, so many centimetres longer than the finished one."""
    p = dict(problem.params)
    final, mat = problem.answer, p["material"]
    more = 10 * rng.randint(2, 15)
    s = Steps()
    s.keep(problem.steps)
    second = s.op(f"second {mat}", final, "+", more)
    pool = clean_mistakes(
        second,
        {
            **{name: v + more for name, v in problem.mistakes.items()},
            "gave the first length, not the second": final,
            "took the difference off instead of adding it": final - more,
            "added the difference to the first length": 100 * p["metres"] + more,
            "added the difference twice": final + 2 * more,
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    ctx = finish_ctx(
        f"{stem}A second {mat} was {more} cm longer than this one. In centimetres, the second one measured"
    )
    return replace(
        problem,
        depth=4,
        ctx=ctx,
        answer=second,
        steps=s.solution(),
        mistakes=pool,
        extra_mistakes={},  # the original's extra values are not this answer's mistakes
        params={**p, "more": more},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The cut told before the piece that was joined first."""
    p = dict(problem.params)
    text = REORDERED[p["template"]].format(**_fields(p, p["added_cm"], p["cut_cm"]))
    return replace(problem, ctx=finish_ctx(text))


@twin(NAME, "unit_change")
def in_millimetres(problem: Problem, rng: random.Random) -> Problem:
    """The pieces in millimetres and the length asked in millimetres (the metres stay metres)."""
    p = dict(problem.params)
    m, b, c = p["metres"], 10 * p["added_cm"], 10 * p["cut_cm"]
    s = Steps()
    mm = s.op("first length in millimetres", m, "×", 1000)
    joined = s.op("after adding the piece", mm, "+", b)
    final = s.op("after the cut", joined, "-", c)
    pool = clean_mistakes(
        final,
        {
            "dropped the metre conversion": m + b - c,
            "used 100 mm per metre": 100 * m + b - c,
            "used 10 mm per metre": 10 * m + b - c,
            "forgot the cut": mm + b,
            "left out the added piece": mm - c,
            "added the cut instead of subtracting it": mm + b + c,
            "subtracted the added piece": mm - b - c,
            "cut the piece off twice": mm + b - 2 * c,
            "added the piece twice": mm + 2 * b - c,
        },
    )
    return replace(
        problem,
        ctx=finish_ctx(IN_MM[p["template"]].format(**_fields(p, b, c))),
        answer=final,
        unit="mm",
        ending=" {} mm.",
        steps=s.solution(),
        mistakes=pool,
        extra_mistakes={},  # the original's extra values are centimetres
        params={**p, "unit": "mm"},
    )
