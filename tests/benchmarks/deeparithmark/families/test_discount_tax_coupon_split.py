"""discount_tax_coupon_split: percent off, tax, a coupon, then an even split (depth 4)."""

from __future__ import annotations

from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered, whole

NAME = "discount_tax_coupon_split"


def expected_pool(bill: int, off: int, tax: int, coupon: int, n: int, answer: int) -> dict[str, int]:
    b, pct = Fraction(bill), lambda p, x: x * p / 100  # noqa: E731
    sale = pct(100 - off, b)
    taxed = pct(100 + tax, sale)
    pool = {
        "forgot the discount": whole((pct(100 + tax, b) - coupon) / n),
        "added the discount instead of taking it off": whole((pct(100 + tax, pct(100 + off, b)) - coupon) / n),
        "forgot the tax": whole((sale - coupon) / n),
        "took the tax off instead of adding it": whole((pct(100 - tax, sale) - coupon) / n),
        "tax taken of the original bill": whole((sale + pct(tax, b) - coupon) / n),
        "took the discount off twice": whole((pct(100 + tax, pct(100 - off, sale)) - coupon) / n),
        "swapped the discount and tax rates": whole((pct(100 + off, pct(100 - tax, b)) - coupon) / n),
        "forgot the coupon": whole(taxed / n),
        "used the coupon twice": whole((taxed - 2 * coupon) / n),
        "took the coupon off every share": whole(taxed / n - coupon),
        "left the organiser out of the split": whole((taxed - coupon) / (n - 1)),
    }
    return offered(pool, answer)


def test_contract_and_rates():
    figures = check_release_rates(NAME, depth=4, mean_words=(29, 35), max_words=40)
    assert {"tax taken of the original bill", "forgot the coupon", "took the coupon off every share"} <= figures[
        "mistake_names"
    ]


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        bill, off, tax, coupon, n = (p.params[x] for x in ("bill", "discount", "tax", "coupon", "people"))
        total = bill * (100 - off) * (100 + tax)
        assert total % 10000 == 0
        assert (total // 10000 - coupon) % n == 0
        assert p.answer == (total // 10000 - coupon) // n
        assert dict(p.mistakes) == expected_pool(bill, off, tax, coupon, n, p.answer)
        assert f"${bill}" in p.ctx and f"{off}%" in p.ctx and f"{tax}%" in p.ctx
        assert f"${coupon}" in p.ctx and n == p.params["friends"] + 1
        assert p.kind == "money" and p.render(p.answer) == f" ${p.answer}."
        assert p.steps[0] == f"after the discount: {100 - off}% of ${bill} = ${bill * (100 - off) // 100}"


def test_wrong_base_is_usually_on_offer():
    """Tax on the undiscounted bill, the key mistake, is a whole-dollar option in most items."""
    problems, _ = draw(NAME, 200, seed=4)
    share = sum("tax taken of the original bill" in p.mistakes for p in problems) / len(problems)
    assert share >= 0.6


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert len({(p.params["discount"], p.params["tax"]) for p in problems}) >= 8
