"""trip_minutes: legs in hours and minutes converted and summed to minutes (depth 3)."""

from __future__ import annotations

from family_checks import check_deterministic_and_varied, check_release_rates, draw, offered

NAME = "trip_minutes"


def expected_pool(shape: str, h: int, m1: int, last: int, answer: int) -> dict[str, int]:
    hours_part, minutes_part = divmod(answer, 60)
    pool = {
        "used 100 minutes per hour": 100 * h + m1 + last,
        "dropped the carried hour": 60 * h + m1 + last - 60 if m1 + last >= 60 else None,
        "left out the last leg": 60 * h + m1,
        ("left out the minutes of the first leg" if shape == "A" else "left out the first leg"): 60 * h + last,
        "wrote the hours and minutes as one number": int(f"{hours_part}{minutes_part:02d}"),
        "counted the last leg twice": 60 * h + m1 + 2 * last,
        "added the hours twice": 120 * h + m1 + last,
        "subtracted the last leg": 60 * h + m1 - last,
    }
    return offered(pool, answer)


def test_contract_and_rates():
    check_release_rates(NAME, depth=3, mean_words=(25, 31), max_words=35)


def test_answer_and_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 120, seed=3)
    shapes = set()
    for p in problems:
        shape, h, m1, last = (p.params[k] for k in ("shape", "hours", "minutes_first", "minutes_last"))
        shapes.add(shape)
        assert p.answer == 60 * h + m1 + last and p.answer % 5 != 0
        assert p.steps[0] == f"hours in minutes: {h} × 60 = {60 * h}"
        assert p.render(p.answer) == f" {p.answer} minutes."
        assert f"{h} hour" in p.ctx and f"{last}" in p.ctx
        assert dict(p.mistakes) == expected_pool(shape, h, m1, last, p.answer)
    assert shapes == {"A", "B"}


def test_deterministic_and_varied():
    check_deterministic_and_varied(NAME, may_reject=True)


def expected_extra(shape: str, h: int, m1: int, last: int) -> dict[str, int]:
    """The extra mistakes worked out by hand. A carry slip acts on the sum of the minute parts
    as the solver has it: under 60, an hour carried anyway; 60 or more, the carried hour
    dropped or added twice."""
    first = "the minutes of the first leg" if shape == "A" else "the first leg"
    left_out_first = "left out the minutes of the first leg" if shape == "A" else "left out the first leg"
    out = {
        f"counted {first} twice": 60 * h + m1 + m1 + last,
        f"subtracted {first}": 60 * h + m1 + last - 2 * m1,
    }
    if m1 + last < 60:
        out["carried an hour the minutes did not make"] = 60 * (h + 1) + m1 + last
    else:
        out["added the carried hour twice"] = 60 * (h + 1) + m1 + last
    # with the last leg left out the minutes are the first leg's alone, under an hour
    out["left out the last leg and carried an hour the minutes did not make"] = 60 * (h + 1) + m1
    out[f"{left_out_first} and carried an hour the minutes did not make"] = 60 * (h + 1) + last
    for slip, minutes in (("counted the last leg twice", m1 + 2 * last), (f"counted {first} twice", 2 * m1 + last)):
        if minutes < 60:
            out[f"{slip} and carried an hour the minutes did not make"] = 60 * h + minutes + 60
        else:
            out[f"{slip} and dropped a carried hour"] = 60 * h + minutes - 60
            out[f"{slip} and added the carried hour twice"] = 60 * h + minutes + 60
    return out


def test_extra_mistakes_recomputed_from_params():
    problems, _ = draw(NAME, 400, seed=11)
    assert len(problems) > 300
    for p in problems:
        shape, h, m1, last = (p.params[k] for k in ("shape", "hours", "minutes_first", "minutes_last"))
        assert dict(p.mistakes) == expected_pool(shape, h, m1, last, p.answer)  # the legacy pool, untouched
        assert dict(p.extra_mistakes) == expected_extra(shape, h, m1, last)
        assert not set(p.extra_mistakes) & set(p.mistakes)
        assert all(type(v) is int and v > 0 for v in p.extra_mistakes.values())
