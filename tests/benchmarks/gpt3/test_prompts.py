"""Zero-/one-/few-shot prompts: exact strings, demonstrations, fitting to max context."""

from __future__ import annotations

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, get_task
from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt, build_prompts, draw_demos, parse_shots
from synthprobe.benchmarks.gpt3.words import INSTRUCTION
from synthprobe.errors import InputError


@pytest.fixture(scope="module")
def pools():
    return {code: build_items(BuildConfig(code)) for code in ("2D+", "1DC", "CL", "RI", "SAT")}


def test_zero_shot_strings(pools):
    add = pools["2D+"][0]
    p = build_prompt(get_task("2D+"), pools["2D+"], 0, PromptConfig(shots=0))
    assert p.text == add.context[2:] and p.text.startswith("Q: What is ") and p.text.endswith("?\n\nA:")
    assert p.n_shots == 0 and p.demos == ()
    cl = pools["CL"][5]
    p = build_prompt(get_task("CL"), pools["CL"], 5, PromptConfig(shots=0))
    assert p.text == f"{INSTRUCTION}\n{cl.context[1:]}"
    assert p.text == "Please unscramble the letters into a word, and write that word:" + cl.context
    sat = pools["SAT"][0]
    assert build_prompt(get_task("SAT"), pools["SAT"], 0, PromptConfig(shots=0)).text == "puppy is to dog as" == sat.ctx
    eleuther = build_items(BuildConfig("2D+", n=10, format="eleuther"))
    p = build_prompt(get_task("2D+"), eleuther, 0, PromptConfig(shots=0, format="eleuther"))
    assert p.text == eleuther[0].context and p.text.startswith("Question: What is ")
    p = build_prompt(get_task("CL"), pools["CL"], 5, PromptConfig(shots=0, format="eleuther"))
    assert p.text == cl.context[1:]  # lm-eval: no instruction


def test_one_and_few_shot_strings(pools):
    pool = pools["2D+"]
    p = build_prompt(get_task("2D+"), pool, 7, PromptConfig(shots=1))
    (j,) = p.demos
    assert p.text == (pool[j].context + pool[j].completion + pool[7].context)[2:]
    # "Q: What is 17 minus 14?\n\nA: 3\n\nQ: What is 98 plus 45?\n\nA:" shape
    assert p.text.count("\n\nQ: What is ") == 1 and p.text.endswith("?\n\nA:")

    words = pools["RI"]
    p = build_prompt(get_task("RI"), words, 3, PromptConfig(shots=3))
    body = "".join(words[j].context + words[j].completion for j in p.demos)
    assert p.text == INSTRUCTION + body + words[3].context
    assert p.text.count("\n") == 4 and p.n_shots == 3

    sat = pools["SAT"]
    p = build_prompt(get_task("SAT"), sat, 2, PromptConfig(shots=2))
    a, b = p.demos
    assert p.text == f"{sat[a].ctx}{sat[a].completion}\n{sat[b].ctx}{sat[b].completion}\n{sat[2].ctx}"

    eleuther = build_items(BuildConfig("1DC", n=100, format="eleuther"))
    p = build_prompt(get_task("1DC"), eleuther, 0, PromptConfig(shots=2, format="eleuther"))
    a, b = p.demos
    assert p.text == (
        f"{eleuther[a].context}{eleuther[a].completion}\n\n"
        f"{eleuther[b].context}{eleuther[b].completion}\n\n{eleuther[0].context}"
    )


def test_demonstrations_never_include_the_test_item(pools):
    for code, k in (("2D+", 50), ("1DC", 50), ("CL", 100)):
        task, pool = get_task(code), pools[code]
        for i in range(0, len(pool), 37):
            p = build_prompt(task, pool, i, PromptConfig(shots=k))
            assert i not in p.demos and len(set(p.demos)) == k == p.n_shots
            assert p.text.count(pool[i].context.strip("\n")) == 1  # the test question once, at the end
            assert p.text.endswith(pool[i].context)
    sat = pools["SAT"]
    for i in range(len(sat)):  # K=20 > pool-1: every other item
        p = build_prompt(get_task("SAT"), sat, i, PromptConfig(shots=20))
        assert sorted(p.demos) == [j for j in range(len(sat)) if j != i]
        assert p.drawn == p.n_shots == 15 and not p.reduced


def test_draws_are_deterministic_and_independent_of_other_items():
    first = draw_demos("arithmetic_2da", 0, 11, 2000, 50)
    assert first == draw_demos("arithmetic_2da", 0, 11, 2000, 50)
    assert first != draw_demos("arithmetic_2da", 1, 11, 2000, 50)
    assert first != draw_demos("arithmetic_2da", 0, 12, 2000, 50)
    assert draw_demos("x", 0, 0, 1, 5) == [] and sorted(draw_demos("x", 0, 1, 3, 5)) == [0, 2]
    task, pool = get_task("2D+"), build_items(BuildConfig("2D+"))
    a = build_prompts(task, pool, range(5), PromptConfig(shots=50))
    b = build_prompts(task, pool, range(40), PromptConfig(shots=50))
    assert a == b[:5]


def test_gpt3_default_k():
    assert parse_shots("few", get_task("2D+")) == 50
    assert parse_shots("few", get_task("RW")) == 100
    assert parse_shots("few", get_task("SAT")) == 20
    assert parse_shots("zero", get_task("CL")) == parse_shots("0", get_task("CL")) == 0
    assert parse_shots("one", get_task("CL")) == 1 and parse_shots("7", get_task("CL")) == 7
    for bad in ("many", "-1"):
        with pytest.raises(InputError):
            parse_shots(bad, get_task("CL"))


@pytest.mark.parametrize("code,max_context,reserve", [("2D+", 400, 6), ("RI", 600, 20), ("CL", 300, 0)])
def test_fit_drops_far_demonstrations_and_records_the_count(pools, code, max_context, reserve):
    # one character per token: a real, simple tokenizer that makes budgets easy to check
    task, pool = get_task(code), pools[code]
    config = PromptConfig(shots=task.k_few, max_context=max_context, reserve=reserve)
    for i in (0, 1, 99):
        full = build_prompt(task, pool, i, PromptConfig(shots=task.k_few))
        p = build_prompt(task, pool, i, config, count_tokens=len)
        assert p.n_tokens == len(p.text) and len(p.text) + reserve <= max_context
        assert 0 < p.n_shots < task.k_few and p.reduced and p.drawn == task.k_few
        assert p.demos == full.demos[-p.n_shots :]  # the nearest ones are kept
        longer = build_prompt(task, pool, i, PromptConfig(shots=task.k_few), count_tokens=None)
        assert full.text == longer.text and full.text.endswith(p.text[-50:])
        # maximal: one more demonstration would not fit
        one_more = full.demos[-(p.n_shots + 1) :]
        head = INSTRUCTION if task.family == "words" else ""
        text = head + "".join(pool[j].context + pool[j].completion for j in one_more) + pool[i].context
        assert len(text.lstrip("\n")) + reserve > max_context


def test_fit_errors(pools):
    with pytest.raises(InputError, match="max context 20"):
        build_prompt(get_task("2D+"), pools["2D+"], 0, PromptConfig(shots=5, max_context=20), count_tokens=len)
    with pytest.raises(InputError):
        PromptConfig(shots=-1).validate()
    with pytest.raises(InputError):
        PromptConfig(shots=1, format="gpt2").validate()
