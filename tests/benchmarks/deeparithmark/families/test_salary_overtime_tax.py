"""salary_overtime_tax: regular pay plus overtime pay, less a tax percentage (depth 5)."""

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

NAME = "salary_overtime_tax"


def expected_pool(h: int, r: int, o: int, r2: int, t: int, answer: int) -> dict[str, int]:
    keep = Fraction(100 - t, 100)
    regular, extra = h * r, o * r2
    gross = regular + extra
    tax = Fraction(gross * t, 100)
    pool = {
        "forgot the tax": whole(Fraction(gross)),
        "added the tax instead of taking it off": whole(gross + tax),
        "took the tax off twice": whole(gross - 2 * tax),
        "tax taken of the regular pay only": whole(gross - Fraction(regular * t, 100)),
        "tax taken of the overtime pay only": whole(gross - Fraction(extra * t, 100)),
        "forgot the overtime": whole(regular * keep),
        "paid the overtime at the regular rate": whole((h + o) * r * keep),
        "paid only the overtime premium": whole((regular + o * (r2 - r)) * keep),
        "paid every hour at the overtime rate": whole((h + o) * r2 * keep),
    }
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=5, mean_words=(34, 40), max_words=45, mistake_kinds=9)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        h, r, o, r2, t = (p.params[x] for x in ("hours", "rate", "overtime", "overtime_rate", "tax"))
        gross = h * r + o * r2
        assert gross * t % 100 == 0 and p.answer == gross - gross * t // 100
        assert r2 > r
        assert dict(p.mistakes) == expected_pool(h, r, o, r2, t, p.answer)
        assert f"${r} " in p.ctx and f"${r2} " in p.ctx and f"{t}%" in p.ctx
        assert f" {h} regular hours" in p.ctx and f" {o} " in p.ctx
        assert p.kind == "money" and p.render(p.answer) == f" ${p.answer}."
        assert p.steps[3] == f"tax: {t}% of ${gross} = ${gross * t // 100}"


def test_every_mistake_is_whole_dollars_by_construction():
    """Each pay amount a mistake can produce keeps the tax whole, so no mistake is lost."""
    problems, _ = draw(NAME, 200, seed=4)
    for p in problems:
        assert len(p.mistakes) >= 8, p.mistakes  # all nine, less one that may hit the answer


def test_deterministic_and_varied():
    problems = check_deterministic_and_varied(NAME)
    assert {p.params["tax"] for p in problems} == {10, 20, 25, 30}
    assert len({p.params["period"] for p in problems}) == 3


def expected_extra(h: int, r: int, o: int, r2: int, t: int, answer: int) -> dict[str, int]:
    """Each extra mistake redone by hand: a gross pay (right or with one slip on the pay), then
    the tax on it (right or with one slip on the tax)."""
    keep = Fraction(100 - t, 100)

    def taxed(gross):  # the take-home pay, right
        return gross * keep

    def forgot(gross):  # "forgot the tax"
        return Fraction(gross)

    def twice(gross):  # "took the tax off twice": the tax of the gross pay, taken off twice
        return gross - 2 * Fraction(gross * t, 100)

    def again(gross):  # "took the tax off the take-home pay again": t % off the net pay too
        return gross * keep * keep

    right = h * r + o * r2
    no_overtime = h * r
    at_regular = (h + o) * r
    premium = h * r + o * (r2 - r)
    all_overtime = (h + o) * r2
    overtime_twice = h * r + 2 * o * r2
    both_rates = h * r + o * (r + r2)
    pool = {
        "added the overtime pay twice": whole(taxed(overtime_twice)),
        "paid the overtime hours at both rates": whole(taxed(both_rates)),
        "took the tax off the take-home pay again": whole(again(right)),
        "forgot the overtime and forgot the tax": whole(forgot(no_overtime)),
        "forgot the overtime and added the tax instead of taking it off": whole(no_overtime * Fraction(100 + t, 100)),
        "forgot the overtime and took the tax off the take-home pay again": whole(again(no_overtime)),
        "paid the overtime at the regular rate and forgot the tax": whole(forgot(at_regular)),
        "paid the overtime at the regular rate and took the tax off the take-home pay again": whole(again(at_regular)),
        "paid only the overtime premium and forgot the tax": whole(forgot(premium)),
        "paid only the overtime premium and took the tax off the take-home pay again": whole(again(premium)),
        "paid every hour at the overtime rate and forgot the tax": whole(forgot(all_overtime)),
        "paid every hour at the overtime rate and took the tax off twice": whole(twice(all_overtime)),
        "paid every hour at the overtime rate and took the tax off the take-home pay again": whole(again(all_overtime)),
        "added the overtime pay twice and forgot the tax": whole(forgot(overtime_twice)),
        "added the overtime pay twice and took the tax off twice": whole(twice(overtime_twice)),
        "added the overtime pay twice and took the tax off the take-home pay again": whole(again(overtime_twice)),
        "paid the overtime hours at both rates and forgot the tax": whole(forgot(both_rates)),
        "paid the overtime hours at both rates and took the tax off twice": whole(twice(both_rates)),
        "paid the overtime hours at both rates and took the tax off the take-home pay again": whole(again(both_rates)),
    }
    return offered(pool, answer)


def test_extra_mistakes_recomputed_from_params():
    check_extra_mistakes(NAME, ("hours", "rate", "overtime", "overtime_rate", "tax"), expected_pool, expected_extra)


def test_twins_keep_or_convert_the_extra_mistakes():
    for p, _, t in family_twins(NAME, ("unit_change",)):
        assert dict(t.extra_mistakes) == {name: 100 * v for name, v in p.extra_mistakes.items()}
    check_twins_keep_the_extra_mistakes(NAME)
