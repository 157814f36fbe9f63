"""inventory_percent_chain: two percentage days, a delivery, then palletise (depth 5)."""

from __future__ import annotations

import re
from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "inventory_percent_chain"


def pallets(units: Fraction, k: int) -> int | None:
    """Whole pallets from ``units``; None when that is not a whole, positive count."""
    if units.denominator != 1 or units < 0 or units // k == 0:
        return None
    return int(units // k)


def expected_pool(s: int, p1: int, p2: int, d: int, k: int, answer: int) -> dict[str, int]:
    s = Fraction(s)
    sold1 = s * p1 / 100
    left1 = s - sold1
    left2 = left1 * (100 - p2) / 100
    total = left2 + d
    pool = {
        "day-2 percentage taken of the original stock": pallets(left1 - s * p2 / 100 + d, k),
        "took the day-2 percentage after the delivery": pallets((left1 + d) * (100 - p2) / 100, k),
        "stopped after day 1": pallets(left1 + d, k),
        "forgot the day-1 sales": pallets(s * (100 - p2) / 100 + d, k),
        "added the day-2 sales": pallets(left1 + left1 * p2 / 100 + d, k),
        "stopped before the delivery": pallets(left2, k),
        "subtracted the delivery": pallets(left2 - d, k),
        "kept the day-1 percentage instead of selling it": pallets(sold1 * (100 - p2) / 100 + d, k),
        "kept the day-2 percentage instead of selling it": pallets(left1 * p2 / 100 + d, k),
        "day-2 percentage taken of the day-1 sales": pallets(left1 - sold1 * p2 / 100 + d, k),
        "added the day-1 sales": pallets((s + sold1) * (100 - p2) / 100 + d, k),
        "counted the delivery twice": pallets(left2 + 2 * d, k),
        "counted the leftover as a pallet": int(-(-total // k)),
    }
    return offered(pool, answer)


def test_contract_and_rates():
    figures = check_release_rates(NAME, depth=5, mean_words=(33, 40), max_words=45, mistake_kinds=13)
    assert all(p.topic == "multi_step_inventory" for p in figures["problems"])


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        s, p1, p2, d, k = (p.params[x] for x in ("stock", "day1_pct", "day2_pct", "delivery", "pallet"))
        left2 = (s - s * p1 // 100) * (100 - p2)
        assert s * p1 % 100 == 0 and left2 % 100 == 0
        assert p.answer == (left2 // 100 + d) // k
        assert dict(p.mistakes) == expected_pool(s, p1, p2, d, k, p.answer)
        assert {str(x) for x in (s, p1, p2, d, k)} <= set(re.findall(r"\d+", p.ctx))
        assert f"{p1}%" in p.ctx and f"{p2}%" in p.ctx
        assert p.render(p.answer) == f" {p.answer} pallets."
        left1 = s - s * p1 // 100
        assert p.steps[2] == f"left after day 2: {100 - p2}% of {left1} = {left2 // 100}"


def test_key_mistakes_are_whole_numbers_in_every_draw():
    """The stock and delivery are drawn so that the wrong-base and stopped-early re-runs are
    whole counts: those mistakes exist in every draw."""
    problems, _ = draw(NAME, 200, seed=4)
    for p in problems:
        every = expected_pool(*(p.params[x] for x in ("stock", "day1_pct", "day2_pct", "delivery", "pallet")), -1)
        assert {
            "day-2 percentage taken of the original stock",
            "stopped after day 1",
            "stopped before the delivery",
            "took the day-2 percentage after the delivery",
            "forgot the day-1 sales",
        } <= set(every)


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert len({(p.params["day1_pct"], p.params["day2_pct"]) for p in problems}) >= 30
