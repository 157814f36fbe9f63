"""`synthprobe export lm-eval`: task YAMLs that lm-evaluation-harness really runs — Deep
Arithmark with the same per-choice log-likelihoods as synthprobe's scorers, and GPT-3's
synthetic tasks with the same prompts and greedy answers as `synthprobe score gpt3`.

lm-eval is a test dependency: ``pip install lm-eval==0.4.13``.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from synthprobe.benchmarks.gpt3.export.lm_eval import FEWSHOT_MODULE
from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt
from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, get_task, ordered_tasks, serialize
from synthprobe.benchmarks.gpt3.words import INSTRUCTION
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.export.lm_eval.tasks import export_lm_eval
from tests.benchmarks.deeparithmark.export.test_hf import small_release

GENERATION_TASKS = [t for t in ordered_tasks() if t.family in ("arithmetic", "words")]


class _Loader(yaml.SafeLoader):
    """Reads lm-eval's ``!function module.name`` tag as the string ``"!function module.name"``."""


_Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))


def load_yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


def tree(folder: Path) -> dict[Path, bytes]:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture()
def exported(tmp_path) -> tuple[Path, Path, list[dict]]:
    data = tmp_path / "deeparithmark-small.jsonl"
    rows = small_release(data)
    out = tmp_path / "lm-eval"
    assert main(["export", "lm-eval", "--out", str(out), "--data", str(data), "--quiet"]) == 0
    return out, data, rows


def test_task_yaml_follows_the_protocol(exported):
    out, data, rows = exported
    task = load_yaml(out / "deeparithmark.yaml")
    assert task["task"] == "deeparithmark"
    assert task["dataset_path"] == "json"
    data_file = Path(task["dataset_kwargs"]["data_files"]["test"])
    # relative to the export folder, loaded by the folder's own module: the folder can move
    assert not data_file.is_absolute() and (out / data_file).read_bytes() == data.read_bytes()
    assert task["custom_dataset"] == "!function synthprobe_data.load"
    assert task["test_split"] == "test"
    assert task["output_type"] == "multiple_choice"
    assert task["doc_to_text"] == "{{ctx}}"
    assert task["doc_to_choice"] == "endings"
    assert task["doc_to_target"] == "{{label}}"
    assert task["target_delimiter"] == ""
    assert [m["metric"] for m in task["metric_list"]] == ["acc", "acc_norm"]
    # every protocol difference with ArithMark 3.0 is stated, with the lm-eval switch that removes it
    for name in ["deeparithmark"] + [f"deeparithmark_depth{d}" for d in sorted({r["metadata"]["depth"] for r in rows})]:
        header = "".join(
            ln for ln in (out / f"{name}.yaml").read_text(encoding="utf-8").splitlines(True) if ln.startswith("#")
        )
        assert "CHARACTERS" in header and "TOKENS" in header  # acc_norm
        assert "BOS" in header and "add_bos_token=False" in header  # BOS by tokenizer default
        assert "one string" in header and "separately" in header  # joint vs separate tokenisation
        assert "use_fast_tokenizer=False" in header and "dtype=float32" in header


def test_depth_tasks_partition_the_release(exported):
    out, data, rows = exported
    group = load_yaml(out / "deeparithmark_depths.yaml")
    depths = sorted({r["metadata"]["depth"] for r in rows})
    assert group["task"] == [f"deeparithmark_depth{d}" for d in depths]
    seen = []
    for d in depths:
        task = load_yaml(out / f"deeparithmark_depth{d}.yaml")
        lines = (out / task["dataset_kwargs"]["data_files"]["test"]).read_text(encoding="utf-8").splitlines()
        assert lines and all(json.loads(line)["metadata"]["depth"] == d for line in lines)
        seen += lines
    assert sorted(seen) == sorted(data.read_text(encoding="utf-8").splitlines())


def test_plain_export_writes_the_gpt3_tasks(exported):
    """No `synthprobe build` first: the 15 generation tasks come with the plain export, their
    pools exactly those `synthprobe score gpt3` scores (seed 0, openai layout); no SAT task."""
    out, _, _ = exported
    module = (out / f"{FEWSHOT_MODULE}.py").read_text(encoding="utf-8")
    for task in GENERATION_TASKS:
        name = f"synthprobe_{task.name}"
        ll, gen = load_yaml(out / f"{name}.yaml"), load_yaml(out / f"{name}_gen.yaml")
        data = out / ll["dataset_kwargs"]["data_files"]["test"]
        assert ll["dataset_kwargs"]["data_files"]["test"] == f"data/{name}.jsonl"
        assert data.read_bytes() == serialize(build_items(BuildConfig(task.name, seed=0))).encode()
        assert gen["dataset_kwargs"] == ll["dataset_kwargs"]
        for y in (ll, gen):
            # demonstrations from the task's own pool, drawn by synthprobe's sampler
            assert y["fewshot_split"] == y["test_split"] == "test"
            assert y["fewshot_config"]["sampler"] == f"!function {FEWSHOT_MODULE}.demos_{name}"
            # num_fewshot unset: a 0 there makes lm-eval ignore --num_fewshot
            assert y["target_delimiter"] == "" and "num_fewshot" not in y
            assert y.get("description") == (INSTRUCTION if task.family == "words" else None)
        assert f"demos_{name} = demo_sampler({task.name!r}, 0)" in module
        assert ll["output_type"] == "loglikelihood" and ll["doc_to_target"] == "{{completion}}"
        assert ll["tag"] == ["synthprobe_gpt3", f"synthprobe_gpt3_{task.family}"]
        assert gen["output_type"] == "generate_until" and gen["doc_to_target"] == "{{completion | trim}}"
        assert gen["fewshot_config"]["doc_to_target"] == "{{completion}}"  # demos keep the leading space
        assert gen["generation_kwargs"] == {"until": ["\n"], "do_sample": False, "max_gen_toks": task.max_new_tokens}
        assert gen["tag"] == ["synthprobe_gpt3_gen", f"synthprobe_gpt3_{task.family}_gen"]
        header = (out / f"{name}_gen.yaml").read_text(encoding="utf-8").split("\ntask:")[0]
        # what differs from `synthprobe score gpt3`, stated plainly
        for word in (
            "prompt",
            "demos",
            "--num_fewshot",
            f"{task.k_few}",
            "--max-context",
            "BOS",
            "add_bos_token=False",
        ):
            assert word in header, (name, word)
    assert not list(out.glob("synthprobe_sat*"))
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "--tasks synthprobe_gpt3_words_gen --num_fewshot 100" in readme
    assert "--tasks synthprobe_gpt3_arithmetic_gen --num_fewshot 50" in readme


def test_export_is_deterministic_and_bad_input_writes_nothing(exported, tmp_path):
    out, data, _ = exported
    again = tree(out)
    with pytest.raises(InputError, match="already holds"):  # our files are there: refused ...
        export_lm_eval(out, data=data)
    assert again == tree(out)
    export_lm_eval(out, data=data, overwrite=True)  # ... unless asked to replace them
    assert again == tree(out)
    other = tmp_path / "seed1"
    export_lm_eval(other, data=data, gpt3_tasks="2D+,RW", gpt3_seed=1)
    assert sorted(p.name for p in (other / "data").glob("synthprobe_*")) == [
        "synthprobe_arithmetic_2da.jsonl",
        "synthprobe_reversed_words.jsonl",
    ]
    rel = Path("data") / "synthprobe_reversed_words.jsonl"
    assert tree(other)[rel] != again[rel]  # another seed, other items
    assert "demo_sampler('reversed_words', 1)" in (other / f"{FEWSHOT_MODULE}.py").read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(data.read_text(encoding="utf-8").replace('"label": "1"', '"label": "7"', 1), encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "fresh", data=bad)
    assert err.value.field == "label" and err.value.line is not None
    assert not (tmp_path / "fresh").exists()
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "fresh", data=data, gpt3_tasks="arithmetic,SAT")
    assert err.value.field == "--gpt3-tasks" and "--sat-file" in str(err.value)
    with pytest.raises(InputError, match="unknown task"):
        export_lm_eval(tmp_path / "fresh", data=data, gpt3_tasks="2D+,nonsense")
    assert not (tmp_path / "fresh").exists()


def test_user_built_files_and_sat(tmp_path, exported, capsys):
    from synthprobe.benchmarks.gpt3.sat import sample_path

    _, data, _ = exported
    arith = tmp_path / "arithmetic_2da.jsonl"  # a user's own file replaces the built task
    arith.write_text(
        "".join(
            json.dumps({"context": f"Question: What is {a} plus {b}?\nAnswer:", "completion": f" {a + b}"}) + "\n"
            for a, b in [(98, 45), (12, 30), (7, 61)]
        ),
        encoding="utf-8",
    )
    out = tmp_path / "with-files"
    assert (
        main(
            [
                "export",
                "lm-eval",
                "--out",
                str(out),
                "--data",
                str(data),
                "--gpt3-tasks",
                "2D+,2D-",
                "--gpt3",
                str(arith),
                "--sat-file",
                str(sample_path()),
                "--quiet",
            ]
        )
        == 0
    )
    assert "in " in capsys.readouterr().err  # the wall time is reported
    ll = load_yaml(out / "synthprobe_arithmetic_2da.yaml")
    assert (out / ll["dataset_kwargs"]["data_files"]["test"]).read_bytes() == arith.read_bytes()
    assert (
        ll["doc_to_text"] == "{{context}}" and ll["fewshot_delimiter"] == "\n\n"
    )  # eleuther layout, read off the file
    assert "only if this file is the pool" in (out / "synthprobe_arithmetic_2da.yaml").read_text(encoding="utf-8")
    assert (out / "synthprobe_arithmetic_2ds_gen.yaml").is_file()
    sat = load_yaml(out / "synthprobe_sat_analogies.yaml")
    assert sat["output_type"] == "multiple_choice" and sat["doc_to_choice"] == "endings"
    assert sat["target_delimiter"] == "" and sat["fewshot_delimiter"] == "\n"
    assert sat["fewshot_config"]["sampler"] == f"!function {FEWSHOT_MODULE}.demos_synthprobe_sat_analogies"
    assert "PER-TOKEN" in (out / "synthprobe_sat_analogies.yaml").read_text(encoding="utf-8")
    assert not (out / "synthprobe_sat_analogies_gen.yaml").exists()

    none = tmp_path / "none"
    export_lm_eval(none, data=data, gpt3_tasks="none")
    assert [p.name for p in none.glob("synthprobe_*")] == ["synthprobe_data.py"]  # no GPT-3 task
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"context": "Q", "completion": ""}\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "x", data=data, gpt3={"arithmetic_2ds": broken})
    assert (err.value.line, err.value.field) == (1, "completion")
    bad_sat = tmp_path / "sat.jsonl"
    bad_sat.write_text(
        json.dumps({"ctx": "a is to b as", "label": 0, "endings": ["c is to d", " e is to f"]}) + "\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as err:
        export_lm_eval(tmp_path / "x", data=data, gpt3={"sat": bad_sat})
    assert (err.value.line, err.value.field) == (1, "endings")
    assert not (tmp_path / "x").exists()
    assert (
        main(
            [
                "export",
                "lm-eval",
                "--out",
                str(tmp_path / "y"),
                "--data",
                str(data),
                "--gpt3",
                str(tmp_path / "missing.jsonl"),
            ]
        )
        == 2
    )
    assert main(["export", "lm-eval", "--out", str(tmp_path / "y"), "--data", str(data), "--gpt3-tasks", "sat"]) == 2
    assert "--sat-file" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()


def test_help_explains(capsys):
    with pytest.raises(SystemExit):
        main(["export", "lm-eval", "--help"])
    text = capsys.readouterr().out
    for word in ("--gpt3-seed", "--gpt3-format", "--sat-file", "--num_fewshot", "description", "synthprobe_fewshot.py"):
        assert word in text


# ---------------------------------------------------------------------------------------
# lm-eval itself builds the prompts (in-process, no model)
# ---------------------------------------------------------------------------------------


def lm_eval_tasks(folder: Path, names: list[str], cache: Path, monkeypatch) -> dict:
    pytest.importorskip("lm_eval")  # test dependency: pip install lm-eval==0.4.13
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    from lm_eval.tasks import TaskManager

    found = TaskManager(include_path=str(folder), include_defaults=False).load(names)["tasks"]
    assert sorted(found) == sorted(names)
    return found


def assert_prompts_match(tasks: dict, fmt: str, seed: int, pools: dict) -> int:
    """lm-eval's prompt for items 0, 1 and 7 with K = 0, 1 and 5 is synthprobe's, character for
    character; returns the number of prompts compared."""
    compared = 0
    for name, task in tasks.items():
        ours = get_task(name.removeprefix("synthprobe_").removesuffix("_gen"))
        pool = pools[ours.name]
        docs = task.eval_docs
        for k in (0, 1, 5):
            for i in (0, 1, 7):
                theirs = task.fewshot_context(docs[i], k)
                mine = build_prompt(ours, pool, i, PromptConfig(shots=k, format=fmt, seed=seed)).text
                assert theirs == mine, (name, k, i, theirs[:300], mine[:300])
                compared += 1
    return compared


def test_lm_eval_builds_synthprobe_prompts(tmp_path, monkeypatch):
    """Every exported GPT-3 task, zero-, one- and few-shot, openai and eleuther layouts, SAT
    from a user's file: the prompt lm-eval builds (description, demonstrations drawn by
    synthprobe_fewshot.py, delimiters, test item) is the prompt `synthprobe score gpt3` builds."""
    from synthprobe.benchmarks.gpt3.sat import sample_path

    data = tmp_path / "da.jsonl"
    small_release(data, n=8)
    cache = tmp_path / "hf-datasets"
    out = tmp_path / "openai"
    export_lm_eval(out, data=data, sat_file=sample_path())
    names = [f"synthprobe_{t.name}_gen" for t in GENERATION_TASKS] + [
        "synthprobe_arithmetic_1dc",
        "synthprobe_anagrams2",
        "synthprobe_sat_analogies",
    ]
    pools = {t.name: build_items(BuildConfig(t.name, seed=0)) for t in GENERATION_TASKS}
    pools["sat_analogies"] = build_items(BuildConfig("sat_analogies", sat_file=str(sample_path())))
    n = assert_prompts_match(lm_eval_tasks(out, names, cache, monkeypatch), "openai", 0, pools)
    assert n == len(names) * 9

    out = tmp_path / "eleuther"
    export_lm_eval(out, data=data, gpt3_tasks="2D+,1DC,RI", gpt3_seed=3, gpt3_format="eleuther")
    names = ["synthprobe_arithmetic_2da_gen", "synthprobe_arithmetic_1dc", "synthprobe_random_insertion_gen"]
    pools = {
        t: build_items(BuildConfig(t, seed=3, format="eleuther"))
        for t in ("arithmetic_2da", "arithmetic_1dc", "random_insertion")
    }
    assert assert_prompts_match(lm_eval_tasks(out, names, cache, monkeypatch), "eleuther", 3, pools) == 27


# ---------------------------------------------------------------------------------------
# A real lm-eval run against our own log-likelihoods and generations
# ---------------------------------------------------------------------------------------


def tiny_llama(folder: Path) -> Path:
    """A randomly initialised 2-layer Llama with the embedded model's tokenizer."""
    import torch
    from scoring_support import embedded_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = embedded_tokenizer()
    torch.manual_seed(1234)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(cfg).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def run_lm_eval(out: Path, model_dir: Path, samples: dict[str, list[int]], results: Path, cache: Path) -> None:
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_CACHE=str(cache),
        TOKENIZERS_PARALLELISM="false",
    )
    tasks = [t for t in samples if not t.startswith("deeparithmark_depth")] + ["deeparithmark_depths"]
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
        "--samples",
        json.dumps(samples),
        "--log_samples",
        "--output_path",
        str(results),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


def samples_of(results: Path, task: str) -> list[dict]:
    # samples_<task>_<date>T<time>.jsonl; `arithmetic_2da_*` would also match `arithmetic_2da_gen_*`
    [path] = [
        p
        for p in glob.glob(str(results / "**" / f"samples_{task}_*.jsonl"), recursive=True)
        if re.fullmatch(rf"samples_{task}_\d{{4}}-.*\.jsonl", Path(p).name)
    ]
    with open(path, encoding="utf-8") as fh:
        return sorted((json.loads(line) for line in fh), key=lambda s: s["doc_id"])


def check_choices(samples: list[dict], items: list, ours: dict[str, list]) -> float:
    """Every per-choice log-likelihood and greedy flag of lm-eval against each of our scorers,
    and lm-eval's acc / per-character acc_norm recomputed from ours; returns the worst |delta|."""
    worst = 0.0
    assert [s["doc"]["source_id"] for s in samples] == [it.raw["source_id"] for it in items]
    for scorer, scores_per_item in ours.items():
        for s, item, scores in zip(samples, items, scores_per_item):
            theirs = [(float(ll), greedy == "True") for ll, greedy in s["filtered_resps"]]
            assert len(theirs) == len(scores) == len(item.endings)
            for (ll, greedy), mine in zip(theirs, scores):
                worst = max(worst, abs(ll - mine.logprob))
                assert greedy == mine.is_greedy, scorer
            lls = sorted((sc.logprob for sc in scores), reverse=True)
            assert lls[0] - lls[1] > 1e-3, "near-tie: pick another seed for the tiny model"
            pred = max(range(len(scores)), key=lambda i: (scores[i].logprob, -i))
            pred_char = max(range(len(scores)), key=lambda i: (scores[i].per_char, -i))
            assert s["acc"] == float(pred == item.label), scorer
            assert s["acc_norm"] == float(pred_char == item.label), scorer  # lm-eval's: per character
    return worst


@pytest.mark.slow
def test_lm_eval_run_matches_our_scorer(exported, tmp_path):
    """One lm-eval run on a tiny Llama: Deep Arithmark and its depth group give the per-choice
    log-likelihoods of both our scorers (one-pass, the default, and the per-ending reference;
    fp32), the same acc and acc_norm; the GPT-3 arithmetic task the same greedy flags and
    generations; a 3-shot word task the same prompt and the same greedy generations."""
    from importlib.metadata import version

    import lm_eval  # noqa: F401  test dependency: pip install lm-eval==0.4.13

    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3

    lm_eval_version = version("lm_eval")
    out, data, rows = exported
    depths = sorted({r["metadata"]["depth"] for r in rows})
    word = get_task("reversed_words")
    (out / "rw_3shot.yaml").write_text(
        "include: synthprobe_reversed_words_gen.yaml\ntask: synthprobe_reversed_words_gen_3shot\n"
        "tag: []\nnum_fewshot: 3\n",
        encoding="utf-8",
    )
    samples = {
        "deeparithmark": list(range(8)),
        **{f"deeparithmark_depth{d}": [0, 1] for d in depths},
        "synthprobe_arithmetic_2da": [0, 1, 2, 3],
        "synthprobe_arithmetic_2da_gen": [0, 1, 2, 3],
        "synthprobe_reversed_words_gen_3shot": [0, 1],
    }
    model_dir = tiny_llama(tmp_path / "tiny-llama")
    results = tmp_path / "lm-eval-results"
    run_lm_eval(out, model_dir, samples, results, tmp_path / "hf-datasets")
    [summary_file] = glob.glob(str(results / "**" / "results_*.json"), recursive=True)
    summary = json.loads(Path(summary_file).read_text(encoding="utf-8"))
    assert summary["lm_eval_version"] == lm_eval_version

    backend = load_backend(str(model_dir), dtype="float32", device="cpu", progress=False)

    def ours(items):
        return {
            scorer: backend.score_choices(items, scorer=scorer, batch_size=len(items), progress=False)
            for scorer in ("onepass", "reference")
        }

    # Deep Arithmark: every per-choice log-likelihood, acc and lm-eval's per-character acc_norm
    items = load_arithmark3(data)[:8]
    worst = check_choices(samples_of(results, "deeparithmark"), items, ours(items))
    # the depth group, run once: each tier's items against ours, the group's mean weighted by size
    accs, sizes = [], []
    for d in depths:
        depth_file = out / "data" / f"{data.stem}.depth{d}.jsonl"
        tier = load_arithmark3(depth_file)[:2]
        found = samples_of(results, f"deeparithmark_depth{d}")
        worst = max(worst, check_choices(found, tier, ours(tier)))
        assert summary["results"][f"deeparithmark_depth{d}"]["acc,none"] == pytest.approx(
            sum(s["acc"] for s in found) / len(found)
        )
        accs.append(sum(s["acc"] for s in found))
        sizes.append(len(found))
    assert summary["results"]["deeparithmark_depths"]["acc,none"] == pytest.approx(sum(accs) / sum(sizes))
    print(f"lm-eval {lm_eval_version}: max |delta loglik| = {worst:.2e} (one-pass and reference scorers)")
    assert worst <= 1e-4
    assert summary["results"]["deeparithmark"]["acc,none"] == pytest.approx(
        sum(s["acc"] for s in samples_of(results, "deeparithmark")) / 8
    )

    # GPT-3 arithmetic, loglikelihood form: acc is "the gold completion is the greedy continuation"
    pool = build_items(BuildConfig("arithmetic_2da", seed=0))
    arith = get_task("arithmetic_2da")
    found = samples_of(results, "synthprobe_arithmetic_2da")
    prompts = [build_prompt(arith, pool, i, PromptConfig(shots=0)).text for i in range(4)]
    mine = backend.loglikelihood([(p, pool[i].completion) for i, p in enumerate(prompts)])
    for s, item, prompt, sc in zip(found, pool, prompts, mine):
        assert s["doc"] == {"context": item.context, "completion": item.completion}
        assert s["arguments"]["gen_args_0"]["arg_0"] == prompt  # GPT-3's first blank lines dropped
        [(ll, greedy)] = s["filtered_resps"]  # one (loglikelihood, is_greedy) pair per doc
        assert abs(float(ll) - sc.logprob) <= 1e-4
        assert s["acc"] == float(sc.is_greedy) == float(greedy == "True")

    # GPT-3 arithmetic, generation form: the same greedy text up to the newline
    found = samples_of(results, "synthprobe_arithmetic_2da_gen")
    texts = backend.generate(prompts, arith.max_new_tokens, stop="\n", batch_size=1, progress=False)
    assert [s["resps"][0][0] for s in found] == texts
    assert [s["exact_match"] for s in found] == [
        float(t.strip() == it.completion.strip()) for t, it in zip(texts, pool)
    ]

    # A word task, 3-shot: lm-eval's prompt is synthprobe's (instruction line, demonstrations
    # drawn by synthprobe), and its greedy generations are ours on that prompt
    pool = build_items(BuildConfig(word.name, seed=0))
    prompts = [build_prompt(word, pool, i, PromptConfig(shots=3)).text for i in range(2)]
    assert all(p.startswith(INSTRUCTION + "\n") and p.count("\n") == 4 and p.endswith(" =") for p in prompts)
    found = samples_of(results, "synthprobe_reversed_words_gen_3shot")
    assert [s["arguments"]["gen_args_0"]["arg_0"] for s in found] == prompts
    texts = backend.generate(prompts, word.max_new_tokens, stop="\n", batch_size=1, progress=False)
    assert [s["resps"][0][0] for s in found] == texts
    assert [s["exact_match"] for s in found] == [
        float(t.strip() == pool[i].completion.strip()) for i, t in enumerate(texts)
    ]


def test_a_user_task_file_gets_the_same_checks_as_score_gpt3_task_file(tmp_path):
    """One validation of user task files: export refuses what `score gpt3 --task-file` refuses."""
    from synthprobe.benchmarks.gpt3.export.lm_eval import user_pool
    from synthprobe.benchmarks.gpt3.taskfile import load_task_file

    wrong = tmp_path / "arithmetic_2da.jsonl"
    wrong.write_text(json.dumps({"context": "Q: What is 2 plus 2?\n\nA:", "completion": " 5"}) + "\n", encoding="utf-8")
    for load in (lambda: user_pool("synthprobe_arithmetic_2da", wrong), lambda: load_task_file(str(wrong))):
        with pytest.raises(InputError) as err:
            load()
        assert (err.value.line, err.value.field) == (1, "completion") and "wrong answer" in str(err.value)
    extra = tmp_path / "mystery.jsonl"  # no task to check against: the record's shape still is
    extra.write_text(json.dumps({"context": "a", "completion": " b", "note": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        user_pool("synthprobe_mystery", extra)
    assert (err.value.line, err.value.field) == (1, "note")


def test_exported_folder_can_be_moved(exported, tmp_path, monkeypatch):
    """Export, move the folder, run lm-eval's own task loading from elsewhere: it still finds
    every task's data (the paths are relative to the folder, resolved by synthprobe_data.py)."""
    import shutil

    from lm_eval.tasks import TaskManager

    out, data, rows = exported
    moved = tmp_path / "elsewhere" / "tasks"
    moved.parent.mkdir()
    shutil.copytree(out, moved)
    shutil.rmtree(out)
    monkeypatch.chdir(tmp_path / "elsewhere")
    for path in moved.glob("*.yaml"):
        assert str(out) not in path.read_text(encoding="utf-8"), path.name
    tasks = TaskManager(include_path=str(moved), include_defaults=False).load(
        ["deeparithmark", "synthprobe_arithmetic_2da_gen"]
    )["tasks"]
    docs = {name: list(task.test_docs()) for name, task in tasks.items()}
    assert [d["ctx"] for d in docs["deeparithmark"]] == [r["ctx"] for r in rows]
    assert len(docs["synthprobe_arithmetic_2da_gen"]) > 0
