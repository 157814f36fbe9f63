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
from ._common_a import PARITY_REDRAWS, clean_mistakes, exact_div, parity_kept
from ._common_b import NAMES, NUMBER_WORDS, Calc, choose, finish_ctx, irrelevant_number, mistakes, solve

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

# Extra mistakes (``Problem.extra_mistakes``, read only by the role-balanced groups): the legacy
# ones all sit at the answer plus a small multiple of the amount taken out of each container
# (+1, +2, -1, -(n - 1) of it), so the answer is never the top of such a run. These add the runs'
# missing steps on both sides (+3, +(n + 1), +(m + 2); -m, -(m + 1), -(2n - 1) of it, m the
# multiple), each the exact result of a named error: a sign slip, a step done twice, or the amount
# taken out of the first liquid before it was multiplied.
ADDED_REMOVED_TWICE = "added the amount taken out twice"
REMOVED_FROM_FIRST = "took the amount out of the first liquid before mixing"
REMOVED_FROM_FIRST_AND_MIXTURE = "took the amount out of the first liquid before mixing and again after"
ADDED_TO_FIRST = "added the amount to the first liquid before mixing"
ADDED_PER_CONTAINER = "added the amount to every container"
REMOVED_PER_CONTAINER_TWICE = "took the amount out of every container twice"


def _extra_mistakes(first_ml: int, times: int, removed_ml: int, n: int) -> dict[str, int | None]:
    """The extra mistakes' exact values per container (every amount is a multiple of ``n``, so
    each divides out; ``None`` would mark a share that does not)."""
    mixture = first_ml * (1 + times)
    mixed_after_removal = (first_ml - removed_ml) * (1 + times)
    return {
        ADDED_REMOVED_TWICE: exact_div(mixture + 2 * removed_ml, n),
        REMOVED_FROM_FIRST: exact_div(mixed_after_removal, n),
        REMOVED_FROM_FIRST_AND_MIXTURE: exact_div(mixed_after_removal - removed_ml, n),
        ADDED_TO_FIRST: exact_div((first_ml + removed_ml) * (1 + times), n),
        ADDED_PER_CONTAINER: exact_div(mixture + n * removed_ml, n),
        REMOVED_PER_CONTAINER_TWICE: exact_div(mixture - 2 * n * removed_ml, n),
    }


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


#: The story's wordings, by the index :func:`._common_b.choose` keeps in the params.
MIXINGS = (
    "{name} mixed {j} mL of {first} with {m} as much {second}.",
    "{name} stirred {j} mL of {first} into {m} as much {second}.",
    "{name} made a batch from {j} mL of {first} and {m} as much {second}.",
)
SHARINGS = (
    "Then {removed}; the rest was poured equally into {n} {many}.",
    "Then {removed}. The rest was shared equally among {n} {many}.",
    "Then {removed}; {name} split the rest evenly into {n} {many}.",
)
QUESTIONS = ("Each {one} held", "Each {one} then held", "Each {one} contained")


def _fields(p: dict) -> dict:
    first, second, removal, one, many = p["mix"]
    return {
        "name": p["name"],
        "first": first,
        "second": second,
        "one": one,
        "many": many,
        "j": p["first_ml"],
        "n": p["containers"],
        "m": "twice" if p["times"] == 2 else f"{NUMBER_WORDS[p['times']]} times",
        "removed": removal.format(r=p["removed_ml"]),
    }


def _story(rng: random.Random, p: dict) -> str:
    f = _fields(p)
    mixing = choose(rng, p, "mixing", MIXINGS).format(**f)
    sharing = choose(rng, p, "sharing", SHARINGS).format(**f)
    question = choose(rng, p, "question", QUESTIONS).format(**f)
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
        extra_mistakes=_extra_mistakes(first_ml, times, removed_ml, n),
    )


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------
# No unit_change twin: millilitres are already the smallest unit in everyday use, and in
# litres the amounts and the answer would be decimals (the answer must be a whole number).

#: Liquid that plays no part in this batch: (sentence, the sign with which a solver who falls
#: for it moves the amount shared). The amount is a multiple of the containers, so the share
#: it moves is whole: liquid used before tempts a subtraction, liquid kept back an addition.
#: The short ones keep the longest prompts within the word limit.
IRRELEVANT_SENTENCES = (
    ("The day before, {name} had used {k} mL of {first}.", -1),
    ("Last week, {name} had spilled {k} mL of another batch.", -1),
    ("{name} kept another {k} mL of {first} in the cupboard.", 1),
    ("An unopened bottle held {k} mL of {second}.", 1),
    ("{name} had spilled {k} mL last week.", -1),
    ("The bottle still held another {k} mL.", 1),
)

#: The sharing told before the mixing, or the amount taken out before it.
REORDERED = (
    "{name} shared a batch equally among {n} {many} once {removed}. The batch was {j} mL of {first} "
    "mixed with {m} as much {second}.",
    "Before {removed}, {name} had mixed {j} mL of {first} with {m} as much {second}. The rest was "
    "poured equally into {n} {many}.",
)


#: The extra step's wordings (the shorter keeps the longest prompts within the word limit).
TOP_UPS = (
    "Each {one} was then topped up with {top} mL of {second}. Each {one} now held",
    "Each {one} then got {top} mL more {second}. Each now held",
)


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """Liquid used before or kept back: falling for it changes every container's share."""
    p = dict(problem.params)
    n = p["containers"]
    sentence, sign = rng.choice(IRRELEVANT_SENTENCES)
    k, used = irrelevant_number(rng, problem, 2 * n, 40 * n, lambda k: problem.answer + sign * (k // n), step=n)
    f = _fields(p)
    text = sentence.format(name=f["name"], first=f["first"], second=f["second"], k=k)
    return irrelevant_twin(problem, finish_ctx(insert_sentence(problem.ctx, text)), k, used)


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Every container topped up with more of the second liquid: what each then held."""
    p = dict(problem.params)
    f = _fields(p)
    each, n = problem.answer, p["containers"]
    top = 5 * rng.randint(2, 20)
    s = Steps()
    s.keep(problem.steps)
    now = s.op(f"each {f['one']} after the top-up", each, "+", top)
    pool = clean_mistakes(
        now,
        {
            **{name: v + top for name, v in problem.mistakes.items()},
            "forgot the top-up": each,
            "took the top-up out instead of adding it": each - top,
            "added the top-up twice": each + 2 * top,
            "shared one top-up among all the containers": exact_div(each * n + top, n),
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    one = f["one"]
    ctx = finish_ctx(stem + rng.choice(TOP_UPS).format(one=one, top=top, second=f["second"]))
    return replace(
        problem,
        depth=5,
        ctx=ctx,
        answer=now,
        steps=s.solution(),
        mistakes=pool,
        params={**p, "top_up": top},
        extra_mistakes={},  # the original's extra values are not this answer's mistakes
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The sharing told before the mixing, or the amount taken out first."""
    p = dict(problem.params)
    f = _fields(p)
    return replace(problem, ctx=finish_ctx(rng.choice(REORDERED).format(**f), QUESTIONS[p["question"]].format(**f)))
