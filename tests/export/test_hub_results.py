"""``synthprobe export hub-results``: one Hub-ready folder per model whose card header
huggingface_hub's own parser reads back (model-index → EvalResult), offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[2]
DA_BENCH = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
GPT3_BENCH = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"


def test_hub_folder_card_round_trips_through_huggingface_hub(tmp_path, capsys):
    from huggingface_hub import ModelCard
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    out = tmp_path / "hub"
    assert (
        main(["export", "hub-results", str(DA_BENCH), str(GPT3_BENCH), "--out", str(out), "--repo-prefix", "me/"]) == 0
    )
    printed = capsys.readouterr().out
    from synthprobe.results import read_results

    deep = json.loads(DA_BENCH.read_text(encoding="utf-8"))["models"][0]
    gpt3 = read_results(GPT3_BENCH).models[0].data  # an older one-model layout, converted on read
    assert deep["model"]["name"] == gpt3["model"]["name"]  # the same model: one folder, both files
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["README.md", f"results_{DA_BENCH.stem}.json", f"results_{GPT3_BENCH.stem}.json"]
    )
    assert f"hf upload me/{folder.name}-synthprobe-results {folder} . --repo-type model" in printed

    card = ModelCard.load(folder / "README.md")  # huggingface_hub's parser and metadata checks
    results = card.data.eval_results
    assert card.data.model_name == deep["model"]["name"]
    acc = deep["results"]["deeparithmark"]["summary"]["metrics"]["acc_norm"]
    overall = next(r for r in results if r.task_name == "Deep Arithmark (zero-shot)")
    assert overall.metric_value == pytest.approx(round(100 * acc["correct"] / acc["total"], 2))
    assert overall.dataset_revision == deep["results"]["deeparithmark"]["dataset"]["sha256"]
    depths = [r for r in results if r.dataset_config and r.dataset_config.startswith("depth")]
    assert len(depths) == 4
    rows = gpt3["results"]["gpt3"]["rows"]
    g = [r for r in results if r.metric_type == "accuracy"]
    assert [r.metric_value for r in g] == [round(float(x["accuracy"]), 2) for x in rows]
    # the model-index round-trips: what the Hub reads is what we wrote
    name, again = model_index_to_eval_results(eval_results_to_model_index(card.data.model_name, results))
    assert name == card.data.model_name and again == results
    # the per-file results are results documents synthprobe reads back
    assert read_results(folder / f"results_{DA_BENCH.stem}.json").models[0].model["name"] == name


def test_hub_folder_is_never_overwritten(tmp_path, capsys):
    out = tmp_path / "hub"
    assert main(["export", "hub-results", str(DA_BENCH), "--out", str(out)]) == 0
    assert main(["export", "hub-results", str(DA_BENCH), "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
