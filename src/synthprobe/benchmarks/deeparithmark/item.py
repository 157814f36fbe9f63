"""One Deep Arithmark item from a drawn problem: the decoy sets that put its answer at a rank
(:func:`decoy_sets`) and the item's JSON object with the answer at a slot (:func:`make_item`).

The builder (:mod:`.build`) draws problems and calls these; the family preflight
(:mod:`.plugins`) calls them on a family from outside the package before any build, so both
make items the same way without importing each other.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping

from synthprobe.benchmarks.deeparithmark.base import Problem, render_value, usable_mistakes
from synthprobe.benchmarks.deeparithmark.checks import CORRECT, activity_label, source_id
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS

DecoySet = tuple[tuple[str, int], ...]


def decoy_sets(
    problem: Problem, rank: int, usable: Mapping[str, int] | None = None, *, required: str | None = None
) -> tuple[int, list[DecoySet]]:
    """The decoy triples that put the answer at ``rank``, keeping only those with the fewest
    endings whose length differs from the answer's; returns ``(that number, the sets)``.

    Sets list the mistakes below the answer, then those above, in the family's order, so
    the list (and the RNG's choice from it) is deterministic. No set: ``(N_OPTIONS, [])``.
    ``usable``: :func:`usable_mistakes` of ``problem`` when the caller already has it.
    ``required``: only the sets holding the mistake of that name compete (a perturbation twin's
    irrelevant-number decoy, which must be shown even where it is the one off-length ending).
    """
    if usable is None:
        usable = usable_mistakes(problem)
    answer, render = problem.answer, problem.render
    width = len(render(answer))
    below, above = [], []  # (name, value) on each side of the answer, in the family's order
    below_off, above_off = [], []  # 1 where that ending's length differs from the answer's
    for name, v in usable.items():
        if v != answer:
            if v < answer:
                below.append((name, v))
                below_off.append(len(render(v)) != width)
            else:
                above.append((name, v))
                above_off.append(len(render(v)) != width)
    # each side's combinations with their off-length count, in itertools order (the
    # combinations of the flags run in step with those of the mistakes)
    combinations = itertools.combinations
    lows = list(zip(combinations(below, rank), map(sum, combinations(below_off, rank))))
    hi_n = N_OPTIONS - 1 - rank
    highs = list(zip(combinations(above, hi_n), map(sum, combinations(above_off, hi_n))))
    best, out = N_OPTIONS, []
    for lo, lo_off in lows:
        for hi, hi_off in highs:
            if required is not None and all(name != required for name, _ in lo + hi):
                continue
            off = lo_off + hi_off
            if off < best:
                best, out = off, [lo + hi]
            elif off == best:
                out.append(lo + hi)
    return best, out


def make_item(
    problem: Problem, decoys: list[DecoySet], *, template: str, ind: int, slot: int, rank: int, rng: random.Random
) -> dict:
    """Pick one of the decoy sets, place the answer at ``slot`` and return the item."""
    chosen = list(rng.choice(decoys))
    rng.shuffle(chosen)
    options: list[tuple[str, int]] = chosen[:slot] + [(CORRECT, problem.answer)] + chosen[slot:]
    return item_json(problem, options, template=template, ind=ind, slot=slot, rank=rank)


def item_json(
    problem: Problem, options: list[tuple[str, int]], *, template: str, ind: int, slot: int, rank: int
) -> dict:
    """The item's JSON object for ``options`` (``(source, value)`` in slot order, the answer at
    ``slot`` under the source :data:`CORRECT`)."""
    values = [v for _, v in options]
    depth = problem.depth
    return {
        "ind": ind,
        "activity_label": activity_label(problem.topic, depth),
        "ctx": problem.ctx,
        "endings": [problem.render(v) for v in values],
        "label": str(slot),
        "source_id": source_id(template, depth, ind),
        "split": "test",
        "split_type": "synthetic",
        "metadata": {
            "answer": render_value(problem.answer, problem.kind),
            "unit": problem.unit,
            "topic": problem.topic,
            "depth": depth,
            "option_values": values,
            "option_sources": [name for name, _ in options],
            "answer_rank": rank,
            "solution_steps": list(problem.steps),
            "template": template,
        },
    }
