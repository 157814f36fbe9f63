"""The Deep Arithmark builder's fast paths (issue 15): each gives what the general route gives,
and the build's worker default and CPU accounting."""

from __future__ import annotations

import random
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthprobe.benchmarks.deeparithmark import build as B
from synthprobe.benchmarks.deeparithmark.base import GenerationError, exact_op, exact_pct, fmt_num
from synthprobe.benchmarks.deeparithmark.families._common_a import exact_div, pick_log_uniform, whole
from synthprobe.benchmarks.deeparithmark.steps import parse_number

ROOT = Path(__file__).resolve().parents[3]
ints = st.integers(min_value=-(10**7), max_value=10**7)


def _fraction_op(a, op, b):
    """The route every operation took before the int fast path."""
    a, b = Fraction(a), Fraction(b)
    c = {"+": a + b, "-": a - b, "×": a * b, "*": a * b}.get(op)
    if op == "/":
        if b == 0:
            raise GenerationError("division by zero")
        c = a / b
    return int(c) if c.denominator == 1 else c


@settings(max_examples=400, deadline=None)
@given(ints, st.sampled_from(["+", "-", "×", "*", "/"]), ints)
def test_int_operations_give_the_fraction_routes_value_and_type(a, op, b):
    try:
        want = _fraction_op(a, op, b)
    except GenerationError:
        with pytest.raises(GenerationError):
            exact_op(a, op, b)
        return
    got = exact_op(a, op, b)
    assert got == want and type(got) is type(want)
    # mixed and Fraction operands take the general route and agree too
    assert exact_op(Fraction(a), op, b) == want


@settings(max_examples=300, deadline=None)
@given(ints, st.integers(min_value=0, max_value=200))
def test_int_percentages_give_the_fraction_routes_value_and_type(a, p):
    want = Fraction(a) * Fraction(p) / 100
    want = int(want) if want.denominator == 1 else want
    got = exact_pct(p, a)
    assert got == want and type(got) is type(want)


@settings(max_examples=400, deadline=None)
@given(ints, st.booleans(), st.booleans())
def test_int_formatting_gives_the_fraction_routes_text(x, money, commas):
    assert fmt_num(x, money=money, commas=commas) == fmt_num(Fraction(x), money=money, commas=commas)


@settings(max_examples=200, deadline=None)
@given(ints, ints)
def test_whole_and_exact_div_fast_paths(a, b):
    assert whole(a) == a and type(whole(a)) is int
    want = None if b == 0 or Fraction(a, b or 1).denominator != 1 else a // b
    assert exact_div(a, b) == want
    assert exact_div(Fraction(a), b) == want


def test_parse_number_gives_a_fraction_for_whole_numbers_too():
    for text, want in (
        ("1234", Fraction(1234)),
        ("$1,250", Fraction(1250)),
        ("12.5", Fraction(25, 2)),
        ("-7", Fraction(-7)),
        ("0", Fraction(0)),
    ):
        got = parse_number(text)
        assert got == want and type(got) is Fraction, text


@pytest.mark.parametrize("power", [1.0, 1.5])
def test_pick_log_uniform_draws_as_choices_with_weights(power):
    values = [v for v in range(112, 1000) if v % 5]
    fast, slow = random.Random(5), random.Random(5)
    for _ in range(300):
        got = pick_log_uniform(fast, values, power=power)
        assert got == slow.choices(values, weights=[v**-power for v in values])[0]
    got = [pick_log_uniform(fast, range(4, 39)) for _ in range(100)]
    assert got == [slow.choices(range(4, 39), weights=[v**-1.0 for v in range(4, 39)])[0] for _ in range(100)]


def test_default_workers_is_serial_for_small_builds_and_all_cpus_for_large():
    assert B.default_workers(1000) == 1
    assert B.default_workers(B.PARALLEL_MIN_ITEMS - 1) == 1
    assert B.default_workers(B.PARALLEL_MIN_ITEMS) == B.available_cpus() >= 1
    assert B.available_cpus() <= (__import__("os").cpu_count() or 1)


def test_build_reports_its_workers_and_cpu_time(tmp_path):
    """Worker processes draw a legacy build (``decoys="legacy"``); a role-balanced build (the
    default) always runs in this process and says so, whatever ``workers`` asks for."""
    one = B.build(tmp_path / "1.jsonl", seed=3, n=300, progress=False, decoys="legacy")  # default workers: serial
    assert one.workers == 1 and one.stats.worker_cpu_s == 0.0 and one.cpu_s > 0
    two = B.build(tmp_path / "2.jsonl", seed=3, n=300, progress=False, workers=2, decoys="legacy")
    assert two.workers == 2 and two.stats.worker_cpu_s > 0 and two.cpu_s >= two.stats.worker_cpu_s
    assert one.sha256 == two.sha256
    assert two.cpu_us_per_item == pytest.approx(1e6 * two.cpu_s / 300)
    grouped = B.build(tmp_path / "g.jsonl", seed=3, n=300, progress=False, workers=2)
    assert grouped.workers == 1 and grouped.stats.worker_cpu_s == 0.0 and grouped.cpu_s > 0
    assert grouped.sha256 == B.build(tmp_path / "g1.jsonl", seed=3, n=300, progress=False).sha256


def test_cli_help_states_the_default_threshold_and_the_run_line_reports_cpu(tmp_path):
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    help_ = subprocess.run(
        [sys.executable, "-m", "synthprobe", "build", "deeparithmark", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert f"{B.PARALLEL_MIN_ITEMS:,}" in " ".join(help_.split())
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "build",
            "deeparithmark",
            "--n",
            "50",
            "--seed",
            "4",
            "--out",
            str(tmp_path / "x.jsonl"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    assert "1 worker," in out and "µs CPU per item" in out


# --- the build's per-draw helpers against the plain definitions they replace ---------------


def _usable_by_definition(problem):
    from synthprobe.benchmarks.deeparithmark.base import decoy_problem

    out, seen = {}, set()
    for name, value in problem.mistakes.items():
        if decoy_problem(problem.answer, value, problem.kind) is None and value not in seen:
            out[name] = value
            seen.add(value)
    return out


def _decoy_sets_by_definition(problem, rank):
    import itertools

    usable = _usable_by_definition(problem)
    width = len(problem.render(problem.answer))
    off_len = {v: len(problem.render(v)) != width for v in usable.values()}
    below = [(n, v) for n, v in usable.items() if v < problem.answer]
    above = [(n, v) for n, v in usable.items() if v > problem.answer]
    best, out = 4, []
    for lo in itertools.combinations(below, rank):
        for hi in itertools.combinations(above, 3 - rank):
            off = sum(off_len[v] for _, v in lo + hi)
            if off < best:
                best, out = off, [lo + hi]
            elif off == best:
                out.append(lo + hi)
    return best, out


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["count", "clock"]),
    st.integers(min_value=1, max_value=1439),
    st.lists(
        st.one_of(st.integers(min_value=-5, max_value=2000), st.booleans(), st.fractions(min_value=0, max_value=50)),
        min_size=0,
        max_size=12,
    ),
    st.sampled_from([" {} litres.", " ${}.", " {} 2-litre jugs.", "{}"]),
)
def test_usable_mistakes_and_decoy_sets_match_their_definitions(kind, answer, values, ending):
    from synthprobe.benchmarks.deeparithmark.base import Problem, feasible_ranks, usable_mistakes

    problem = Problem(
        family="tank_fill",
        topic="tank_fill",
        depth=4,
        ctx="c",
        answer=answer,
        unit="",
        ending=ending,
        steps=(),
        kind=kind,
        mistakes={f"m{i}": v for i, v in enumerate(values)},
    )
    try:
        want = _usable_by_definition(problem)
    except Exception as exc:  # a value the definition cannot take must fail the fast one too
        with pytest.raises(type(exc)):
            usable_mistakes(problem)
        return
    got = usable_mistakes(problem)
    assert got == want and list(got) == list(want)
    for rank in feasible_ranks(problem, got):
        assert B.decoy_sets(problem, rank) == _decoy_sets_by_definition(problem, rank)
        assert B.decoy_sets(problem, rank, got) == _decoy_sets_by_definition(problem, rank)


def test_pick_draws_as_randrange_did():
    from synthprobe.benchmarks.deeparithmark.families._common_a import pick

    fast, slow = random.Random(11), random.Random(11)
    for size in [1, 2, 3, 7, 10, 100, 1000, 2**20 + 3] * 20:
        options = range(size)
        assert pick(fast, options) == options[slow.randrange(size)]
    with pytest.raises(GenerationError):
        pick(fast, [])
