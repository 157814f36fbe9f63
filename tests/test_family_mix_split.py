"""mix_split: mix a liquid with m times as much of another, take some out, share the rest."""

from __future__ import annotations

import re
from fractions import Fraction

from family_checks import check_family, draw

from synthprobe.seeding import item_rng
from synthprobe.tasks.deeparithmark.base import FAMILIES, roundness_class, usable_mistakes

NAME = "mix_split"


def whole(x: Fraction) -> int | None:
    return int(x) if x.denominator == 1 and x > 0 else None


def expected_pool(j: int, m: int, r: int, n: int, answer: int) -> dict[str, int]:
    j, r = Fraction(j), Fraction(r)
    mixture = j + j * m
    pool = {
        "forgot the amount taken out": whole(mixture / n),
        "added the amount taken out": whole((mixture + r) / n),
        "took the amount out twice": whole((mixture - 2 * r) / n),
        "took the amount out of every container": whole(mixture / n - r),
        "left out the first liquid": whole((j * m - r) / n),
        "counted the first liquid twice": whole((mixture + j - r) / n),
    }
    return {k: v for k, v in pool.items() if v is not None and v != answer}


def test_contract_and_rates():
    figures = check_family(NAME, expected_depth=4)
    problems = figures["problems"]
    assert figures["rejected"] < 0.05 * 400
    for r in range(4):
        assert figures["ranks"][r] >= 0.4 * len(problems), (r, figures["ranks"])
    words = [len(p.ctx.split()) for p in problems]
    assert 29 <= sum(words) / len(words) <= 35 and max(words) <= 40
    assert len(figures["mistake_names"]) == 6


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        j, m, r, n = (p.params[x] for x in ("first_ml", "times", "removed_ml", "containers"))
        assert (j + j * m - r) % n == 0 and p.answer == (j + j * m - r) // n
        assert dict(p.mistakes) == expected_pool(j, m, r, n, p.answer)
        assert {str(x) for x in (j, r, n)} <= set(re.findall(r"\d+", p.ctx))
        assert p.render(p.answer) == f" {p.answer} mL." and p.unit == "mL"
        assert p.steps[0] == f"second liquid: {j} × {m} = {j * m}"


def test_numbers_keep_every_option_in_one_roundness_class():
    """The first liquid is not a multiple of 5 and the amount taken out is: the answer and the
    mistakes therefore avoid multiples of 5, so nearly all of them can serve as options."""
    problems, _ = draw(NAME, 200, seed=4)
    assert all(roundness_class(p.answer) == 0 for p in problems)
    assert sum(len(usable_mistakes(p)) for p in problems) >= 5 * len(problems)


def test_deterministic_and_varied():
    gen = FAMILIES[NAME].generate
    assert gen(item_rng("t", 5, 1)) == gen(item_rng("t", 5, 1))
    assert gen(item_rng("t", 5, 1)) != gen(item_rng("t", 5, 2))
    problems, _ = draw(NAME, 150, seed=9)
    assert len({p.ctx for p in problems}) == len(problems)
    assert len({p.params["mix"] for p in problems}) >= 6
