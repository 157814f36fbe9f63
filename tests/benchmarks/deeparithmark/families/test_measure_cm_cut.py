"""measure_cm_cut: metres to centimetres, add a piece, cut a piece off (depth 3)."""

from __future__ import annotations

from family_checks import (
    check_deterministic_and_varied,
    check_extra_mistakes,
    check_release_rates,
    check_twins_keep_the_extra_mistakes,
    draw,
    family_twins,
    offered,
)

NAME = "measure_cm_cut"


def expected_pool(m: int, b: int, c: int, answer: int) -> dict[str, int]:
    pool = {
        "dropped the metre conversion": m + b - c,
        "used 10 cm per metre": 10 * m + b - c,
        "forgot the cut": 100 * m + b,
        "left out the added piece": 100 * m - c,
        "added the cut instead of subtracting it": 100 * m + b + c,
        "subtracted the added piece": 100 * m - b - c,
        "cut the piece off twice": 100 * m + b - 2 * c,
        "added the piece twice": 100 * m + 2 * b - c,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    # the answer smallest (rank 0) needs all three mistakes above it (the cut forgotten, the cut
    # added, the piece doubled) off the multiples of 5; with the cut now drawn to fit a drawn
    # final length that holds in about 39 % of draws, so rank 0 is held to 0.35, not 0.4
    figures = check_release_rates(NAME, depth=3, mean_words=(26, 31), max_words=35, rank_share=(0.35, 0.4, 0.4, 0.4))
    assert "dropped the metre conversion" in figures["mistake_names"]


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        m, b, c = p.params["metres"], p.params["added_cm"], p.params["cut_cm"]
        assert p.answer == m * 100 + b - c
        assert p.steps[0] == f"first length in centimetres: {m} × 100 = {100 * m}"
        assert p.render(p.answer) == f" {p.answer} cm."
        assert f"{b} cm" in p.ctx and f"{c} cm" in p.ctx
        assert dict(p.mistakes) == expected_pool(m, b, c, p.answer)
        # the dropped conversion is always in the pool (the added piece is longer than the cut)
        assert p.mistakes["dropped the metre conversion"] == m + b - c


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def expected_extra(m: int, b: int, c: int, answer: int) -> dict[str, int]:
    """Every extra (role-balanced) mistake recomputed by hand: any two slips on different steps."""
    pool = {
        "left out the starting length": b - c,
        # the conversion slip with a slip on the piece
        "dropped the metre conversion and left out the added piece": m - c,
        "dropped the metre conversion and added the piece twice": m + 2 * b - c,
        "dropped the metre conversion and subtracted the added piece": m - b - c,
        "used 10 cm per metre and left out the added piece": 10 * m - c,
        "used 10 cm per metre and added the piece twice": 10 * m + 2 * b - c,
        "used 10 cm per metre and subtracted the added piece": 10 * m - b - c,
        "left out the starting length and left out the added piece": -c,
        "left out the starting length and added the piece twice": 2 * b - c,
        "left out the starting length and subtracted the added piece": -b - c,
        # the conversion slip with a slip on the cut
        "dropped the metre conversion and forgot the cut": m + b,
        "dropped the metre conversion and cut the piece off twice": m + b - 2 * c,
        "dropped the metre conversion and added the cut instead of subtracting it": m + b + c,
        "used 10 cm per metre and forgot the cut": 10 * m + b,
        "used 10 cm per metre and cut the piece off twice": 10 * m + b - 2 * c,
        "used 10 cm per metre and added the cut instead of subtracting it": 10 * m + b + c,
        "left out the starting length and forgot the cut": b,
        "left out the starting length and cut the piece off twice": b - 2 * c,
        "left out the starting length and added the cut instead of subtracting it": b + c,
        # the piece slip with a slip on the cut
        "left out the added piece and forgot the cut": 100 * m,
        "left out the added piece and cut the piece off twice": 100 * m - 2 * c,
        "left out the added piece and added the cut instead of subtracting it": 100 * m + c,
        "added the piece twice and forgot the cut": 100 * m + 2 * b,
        "added the piece twice and cut the piece off twice": 100 * m + 2 * b - 2 * c,
        "added the piece twice and added the cut instead of subtracting it": 100 * m + 2 * b + c,
        "subtracted the added piece and forgot the cut": 100 * m - b,
        "subtracted the added piece and cut the piece off twice": 100 * m - b - 2 * c,
        "subtracted the added piece and added the cut instead of subtracting it": 100 * m - b + c,
    }
    return offered(pool, answer)


def test_extra_mistakes_recomputed_from_params():
    check_extra_mistakes(NAME, ("metres", "added_cm", "cut_cm"), expected_pool, expected_extra)


def test_twins_that_change_the_numbers_drop_the_extra_mistakes():
    for _, _, t in family_twins(NAME, ("one_step_more", "unit_change")):
        assert dict(t.extra_mistakes) == {}
    check_twins_keep_the_extra_mistakes(NAME)
