"""schedule_sessions: sessions with set-up time fitted into a window (depth 3)."""

from __future__ import annotations

from fractions import Fraction

from family_checks import check_family, draw

from synthprobe.seeding import item_rng
from synthprobe.tasks.deeparithmark.base import FAMILIES, GenerationError

NAME = "schedule_sessions"


def expected_pool(hours: Fraction, b: int, m: int, answer: int) -> dict[str, int]:
    window = int(hours * 60)
    block = b + m
    spare = window - answer * block
    whole_hours = int(hours)
    half = hours != whole_hours
    pool = {
        "left out the set-up time": window // m,
        "counted the set-up only once": (window - b) // m,
        "divided by the set-up time alone": window // b,
        "used 100 minutes per hour": int(hours * 100) // block,
        "counted the set-up twice": window // (m + 2 * b),
        "counted the session length twice": window // (2 * m + b),
        "subtracted the set-up instead of adding it": window // (m - b),
        "rounded down hour by hour": whole_hours * (60 // block) + (30 // block if half else 0),
        "dropped the half hour": 60 * whole_hours // block if half else None,
        "skipped the first set-up": (window + b) // block,
        "counted the unfinished session": answer + 1 if spare else None,
    }
    return {k: v for k, v in pool.items() if v is not None and v > 0 and v != answer}


def test_contract_and_rates():
    figures = check_family(NAME, expected_depth=3)
    problems = figures["problems"]
    assert figures["rejected"] < 0.15 * 400
    for r, share in enumerate((0.4, 0.4, 0.4, 0.25)):  # few plausible mistakes undercount
        assert figures["ranks"][r] >= share * len(problems), (r, figures["ranks"])
    words = [len(p.ctx.split()) for p in problems]
    assert 26 <= sum(words) / len(words) <= 31 and max(words) <= 35


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        hours = Fraction(p.params["hours"])
        b, m = p.params["setup_minutes"], p.params["session_minutes"]
        window = int(hours * 60)
        # n complete sessions fit when n * (b + m) <= window < (n + 1) * (b + m)
        n = p.answer
        assert n * (b + m) <= window < (n + 1) * (b + m)
        assert 20 <= n <= 99 and n % 5 != 0
        assert p.render(n) == f" {n} {p.params['noun']}."
        assert f"{b}" in p.ctx and f"{m} minutes" in p.ctx
        assert dict(p.mistakes) == expected_pool(hours, b, m, n)


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
