"""mix_split: mix a liquid with m times as much of another, take some out, share the rest."""

from __future__ import annotations

import re
from fractions import Fraction

from family_checks import (
    check_deterministic_and_varied,
    check_extra_mistakes,
    check_release_rates,
    check_twins_keep_the_extra_mistakes,
    draw,
    family_twins,
    offered,
    whole,
)

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


def expected_extra(j: int, m: int, r: int, n: int) -> dict[str, int]:
    """Each extra mistake redone by hand on the totals (all multiples of ``n``)."""
    return {
        # mixture + r + r: the sign slip and the second removal together
        "added the amount taken out twice": (j + j * m + r + r) // n,
        # the spill taken from the first liquid, then m times that much of the second
        "took the amount out of the first liquid before mixing": ((j - r) + (j - r) * m) // n,
        "took the amount out of the first liquid before mixing and again after": ((j - r) + (j - r) * m - r) // n,
        "added the amount to the first liquid before mixing": ((j + r) + (j + r) * m) // n,
        # the whole amount added to, or twice taken out of, each container's share of the mixture
        "added the amount to every container": (j + j * m) // n + r,
        "took the amount out of every container twice": (j + j * m) // n - r - r,
    }


def test_extra_mistakes_recomputed_from_params():
    problems = check_extra_mistakes(
        NAME,
        ("first_ml", "times", "removed_ml", "containers"),
        expected_pool,
        lambda j, m, r, n, answer: expected_extra(j, m, r, n),
    )
    assert all(
        p.params["first_ml"] % p.params["containers"] == 0 == p.params["removed_ml"] % p.params["containers"]
        for p in problems
    )


def test_twins_that_change_the_numbers_drop_the_extra_mistakes():
    for _, _, t in family_twins(NAME, ("one_step_more",)):
        assert dict(t.extra_mistakes) == {}
    check_twins_keep_the_extra_mistakes(NAME)
