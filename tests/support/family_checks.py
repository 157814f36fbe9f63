"""Checks every Deep Arithmark family test runs on many draws of its generator."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from synthprobe.benchmarks.deeparithmark.base import FAMILIES, GenerationError, Problem, feasible_ranks, usable_mistakes
from synthprobe.benchmarks.deeparithmark.steps import check_chain
from synthprobe.seeding import item_rng

#: Longest prompt the release allows, in words.
MAX_WORDS = 45


def _registered(name: str):
    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers all families)

    return FAMILIES[name]


def whole(x: Fraction) -> int | None:
    """``x`` as an int when it is a whole, positive number, else None (not a usable option)."""
    return int(x) if x.denominator == 1 and x > 0 else None


def offered(pool: dict[str, int | None], answer: int) -> dict[str, int]:
    """The hand-computed mistakes a problem can offer: those with a positive whole value other
    than the answer (None marks a mistake that gives no whole number)."""
    return {k: v for k, v in pool.items() if v is not None and v > 0 and v != answer}


def draw(name: str, n: int = 400, seed: int = 7) -> tuple[list[Problem], int]:
    """``n`` attempts of the family's generator; returns the problems and the rejected count."""
    fam = _registered(name)
    problems, rejected = [], 0
    for i in range(n):
        try:
            problems.append(fam.generate(item_rng(f"test/{name}", seed, i)))
        except GenerationError:
            rejected += 1
    return problems, rejected


def check_family(name: str, *, expected_depth: int, n: int = 400) -> dict:
    """Assert the family contract on ``n`` draws; return figures for further assertions."""
    fam = _registered(name)
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


def check_release_rates(
    name: str,
    *,
    depth: int,
    mean_words: tuple[float, float],
    max_words: int,
    rank_share: float | tuple[float, ...] = 0.4,
    max_rejected: float = 0.05,
    mistake_kinds: int | None = None,
    n: int = 400,
) -> dict:
    """The family contract plus the release's rates on ``n`` draws: under ``max_rejected`` of
    the draws rejected, each answer rank feasible in at least ``rank_share`` of the problems
    (one share for all four ranks, or one per rank), and the prompt's mean length in words
    within ``mean_words`` with none longer than ``max_words``; with ``mistake_kinds``, exactly
    that many distinct named mistakes over all draws. Returns ``check_family``'s
    figures for the family's own assertions."""
    figures = check_family(name, expected_depth=depth, n=n)
    problems = figures["problems"]
    assert figures["rejected"] < max_rejected * n, (name, figures["rejected"], n)
    shares = rank_share if isinstance(rank_share, tuple) else (rank_share,) * 4
    assert len(shares) == 4
    for r, share in enumerate(shares):
        assert figures["ranks"][r] >= share * len(problems), (r, figures["ranks"])
    words = [len(p.ctx.split()) for p in problems]
    mean = sum(words) / len(words)
    assert mean_words[0] <= mean <= mean_words[1] and max(words) <= max_words, (name, mean, max(words))
    if mistake_kinds is not None:
        assert len(figures["mistake_names"]) == mistake_kinds, sorted(figures["mistake_names"])
    return figures


def check_deterministic_and_varied(name: str, *, may_reject: bool = False) -> list[Problem]:
    """The same per-item RNG gives the same problem and another index a different one; with
    ``may_reject`` the family may reject a draw, and then must reject it the same way each
    time, with at least 6 of the first 8 draws accepted. 150 draws all tell different
    stories; they are returned for the family's own variety checks."""
    gen = _registered(name).generate
    if may_reject:

        def outcome(i: int):
            try:
                return gen(item_rng("t", 5, i))
            except GenerationError as exc:
                return f"rejected: {exc}"

        first = [outcome(i) for i in range(8)]
        assert first == [outcome(i) for i in range(8)]  # same seed, same problem (or rejection)
        assert sum(not isinstance(x, str) for x in first) >= 6
    else:
        assert gen(item_rng("t", 5, 1)) == gen(item_rng("t", 5, 1))
        assert gen(item_rng("t", 5, 1)) != gen(item_rng("t", 5, 2))
    problems, _ = draw(name, 150, seed=9)
    assert len({p.ctx for p in problems}) == len(problems)
    return problems


def check_extra_mistakes(name: str, keys, pool, extra, *, n: int = 400, seed: int = 5, at_least: int = 300):
    """On ``n`` draws of the family: its ``extra_mistakes`` are ``extra(*params, answer)`` and its
    ``mistakes`` ``pool(*params, answer)`` (the legacy pool untouched), each recomputed by hand
    from the draw's ``params[k]`` for ``k`` in ``keys``; the two share no name. Returns the draws."""
    problems, _ = draw(name, n, seed=seed)
    assert len(problems) > at_least
    for p in problems:
        values = [p.params[k] for k in keys]
        assert dict(p.extra_mistakes) == extra(*values, p.answer), values
        assert dict(p.mistakes) == pool(*values, p.answer), values
        assert not set(p.extra_mistakes) & set(p.mistakes)
    return problems


def family_twins(name: str, kinds, *, n: int = 40, seed: int = 6):
    """``(problem, kind, twin)`` for each of ``n`` draws and each twin kind that accepts it."""
    from synthprobe.benchmarks.deeparithmark.base import TWINS

    problems, _ = draw(name, n, seed=seed)
    for i, p in enumerate(problems):
        for kind in kinds:
            try:
                yield p, kind, TWINS[(name, kind)](p, item_rng("test/twin", i, kind))
            except GenerationError:  # a twin may reject its draw
                continue


def check_twins_keep_the_extra_mistakes(name: str, *, n: int = 40, seed: int = 6) -> None:
    """The twins that keep the answer (an irrelevant clause, the story reordered) keep the extra
    mistakes as they are."""
    for p, _, t in family_twins(name, ("irrelevant_clause", "reordered"), n=n, seed=seed):
        assert t.answer == p.answer and t.extra_mistakes == p.extra_mistakes
