"""inventory_boxes: receive, ship, discard damaged units, pack into crates (depth 4)."""

from __future__ import annotations

import re

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

from synthprobe.benchmarks.deeparithmark.base import usable_mistakes

NAME = "inventory_boxes"


def crates(units: int, size: int) -> int | None:
    """Whole crates packed from ``units`` (None when there is nothing to pack)."""
    return units // size if units >= 0 and units // size > 0 else None


def expected_pool(s: int, d: int, h: int, g: int, k: int, answer: int) -> dict[str, int]:
    good = s + d - h - g
    pool = {
        "forgot the damaged units": crates(s + d - h, k),
        "added the damaged units": crates(s + d - h + g, k),
        "subtracted the damaged units twice": crates(good - g, k),
        "forgot the shipped units": crates(s + d - g, k),
        "added the shipped units": crates(s + d + h - g, k),
        "subtracted the shipped units twice": crates(good - h, k),
        "forgot the delivery": crates(s - h - g, k),
        "subtracted the delivery": crates(s - d - h - g, k),
        "counted the loose units as a crate": -(-good // k),
    }
    return offered(pool, answer)


def test_contract_and_rates():
    figures = check_release_rates(NAME, depth=4, mean_words=(29, 35), max_words=40, mistake_kinds=9)
    assert all(p.topic == "multi_step_inventory" for p in figures["problems"])


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        s, d, h, g, k = (p.params[x] for x in ("stock", "delivery", "shipped", "damaged", "size"))
        assert p.answer == (s + d - h - g) // k
        assert dict(p.mistakes) == expected_pool(s, d, h, g, k, p.answer)
        assert {str(x) for x in (s, d, h, g, k)} <= set(re.findall(r"\d+", p.ctx))
        assert p.render(p.answer) == f" {p.answer} {p.params['box']}."
        assert p.steps[-1].startswith(f"full {p.params['box']}: {s + d - h - g} / {k} = ")
        # every movement is worth 2 to 10 crates: the mistakes stay near the answer
        assert all(2 * k < x <= 10 * k for x in (d, h)) and 2 * k < g <= 5 * k
        assert all(abs(v - p.answer) <= 21 for v in p.mistakes.values())


def test_the_card_example():
    """The release card's worked item: 420 + 260 − 210 − 40 = 430, 430 // 16 = 26."""
    pool = expected_pool(420, 260, 210, 40, 16, 26)
    assert pool["forgot the damaged units"] == 29 and pool["added the damaged units"] == 31
    assert pool["counted the loose units as a crate"] == 27  # kept in the pool ...
    fake = type("P", (), {"answer": 26, "mistakes": pool, "kind": "count"})
    assert "counted the loose units as a crate" not in usable_mistakes(fake)  # ... never shown


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert len({p.params["goods"] for p in problems}) >= 8
