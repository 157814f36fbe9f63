"""schedule_sessions: sessions with set-up time fitted into a window (depth 3)."""

from __future__ import annotations

from fractions import Fraction

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "schedule_sessions"


def expected_pool(hours: Fraction, b: int, m: int, answer: int) -> dict[str, int]:
    window = int(hours * 60)
    block = b + m
    spare = window - answer * block
    whole_hours = int(hours)
    part_hour = int((hours - whole_hours) * 60)
    pool = {
        "left out the set-up time": window // m,
        "counted the set-up only once": (window - b) // m,
        "divided by the set-up time alone": window // b,
        "used 100 minutes per hour": int(hours * 100) // block,
        "counted the set-up twice": window // (m + 2 * b),
        "counted the session length twice": window // (2 * m + b),
        "subtracted the set-up instead of adding it": window // (m - b),
        "rounded down hour by hour": whole_hours * (60 // block) + part_hour // block,
        "dropped the part hour": 60 * whole_hours // block if part_hour else None,
        "skipped the first set-up": (window + b) // block,
        "counted the unfinished session": answer + 1 if spare else None,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    # few plausible mistakes undercount the last rank, and more so now that the count is drawn
    # evenly down to 11 (a small count leaves little room for three mistakes below it): about
    # a quarter of the draws can put the answer last, so the bound is 0.2 instead of 0.25
    check_release_rates(
        NAME, depth=3, mean_words=(26, 31), max_words=35, rank_share=(0.4, 0.4, 0.4, 0.2), max_rejected=0.15
    )


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        hours = Fraction(p.params["hours"])
        b, m = p.params["setup_minutes"], p.params["session_minutes"]
        window = int(hours * 60)
        # n complete sessions fit when n * (b + m) <= window < (n + 1) * (b + m)
        n = p.answer
        assert n * (b + m) <= window < (n + 1) * (b + m)
        assert 11 <= n <= 99 and n % 5 != 0
        assert p.render(n) == f" {n} {p.params['noun']}."
        assert f"{b}" in p.ctx and f"{m} minutes" in p.ctx
        assert dict(p.mistakes) == expected_pool(hours, b, m, n)


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def expected_extra(hours: Fraction, b: int, m: int) -> dict[str, int]:
    """The extra mistakes worked out by hand: a wrong window in minutes over a wrong session
    length, complete sessions only (floor), or with the unfinished one counted (ceil, only when
    something is left over)."""
    window = int(hours * 60)
    whole_hours = int(hours)
    part = hours - whole_hours
    decimal = "took the decimal part of the hours as minutes"
    windows = {"used 100 minutes per hour": int(hours * 100)}
    if part:
        windows["dropped the part hour"] = whole_hours * 60
        # 4.25 hours read as 4 h 25 min, 4.5 as 4 h 50 min, 4.75 as 4 h 75 min
        windows[decimal] = whole_hours * 60 + {Fraction(1, 4): 25, Fraction(1, 2): 50, Fraction(3, 4): 75}[part]
    sessions = {
        "left out the set-up time": m,
        "counted the set-up twice": b + b + m,
        "counted the session length twice": b + m + m,
        "subtracted the set-up instead of adding it": m - b,
    }
    out = {}
    if part:
        out[decimal] = windows[decimal] // (b + m)
    for wrong_window, minutes in windows.items():
        for wrong_session, length in sessions.items():
            out[f"{wrong_window} and {wrong_session}"] = minutes // length
        out[f"{wrong_window} and counted the set-up only once"] = (minutes - b) // m
    for wrong_session, length in sessions.items():
        if window % length:
            out[f"{wrong_session} and counted the unfinished session"] = window // length + 1
    for wrong_window, minutes in windows.items():
        if minutes % (b + m):
            out[f"{wrong_window} and counted the unfinished session"] = minutes // (b + m) + 1
    for wrong_session, length in sessions.items():
        # each whole hour on its own, then the part hour, with the wrong session length
        per_hour = 60 // length
        out[f"rounded down hour by hour and {wrong_session}"] = whole_hours * per_hour + int(part * 60) // length
    return out


def test_extra_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 400, seed=11)
    assert len(problems) > 300
    parts = set()
    for p in problems:
        hours = Fraction(p.params["hours"])
        b, m = p.params["setup_minutes"], p.params["session_minutes"]
        parts.add(hours - int(hours))
        assert dict(p.mistakes) == expected_pool(hours, b, m, p.answer)  # the legacy pool, untouched
        assert dict(p.extra_mistakes) == expected_extra(hours, b, m)
        assert not set(p.extra_mistakes) & set(p.mistakes)
        assert all(type(v) is int for v in p.extra_mistakes.values())
    assert parts == {0, Fraction(1, 4), Fraction(1, 2), Fraction(3, 4)}
