"""stock_percent_pack: a stock, a percentage removed, the rest in whole packs (depth 3)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "stock_percent_pack"


def expected_pool(stock: int, p: int, k: int, answer: int) -> dict[str, int]:
    removed = stock * p // 100
    left = stock - removed
    pool = {
        "forgot the removed items": stock // k,
        "packed the removed items instead": removed // k,
        "took the percentage as a count": (stock - p) // k,
        "added the removed items": (stock + removed) // k,
        "took the percentage off twice": (stock - 2 * removed) // k,
        "took the percentage off the rest again": (left - left * p // 100) // k,
        "counted the loose items as a pack": left // k + 1 if left % k else None,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=3, mean_words=(26, 31), max_words=35, rank_share=0.3)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        stock, pct, k = p.params["stock"], p.params["percent"], p.params["pack_size"]
        assert stock * pct % 100 == 0
        left = stock - stock * pct // 100
        assert left * pct % 100 == 0  # so taking the percentage again is whole too
        assert p.answer == left // k and 11 <= p.answer <= 99 and p.answer % 5 != 0
        assert p.steps[-1] == f"full packs: {left} / {k} = {left // k} (remainder {left % k})"
        assert p.render(p.answer) == f" {p.answer} {p.params['packs']}."
        assert f"{stock} " in p.ctx and f"{pct}%" in p.ctx and f" {k}" in p.ctx
        assert dict(p.mistakes) == expected_pool(stock, pct, k, p.answer)


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)
