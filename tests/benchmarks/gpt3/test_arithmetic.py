"""GPT-3 arithmetic tasks: exact layout, sampling rules, dedup, determinism, aliases."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, get_task, serialize
from synthprobe.errors import InputError

TWO_OPERAND = [(f"arithmetic_{d}d{s}", d, op) for d in (2, 3, 4, 5) for s, op in (("a", "+"), ("s", "-"))]
TWO_OPERAND.append(("arithmetic_2dm", 2, "x"))
WORD = {"+": "plus", "-": "minus", "x": "times"}


def _value(a: int, op: str, b: int) -> int:
    return {"+": a + b, "-": a - b, "x": a * b, "*": a * b}[op]


@pytest.fixture(scope="module")
def built():
    return {name: build_items(BuildConfig(name)) for name, _, _ in TWO_OPERAND}


@pytest.mark.parametrize("name,digits,op", TWO_OPERAND)
def test_two_operand_layout_and_sampling(built, name, digits, op):
    items = built[name]
    assert len(items) == 2000
    pattern = re.compile(rf"^\n\nQ: What is (\d+) {WORD[op]} (\d+)\?\n\nA:$")
    pairs = []
    for item in items:
        m = pattern.match(item.context)
        assert m, item.context
        a, b = int(m.group(1)), int(m.group(2))
        assert 0 <= a < 10**digits and 0 <= b < 10**digits
        assert m.group(1) == str(a) and m.group(2) == str(b)  # no padding or separators
        assert re.fullmatch(r" -?\d+", item.completion), item.completion
        assert int(item.completion) == _value(a, op, b)
        pairs.append((a, b))
    assert len(set(pairs)) == 2000  # ordered pairs deduplicated
    # operands are not forced to d digits: ~10% are shorter (1 - 0.9 of uniform draws)
    short = sum(1 for a, b in pairs for x in (a, b) if x < 10 ** (digits - 1))
    assert 0.07 < short / 4000 < 0.13
    if op == "-":
        negatives = sum(1 for it in items if it.completion.startswith(" -"))
        assert 900 < negatives < 1100  # a - b kept as drawn


def test_swapped_pairs_count_as_different(built):
    pairs = {tuple(map(int, re.findall(r"\d+", it.context))) for it in built["arithmetic_2da"]}
    swapped = {(a, b) for a, b in pairs if a != b and (b, a) in pairs}
    assert swapped  # (a, b) and (b, a) both occur


def test_exact_json_lines():
    text = serialize(build_items(BuildConfig("2D+", n=3)))
    lines = text.splitlines()
    assert len(lines) == 3 and text.endswith("\n")
    for line in lines:
        obj = json.loads(line)
        assert list(obj) == ["context", "completion"]
        assert line == json.dumps(obj)  # '{"context": "...", "completion": " N"}'
        assert line.startswith('{"context": "\\n\\nQ: What is ') and '?\\n\\nA:", "completion": " ' in line


def test_one_digit_composite():
    items = build_items(BuildConfig("1DC"))
    assert len(items) == 2000
    pattern = re.compile(r"^\n\nQ: What is \(([1-9]) ([-+*]) ([1-9])\) ([-+*]) ([1-9])\?\n\nA:$")
    ops = Counter()
    values = []
    for item in items:
        m = pattern.match(item.context)
        assert m, item.context
        a, o1, b, o2, c = m.groups()
        value = _value(_value(int(a), o1, int(b)), o2, int(c))
        assert item.completion == f" {value}"
        ops[(o1, o2)] += 1
        values.append(value)
    assert len({it.context for it in items}) == 2000
    assert len(ops) == 9 and all(170 < n < 280 for n in ops.values()), ops
    assert -63 <= min(values) and max(values) <= 729
    assert min(values) < 0


def test_eleuther_format():
    items = build_items(BuildConfig("arithmetic_2da", n=50, format="eleuther"))
    openai = build_items(BuildConfig("arithmetic_2da", n=50))
    for e, o in zip(items, openai):
        assert re.fullmatch(r"Question: What is \d+ plus \d+\?\nAnswer:", e.context)
        # same problem, lm-eval's rewrite of the released context
        rewritten = o.context.strip().replace("\n\n", "\n").replace("Q:", "Question:").replace("A:", "Answer:")
        assert e.context == rewritten and e.completion == o.completion
    one = build_items(BuildConfig("1DC", n=1, format="eleuther"))[0]
    assert re.fullmatch(r"Question: What is \(\d [-+*] \d\) [-+*] \d\?\nAnswer:", one.context)


def test_prefix_stable_and_seeded():
    full = build_items(BuildConfig("3D-", n=500))
    assert build_items(BuildConfig("3D-", n=120)) == full[:120]
    # drawn again, not the kept build (build_items keeps the pools of the generated tasks)
    assert get_task("3D-").build(BuildConfig("3D-", n=500)) == full
    assert build_items(BuildConfig("3D-", n=500)) == full
    other = build_items(BuildConfig("3D-", n=500, seed=1))
    assert sum(a == b for a, b in zip(full, other)) < 5


def test_dedup_exhausts_the_whole_space_deterministically():
    # 2-digit multiplication has exactly 10,000 ordered pairs: n = 10,000 must list each once
    items = build_items(BuildConfig("2Dx", n=10_000))
    pairs = {tuple(map(int, re.findall(r"\d+", it.context))) for it in items}
    assert len(pairs) == 10_000
    assert items[:2000] == build_items(BuildConfig("2Dx"))
    with pytest.raises(InputError, match="at most 10,000 distinct"):
        BuildConfig("2Dx", n=10_001).validate()


@pytest.mark.parametrize(
    "alias,name",
    [
        ("2D+", "arithmetic_2da"),
        ("2D-", "arithmetic_2ds"),
        ("2D\u2212", "arithmetic_2ds"),
        ("5d-", "arithmetic_5ds"),
        ("2Dx", "arithmetic_2dm"),
        ("2D\u00d7", "arithmetic_2dm"),
        ("1DC", "arithmetic_1dc"),
        ("two_digit_addition", "arithmetic_2da"),
        ("single_digit_three_ops", "arithmetic_1dc"),
    ],
)
def test_aliases(alias, name):
    assert get_task(alias).name == name


def test_aliases_give_the_same_items():
    assert build_items(BuildConfig("4D+", n=30)) == build_items(BuildConfig("arithmetic_4da", n=30))


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"task": "7D+"}, "task"),
        ({"task": "2D+", "n": 0}, "n"),
        ({"task": "2D+", "seed": -1}, "seed"),
        ({"task": "2D+", "format": "gpt"}, "format"),
        ({"task": "2D+", "n": True}, "n"),
        ({"task": "2D+", "sat_file": "x.txt"}, "sat_file"),
    ],
)
def test_bad_config(kwargs, field):
    with pytest.raises(InputError) as err:
        BuildConfig(**kwargs).validate()
    assert err.value.field == field


def test_a_kept_build_is_handed_out_as_a_new_list():
    first = build_items(BuildConfig("2D+", n=5, seed=9))
    first.clear()  # a caller's change to its list reaches no later caller
    assert len(build_items(BuildConfig("2D+", n=5, seed=9))) == 5
