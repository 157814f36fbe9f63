"""A total, a share taken out, the rest split equally again (depth 3)."""

from __future__ import annotations

import random
from dataclasses import replace
from fractions import Fraction
from functools import cache
from math import gcd

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
from ._common_a import NAMES, clean_mistakes, exact_div, pick

NAME = "share_then_split"

#: Fractions taken out first, as (numerator, denominator); the rest is what gets split.
FRACTIONS = ((1, 2), (1, 3), (1, 4), (3, 4), (1, 5), (2, 5), (3, 5), (1, 6), (1, 8), (3, 8), (5, 8), (3, 10), (7, 10))
PERCENTS = (10, 15, 20, 25, 30, 35, 40, 45, 55, 60, 65)

#: (template, kind, unit noun, answer range); ``{share}`` is "3/8" or "35%". The ranges reach
#: well past the usual share: the decoys that skip the split (the rest, the whole total split)
#: run to several times the answer, so answers capped near the bottom of that range would leave
#: its upper half, and its leading digits, to the decoys alone.
STORIES = (
    (
        "{name} won a ${total} prize in a raffle, gave {share} of it to a local charity, and shared "
        "the rest equally among {n} cousins. Each cousin received",
        "money",
        (),
        (12, 999),
    ),
    (
        "A sports club raised ${total} at its summer fair. {share_cap} of the money paid the hall "
        "rent, and the rest was split equally between {n} youth teams. Each team got",
        "money",
        (),
        (12, 999),
    ),
    (
        "{name} earned ${total} at a weekend market stall, kept {share} of it for new stock, and paid "
        "the rest equally to {n} helpers. Each helper was paid",
        "money",
        (),
        (12, 850),
    ),
    (
        "Teacher {name} had a box of {total} {noun}. {share_cap} of them went to the art room, and "
        "the rest were shared equally among {n} tables. Each table got",
        "count",
        ("stickers", "pencils", "badges", "markers"),
        (11, 320),
    ),
    (
        "A farmer picked {total} {noun} in the orchard, sold {share} of them at the market, and split "
        "the rest equally among {n} neighbours. Each neighbour received",
        "count",
        ("apples", "pears", "plums", "peaches"),
        (11, 320),
    ),
    (
        "{name} baked {total} biscuits for the school fair, kept {share} of them for the family, and "
        "packed the rest equally into {n} tins. Each tin held",
        "count",
        ("biscuits",),
        (11, 240),
    ),
)


def _share_text(form: str, num: int, den: int) -> str:
    if form == "percent":
        return f"{fmt_num(Fraction(100 * num, den))}%"
    return "half" if (num, den) == (1, 2) else f"{num}/{den}"


@cache
def _answers(step: int, lo: int, hi: int) -> tuple[int, ...]:
    """The multiples of ``step`` from ``lo`` to ``hi`` that are off the multiples of 5."""
    return tuple(a for a in range(step * (-(-lo // step)), hi + 1, step) if a % 5)


@register(NAME, topic=NAME, depth=3)
def generate(rng: random.Random) -> Problem:
    """A share of a total taken out, the rest split equally."""
    template, kind, nouns, (lo, hi) = pick(rng, STORIES)
    noun = pick(rng, nouns) if nouns else ""
    name = pick(rng, NAMES)
    form, pc, num, den, n, step = _draw_share(rng, lo, hi)
    answer = pick(rng, _answers(step, lo, hi))
    total = answer * n * den // (den - num)

    s = Steps()
    money = kind == "money"
    if form == "fraction" and num == 1:
        share = s.op("first share", total, "/", den)
    else:
        share = s.pct("first share", Fraction(100 * num, den), total, money=money)
    rest = s.op("the rest", total, "-", share, money=money)
    each = s.op("each equal part", rest, "/", n)
    require(each == answer, "the chain must reproduce the drawn answer")

    mistakes = _named_mistakes(answer, total, share, rest, n, form, pc, num, den)
    text = _share_text(form, num, den)
    ctx = template.format(
        name=name, total=fmt_num(total), share=text, noun=noun, share_cap=text[0].upper() + text[1:], n=n
    )
    ending = " ${}." if money else f" {{}} {noun}."
    return Problem(
        family=NAME,
        topic=NAME,
        depth=3,
        ctx=ctx,
        answer=answer,
        unit="$" if money else noun,
        ending=ending,
        steps=s.solution(),
        mistakes=mistakes,
        kind=kind,
        params={
            "total": total,
            "share_numerator": num,
            "share_denominator": den,
            "share_form": form,
            "parts": n,
            "noun": noun,
            "name": name,
            "story": [st[0] for st in STORIES].index(template),
        },
        extra_mistakes=_extra_mistakes(answer, total, share, n),
    )


def _draw_share(rng: random.Random, lo: int, hi: int) -> tuple[str, int, int, int, int, int]:
    """The share (a percentage or a fraction num/den), the number of parts n and the ``step``
    the answer is a multiple of: (form, percent, num, den, n, step)."""
    # Draw the share and the number of parts, then an answer that is a multiple of ``step``:
    # (den - num) | answer makes the total and the split-the-wrong-amount mistakes whole;
    # folding in n + 1 and den (when that keeps the answer off the multiples of 5, the
    # commonest roundness class) makes the off-by-one divisor and doubled-fraction mistakes
    # whole too, so the pool has values on both sides of the answer.
    for _ in range(30):
        if rng.random() < 0.4:
            form, pc = "percent", pick(rng, PERCENTS)
            num, den = pc // gcd(pc, 100), 100 // gcd(pc, 100)
        else:
            form, pc = "fraction", 0
            num, den = pick(rng, FRACTIONS)
        n = rng.randint(3, 9)
        step = den - num
        for extra in (n + 1, den):
            wider = step * extra // gcd(step, extra)
            if wider % 5 and 3 * wider <= hi:
                step = wider
        if step % 5 and hi // step > lo // step:
            break
    else:
        require(False, "no share and group size give a whole answer")
    return form, pc, num, den, n, step


def _named_mistakes(answer, total, share, rest, n: int, form: str, pc: int, num: int, den: int) -> dict:
    """The legacy named mistakes, each the exact value it gives (whole and positive ones kept)."""
    wrong_fraction = (
        Fraction(total - pc, n) if form == "percent" else Fraction(total - Fraction(total, den), n) if num > 1 else None
    )
    return clean_mistakes(
        answer,
        {
            "stopped before splitting the rest": rest,
            "split the whole total": exact_div(total, n),
            "gave the first share as the answer": share,
            "split the first share instead of the rest": exact_div(share, n),
            "divided the rest by one more than the number of parts": exact_div(rest, n + 1),
            "divided the rest by one fewer than the number of parts": exact_div(rest, n - 1),
            (
                "took the percentage as an amount"
                if form == "percent"
                else "took one part of the fraction instead of several"
            ): wrong_fraction,
            "took the first share off one equal part": Fraction(total, n) - share,
            "applied the fraction again to each part": answer - Fraction(answer * num, den),
            "took the first share off twice": Fraction(total - 2 * share, n),
            "divided by the number of parts twice": Fraction(answer, n),
        },
    )


def _extra_mistakes(answer, total, share, n: int) -> dict:
    # more named mistakes for the role-balanced groups (``Problem.extra_mistakes``). The legacy
    # ones move the key by fixed ratios; these pair the off-by-one divisor with the share split
    # instead of the rest and with the whole total split, so that the problems told with the
    # same total, the complementary share or one part more or fewer (whose keys are these
    # values) offer the key back among their own mistakes
    extra = {
        "split the first share among one more than the number of parts": exact_div(share, n + 1),
        "split the first share among one fewer than the number of parts": exact_div(share, n - 1),
        "split the first share and divided by the number of parts twice": exact_div(share, n * n),
        "added the first share instead of taking it off": exact_div(total + share, n),
        "split the whole total among one more than the number of parts": exact_div(total, n + 1),
        "split the whole total among one fewer than the number of parts": exact_div(total, n - 1),
        "took the first share off twice and divided by one more than the number of parts": exact_div(
            total - 2 * share, n + 1
        ),
        "took the first share off twice and divided by one fewer than the number of parts": exact_div(
            total - 2 * share, n - 1
        ),
    }

    return {k: v for k, v in extra.items() if v is not None and v > 0 and v != answer}


# ---------------------------------------------------------------------------------------
# Perturbation twins (synthprobe.benchmarks.deeparithmark.twins): the drawn problem retold
# ---------------------------------------------------------------------------------------

# No unit_change twin: half the stories share out objects (stickers, apples, biscuits) that
# have no other unit, and a twin kind is offered for every story of a family or for none.

#: Per story (STORIES order): (a sentence that tempts adding its number to the total, one
#: that tempts taking it off), each about something other than what is shared.
IRRELEVANT_SENTENCES = (
    ("{name} had also won ${x} in a raffle the year before.", "That month, a car repair cost {name} ${x}."),
    (
        "The club's winter fair had raised ${x} the year before.",
        "Running the fair had cost ${x}, paid from club funds.",
    ),
    ("The weekend before, the stall had earned ${x}.", "{name}'s rent that month was ${x}."),
    ("A second box, of {x} {noun}, was kept for next term.", "{x} of the {noun} in the box were blue."),
    ("A neighbour's orchard gave {x} {noun} that day.", "{x} of the {noun} were a little smaller than the rest."),
    ("A friend baked {x} biscuits for another stall.", "{x} of the biscuits were chocolate ones."),
)

#: Per story: each part loses an amount after the split (the new closing stem).
ONE_STEP_MORE = (
    "Each cousin then spent ${c} of it, leaving each cousin with",
    "Each team then spent ${c} on kit, leaving each team with",
    "Each helper then spent ${c} on lunch, leaving each helper with",
    "Each table then gave {c} {noun} back, leaving each table with",
    "Each neighbour then ate {c} of the {noun}, leaving each neighbour with",
    "{name} then took {c} biscuits out of each tin, leaving each tin with",
)

#: Per story: the equal split told first, the share taken out after it (the same operations).
REORDERED = (
    "{name} shared the rest of a ${total} raffle prize equally among {n} cousins, after giving "
    "{share} of it to a local charity. Each cousin received",
    "A sports club split the rest of the ${total} raised at its summer fair equally between {n} "
    "youth teams, after {share} of it paid the hall rent. Each team got",
    "{name} paid the rest of the ${total} earned at a weekend market stall equally to {n} helpers, "
    "after keeping {share} of it for new stock. Each helper was paid",
    "Teacher {name} shared the rest of a box of {total} {noun} equally among {n} tables, after "
    "{share} of them went to the art room. Each table got",
    "A farmer split the rest of the {total} {noun} picked in the orchard equally among {n} "
    "neighbours, after selling {share} of them at the market. Each neighbour received",
    "{name} packed the rest of the {total} biscuits baked for the school fair equally into {n} "
    "tins, after keeping {share} of them for the family. Each tin held",
)


def _text(p: dict) -> str:
    return _share_text(p["share_form"], p["share_numerator"], p["share_denominator"])


@twin(NAME, "irrelevant_clause")
def with_irrelevant_clause(problem: Problem, rng: random.Random) -> Problem:
    """An amount beside the shared total: falling for it adds it to, or takes it off, the total
    before the share and the split."""
    p = dict(problem.params)
    total, num, den, parts = p["total"], p["share_numerator"], p["share_denominator"], p["parts"]
    # a multiple of this keeps the tempting value whole: (total ± x)(den - num) / (den parts)
    unit = den * parts // gcd(den - num, den * parts)
    taken = set(problem.mistakes.values())
    options = []  # (x, sign, tempting value), the value a usable decoy of its own
    for j in range(1, int(0.6 * total) // unit + 1):
        x = unit * j
        for sign in (1, -1):
            value = exact_div((total + sign * x) * (den - num), den * parts)
            if x >= 10 and value and value % 5 and abs(value - problem.answer) >= 2 and value not in taken:
                options.append((x, sign, value))
    # amounts up to 30 % of the total where one serves, else up to 60 %
    options = [o for o in options if o[0] <= 0.3 * total] or options
    require(bool(options), "no whole irrelevant amount fits the total")
    x, sign, value = pick(rng, options)
    sentence = IRRELEVANT_SENTENCES[p["story"]][0 if sign > 0 else 1]
    return irrelevant_twin(
        problem, insert_sentence(problem.ctx, sentence.format(name=p["name"], noun=p["noun"], x=fmt_num(x))), x, value
    )


@twin(NAME, "one_step_more")
def with_one_step_more(problem: Problem, rng: random.Random) -> Problem:
    """Each part then loses an amount: what each part is left with."""
    p = dict(problem.params)
    each, parts = problem.answer, p["parts"]
    cs = list(range(5, min(each - 6, 60) + 1, 5))
    require(bool(cs), "the part is too small to take from")
    c = pick(rng, cs)
    s = Steps()
    s.keep(problem.steps)
    left = s.op("left in each part", each, "-", c, money=problem.kind == "money")
    rest = each * parts
    mistakes = clean_mistakes(
        left,
        {
            **{name: v - c for name, v in problem.mistakes.items()},
            "added the amount instead of taking it off": each + c,
            "took the amount off the rest before splitting it": exact_div(rest - c, parts),
            "took the amount off twice": each - 2 * c,
        },
    )
    stem = problem.ctx[: last_sentence_start(problem.ctx)]
    closing = ONE_STEP_MORE[p["story"]].format(name=p["name"], noun=p["noun"], c=c)
    return replace(
        problem,
        depth=4,
        ctx=f"{stem}{closing}",
        answer=left,
        steps=s.solution(),
        mistakes=mistakes,
        params={**p, "taken": c},
        extra_mistakes={},
    )


@twin(NAME, "reordered")
def reordered(problem: Problem, rng: random.Random) -> Problem:
    """The equal split told before the share taken out."""
    p = dict(problem.params)
    ctx = REORDERED[p["story"]].format(
        name=p["name"], total=fmt_num(p["total"]), noun=p["noun"], n=p["parts"], share=_text(p)
    )
    return replace(problem, ctx=ctx)
