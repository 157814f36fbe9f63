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


def test_extra_mistakes_recomputed_from_params():
    """The role-balanced groups' extra mistakes, each redone by hand; the legacy pool unchanged."""
    problems, _ = draw(NAME, 300, seed=11)
    assert len(problems) > 250
    for p in problems:
        h1, r1, h2, r2 = (p.params[k] for k in ("hours1", "rate1", "hours2", "rate2"))
        assert dict(p.mistakes) == expected_pool(h1, r1, h2, r2, p.answer)
        extra = {
            # the second block's hours paid at the first rate as well as at the second
            "paid the second block at both rates": h1 * r1 + h2 * r1 + h2 * r2,
            "paid the first block at both rates": h1 * r1 + h1 * r2 + h2 * r2,
            "swapped the rates and paid the second block at both rates": h1 * r2 + h2 * r2 + h2 * r1,
            "swapped the rates and paid the first block at both rates": h1 * r2 + h1 * r1 + h2 * r1,
        }
        if h1 > h2:  # the first block's hours read as the total hours, the second block's taken out
            extra["took the second block's hours out of the first block's"] = (h1 - h2) * r1 + h2 * r2
            extra["swapped the rates and took the second block's hours out of the first block's"] = (
                h1 - h2
            ) * r2 + h2 * r1
        else:
            extra["took the first block's hours out of the second block's"] = h1 * r1 + (h2 - h1) * r2
            extra["swapped the rates and took the first block's hours out of the second block's"] = (
                h1 * r2 + (h2 - h1) * r1
            )
        assert dict(p.extra_mistakes) == offered(extra, p.answer)
        assert not set(p.extra_mistakes) & set(p.mistakes)
