"""discount_tax_coupon_split: percent off, tax, a coupon, then an even split (depth 4)."""

from __future__ import annotations

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


def expected_extra(bill: int, off: int, tax: int, coupon: int, n: int, answer: int) -> dict[str, int]:
    """Each extra mistake redone by hand: the bill after the rates (right or with one slip), then
    the coupon and the split (right or with one slip)."""
    b, pct = Fraction(bill), lambda p, x: x * p / 100  # noqa: E731
    taxed = pct(100 + tax, pct(100 - off, b))
    pool = {
        "added the coupon instead of taking it off": whole((taxed + coupon) / n),
        "added the coupon twice": whole((taxed + 2 * coupon) / n),
        "added the coupon to every share": whole(taxed / n + coupon),
        "took the coupon off the bill and again off every share": whole((taxed - coupon) / n - coupon),
    }
    # the bill after tax with one slip on the rates
    after_rates = {
        "forgot the discount": pct(100 + tax, b),
        "added the discount instead of taking it off": pct(100 + tax, pct(100 + off, b)),
        "forgot the tax": pct(100 - off, b),
        "took the tax off instead of adding it": pct(100 - tax, pct(100 - off, b)),
        "took the tax of the original bill": pct(100 - off, b) + pct(tax, b),
        "took the discount off twice": pct(100 + tax, pct(100 - off, pct(100 - off, b))),
        "swapped the discount and tax rates": pct(100 + off, pct(100 - tax, b)),
    }
    for rate_slip, total in after_rates.items():
        pool[f"{rate_slip} and forgot the coupon"] = whole(total / n)
        pool[f"{rate_slip} and used the coupon twice"] = whole((total - 2 * coupon) / n)
        pool[f"{rate_slip} and took the coupon off every share"] = whole(total / n - coupon)
        pool[f"{rate_slip} and added the coupon instead of taking it off"] = whole((total + coupon) / n)
    return offered(pool, answer)


def test_extra_mistakes_recomputed_from_params():
    check_extra_mistakes(NAME, ("bill", "discount", "tax", "coupon", "people"), expected_pool, expected_extra)


def test_twins_that_change_the_numbers_drop_or_convert_the_extra_mistakes():
    for p, kind, t in family_twins(NAME, ("one_step_more", "unit_change")):
        converted = {} if kind == "one_step_more" else {name: 100 * v for name, v in p.extra_mistakes.items()}
        assert dict(t.extra_mistakes) == converted
    check_twins_keep_the_extra_mistakes(NAME)
