"""The step grammar: every form re-evaluates, every wrong line is caught."""

from __future__ import annotations

from fractions import Fraction

import pytest

from synthprobe.benchmarks.deeparithmark.base import Steps, decoy_problem, fmt_clock, fmt_num, roundness_class
from synthprobe.benchmarks.deeparithmark.steps import StepError, check_chain, check_step


@pytest.mark.parametrize(
    "line, result",
    [
        ("after delivery: 420 + 260 = 680", 680),
        ("after shipping: 680 - 210 = 470", 470),
        ("cost: 12 × $7.50 = $90", 90),
        ("cost: 12 * 3 = 36", 36),
        ("share: 45 / 4 = 11.25", Fraction(45, 4)),
        ("full crates: 430 / 16 = 26 (remainder 14)", 26),
        ("discount: 15% of $80 = $12", 12),
        ("total: $1,250 + $50 = $1,300", 1300),
        ("end: 9:50 a.m. + 125 min = 11:55 a.m.", 715),
        ("end: 11:30 a.m. + 45 min = 12:15 p.m.", 735),
    ],
)
def test_valid_steps(line, result):
    assert check_step(line).result == result


@pytest.mark.parametrize(
    "line",
    [
        "after delivery: 420 + 260 = 681",
        "full crates: 430 / 16 = 26 (remainder 13)",
        "full crates: 430 / 16 = 27 (remainder -2)",
        "discount: 15% of $80 = $13",
        "end: 9:50 a.m. + 125 min = 11:55 p.m.",
        "no colon here 1 + 1 = 2",
        "words: one plus one = two",
        "two ops: 1 + 2 + 3 = 6",
    ],
)
def test_wrong_steps_rejected(line):
    with pytest.raises(StepError):
        check_step(line)


def test_chain_rules():
    s = Steps()
    a = s.op("after delivery", 420, "+", 260)
    b = s.op("after shipping", a, "-", 210)
    c = s.op("good units", b, "-", 40)
    q, _ = s.divmod("full crates", c, 16)
    assert check_chain(s.lines, 26)[-1].result == q == 26
    with pytest.raises(StepError, match="last step gives 26, answer is 27"):
        check_chain(s.lines, 27)
    with pytest.raises(StepError, match="never used"):
        check_chain(["a: 1 + 2 = 3", "b: 5 + 6 = 11"], 11)


def test_formatting_is_exact():
    assert fmt_num(Fraction(25, 2)) == "12.5"
    assert fmt_num(Fraction(25, 2), money=True) == "$12.50"
    assert fmt_num(1250, money=True, commas=True) == "$1,250"
    assert fmt_clock(0) == "12:00 a.m." and fmt_clock(13 * 60 + 5) == "1:05 p.m."


def test_roundness_and_decoy_rules():
    assert [roundness_class(v) for v in (26, 25, 430, 400)] == [0, 1, 2, 3]
    assert roundness_class(9 * 60, "clock") == 3 and roundness_class(9 * 60 + 45, "clock") == 1
    assert decoy_problem(26, 27) == "answer ± 1"
    assert decoy_problem(26, 30) == "different roundness class"
    assert decoy_problem(26, 29) is None
    assert decoy_problem(11 * 60 + 50, 12 * 60 + 10, "clock") == "other half of the day"
