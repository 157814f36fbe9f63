"""Checks every Deep Arithmark family test runs on many draws of its generator."""

from __future__ import annotations

from collections import Counter

from synthprobe.seeding import item_rng
from synthprobe.tasks.deeparithmark.base import (FAMILIES, GenerationError, Problem,
                                                 feasible_ranks, usable_mistakes)
from synthprobe.tasks.deeparithmark.steps import check_chain

#: Longest prompt the release allows, in words.
MAX_WORDS = 45


def draw(name: str, n: int = 400, seed: int = 7) -> tuple[list[Problem], int]:
    """``n`` attempts of the family's generator; returns the problems and the rejected count."""
    fam = FAMILIES[name]
    problems, rejected = [], 0
    for i in range(n):
        try:
            problems.append(fam.generate(item_rng(f"test/{name}", seed, i)))
        except GenerationError:
            rejected += 1
    return problems, rejected


def check_family(name: str, *, expected_depth: int, n: int = 400) -> dict:
    """Assert the family contract on ``n`` draws; return figures for further assertions."""
    import synthprobe.tasks.deeparithmark.families  # noqa: F401  (registers all families)

    fam = FAMILIES[name]
    assert fam.depth == expected_depth
    problems, rejected = draw(name, n)
    assert rejected < n * 0.5, f"{name}: {rejected}/{n} draws rejected"
    rank_ok = Counter()
    names = set()
    for p in problems:
        assert p.family == name and p.topic == fam.topic and p.depth == expected_depth
        assert len(p.steps) == p.depth, (p.steps, p.depth)
        check_chain(p.steps, p.answer)
        assert isinstance(p.answer, int) and p.answer > 0
        assert len(p.mistakes) >= 4, p.mistakes
        for mname, value in p.mistakes.items():
            assert isinstance(value, int) and not isinstance(value, bool), (mname, value)
            names.add(mname)
        words = p.ctx.split()
        assert len(words) <= MAX_WORDS, (len(words), p.ctx)
        assert p.ctx == p.ctx.strip() and not p.ctx.endswith(".")
        assert p.unit in p.render(p.answer) or p.kind == "clock"
        # endings differ only in the number
        usable = usable_mistakes(p)
        rendered = {p.render(v) for v in [p.answer, *usable.values()]}
        assert len(rendered) == len(usable) + 1
        for v in usable.values():
            assert abs(v - p.answer) != 1
        for r in feasible_ranks(p):
            rank_ok[r] += 1
    # each answer rank must be reachable often enough that the builder rarely redraws
    for r in range(4):
        assert rank_ok[r] >= 0.15 * len(problems), f"{name}: rank {r} feasible in only {rank_ok[r]}/{len(problems)}"
    return {"problems": problems, "rejected": rejected, "ranks": rank_ok, "mistake_names": names}
