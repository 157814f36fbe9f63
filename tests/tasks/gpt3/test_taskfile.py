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


# --------------------------------------------------------------------------------------
# 3. score gpt3 --task-file: a user's file in OpenAI's released format
# --------------------------------------------------------------------------------------

def _write_lines(path: Path, records) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.slow
def test_score_a_released_format_file_end_to_end(tmp_path):
    """Two files in OpenAI's format, one named by its released file name, one by NAME=PATH,
    scored by the CLI with the embedded model: the items are the files' (in file order), not
    the built pools, and the results name each file with its SHA-256."""
    import hashlib
    import json
    import os
    import subprocess
    import sys

    from synthprobe.results import read_results

    # OpenAI's layout, in an order no build gives (the file's own items must be scored)
    arith = [json.loads(it.to_json()) for it in build_items(BuildConfig("2D+", n=40, seed=5))][::-1]
    words = [json.loads(it.to_json()) for it in build_items(BuildConfig("RW", n=40, seed=7))][::-1]
    a_path = _write_lines(tmp_path / "two_digit_addition.jsonl", arith)
    w_path = _write_lines(tmp_path / "my words.jsonl", words)
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [sys.executable, "-m", "synthprobe", "score", "gpt3", "--task-file", str(a_path),
         "--task-file", f"reversed_words={w_path}", "--shots", "zero,one", "--limit", "3",
         "--threads", "1", "--save-predictions", "--quiet", "--no-cache", "--output", str(out)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (entry,) = read_results(out).models            # the one results document, through the one reader
    assert entry.settings["tasks"] == ["arithmetic_2da", "reversed_words"]
    assert entry.settings["task_files"] == [
        {"task": "arithmetic_2da", "path": str(a_path), "sha256": hashlib.sha256(a_path.read_bytes()).hexdigest(),
         "items": 40, "format": "openai"},
        {"task": "reversed_words", "path": str(w_path), "sha256": hashlib.sha256(w_path.read_bytes()).hexdigest(),
         "items": 40, "format": "openai"}]
    rows = {(r["task"], r["setting"]): r for r in entry.results["gpt3"].data["rows"]}
    assert sorted(rows) == [("arithmetic_2da", "one"), ("arithmetic_2da", "zero"),
                            ("reversed_words", "one"), ("reversed_words", "zero")]
    for (task, setting), r in rows.items():
        source = arith if task == "arithmetic_2da" else words
        assert r["task_file"] == str(a_path if task == "arithmetic_2da" else w_path)
        assert r["n"] == 3 and [it["gold"] for it in r["items"]] == [rec["completion"] for rec in source[:3]]
        assert all(it["n_shots"] == (1 if setting == "one" else 0) for it in r["items"])
        assert r["correct"] == sum(it["prediction"].strip() == it["gold"].strip() for it in r["items"])
        assert "paper" in r                                   # compared with GPT-3 as usual


def _good_arith():
    return [{"context": "\n\nQ: What is 98 plus 45?\n\nA:", "completion": " 143"},
            {"context": "\n\nQ: What is 7 plus 0?\n\nA:", "completion": " 7"}]


BAD_FILES = [
    # (file name or NAME=, records, line, field, words in the message)
    ("two_digit_addition.jsonl", _good_arith() + [{"context": "\n\nQ: What is 1 plus 1?\n\nA:",
                                                    "completion": " 2", "label": 0}], 3, "label", "unexpected"),
    ("two_digit_addition.jsonl", [{"context": "\n\nQ: What is 1 plus 1?\n\nA:"}], 1, "completion", "non-empty"),
    ("two_digit_addition.jsonl", _good_arith() + [{"context": "\n\nQ: What is 12 plus 30?\n\nA:",
                                                    "completion": " 43"}], 3, "completion", "wrong answer"),
    ("two_digit_addition.jsonl", [{"context": "\n\nQ: What is 12 minus 30?\n\nA:", "completion": " -18"}],
     1, "context", "plus"),
    ("two_digit_addition.jsonl", [{"context": "\n\nQ: What is 123 plus 3?\n\nA:", "completion": " 126"}],
     1, "context", "below 100"),
    ("two_digit_addition.jsonl", [{"context": "\n\nQ: What is 1 plus 2?\n\nA:", "completion": " \u0663"}],
     1, "completion", "ASCII"),
    ("two_digit_addition.jsonl", _good_arith() + [{"context": "Question: What is 1 plus 2?\nAnswer:",
                                                    "completion": " 3"}], 3, "context", "layout"),
    ("two_digit_addition.jsonl", _good_arith() + _good_arith()[:1], 3, "context", "repeats the item of line 1"),
    ("A1=x.jsonl", [{"context": "\ncorruption =", "completion": " corruption"},
                    {"context": "\nprocurtion =", "completion": " corruption"}], 2, "context", "first and last letter kept"),
    ("mid_word_1_anagrams.jsonl", _good_arith(), 1, "context", "scrambled"),
    ("reversed_words.jsonl", [{"context": "\nstcejbo =", "completion": " objects"},
                              {"context": "\nabc =", "completion": " abd"}], 2, "context", "the reversal of"),
]


@pytest.mark.parametrize("name,records,line,field,words", BAD_FILES)
def test_bad_task_file_is_one_located_error_before_the_model_loads(tmp_path, capsys, name, records, line, field,
                                                                   words):
    from synthprobe.cli import main

    label, sep, fname = name.partition("=")
    path = _write_lines(tmp_path / (fname if sep else name), records)
    spec = f"{label}={path}" if sep else str(path)
    out = tmp_path / "out.json"
    # a model path that does not exist: the file error must come first (exit 2, not a load failure)
    code = main(["score", "gpt3", "--task-file", spec, "--model", str(tmp_path / "no-model"),
                 "--output", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{path}:{line}: field {field!r}" in err and words in err, err
    assert not out.exists()


@pytest.mark.parametrize("spec,words", [
    ("nonsense_task.jsonl", "names no GPT-3 task"),
    ("bogus={path}", "names no GPT-3 task"),
    ("SAT={path}", "--sat-file"),
])
def test_task_file_that_names_no_task(tmp_path, capsys, spec, words):
    from synthprobe.cli import main

    path = _write_lines(tmp_path / "nonsense_task.jsonl", _good_arith())
    spec = spec.format(path=path) if "{" in spec else str(path)
    code = main(["score", "gpt3", "--task-file", spec, "--model", str(tmp_path / "no-model"), "--quiet",
                 "--output", str(tmp_path / "out.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and words in err and "--task-file" in err, err


def test_two_files_for_one_task_are_refused(tmp_path, capsys):
    from synthprobe.cli import main

    a = _write_lines(tmp_path / "two_digit_addition.jsonl", _good_arith())
    b = _write_lines(tmp_path / "b.jsonl", _good_arith()[:1])
    code = main(["score", "gpt3", "--task-file", str(a), "--task-file", f"2D+={b}", "--model",
                 str(tmp_path / "no-model"), "--quiet", "--output", str(tmp_path / "out.json")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "again" in err and str(b) in err, err


def test_task_file_loader_reads_released_layouts(tmp_path):
    from synthprobe.tasks.gpt3.taskfile import load_task_file

    # both arithmetic layouts, 1DC, and every word task as synthprobe builds it (OpenAI's layout)
    for code in ("2D-", "3D+", "2Dx", "1DC", "CL", "A1", "A2", "RI", "RW"):
        for fmt in (("openai", "eleuther") if code[0].isdigit() else ("openai",)):
            items = build_items(BuildConfig(code, n=300, format=fmt))
            path = tmp_path / f"{code.replace('+', 'p').replace('-', 'm')}_{fmt}.jsonl"
            path.write_text("".join(it.to_json() + "\n" for it in items), encoding="utf-8")
            tf = load_task_file(f"{code}={path}")
            assert tf.items == items and (tf.format == (fmt if code[0].isdigit() else None))
