"""lm-eval-shaped files both ways, without a model: results documents scored by the toy engine
through the real CLI, written as lm-eval 0.4.13's output files (``export lm-eval-results``, ``score
--output-format lm-eval``) and read back by ``synthprobe report``. The comparison with files
lm-eval itself writes is ``tests/export/lm_eval/test_files_real_lm_eval.py`` (slow)."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main
from synthprobe.report.reader import read_document
from synthprobe.results import read_results

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"

#: the keys of an lm-eval 0.4.13 results file, in its order (checked against lm-eval in the slow test)
RESULTS_KEYS = [
    "results",
    "group_subtasks",
    "configs",
    "versions",
    "n-shot",
    "higher_is_better",
    "n-samples",
    "config",
    "git_hash",
    "date",
    "pretty_env_info",
    "transformers_version",
    "lm_eval_version",
    "upper_git_hash",
    "tokenizer_pad_token",
    "tokenizer_eos_token",
    "tokenizer_bos_token",
    "eot_token_id",
    "max_length",
    "task_hashes",
    "model_source",
    "model_name",
    "model_name_sanitized",
    "system_instruction",
    "system_instruction_sha",
    "fewshot_as_multiturn",
    "chat_template",
    "chat_template_sha",
    "total_evaluation_time_seconds",
]
SAMPLE_KEYS = [
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A Deep Arithmark and a GPT-3 results document of the toy engine, with predictions."""
    register_engine("toy", "toy_engine")
    tmp = tmp_path_factory.mktemp("scored")
    deep, gpt3 = tmp / "deep.json", tmp / "gpt3.json"
    try:
        assert (
            main(
                [
                    "score",
                    "deeparithmark",
                    "--data",
                    str(DATA),
                    "--model",
                    "toy:bigram",
                    "--limit",
                    "12",
                    "--no-progress",
                    "--no-cache",
                    "--output",
                    str(deep),
                    "--output-format",
                    "lm-eval",
                ]
            )
            == 0
        )
        assert (
            main(
                [
                    "score",
                    "gpt3",
                    "--model",
                    "toy:bigram",
                    "--limit",
                    "5",
                    "--tasks",
                    "2D+,RI",
                    "--shots",
                    "zero,one",
                    "--quiet",
                    "--no-cache",
                    "--save-predictions",
                    "--output",
                    str(gpt3),
                ]
            )
            == 0
        )
    finally:
        ENGINES.pop("toy", None)
    return deep, gpt3


def _files(folder: Path) -> tuple[list[dict], dict[str, list[dict]]]:
    results = [json.loads(p.read_text()) for p in sorted(folder.rglob("results_*.json"))]
    samples = {}
    for p in sorted(folder.rglob("samples_*.jsonl")):
        task = p.name[len("samples_") :].rsplit("_", 1)[0]
        samples.setdefault(task, []).extend(json.loads(line) for line in p.read_text().splitlines())
    return results, samples


def test_score_output_format_writes_lm_eval_files_beside_the_results(scored):
    deep, _ = scored
    folder = deep.with_name("deep_lm-eval")
    (model_dir,) = [p for p in folder.iterdir()]
    assert model_dir.name == "toy__bigram"  # lm-eval's sanitised model name ("toy:bigram")
    names = sorted(p.name for p in model_dir.iterdir())
    assert len(names) == 2 and names[0].startswith("results_") and names[1].startswith("samples_deeparithmark_")
    assert names[0][len("results_") : -len(".json")] == names[1][len("samples_deeparithmark_") : -len(".jsonl")]
    # --output-format lm-eval implies --save-predictions
    assert len(read_results(deep).models[0].results["deeparithmark"].data["predictions"]) == 12


def test_deeparithmark_files_hold_lm_evals_keys_metrics_and_hashes(scored):
    deep, _ = scored
    (res,), samples = _files(deep.with_name("deep_lm-eval"))
    assert [k for k in res if k != "synthprobe"] == RESULTS_KEYS
    lines = samples["deeparithmark"]
    assert [s["doc_id"] for s in lines] == list(range(12))
    release = [json.loads(x) for x in DATA.read_text().splitlines()[:12]]
    preds = read_results(deep).models[0].results["deeparithmark"].data["predictions"]
    for s, doc, rec in zip(lines, release, preds):
        assert list(s)[: len(SAMPLE_KEYS)] == SAMPLE_KEYS and s["metrics"] == ["acc", "acc_norm"]
        assert s["doc"] == doc and s["target"] == doc["label"]
        assert s["doc_hash"] == hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False).encode()).hexdigest()
        assert s["prompt_hash"] == hashlib.sha256(doc["ctx"].encode()).hexdigest()
        assert s["target_hash"] == hashlib.sha256(doc["label"].encode()).hexdigest()
        assert [a["arg_1"] for a in s["arguments"].values()] == doc["endings"]
        lls = [float(r[0]) for r in s["filtered_resps"]]
        assert lls == rec["logprob"]
        label = int(doc["label"])
        assert s["acc"] == float(max(range(4), key=lambda j: (lls[j], -j)) == label) == float(rec["correct_acc"])
        per_char = [ll / len(e) for ll, e in zip(lls, doc["endings"])]
        assert s["acc_norm"] == float(max(range(4), key=lambda j: (per_char[j], -j)) == label)
        assert s["synthprobe"] == rec  # synthprobe's record, per-token scores and all
    block = res["results"]["deeparithmark"]
    accs = [s["acc"] for s in lines]
    mu = sum(accs) / len(accs)
    assert block["acc,none"] == mu and block["sample_len"] == 12
    assert math.isclose(block["acc_stderr,none"], math.sqrt(sum((a - mu) ** 2 for a in accs) / 11) / math.sqrt(12))
    assert res["n-samples"]["deeparithmark"] == {"original": 1000, "effective": 12}
    assert (
        res["task_hashes"]["deeparithmark"]
        == hashlib.sha256(
            "".join(s["doc_hash"] + s["prompt_hash"] + s["target_hash"] for s in lines).encode()
        ).hexdigest()
    )
    cfg = res["configs"]["deeparithmark"]
    assert cfg["target_delimiter"] == "" and cfg["doc_to_choice"] == "endings" and "tag" not in cfg
    assert res["config"]["limit"] == 12.0 and res["model_name"] == "toy:bigram"


def test_gpt3_rows_become_one_run_per_k_with_our_tasks(scored, tmp_path):
    _, gpt3 = scored
    out = tmp_path / "lm"
    assert main(["export", "lm-eval-results", str(gpt3), "--out", str(out)]) == 0
    results, samples = _files(out)
    assert [sorted(r["results"]) for r in results] == [
        ["synthprobe_arithmetic_2da_gen", "synthprobe_random_insertion_gen"]
    ] * 2
    assert [r["n-shot"]["synthprobe_arithmetic_2da_gen"] for r in results] == [0, 1]
    doc = read_results(gpt3)
    rows = {(r["task"], r["k"]): r for r in doc.models[0].results["gpt3"].data["rows"]}
    for _task, lines in samples.items():
        assert len(lines) == 10  # two runs of five
    for r in results:
        k = r["n-shot"]["synthprobe_arithmetic_2da_gen"]
        for task in r["results"]:
            row = rows[(task[len("synthprobe_") : -len("_gen")], k)]
            assert r["results"][task]["exact_match,strip"] == row["correct"] / row["n"]
    first = samples["synthprobe_arithmetic_2da_gen"][0]
    assert first["filter"] == "strip" and first["metrics"] == ["exact_match"]
    assert first["arguments"]["gen_args_0"]["arg_1"] == {"until": ["\n"], "do_sample": False, "max_gen_toks": 6}
    assert first["filtered_resps"] == [first["resps"][0][0].strip()]
    assert first["prompt_hash"] == hashlib.sha256(first["arguments"]["gen_args_0"]["arg_0"].encode()).hexdigest()


def same_figures(a: Path, b: Path) -> set[str]:
    """The PNGs of two report folders, the same names byte for byte (the mistake panels are drawn
    only where some template offered a wrong option 10 times, so the set depends on the items)."""
    names = {p.name for p in a.glob("*.png")}
    assert names == {p.name for p in b.glob("*.png")}
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    return names


def test_report_on_the_lm_eval_files_is_the_report_on_the_document(scored, tmp_path):
    deep, gpt3 = scored
    lm = tmp_path / "lm"
    assert main(["export", "lm-eval-results", str(gpt3), "--out", str(lm)]) == 0
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["report", str(deep), str(gpt3), "--out", str(a)]) == 0
    assert main(["report", str(deep.with_name("deep_lm-eval")), str(lm), "--out", str(b)]) == 0
    assert (a / "leaderboard.md").read_bytes() == (b / "leaderboard.md").read_bytes()
    assert same_figures(a, b) >= {"depth_curve.png", "template_heatmap.png", "gpt3_curves.png"}
    # nothing lost: the document read back is the document exported
    for src, folder in ((deep, deep.with_name("deep_lm-eval")), (gpt3, lm)):
        original = json.loads(src.read_text())["models"][0]
        back = read_document(folder).models[0].data
        assert back == original


def test_report_reads_lm_evals_own_files_headed_by_acc(scored, tmp_path):
    """lm-eval's own files carry no synthprobe keys: the rows are rebuilt from the samples."""
    deep, gpt3 = scored
    lm = tmp_path / "theirs"
    for folder in (deep.with_name("deep_lm-eval"),):
        for p in folder.rglob("*"):
            if p.is_file():
                dest = lm / p.relative_to(folder)
                dest.parent.mkdir(parents=True, exist_ok=True)
                if p.name.startswith("results_"):
                    d = json.loads(p.read_text())
                    d.pop("synthprobe")
                    dest.write_text(json.dumps(d))
                else:
                    dest.write_text(
                        "".join(
                            json.dumps({k: v for k, v in json.loads(line).items() if k != "synthprobe"}) + "\n"
                            for line in p.read_text().splitlines()
                        )
                    )
    doc = read_document(lm)
    (entry,) = doc.models
    summary = entry.results["deeparithmark"].data["summary"]
    preds = read_results(deep).models[0].results["deeparithmark"].data["predictions"]
    assert summary["primary"] == "acc" and summary["metrics"]["soft"] is None
    assert summary["metrics"]["acc_norm"]["correct"] == sum(r["correct_acc"] for r in preds)
    assert summary["metrics"]["acc_char"]["correct"] == sum(r["correct_acc_char"] for r in preds)
    for depth, block in summary["by_depth"].items():
        assert block["correct"] == sum(r["correct_acc"] for r in preds if str(r["depth"]) == depth)
    out = tmp_path / "rep"
    assert main(["report", str(lm), "--out", str(out)]) == 0
    assert "headline metric" in (out / "index.html").read_text()


def test_export_refuses_a_document_without_predictions(tmp_path, capsys):
    register_engine("toy", "toy_engine")
    try:
        src = tmp_path / "bare.json"
        assert (
            main(
                [
                    "score",
                    "deeparithmark",
                    "--data",
                    str(DATA),
                    "--model",
                    "toy:bigram",
                    "--limit",
                    "3",
                    "--no-progress",
                    "--no-cache",
                    "--output",
                    str(src),
                ]
            )
            == 0
        )
    finally:
        ENGINES.pop("toy", None)
    assert main(["export", "lm-eval-results", str(src), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "models[0].results.deeparithmark.predictions" in err and "--save-predictions" in err
    assert not (tmp_path / "out").exists()


def test_export_refuses_data_that_is_not_what_was_scored(scored, tmp_path, capsys):
    deep, _ = scored
    other = tmp_path / "other.jsonl"
    other.write_text("".join(DATA.read_text().splitlines(keepends=True)[:20]))
    assert main(["export", "lm-eval-results", str(deep), "--out", str(tmp_path / "o"), "--data", str(other)]) == 2
    assert "SHA-256" in capsys.readouterr().err and not (tmp_path / "o").exists()


def test_export_is_deterministic_and_never_overwrites(scored, tmp_path, capsys):
    deep, _ = scored
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert main(["export", "lm-eval-results", str(deep), "--out", str(out)]) == 0
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / p).read_bytes() == (b / p).read_bytes() for p in files_a)
    assert main(["export", "lm-eval-results", str(deep), "--out", str(a)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["export", "lm-eval-results", str(deep), "--out", str(a), "--timestamp", "2025-01-31T12:00:00"]) == 0
    assert len(list(a.rglob("results_2025-01-31T12-00-00.json"))) == 1


def test_report_names_a_broken_sample_file(scored, tmp_path, capsys):
    deep, _ = scored
    lm = tmp_path / "lm"
    assert main(["export", "lm-eval-results", str(deep), "--out", str(lm)]) == 0
    (samples,) = lm.rglob("samples_*.jsonl")
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join(lines[:3] + ['{"doc_id": "x"}'] + lines[4:]) + "\n")
    assert main(["report", str(lm), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert samples.name in err and ":4" in err and "doc_id" in err


def test_the_committed_results_go_through_lm_evals_files_unchanged(tmp_path):
    """The release's committed results (older layouts: one Deep Arithmark file of 1,000 items, one
    GPT-3 file with zero-, one- and few-shot rows and SAT) give the same report from lm-eval's files."""
    deep = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
    gpt3 = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
    lm = tmp_path / "lm"
    # each its own time stamp: in a fresh clone both files have the same modification time (the
    # default stamp), and one model's two runs at one stamp would be the same results file
    for src, when in ((deep, "2026-01-01T00:00:00"), (gpt3, "2026-01-01T00:00:01")):
        assert (
            main(["export", "lm-eval-results", str(src), "--out", str(lm), "--data", str(DATA), "--timestamp", when])
            == 0
        )
    runs = sorted(sorted(set(json.loads(p.read_text())["n-shot"].values())) for p in lm.rglob("results_*.json"))
    assert runs == [[0], [0], [1], [50], [100]]  # Deep Arithmark; GPT-3 one run per K (arithmetic 50, words 100)
    names = {t for p in lm.rglob("results_*.json") for t in json.loads(p.read_text())["results"]}
    assert "deeparithmark" in names and "synthprobe_anagrams1_gen" in names
    assert not any("sat" in t for t in names)  # SAT is scored per token: kept under `synthprobe` only
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["report", str(deep), str(gpt3), "--out", str(a)]) == 0
    assert main(["report", str(lm), "--out", str(b)]) == 0
    assert (a / "leaderboard.md").read_bytes() == (b / "leaderboard.md").read_bytes()
    assert same_figures(a, b) >= {"depth_curve.png", "gpt3_curves.png"}


def test_a_prompt_cut_by_max_context_is_rebuilt_exactly():
    from synthprobe.benchmarks.gpt3.export.lm_eval import _exact_prompt
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, get_task

    task = get_task("arithmetic_2da")
    pool = build_items(BuildConfig(task.name, seed=3, n=200))
    words = lambda text: len(text.split())  # noqa: E731 - a stand-in tokenizer
    for index in (0, 7, 150):
        cut = build_prompt(task, pool, index, PromptConfig(shots=50, seed=3, max_context=120, reserve=6), words)
        assert 0 < cut.n_shots < 50
        assert _exact_prompt(task, pool, index, 50, 3, "openai", cut.n_shots) == cut.text
        full = build_prompt(task, pool, index, PromptConfig(shots=50, seed=3, max_context=None))
        assert _exact_prompt(task, pool, index, 50, 3, "openai", 50) == full.text


def test_is_greedy_rows_become_lm_evals_loglikelihood_task(tmp_path):
    register_engine("toy", "toy_engine")
    try:
        src = tmp_path / "greedy.json"
        assert (
            main(
                [
                    "score",
                    "gpt3",
                    "--model",
                    "toy:bigram",
                    "--limit",
                    "4",
                    "--tasks",
                    "2D+",
                    "--shots",
                    "zero",
                    "--check",
                    "is-greedy",
                    "--quiet",
                    "--no-cache",
                    "--output",
                    str(src),
                    "--output-format",
                    "lm-eval",
                    "--lm-eval-out",
                    str(tmp_path / "lm"),
                ]
            )
            == 0
        )
    finally:
        ENGINES.pop("toy", None)
    (res,), samples = _files(tmp_path / "lm")
    (lines,) = samples.values()
    assert (
        list(res["results"]) == ["synthprobe_arithmetic_2da"]
        and res["configs"]["synthprobe_arithmetic_2da"]["output_type"] == "loglikelihood"
    )
    items = read_results(src).models[0].results["gpt3"].data["rows"][0]["items"]
    for s, it in zip(lines, sorted(items, key=lambda x: x["index"])):
        assert s["metrics"] == ["acc"] and s["acc"] == float(it["correct"]) and s["target"] == it["gold"]
        assert s["filtered_resps"] == [[str(float(it["logprob"])), str(it["correct"])]]
        assert s["arguments"]["gen_args_0"]["arg_1"] == it["gold"]
    doc = read_document(tmp_path / "lm")
    assert doc.models[0].data == json.loads(src.read_text())["models"][0]
