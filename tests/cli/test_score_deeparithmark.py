"""``synthprobe score deeparithmark`` and ``bench_deeparithmark.py`` end to end on a tiny local model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scoring_support import REPO, fixture_items, save_tiny_llama, write_fixture

from synthprobe.cli import main
from synthprobe.results import SCHEMA
from tests.support.cli import synthprobe


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("m") / "tiny-llama", seed=3)


@pytest.fixture()
def data(tmp_path) -> Path:
    return write_fixture(tmp_path / "deep.jsonl")


@pytest.fixture()
def am3(tmp_path) -> Path:
    # ArithMark 3.0 rows carry no metadata: only ctx, endings, label, activity_label, ind.
    rows = [
        {k: v for k, v in r.items() if k in ("ind", "activity_label", "ctx", "endings", "label")}
        for r in fixture_items()[:5]
    ]
    return write_fixture(tmp_path / "am3.jsonl", rows)


def test_scores_writes_results_and_prints_the_table(tiny_dir, data, am3, tmp_path, capsys):
    out = tmp_path / "res.json"
    rc = main(
        [
            "score",
            "deeparithmark",
            "--data",
            str(data),
            "--model",
            f"first={tiny_dir}",
            "--model",
            f"second={tiny_dir}",
            "--compare",
            "--compare-data",
            str(am3),
            "--save-predictions",
            "--output",
            str(out),
            "--batch-size",
            "3",
            "--no-progress",
        ]
    )
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["schema"] == SCHEMA and len(doc["models"]) == 2
    deep = doc["datasets"]["deeparithmark"]
    assert deep["n_items"] == 8 and len(deep["sha256"]) == 64
    assert doc["datasets"]["arithmark3"]["matches_published"] is False
    m = doc["models"][0]
    assert m["model"]["source"] == "folder" and m["settings"]["batch_size"] == 3
    r = m["results"]["deeparithmark"]
    assert r["scorer_used"] == "onepass" and r["fallback_reason"] is None
    assert r["timing"]["items_per_s"] > 0 and r["timing"]["forward_tokens"] < r["timing"]["request_tokens"]
    s = r["summary"]
    assert s["n"] == 8 and set(s["by_depth"]) == {"2", "3", "4", "5"}
    assert s["by_template"]["tank_fill"]["n"] == 2
    assert sum(s["rank_preference"]["chosen_rank_counts"]) == 8
    preds = r["predictions"]
    assert len(preds) == 8 and all(len(p["logprob"]) == 4 for p in preds)
    card = next(p for p in preds if p["id"] == "3")
    assert card["template"] == "inventory_boxes" and card["depth"] == 4 and card["label"] == 0
    assert card["chosen_source"] == card["option_sources"][card["pred_acc_norm"]]
    assert m["results"]["arithmark3"]["summary"]["by_depth"] == {}
    row = m["row"]
    assert row["deep"] == pytest.approx(100 * s["metrics"]["acc_norm"]["acc"], abs=0.01)
    assert row["delta"] == pytest.approx(row["deep"] - row["arithmark3"], abs=0.011)
    # Same weights, same data: both rows agree exactly (deterministic scoring), under their names.
    assert [e["model"]["name"] for e in doc["models"]] == ["first", "second"]
    assert m["model"]["engine_name"] == "tiny-llama"
    assert {**doc["models"][1]["row"], "model": "first"} == row
    # the paired comparison of the two: no discordant item, delta 0, McNemar p 1, per depth too
    pair = doc["comparisons"]["deeparithmark"]["pairs"][0]
    assert (pair["a"], pair["b"], pair["n"], pair["a_only"], pair["b_only"]) == ("first", "second", 8, 0, 0)
    assert pair["delta"] == 0 and pair["p_mcnemar"] == 1.0 and set(pair["groups"]) == {"2", "3", "4", "5"}
    assert doc["comparisons"]["arithmark3"]["pairs"][0]["n"] == 5
    printed = capsys.readouterr().out
    assert "ArithMark-3" in printed and "d5" in printed and str(out) in printed


def test_default_output_name_and_limit(tiny_dir, data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc = main(
        [
            "score",
            "deeparithmark",
            "--data",
            str(data),
            "--model",
            str(tiny_dir),
            "--limit",
            "3",
            "--no-progress",
            "--scorer",
            "reference",
        ]
    )
    assert rc == 0
    doc = json.loads((tmp_path / "benchmarks" / "deeparithmark_tiny-llama.json").read_text())
    r = doc["models"][0]["results"]["deeparithmark"]
    assert r["summary"]["n"] == 3 and r["scorer_used"] == "reference" and "predictions" not in r


def test_model_that_fails_to_load_exits_nonzero_without_results(tiny_dir, data, tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (broken / "model.safetensors").write_bytes(b"\0" * 16)
    (broken / "tokenizer_config.json").write_text("{}")  # past the tokenizer check: the load itself fails
    out = tmp_path / "res.json"
    rc = main(
        [
            "score",
            "deeparithmark",
            "--data",
            str(data),
            "--model",
            str(tiny_dir),
            "--model",
            str(broken),
            "--output",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 1
    assert not out.exists() and not list(tmp_path.glob(".res.json*"))
    err = capsys.readouterr().err
    assert "could not load model" in err and "no results file" in err


def test_bad_input_exits_2_before_loading(tmp_path, data, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"ctx": "x", "endings": ["a", " b"], "label": 0}) + "\n")
    assert main(["score", "deeparithmark", "--data", str(bad), "--no-progress"]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert (
        main(
            ["score", "deeparithmark", "--data", str(data), "--compare", "--compare-data", str(tmp_path / "none.jsonl")]
        )
        == 2
    )
    assert "AxiomicLabs/Arithmark-3.0" in capsys.readouterr().err
    assert main(["score", "deeparithmark", "--data", str(data), "--model", str(tmp_path / "nope")]) == 2


def test_bench_wrapper_runs_the_same_command(tiny_dir, data, tmp_path):
    bench = REPO / "bench_deeparithmark.py"
    out = tmp_path / "bench.json"
    argv = ["--data", data, "--model", tiny_dir, "--limit", "2", "--output", out, "--no-progress"]
    p = synthprobe(bench, *argv, module=None, timeout=600)
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]["summary"]["n"] == 2
    p = synthprobe(bench, "--model", tmp_path / "x", "--data", data, module=None, timeout=600)
    assert p.returncode == 2 and "does not exist" in p.stderr
    h = synthprobe(bench, "--help", module=None, timeout=600)
    assert h.returncode == 0 and "--compare-data" in h.stdout and "--trust-remote-code" in h.stdout


def test_interrupted_run_resumes_from_the_score_cache(tiny_dir, data, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    base = [
        "score",
        "deeparithmark",
        "--data",
        str(data),
        "--model",
        str(tiny_dir),
        "--no-progress",
        "--save-predictions",
        "--batch-size",
        "2",
    ]
    # A run that stopped after 3 items leaves 3 cached records...
    assert main(base + ["--limit", "3", "--output", str(tmp_path / "part.json")]) == 0
    cached = list((tmp_path / "cache" / "scores").glob("*.jsonl"))
    assert len(cached) == 1 and len(cached[0].read_text().splitlines()) == 3
    # ...the next run scores only the other 5, and equals a run without the cache.
    assert main(base + ["--output", str(tmp_path / "resumed.json")]) == 0
    assert main(base + ["--no-cache", "--output", str(tmp_path / "fresh.json")]) == 0
    resumed = json.loads((tmp_path / "resumed.json").read_text())["models"][0]["results"]["deeparithmark"]
    fresh = json.loads((tmp_path / "fresh.json").read_text())["models"][0]["results"]["deeparithmark"]
    assert resumed["cached_items"] == 3 and fresh["cached_items"] == 0
    assert resumed["summary"] == fresh["summary"]
    assert [p["logprob"] for p in resumed["predictions"]] == [p["logprob"] for p in fresh["predictions"]]
    assert len(cached[0].read_text().splitlines()) == 8
    # Everything cached: nothing is scored, the rates are null rather than NaN.
    assert main(base + ["--output", str(tmp_path / "again.json")]) == 0
    again = json.loads((tmp_path / "again.json").read_text())["models"][0]["results"]["deeparithmark"]
    assert again["cached_items"] == 8 and again["timing"]["items_per_s"] is None
    assert again["summary"] == fresh["summary"]
