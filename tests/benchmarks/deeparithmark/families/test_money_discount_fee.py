"""money_discount_fee: percent off a price, then a fee (depth 2)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "money_discount_fee"


def expected_pool(price: int, p: int, fee: int, answer: int) -> dict[str, int]:
    """Every named mistake recomputed by hand from the story's numbers."""
    assert price * p % 100 == 0
    off = price * p // 100
    sale = price - off
    both = (price + fee) * (100 - p)
    pool = {
        "forgot the fee": sale,
        "subtracted the fee instead of adding it": sale - fee,
        "added the fee twice": sale + 2 * fee,
        "ignored the discount": price + fee,
        "took the discount amount as the price": off + fee,
        "took the percentage off as dollars": price - p + fee,
        "added the discount instead of subtracting it": price + off + fee,
        "discounted the fee too": both // 100 if both % 100 == 0 else None,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    figures = check_release_rates(NAME, depth=2, mean_words=(22, 26), max_words=30)
    assert {"forgot the fee", "ignored the discount", "took the discount amount as the price"} <= figures[
        "mistake_names"
    ]


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        price, pct, fee = p.params["price"], p.params["percent_off"], p.params["fee"]
        assert p.answer == price * (100 - pct) // 100 + fee
        assert p.kind == "money" and p.unit == "$" and p.render(p.answer) == f" ${p.answer}."
        assert f"${price}" in p.ctx and f"{pct}%" in p.ctx and f"${fee}" in p.ctx
        assert p.answer % 5 != 0
        assert dict(p.mistakes) == expected_pool(price, pct, fee, p.answer)


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)
