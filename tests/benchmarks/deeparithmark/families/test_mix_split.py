"""mix_split: mix a liquid with m times as much of another, take some out, share the rest."""

from __future__ import annotations

import re
from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered, whole

from synthprobe.benchmarks.deeparithmark.base import roundness_class, usable_mistakes

NAME = "mix_split"


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
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=4, mean_words=(29, 35), max_words=40, mistake_kinds=6)


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
    problems = check_deterministic_and_varied(NAME)
    assert len({p.params["mix"] for p in problems}) >= 6
