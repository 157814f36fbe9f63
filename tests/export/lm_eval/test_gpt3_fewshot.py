"""lm-eval honours --num_fewshot on the exported GPT-3 YAMLs: the real `lm_eval` CLI runs them one-shot
with the prompt `synthprobe score gpt3` builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items


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

    from synthprobe.benchmarks.gpt3 import get_task
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt
    from synthprobe.benchmarks.gpt3.words import INSTRUCTION
    from synthprobe.cli import main
    from tests.benchmarks.deeparithmark.export.test_hf import small_release
    from tests.export.lm_eval.test_tasks import tiny_llama

    data = tmp_path / "da.jsonl"
    small_release(data, n=8)
    out = tmp_path / "lm-eval"
    assert main(["export", "lm-eval", "--out", str(out), "--data", str(data), "--gpt3-tasks", "RW,2D+", "--quiet"]) == 0
    exported = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    model_dir = tiny_llama(tmp_path / "tiny-llama")
    results = tmp_path / "results"
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_CACHE=str(tmp_path / "hf-datasets"),
        TOKENIZERS_PARALLELISM="false",
    )
    tasks = ["synthprobe_reversed_words_gen", "synthprobe_arithmetic_2da"]
    cmd = [
        str(Path(sys.executable).parent / "lm_eval"),
        "--model",
        "hf",
        "--model_args",
        f"pretrained={model_dir},dtype=float32",
        "--include_path",
        str(out),
        "--tasks",
        ",".join(tasks),
        "--num_fewshot",
        "1",
        "--limit",
        "2",
        "--log_samples",
        "--output_path",
        str(results),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "Manual configuration will be ignored" not in proc.stdout + proc.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == exported  # run unchanged

    [summary] = glob.glob(str(results / "**" / "results_*.json"), recursive=True)
    assert all(n == 1 for n in json.loads(Path(summary).read_text(encoding="utf-8"))["n-shot"].values())
    for name in tasks:
        task = get_task(name.removeprefix("synthprobe_").removesuffix("_gen"))
        pool = build_items(BuildConfig(task.name, seed=0))
        [path] = [
            p
            for p in glob.glob(str(results / "**" / f"samples_{name}_*.jsonl"), recursive=True)
            if Path(p).name.split(f"samples_{name}_")[1][:1].isdigit()
        ]
        samples = sorted((json.loads(line) for line in open(path, encoding="utf-8")), key=lambda s: s["doc_id"])
        assert [s["doc_id"] for s in samples] == [0, 1]
        for s in samples:
            prompt = s["arguments"]["gen_args_0"]["arg_0"]
            i = s["doc_id"]
            assert prompt == build_prompt(task, pool, i, PromptConfig(shots=1)).text
            test_ctx = pool[i].context.lstrip("\n")
            demo = prompt[: len(prompt) - len(test_ctx)]
            assert prompt.endswith(test_ctx) and demo.strip()  # something before the test item
            if task.family == "words":
                # instruction line, one '<scrambled> = <word>' demonstration, then the test item
                assert prompt.startswith(INSTRUCTION + "\n") and prompt.count(" =") == 2
                assert any(it.context + it.completion in demo for it in pool if it is not pool[i])
            else:
                # one 'Q: ...\n\nA: N' demonstration before the test question
                assert prompt.count("Q: What is") == 2 and prompt.count("A:") == 2
