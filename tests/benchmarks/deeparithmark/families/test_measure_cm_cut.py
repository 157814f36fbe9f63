"""measure_cm_cut: metres to centimetres, add a piece, cut a piece off (depth 3)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

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
