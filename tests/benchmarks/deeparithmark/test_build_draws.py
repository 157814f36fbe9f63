"""The builder's per-draw savings (issue 15, "Builds"): each one changes no byte and
no build statistic.

- one hashed prefix and one reseeded ``random.Random`` per item (:class:`seeding.ItemStreams`,
  tested in tests/test_seeding.py);
- depth-4/5 mistakes re-run only when read (``_common_b.mistakes``);
- whole-number solution lines written only when read (:meth:`base.Steps.solution`);
- the answer shape cached per rendered value, and an int path for ``p% of a = c`` steps.

The bytes are pinned in ``test_build_pins.py``; here the build statistics are pinned as
the builder wrote them before these changes, and each saving is checked against the eager
code it replaces. The statistics pin the legacy decoy selection (``decoys="legacy"``, the
default until the role-balanced build replaced it, kept as the trained audit's positive
control): a role-balanced build draws each item once from its catalogue, with no discards.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

import pytest

from synthprobe.benchmarks.deeparithmark import build as B
from synthprobe.benchmarks.deeparithmark.answer_shape import answer_shape, shape_of
from synthprobe.benchmarks.deeparithmark.base import GenerationError, StepLines, Steps
from synthprobe.benchmarks.deeparithmark.families import _common_b
from synthprobe.benchmarks.deeparithmark.steps import CheckedStep, StepError, check_step

#: BuildStats of the seed-11, 1,237-item legacy build, from the builder before these changes.
STATS_11_1237 = {
    "discarded": {
        "answer shape thinned": 2858,
        "generator rejected the draw": 80,
        "mistakes cannot put the answer at rank 0": 317,
        "mistakes cannot put the answer at rank 1": 76,
        "mistakes cannot put the answer at rank 2": 86,
        "mistakes cannot put the answer at rank 3": 421,
        "no same-length decoys for rank 0": 244,
        "no same-length decoys for rank 1": 239,
        "no same-length decoys for rank 2": 162,
        "no same-length decoys for rank 3": 234,
    },
    "attempts": {
        "discount_tax_coupon_split": 293,
        "inventory_boxes": 164,
        "inventory_percent_chain": 309,
        "measure_cm_cut": 306,
        "mix_split": 161,
        "money_discount_fee": 496,
        "prize_ratio_charity": 380,
        "salary_overtime_tax": 235,
        "schedule_sessions": 550,
        "share_then_split": 854,
        "stock_percent_pack": 450,
        "tank_fill": 344,
        "time_clock_end": 384,
        "trip_minutes": 617,
        "two_rate_pay": 411,
    },
    "off_length": {"share_then_split": 3, "stock_percent_pack": 1, "trip_minutes": 5},
}


def _stats_view(stats: B.BuildStats) -> dict:
    return {"discarded": dict(stats.discarded), "attempts": dict(stats.attempts), "off_length": dict(stats.off_length)}


def test_serial_build_statistics_are_those_of_the_builder_before():
    stats = B.BuildStats()
    for _ in B.iter_items(11, 1237, stats=stats, decoys="legacy"):
        pass
    assert _stats_view(stats) == STATS_11_1237
    assert stats.n == 1237 and stats.redrawn == 0


def test_parallel_build_statistics_are_those_of_the_builder_before(tmp_path):
    res = B.build(tmp_path / "p.jsonl", seed=11, n=1237, progress=False, workers=2, decoys="legacy")
    assert _stats_view(res.stats) == STATS_11_1237


def test_steps_write_whole_lines_on_read_and_reject_bad_values_at_once():
    s = Steps()
    assert s.op("a", 12, "×", 3, money=True) == 36
    assert s.pct("b", 25, 36) == 9
    assert s.divmod("c", 37, 5) == (7, 2)
    view = s.solution()
    assert isinstance(view, StepLines) and len(view) == 3
    assert view == ("a: $12 × $3 = $36", "b: 25% of 36 = 9", "c: 37 / 5 = 7 (remainder 2)")
    assert list(view) == s.lines and view[-1] == s.lines[-1]
    assert hash(view) == hash(tuple(s.lines))
    with pytest.raises(GenerationError):  # 1/3 has no decimal form: the draw fails here, as before
        Steps().op("d", 1, "/", 3)
    with pytest.raises(GenerationError):
        Steps().pct("e", Fraction(1, 3), 7)
    f = Steps()
    assert f.op("f", Fraction(5, 2), "+", 1) == Fraction(7, 2)
    assert f.solution() == ("f: 2.5 + 1 = 3.5",)


def test_common_b_mistakes_run_on_first_read_and_match_the_eager_values():
    calls = []

    def chain(c, m):
        calls.append(m)
        x = c.op("x", 40, "+", 2 if m is None else 6 if m == "six" else 0)
        if m == "bad":
            c.op("y", x, "/", 0)  # rejected re-run: left out
        if m == "frac":
            return c.op("z", x, "/", 7)  # 40/7: not whole, left out
        if m == "half":
            return c.op("z", x, "/", 8)
        return x

    names = ["six", "bad", "frac", "half", "other"]
    lazy = _common_b.mistakes(chain, names, 42)
    assert calls == []  # nothing run yet
    assert dict(lazy) == {"six": 46, "half": 5, "other": 40}
    assert calls == names  # each once
    assert lazy["six"] == 46 and len(lazy) == 3 and list(lazy) == ["six", "half", "other"]
    assert calls == names
    assert lazy == {"six": 46, "half": 5, "other": 40}


def test_a_thinned_depth4_draw_never_runs_its_mistakes():
    fam = B.load_families()["tank_fill"]
    for i in range(50):
        try:
            problem = fam.generate(random.Random(i))
        except GenerationError:
            continue
        assert problem.mistakes._values is None  # not read: not computed
        assert len(problem.mistakes) >= 4
        assert problem.mistakes._values is not None
        break
    else:
        pytest.fail("no tank_fill draw in 50 seeds")


def test_the_cached_answer_shape_is_the_rendered_one():
    fams = B.load_families()
    seen = 0
    for name in ("time_clock_end", "money_discount_fee", "inventory_boxes"):
        for i in range(30):
            try:
                p = fams[name].generate(random.Random(i))
            except GenerationError:
                continue
            seen += 1
            assert answer_shape(p) == shape_of(p.render(p.answer))
            assert answer_shape(p, p.answer + 7) == shape_of(p.render(p.answer + 7))
    assert seen > 30


def test_percent_steps_check_the_same_in_int_arithmetic():
    step = check_step("tax: 15% of $1,240 = $186")
    assert step == CheckedStep("tax", (Fraction(15), Fraction(1240)), Fraction(186), "%", "15% of $1,240", "$186")
    assert check_step("x: 12.5% of 80 = 10").result == 10  # decimals: the Fraction path
    for wrong in ("tax: 15% of $1,240 = $187", "x: 12.5% of 80 = 11", "y: 3% of 10 = 0"):
        with pytest.raises(StepError):
            check_step(wrong)


def _fmt_reference(x, money=False, commas=False):
    """fmt_num's Fraction branch as it was, in Fraction arithmetic (the oracle)."""
    x = Fraction(x)
    sign = "-" if x < 0 else ""
    x = abs(x)
    whole, rest = divmod(x.numerator, x.denominator)
    text = f"{whole:,}" if commas else str(whole)
    if rest:
        den, twos, fives = x.denominator, 0, 0
        while den % 2 == 0:
            den, twos = den // 2, twos + 1
        while den % 5 == 0:
            den, fives = den // 5, fives + 1
        if den != 1:
            raise GenerationError(f"{x} has no terminating decimal form")
        places = max(twos, fives)
        text += "." + str((rest * 10**places) // x.denominator).rjust(places, "0").rstrip("0")
        if money and len(text.split(".")[1]) == 1:
            text += "0"
    return f"{sign}${text}" if money else sign + text


def test_fraction_rendering_and_exact_helpers_match_the_fraction_arithmetic():
    from synthprobe.benchmarks.deeparithmark.base import as_int, exact_op, fmt_num
    from synthprobe.benchmarks.deeparithmark.families._common_a import exact_div, whole

    rng = random.Random(5)
    dens = (1, 2, 3, 4, 5, 7, 8, 12, 16, 20, 25, 40, 100, 1000, 1024, 78125)
    for _ in range(4000):
        x = Fraction(rng.randint(-(10**7), 10**7), rng.choice(dens))
        for kw in ({}, {"money": True}, {"commas": True}, {"money": True, "commas": True}):
            try:
                want = _fmt_reference(x, **kw)
            except GenerationError as exc:
                with pytest.raises(GenerationError, match=re.escape(str(exc))):
                    fmt_num(x, **kw)
            else:
                assert fmt_num(x, **kw) == want
        w = whole(x)
        assert (w, type(w)) == ((int(x), int) if x.denominator == 1 else (None, type(None)))
        if x.denominator == 1:
            assert as_int(x) == int(x) and type(as_int(x)) is int
        else:
            with pytest.raises(GenerationError):
                as_int(x)
        y = Fraction(rng.randint(1, 999), rng.choice(dens))
        for op, ref in (("+", x + y), ("-", x - y), ("×", x * y), ("/", x / y)):
            got = exact_op(x, op, y)
            assert got == ref and type(got) is (int if ref.denominator == 1 else Fraction)
        q = exact_div(x, y)
        assert q == (int(x / y) if (x / y).denominator == 1 else None)
