"""stock_percent_pack: a stock, a percentage removed, the rest in whole packs (depth 3)."""

from __future__ import annotations

from fractions import Fraction

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


def expected_extra(stock: int, p: int, k: int) -> dict[str, int]:
    """The extra mistakes worked out by hand: a wrong number of items, then its full packs
    (floor), its packs with the loose ones as one more (ceil, only when some are loose), or its
    loose items (remainder). A wrong count that is not whole gives nothing."""
    removed = stock * p // 100
    left = stock - removed
    again = Fraction(left * p, 100)  # p% of the rest

    def packs(items):
        return int(items) // k if Fraction(items).denominator == 1 and items >= 0 else None

    def packs_up(items):
        if Fraction(items).denominator != 1 or items < 0 or int(items) % k == 0:
            return None
        return int(items) // k + 1

    legacy_counts = {
        "forgot the removed items": stock,
        "packed the removed items instead": removed,
        "took the percentage as a count": stock - p,
        "added the removed items": stock + removed,
        "took the percentage off twice": stock - 2 * removed,
        "took the percentage off the rest again": left - again,
    }
    new_counts = {
        "added the percentage as a count": stock + p,
        "took the percentage off the rest again as a count": stock - removed - p,
        "took the percentage off twice as a count": stock - p - p,
        "took the percentage of the rest off the stock": stock - again,
        "divided by one plus the percentage instead of taking it off": Fraction(stock) / (1 + Fraction(p, 100)),
        "divided by the share left instead of multiplying by it": Fraction(stock) / (1 - Fraction(p, 100)),
        "took a tenth of the percentage (moved its decimal point)": stock * (1 - Fraction(p, 1000)),
        "took the percentage off twice and packed the removed items": removed + removed,
        "took the percentage off the rest again and packed all the removed items": removed + again,
    }
    out = {name: packs(items) for name, items in new_counts.items()}
    for name, items in {**legacy_counts, **new_counts}.items():
        out[name + " and counted the loose items as a pack"] = packs_up(items)
    out["gave the loose items instead of the full packs"] = left % k
    out["forgot the removed items and gave the loose items"] = stock % k
    out["took the percentage as a count and gave the loose items"] = (stock - p) % k
    out["added the removed items and gave the loose items"] = (stock + removed) % k
    out["counted each loose item as a pack"] = left // k + left % k
    out["packed the stock first and took the percentage off as a count of packs"] = stock // k - p
    full_stock_packs = stock // k + (1 if stock % k else 0)
    out["packed the stock first, its loose items as a pack, and took the percentage off as a count of packs"] = (
        full_stock_packs - p
    )
    return {name: v for name, v in out.items() if v is not None}


def test_extra_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 400, seed=11)
    assert len(problems) > 300
    extra_seen = set()
    for p in problems:
        stock, pct, k = p.params["stock"], p.params["percent"], p.params["pack_size"]
        assert dict(p.mistakes) == expected_pool(stock, pct, k, p.answer)  # the legacy pool, untouched
        assert dict(p.extra_mistakes) == expected_extra(stock, pct, k)
        assert not set(p.extra_mistakes) & set(p.mistakes)
        assert all(type(v) is int for v in p.extra_mistakes.values())
        extra_seen |= {name for name, v in p.extra_mistakes.items() if v not in p.mistakes.values()}
    assert len(extra_seen) >= 25  # nearly every extra mistake adds a value somewhere
