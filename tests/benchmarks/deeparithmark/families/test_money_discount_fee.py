"""money_discount_fee: percent off a price, then a fee (depth 2)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

from synthprobe.benchmarks.deeparithmark.base import TWINS, GenerationError
from synthprobe.seeding import item_rng

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


def expected_extra(price: int, p: int, fee: int, answer: int) -> dict[str, int]:
    """Every extra (role-balanced) mistake recomputed by hand from the story's numbers."""
    off = price * p // 100
    sale = price - off
    again = sale * (100 - p)  # the percentage taken off the sale price a second time, in cents
    pool = {
        "subtracted the discount twice": price - 2 * off + fee,
        "took the discount off the sale price again": again // 100 + fee if again % 100 == 0 else None,
        "ignored the discount and forgot the fee": price,
        "ignored the discount and subtracted the fee": price - fee,
        "ignored the discount and added the fee twice": price + 2 * fee,
        "added the discount instead of subtracting it and forgot the fee": price + off,
        "added the discount instead of subtracting it and subtracted the fee": price + off - fee,
        "added the discount instead of subtracting it and added the fee twice": price + off + 2 * fee,
        "took the discount amount as the price and forgot the fee": off,
        "took the discount amount as the price and subtracted the fee": off - fee,
        "took the discount amount as the price and added the fee twice": off + 2 * fee,
        "took the percentage off as dollars and forgot the fee": price - p,
        "took the percentage off as dollars and subtracted the fee": price - p - fee,
        "took the percentage off as dollars and added the fee twice": price - p + 2 * fee,
        "subtracted the discount twice and forgot the fee": price - 2 * off,
        "subtracted the discount twice and subtracted the fee": price - 2 * off - fee,
        "subtracted the discount twice and added the fee twice": price - 2 * off + 2 * fee,
        "took the discount off the sale price again and forgot the fee": again // 100 if again % 100 == 0 else None,
        "took the discount off the sale price again and subtracted the fee": (
            again // 100 - fee if again % 100 == 0 else None
        ),
        "took the discount off the sale price again and added the fee twice": (
            again // 100 + 2 * fee if again % 100 == 0 else None
        ),
    }
    return offered(pool, answer)


def test_extra_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 400, seed=5)
    assert len(problems) > 300
    for p in problems:
        price, pct, fee = p.params["price"], p.params["percent_off"], p.params["fee"]
        assert dict(p.extra_mistakes) == expected_extra(price, pct, fee, p.answer)
        assert dict(p.mistakes) == expected_pool(price, pct, fee, p.answer)  # the legacy pool untouched
        assert not set(p.extra_mistakes) & set(p.mistakes)
    # the compounded discount is whole on some draws and not on others
    assert any("took the discount off the sale price again" in p.extra_mistakes for p in problems)


def test_twins_that_change_the_numbers_drop_the_extra_mistakes():
    problems, _ = draw(NAME, 40, seed=6)
    for i, p in enumerate(problems):
        for kind in ("one_step_more", "unit_change"):
            try:
                t = TWINS[(NAME, kind)](p, item_rng("test/twin", i, kind))
            except GenerationError:  # a twin may reject its draw
                continue
            assert dict(t.extra_mistakes) == {}
        for kind in ("irrelevant_clause", "reordered"):
            t = TWINS[(NAME, kind)](p, item_rng("test/twin", i, kind))
            assert t.answer == p.answer and t.extra_mistakes == p.extra_mistakes
