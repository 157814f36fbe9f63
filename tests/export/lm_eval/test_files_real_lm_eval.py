"""lm-eval 0.4.13 for real against our lm-eval files: the embedded model (SmolLM2-135M-Instruct,
dequantised, float32) on the first 20 Deep Arithmark items and 20 GPT-3 2-digit additions, scored
by ``lm_eval --log_samples`` on our exported YAMLs and by ``synthprobe score --output-format
lm-eval``. The two output folders are compared key by key (same keys and value types at every
level lm-eval defines, the same documents, hashes and per-sample metrics; our extra keys listed
below), and ``synthprobe report`` on lm-eval's folder gives the headline numbers it gives on ours.
A couple of minutes on two cores."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.report.reader import rows as read_rows

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"
N = 20
DEEP, GPT3 = "deeparithmark", "synthprobe_arithmetic_2da_gen"

#: keys synthprobe adds and lm-eval has no name for (everything else must match lm-eval's)
OUR_RESULTS_KEYS = {"synthprobe"}
OUR_SAMPLE_KEYS = {"synthprobe"}
#: sections of a results file keyed by task name
PER_TASK = ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "task_hashes")


def _env() -> dict:
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _embedded_folder() -> Path:
    from synthprobe.backends.hf.gguf import cached_folder
    from synthprobe.backends.spec import resolve_spec

    spec = resolve_spec("smollm2-135m-instruct")
    folder = cached_folder(spec.gguf_path)
    if folder is None:
        from synthprobe.backends import load_backend

        load_backend("smollm2-135m-instruct", dtype="float32").close()  # converts and caches it once
        folder = cached_folder(spec.gguf_path)
    return folder


def _shape(ours, theirs, where: str, out: list[str], extra: set[str] = frozenset()) -> None:
    """Every difference in keys or value types between two JSON values, ``extra`` keys of ours aside."""
    if type(ours) is not type(theirs):
        out.append(f"{where}: {type(ours).__name__} in ours, {type(theirs).__name__} in lm-eval's")
    elif isinstance(ours, dict):
        for k in sorted(set(ours) | set(theirs)):
            if k in extra and k not in theirs:
                continue
            if k not in ours or k not in theirs:
                out.append(f"{where}.{k}: only in {'lm-eval' if k in theirs else 'ours'}")
            else:
                _shape(ours[k], theirs[k], f"{where}.{k}", out)
    elif isinstance(ours, list):
        if bool(ours) != bool(theirs):
            out.append(f"{where}: empty in one only")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _shape(a, b, f"{where}[{i}]", out)


def _by_task(folder: Path) -> tuple[dict[str, dict], dict[str, list[dict]]]:
    """Each task's results file and sample lines (doc_id order) in a one-model output folder."""
    results, samples = {}, {}
    for p in folder.rglob("results_*.json"):
        doc = json.loads(p.read_text(encoding="utf-8"))
        iso = p.name[len("results_") : -len(".json")]
        for task in doc["results"]:
            results[task] = doc
            lines = (p.parent / f"samples_{task}_{iso}.jsonl").read_text(encoding="utf-8").splitlines()
            samples[task] = sorted((json.loads(x) for x in lines), key=lambda s: s["doc_id"])
    return results, samples


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lm_eval_real")
    yaml_dir, theirs, ours = tmp / "yaml", tmp / "theirs", tmp / "ours"
    assert (
        main(
            [
                "export",
                "lm-eval",
                "--data",
                str(DATA),
                "--out",
                str(yaml_dir),
                "--gpt3-tasks",
                "arithmetic_2da",
                "--quiet",
            ]
        )
        == 0
    )
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent))
    assert lm_eval, "lm-eval (dev extra) is not installed beside this Python"
    run = subprocess.run(
        [
            lm_eval,
            "--model",
            "hf",
            "--model_args",
            f"pretrained={_embedded_folder()},dtype=float32",
            "--tasks",
            f"{DEEP},{GPT3}",
            "--include_path",
            str(yaml_dir),
            "--output_path",
            str(theirs),
            "--log_samples",
            "--limit",
            str(N),
            "--device",
            "cpu",
            "--batch_size",
            "32",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp,
    )  # lm-eval records the git commit of where it runs: none here, as in ours
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(DATA),
                "--dtype",
                "float32",
                "--limit",
                str(N),
                "--no-cache",
                "--no-progress",
                "--output",
                str(tmp / "deep.json"),
                "--output-format",
                "lm-eval",
                "--lm-eval-out",
                str(ours),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "score",
                "gpt3",
                "--tasks",
                "2D+",
                "--shots",
                "zero",
                "--limit",
                str(N),
                "--dtype",
                "float32",
                "--no-cache",
                "--quiet",
                "--output",
                str(tmp / "gpt3.json"),
                "--output-format",
                "lm-eval",
                "--lm-eval-out",
                str(ours),
            ]
        )
        == 0
    )
    (their_model,) = [p for p in theirs.iterdir() if p.is_dir()]
    (our_model,) = [p for p in ours.iterdir() if p.is_dir()]
    return tmp, their_model, our_model


def test_our_files_have_lm_evals_keys_and_types_at_every_level(folders):
    _, theirs, ours = folders
    t_res, t_samples = _by_task(theirs)
    o_res, o_samples = _by_task(ours)
    assert set(t_res) == set(o_res) == {DEEP, GPT3}
    problems: list[str] = []
    for task in (DEEP, GPT3):
        t, o = t_res[task], o_res[task]
        top_t = {k: v for k, v in t.items() if k not in PER_TASK}
        top_o = {k: v for k, v in o.items() if k not in PER_TASK}
        _shape(top_o, top_t, task, problems, OUR_RESULTS_KEYS)
        assert list(k for k in o if k not in OUR_RESULTS_KEYS) == list(t), "top-level key order"
        for section in PER_TASK:
            _shape(o[section][task], t[section][task], f"{section}.{task}", problems)
        assert list(o["configs"][task]) == list(t["configs"][task]), f"configs.{task} key order"
        assert list(o["results"][task]) == list(t["results"][task]), f"results.{task} key order"
        assert len(o_samples[task]) == len(t_samples[task]) == N
        for a, b in zip(o_samples[task], t_samples[task]):
            _shape(a, b, f"samples_{task}[{a['doc_id']}]", problems, OUR_SAMPLE_KEYS)
            assert [k for k in a if k not in OUR_SAMPLE_KEYS] == list(b), "sample key order"
    assert not problems, "\n".join(problems)


def test_same_documents_hashes_and_per_sample_metrics(folders):
    _, theirs, ours = folders
    t_res, t_samples = _by_task(theirs)
    o_res, o_samples = _by_task(ours)
    for task, metrics in ((DEEP, ("acc", "acc_norm")), (GPT3, ("exact_match",))):
        for a, b in zip(o_samples[task], t_samples[task]):
            where = f"{task} doc {a['doc_id']}"
            assert a["doc_id"] == b["doc_id"] and a["doc"] == b["doc"], where
            assert a["arguments"] == b["arguments"] and a["target"] == b["target"], where
            for key in ("doc_hash", "prompt_hash", "target_hash", *metrics):
                assert a[key] == b[key], f"{where}: {key} {a[key]!r} (ours) vs {b[key]!r} (lm-eval)"
        assert o_res[task]["task_hashes"][task] == t_res[task]["task_hashes"][task]
        for key, value in t_res[task]["results"][task].items():
            if key.split(",")[0] in metrics:
                assert o_res[task]["results"][task][key] == pytest.approx(value), key
        assert o_res[task]["n-samples"][task] == t_res[task]["n-samples"][task]
    # generation: the same greedy text, as lm-eval filtered it
    assert [s["filtered_resps"] for s in o_samples[GPT3]] == [s["filtered_resps"] for s in t_samples[GPT3]]


def _as_summed_pick(tmp: Path) -> Path:
    """Our Deep Arithmark results file as lm-eval's files can show it: every item's pick is the
    summed log-likelihood's (acc), summarised by the benchmark's own metrics part."""
    from synthprobe import registry

    doc = json.loads((tmp / "deep.json").read_text())
    block = doc["models"][0]["results"]["deeparithmark"]
    for r in block["predictions"]:
        pick, values = r["pred_acc"], r["option_values"]
        r["pred_acc_norm"], r["correct_acc_norm"] = pick, r["correct_acc"]
        r["chosen_source"] = r["option_sources"][pick]
        r["chosen_rank"] = sum(v < values[pick] for v in values)
    summary = registry.get("deeparithmark").part("metrics")(block["predictions"])
    summary["primary"] = "acc"
    block["summary"] = summary
    out = tmp / "deep_summed_pick.json"
    out.write_text(json.dumps(doc))
    return out


def test_report_on_lm_evals_folder_gives_our_headline_numbers(folders):
    tmp, theirs, ours = folders
    t_deep, t_gpt3 = read_rows(theirs, "deeparithmark"), read_rows(theirs, "gpt3")
    o_deep, o_gpt3 = read_rows(ours, "deeparithmark"), read_rows(ours, "gpt3")
    (t,), (o,) = t_deep, o_deep
    # lm-eval's files hold no token counts, so its row is headed by acc (the summed pick); read
    # from lm-eval's folder it must be exactly our own predictions read under that pick
    (s,) = read_rows(_as_summed_pick(tmp), "deeparithmark")
    assert t.overall == s.overall and t.by_depth == s.by_depth and t.by_template == s.by_template
    assert t.p_value == pytest.approx(s.p_value) and t.mistakes == s.mistakes and t.rank_picks == s.rank_picks
    assert "headline metric" in t.settings and o.soft is not None and t.soft is None
    assert [(r.key, r.count) for r in t_gpt3[0].rows] == [(r.key, r.count) for r in o_gpt3[0].rows]
    # and through the command, both folders at once: lm-eval's row under acc, ours under acc_norm
    assert main(["report", str(theirs.parent), str(ours.parent), "--out", str(tmp / "report")]) == 0
    board = (tmp / "report" / "leaderboard.md").read_text()
    assert f"{100 * t.overall.rate:.2f} %" in board and f"{100 * o.overall.rate:.2f} %" in board
