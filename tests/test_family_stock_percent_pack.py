"""stock_percent_pack: a stock, a percentage removed, the rest in whole packs (depth 3)."""

from __future__ import annotations

from family_checks import check_family, draw

from synthprobe.seeding import item_rng
from synthprobe.tasks.deeparithmark.base import FAMILIES, GenerationError

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
    return {n: v for n, v in pool.items() if v is not None and v > 0 and v != answer}


def test_contract_and_rates():
    figures = check_family(NAME, expected_depth=3)
    problems = figures["problems"]
    assert figures["rejected"] < 0.05 * 400
    for r in range(4):
        assert figures["ranks"][r] >= 0.3 * len(problems), (r, figures["ranks"])
    words = [len(p.ctx.split()) for p in problems]
    assert 26 <= sum(words) / len(words) <= 31 and max(words) <= 35


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        stock, pct, k = p.params["stock"], p.params["percent"], p.params["pack_size"]
        assert stock * pct % 100 == 0
        left = stock - stock * pct // 100
        assert left * pct % 100 == 0  # so taking the percentage again is whole too
        assert p.answer == left // k and 20 <= p.answer <= 99 and p.answer % 5 != 0
        assert p.steps[-1] == f"full packs: {left} / {k} = {left // k} (remainder {left % k})"
        assert p.render(p.answer) == f" {p.answer} {p.params['packs']}."
        assert f"{stock} " in p.ctx and f"{pct}%" in p.ctx and f" {k}" in p.ctx
        assert dict(p.mistakes) == expected_pool(stock, pct, k, p.answer)


def test_deterministic_and_varied():
    gen = FAMILIES[NAME].generate

    def outcome(i: int):
        try:
            return gen(item_rng("t", 5, i))
        except GenerationError as exc:
            return f"rejected: {exc}"

    first = [outcome(i) for i in range(8)]
    assert first == [outcome(i) for i in range(8)]  # same seed, same problem (or same rejection)
    assert sum(not isinstance(x, str) for x in first) >= 6
    problems, _ = draw(NAME, 150, seed=9)
    assert len({p.ctx for p in problems}) == len(problems)
