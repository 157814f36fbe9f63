"""time_clock_end: a start time plus two durations give the end time (depth 2)."""

from __future__ import annotations

from family_checks import (
    check_deterministic_and_varied,
    check_extra_mistakes,
    check_release_rates,
    check_twins_keep_the_extra_mistakes,
    draw,
    family_twins,
)

from synthprobe.benchmarks.deeparithmark.base import fmt_clock, usable_mistakes

NAME = "time_clock_end"


def expected_pool(start: int, h1: int, m1: int, d2: int, answer: int) -> dict[str, int]:
    """Every named mistake recomputed by hand, on minutes after midnight."""
    d1 = 60 * h1 + m1
    mid = start + d1
    carries = int(start % 60 + m1 >= 60) + int(mid % 60 + d2 % 60 >= 60)
    pool = {
        "stopped after the first activity": mid,
        "counted the second activity twice": mid + 2 * d2,
        # 1 h 47 min read as 147 minutes
        "read the hours and minutes as one number of minutes": start + int(f"{h1}{m1:02d}") + d2,
        "left out the hours of the first activity": start + m1 + d2,
        "counted the first activity twice": start + 2 * d1 + d2,
        "subtracted the second activity": mid - d2,
        "forgot to carry the hour": answer - 60 * carries,
        "left out the first activity": start + d2,
    }
    half = 0 if answer < 720 else 720
    return {k: v for k, v in pool.items() if half <= v < half + 720 and v != answer}


def test_contract_and_rates():
    check_release_rates(NAME, depth=2, mean_words=(22, 27), max_words=30)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        start, h1, m1, d2 = (p.params[k] for k in ("start", "first_hours", "first_minutes", "second_minutes"))
        end = start + 60 * h1 + m1 + d2
        assert p.answer == end and p.kind == "clock"
        # the story stays inside one half of the day, and so do the usable decoys
        assert (start < 720) == (end < 720)
        assert all((v < 720) == (end < 720) for v in usable_mistakes(p).values())
        assert fmt_clock(start) in p.ctx and f"{d2} minutes" in p.ctx
        assert p.render(end) == " " + fmt_clock(end) and not p.render(end).endswith("..")
        assert end % 5 != 0  # the end time is never on a round 5 minutes
        assert dict(p.mistakes) == expected_pool(start, h1, m1, d2, end)


def test_hand_worked_example_matches_the_pool():
    # 6:15 p.m. + 1 h 47 min = 8:02 p.m. (one carry), + 40 min = 8:42 p.m.
    pool = expected_pool(18 * 60 + 15, 1, 47, 40, 20 * 60 + 42)
    assert fmt_clock(pool["forgot to carry the hour"]) == "7:42 p.m."
    assert fmt_clock(pool["read the hours and minutes as one number of minutes"]) == "9:22 p.m."
    assert fmt_clock(pool["stopped after the first activity"]) == "8:02 p.m."
    # the family offers the carry mistake whenever the story has a carry
    problems, _ = draw(NAME, 120, seed=4)
    with_carry = [p for p in problems if "forgot to carry the hour" in p.mistakes]
    assert len(with_carry) > 0.3 * len(problems)
    assert all((p.answer - p.mistakes["forgot to carry the hour"]) in (60, 120) for p in with_carry)


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def expected_extra(start: int, h1: int, m1: int, d2: int, answer: int) -> dict[str, int]:
    """Every extra (role-balanced) mistake recomputed by hand, on minutes after midnight."""
    read = start + int(f"{h1}{m1:02d}")  # 1 h 47 min read as 147 minutes, the second activity left out
    misread = "read the hours and minutes as one number of minutes"
    pool = {
        f"{misread} and stopped after the first activity": read,
        f"{misread} and counted the second activity twice": read + 2 * d2,
        f"{misread} and subtracted the second activity": read - d2,
        "left out the hours of the first activity and stopped after it": start + m1,
        "left out the hours of the first activity and counted the second activity twice": start + m1 + 2 * d2,
        "left out the hours of the first activity and subtracted the second activity": start + m1 - d2,
    }
    half = 0 if answer < 720 else 720
    return {k: v for k, v in pool.items() if half <= v < half + 720 and v != answer}


def test_contract_and_rates():
    check_release_rates(NAME, depth=2, mean_words=(22, 27), max_words=30)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    for p in problems:
        start, h1, m1, d2 = (p.params[k] for k in ("start", "first_hours", "first_minutes", "second_minutes"))
        end = start + 60 * h1 + m1 + d2
        assert p.answer == end and p.kind == "clock"
        # the story stays inside one half of the day, and so do the usable decoys
        assert (start < 720) == (end < 720)
        assert all((v < 720) == (end < 720) for v in usable_mistakes(p).values())
        assert fmt_clock(start) in p.ctx and f"{d2} minutes" in p.ctx
        assert p.render(end) == " " + fmt_clock(end) and not p.render(end).endswith("..")
        assert end % 5 != 0  # the end time is never on a round 5 minutes
        assert dict(p.mistakes) == expected_pool(start, h1, m1, d2, end)


def test_hand_worked_example_matches_the_pool():
    # 6:15 p.m. + 1 h 47 min = 8:02 p.m. (one carry), + 40 min = 8:42 p.m.
    pool = expected_pool(18 * 60 + 15, 1, 47, 40, 20 * 60 + 42)
    assert fmt_clock(pool["forgot to carry the hour"]) == "7:42 p.m."
    assert fmt_clock(pool["read the hours and minutes as one number of minutes"]) == "9:22 p.m."
    assert fmt_clock(pool["stopped after the first activity"]) == "8:02 p.m."
    # the family offers the carry mistake whenever the story has a carry
    problems, _ = draw(NAME, 120, seed=4)
    with_carry = [p for p in problems if "forgot to carry the hour" in p.mistakes]
    assert len(with_carry) > 0.3 * len(problems)
    assert all((p.answer - p.mistakes["forgot to carry the hour"]) in (60, 120) for p in with_carry)


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def expected_extra(start: int, h1: int, m1: int, d2: int, answer: int) -> dict[str, int]:
    """Every extra (role-balanced) mistake recomputed by hand, on minutes after midnight."""
    as_minutes = int(f"{h1}{m1:02d}")  # 1 h 47 min read as 147 minutes
    pool = {
        "read the hours and minutes as one number of minutes and stopped after the first activity": start + as_minutes,
        "read the hours and minutes as one number of minutes and counted the second activity twice": start
        + as_minutes
        + 2 * d2,
        "read the hours and minutes as one number of minutes and subtracted the second activity": start
        + as_minutes
        - d2,
        "left out the hours of the first activity and stopped after it": start + m1,
        "left out the hours of the first activity and counted the second activity twice": start + m1 + 2 * d2,
        "left out the hours of the first activity and subtracted the second activity": start + m1 - d2,
    }
    half = 0 if answer < 720 else 720
    return {k: v for k, v in pool.items() if half <= v < half + 720 and v != answer}


def test_extra_mistakes_recomputed_from_params():
    problems = check_extra_mistakes(
        NAME, ("start", "first_hours", "first_minutes", "second_minutes"), expected_pool, expected_extra
    )
    # every extra value keeps the end time's minutes off the multiples of 5 (its roundness class)
    assert all(v % 5 for p in problems for v in p.extra_mistakes.values())


def test_twins_that_change_the_numbers_drop_the_extra_mistakes():
    for _, _, t in family_twins(NAME, ("one_step_more",)):
        assert dict(t.extra_mistakes) == {}
    check_twins_keep_the_extra_mistakes(NAME)
