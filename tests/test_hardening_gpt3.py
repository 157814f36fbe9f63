"""Faithfulness and interoperability of the GPT-3 tasks: GPT-3's anagram rule, lm-eval's
few-shot runs of the exported YAMLs, and scoring a user's task file in OpenAI's format."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import pytest

from synthprobe.tasks.gpt3 import BuildConfig, build_items
from synthprobe.tasks.gpt3.words import anagram_1, anagram_2

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("anagram_rotation_share",
                                                  ROOT / "bench" / "anagram_rotation_share.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------
# 1. GPT-3's anagram rule: shuffle once, rotate left by one if the word came back
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("code", ["A1", "A2"])
def test_left_rotation_share_is_gpt3s_one_third(code):
    """Words whose middle is three distinct letters: the left rotation comes out in 1/3 of them
    under GPT-3's rule (the released files), 1/5 under "reshuffle until changed"."""
    bench = _bench()
    rotated, n = bench.rotation_share(bench.pairs_of_items(build_items(BuildConfig(code))), bench.KEEP[code])
    assert n > 1_400                                          # about 1,465 (A1) and 1,885 (A2)
    share = rotated / n
    # 3.5 standard errors of a binomial share of 1/3 at this n: about +-0.043 (A1), +-0.038 (A2);
    # 1/5 lies more than 7 standard errors away
    tolerance = 3.5 * math.sqrt((1 / 3) * (2 / 3) / n)
    assert abs(share - 1 / 3) <= tolerance, (code, rotated, n, share)
    assert abs(share - 1 / 5) > 2 * tolerance                 # the test tells the two rules apart


def test_shuffle_that_gives_the_word_back_becomes_a_left_rotation():
    # find seeds whose single shuffle of "abc" returns "abc": the rule rotates instead of redrawing
    word = "xabcy"
    identity_seeds = []
    for seed in range(200):
        letters = list("abc")
        random.Random(seed).shuffle(letters)
        if letters == list("abc"):
            identity_seeds.append(seed)
    assert identity_seeds
    for seed in identity_seeds:
        assert anagram_1(word, random.Random(seed)) == "xbcay"
        assert anagram_2("x" + word + "y", random.Random(seed)) == "xxbcayy"
    # any other seed: exactly one shuffle of the middle, as random.shuffle gives it
    for seed in set(range(200)) - set(identity_seeds):
        letters = list("abc")
        random.Random(seed).shuffle(letters)
        assert anagram_1(word, random.Random(seed)) == "x" + "".join(letters) + "y"


def test_unchanged_counts_stay_those_of_the_released_files():
    for code, expected in (("A1", 0), ("A2", 193)):
        keep = 1 if code == "A1" else 2
        unchanged = [it for it in build_items(BuildConfig(code))
                     if it.context.strip().removesuffix(" =") == it.completion.strip()]
        assert len(unchanged) == expected, code
        assert all(len(set(it.completion.strip()[keep:-keep])) == 1 for it in unchanged)


# --------------------------------------------------------------------------------------
# 2. lm-eval honours --num_fewshot on the exported GPT-3 YAMLs
# --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_exported_yaml_runs_one_shot_in_lm_eval(tmp_path):
    """The exported YAMLs, unchanged, run by the real `lm_eval` CLI with --num_fewshot 1: the
    logged prompt holds one demonstration (the prompt `synthprobe score gpt3` builds one-shot),
    and lm-eval does not warn that it ignores the manual setting."""
    pytest.importorskip("lm_eval")  # test dependency: pip install lm-eval==0.4.13
    import glob
    import json
    import os
    import subprocess
    import sys

    from synthprobe.cli import main
    from synthprobe.tasks.gpt3 import get_task
    from synthprobe.tasks.gpt3.prompts import PromptConfig, build_prompt
    from synthprobe.tasks.gpt3.words import INSTRUCTION
    from test_export_hf import small_release
    from test_export_lm_eval import tiny_llama

    data = tmp_path / "da.jsonl"
    small_release(data, n=8)
    out = tmp_path / "lm-eval"
    assert main(["export", "lm-eval", "--out", str(out), "--data", str(data), "--gpt3-tasks", "RW,2D+",
                 "--quiet"]) == 0
    exported = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    model_dir = tiny_llama(tmp_path / "tiny-llama")
    results = tmp_path / "results"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"), TOKENIZERS_PARALLELISM="false")
    tasks = ["synthprobe_reversed_words_gen", "synthprobe_arithmetic_2da"]
    cmd = [str(Path(sys.executable).parent / "lm_eval"), "--model", "hf",
           "--model_args", f"pretrained={model_dir},dtype=float32", "--include_path", str(out),
           "--tasks", ",".join(tasks), "--num_fewshot", "1", "--limit", "2",
           "--log_samples", "--output_path", str(results)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Manual configuration will be ignored" not in proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == exported   # run unchanged

    [summary] = glob.glob(str(results / "**" / "results_*.json"), recursive=True)
    assert all(n == 1 for n in json.loads(Path(summary).read_text(encoding="utf-8"))["n-shot"].values())
    for name in tasks:
        task = get_task(name.removeprefix("synthprobe_").removesuffix("_gen"))
        pool = build_items(BuildConfig(task.name, seed=0))
        [path] = [p for p in glob.glob(str(results / "**" / f"samples_{name}_*.jsonl"), recursive=True)
                  if Path(p).name.split(f"samples_{name}_")[1][:1].isdigit()]
        samples = sorted((json.loads(line) for line in open(path, encoding="utf-8")), key=lambda s: s["doc_id"])
        assert [s["doc_id"] for s in samples] == [0, 1]
        for s in samples:
            prompt = s["arguments"]["gen_args_0"]["arg_0"]
            i = s["doc_id"]
            assert prompt == build_prompt(task, pool, i, PromptConfig(shots=1)).text
            test_ctx = pool[i].context.lstrip("\n")
            demo = prompt[:len(prompt) - len(test_ctx)]
            assert prompt.endswith(test_ctx) and demo.strip()       # something before the test item
            if task.family == "words":
                # instruction line, one '<scrambled> = <word>' demonstration, then the test item
                assert prompt.startswith(INSTRUCTION + "\n") and prompt.count(" =") == 2
                assert any(it.context + it.completion in demo for it in pool if it is not pool[i])
            else:
                # one 'Q: ...\n\nA: N' demonstration before the test question
                assert prompt.count("Q: What is") == 2 and prompt.count("A:") == 2
