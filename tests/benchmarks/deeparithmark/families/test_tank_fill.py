"""tank_fill: fill a tank at one rate, drain it at another, the volume left (depth 4)."""

from __future__ import annotations

import re

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

from synthprobe.benchmarks.deeparithmark.base import roundness_class, usable_mistakes

NAME = "tank_fill"


def expected_pool(v: int, f: int, t1: int, d: int, t2: int, answer: int) -> dict[str, int]:
    pool = {
        "forgot the draining": v + f * t1,
        "added the drained water": v + f * t1 + d * t2,
        "drained for the filling time": v + f * t1 - d * t1,
        "filled for the draining time": v + f * t2 - d * t2,
        "swapped the two rates": v + d * t1 - f * t2,
        "drained during the filling too": v + f * t1 - d * (t1 + t2),
        "kept filling during the draining": v + f * (t1 + t2) - d * t2,
        "drained at the filling rate": v + f * t1 - f * t2,
        "filled at the draining rate": v + d * t1 - d * t2,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=4, mean_words=(29, 35), max_words=40, mistake_kinds=9)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        v, f, t1, d, t2 = (p.params[x] for x in ("start", "fill_rate", "fill_min", "drain_rate", "drain_min"))
        assert p.answer == v + f * t1 - d * t2 >= 30
        assert dict(p.mistakes) == expected_pool(v, f, t1, d, t2, p.answer)
        assert {str(x) for x in (v, f, t1, d, t2)} <= set(re.findall(r"\d+", p.ctx))
        assert p.render(p.answer) == f" {p.answer} litres."
        assert d < f and t1 != t2


def test_every_option_that_keeps_the_start_volume_avoids_multiples_of_5():
    problems, _ = draw(NAME, 200, seed=4)
    for p in problems:
        assert p.params["start"] % 5 and roundness_class(p.answer) == 0
        assert all(roundness_class(v) == 0 for v in p.mistakes.values())
        assert len(usable_mistakes(p)) >= 4


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert len({p.params["vessel"] for p in problems}) >= 6


def test_extra_mistakes_recomputed_from_params():
    """The role-balanced groups' extra mistakes, each redone by hand; the legacy pool unchanged."""
    problems, _ = draw(NAME, 300, seed=5)
    assert len(problems) > 250
    for p in problems:
        v, f, t1, d, t2 = (p.params[x] for x in ("start", "fill_rate", "fill_min", "drain_rate", "drain_min"))
        assert dict(p.mistakes) == expected_pool(v, f, t1, d, t2, p.answer)
        extra = {
            # the drain taken off a second time after the correct end volume
            "took the drained water off twice": v + f * t1 - d * t2 - d * t2,
            # the filling left out: the start volume less the drained water
            "forgot the water added": v - d * t2,
            # the filled water added a second time
            "counted the water added twice": v + f * t1 + f * t1 - d * t2,
        }
        assert dict(p.extra_mistakes) == offered(extra, p.answer)
        assert not set(p.extra_mistakes) & set(p.mistakes)
