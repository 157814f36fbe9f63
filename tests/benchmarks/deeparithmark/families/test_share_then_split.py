"""share_then_split: a share of a total taken out, the rest split equally (depth 3)."""

from __future__ import annotations

from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered, whole

NAME = "share_then_split"


def expected_pool(total: int, num: int, den: int, form: str, n: int, answer: int) -> dict:
    share = Fraction(total * num, den)
    rest = total - share
    if form == "percent":
        wrong = ("took the percentage as an amount", Fraction(total - 100 * num // den, n))
    elif num > 1:
        wrong = ("took one part of the fraction instead of several", Fraction(total - Fraction(total, den), n))
    else:
        wrong = ("took one part of the fraction instead of several", None)
    pool = {
        "stopped before splitting the rest": rest,
        "split the whole total": Fraction(total, n),
        "gave the first share as the answer": share,
        "split the first share instead of the rest": share / n,
        "divided the rest by one more than the number of parts": rest / (n + 1),
        "divided the rest by one fewer than the number of parts": rest / (n - 1),
        wrong[0]: wrong[1],
        "took the first share off one equal part": Fraction(total, n) - share,
        "applied the fraction again to each part": answer * (1 - Fraction(num, den)),
        "took the first share off twice": (total - 2 * share) / n,
        "divided by the number of parts twice": Fraction(answer, n),
    }
    return offered({k: None if v is None else whole(Fraction(v)) for k, v in pool.items()}, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=3, mean_words=(26, 31), max_words=35, rank_share=0.35)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 150, seed=3)
    forms = set()
    for p in problems:
        total, num, den, n = (p.params[k] for k in ("total", "share_numerator", "share_denominator", "parts"))
        form = p.params["share_form"]
        forms.add(form)
        # plain integer arithmetic: the share, the rest, one equal part
        assert total * num % den == 0
        rest = total - total * num // den
        assert rest % n == 0 and p.answer == rest // n
        assert p.answer % 5 != 0
        text = (
            "half" if (num, den) == (1, 2) and form == "fraction" else (f"{num}/{den}" if form == "fraction" else None)
        )
        if text:
            assert text in p.ctx.lower()
        else:
            assert "%" in p.ctx
        assert f" {n} " in p.ctx
        assert dict(p.mistakes) == expected_pool(total, num, den, form, n, p.answer)
        if p.kind == "money":
            assert p.unit == "$" and p.render(p.answer) == f" ${p.answer}."
        else:
            assert p.render(p.answer) == f" {p.answer} {p.unit}."
    assert forms == {"fraction", "percent"}


def test_steps_read_as_a_share_then_a_split():
    problems, _ = draw(NAME, 60, seed=5)
    for p in problems:
        first, second, third = p.steps
        assert first.startswith("first share: ") and second.startswith("the rest: ")
        assert third.startswith("each equal part: ") and "$" not in third


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def test_extra_mistakes_recomputed_from_params():
    """The role-balanced groups' extra mistakes, each redone by hand; the legacy pool unchanged."""
    problems, _ = draw(NAME, 400, seed=11)
    assert len(problems) > 300
    seen = set()
    for p in problems:
        total, num, den, n = (p.params[k] for k in ("total", "share_numerator", "share_denominator", "parts"))
        assert dict(p.mistakes) == expected_pool(total, num, den, p.params["share_form"], n, p.answer)
        share = total * num // den  # whole: checked above

        def split(amount: int, parts: int) -> int | None:
            return amount // parts if amount % parts == 0 else None

        extra = {
            "split the first share among one more than the number of parts": split(share, n + 1),
            "split the first share among one fewer than the number of parts": split(share, n - 1),
            "split the first share and divided by the number of parts twice": split(share, n * n),
            "added the first share instead of taking it off": split(total + share, n),
            "split the whole total among one more than the number of parts": split(total, n + 1),
            "split the whole total among one fewer than the number of parts": split(total, n - 1),
            "took the first share off twice and divided by one more than the number of parts": split(
                total - 2 * share, n + 1
            ),
            "took the first share off twice and divided by one fewer than the number of parts": split(
                total - 2 * share, n - 1
            ),
        }
        assert dict(p.extra_mistakes) == offered(extra, p.answer)
        assert not set(p.extra_mistakes) & set(p.mistakes)
        seen |= set(p.extra_mistakes)
    assert len(seen) == 8  # every extra mistake comes out whole on some draws
