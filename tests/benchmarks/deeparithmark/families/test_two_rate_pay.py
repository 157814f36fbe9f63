"""two_rate_pay: hours at one rate plus hours at another give the total pay (depth 3)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "two_rate_pay"


def expected_pool(h1: int, r1: int, h2: int, r2: int, answer: int) -> dict[str, int]:
    hours, rates = h1 + h2, r1 + r2
    pool = {
        "paid every hour at the first rate": hours * r1,
        "paid every hour at the second rate": hours * r2,
        "left out the second block of hours": h1 * r1,
        "left out the first block of hours": h2 * r2,
        "swapped the two rates": h1 * r2 + h2 * r1,
        "averaged the two rates": hours * rates // 2 if hours * rates % 2 == 0 else None,
        "counted the second block twice": h1 * r1 + 2 * h2 * r2,
        "multiplied all the hours by both rates added": hours * rates,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=3, mean_words=(26, 31), max_words=40)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        h1, r1, h2, r2 = (p.params[k] for k in ("hours1", "rate1", "hours2", "rate2"))
        assert p.answer == h1 * r1 + h2 * r2 and p.answer % 5 != 0
        assert p.kind == "money" and p.render(p.answer) == f" ${p.answer}."
        assert f"${r1}" in p.ctx and f"${r2}" in p.ctx and f"{h1} hours" in p.ctx
        # the hours are not money: only the final sum is written in dollars
        assert "$" not in p.steps[0] and "$" not in p.steps[1] and p.steps[2].startswith("total pay: $")
        assert dict(p.mistakes) == expected_pool(h1, r1, h2, r2, p.answer)
        if p.params["shifts"][1] in ("on the weekend", "on night shifts", "in overtime"):
            assert r2 > r1


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)
