"""A new engine is one file: the toy engine (loglikelihood and generate only) scores both
benchmarks end to end through the real CLI and writes valid results files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, load_backend, register_engine
from synthprobe.cli import main
from synthprobe.results import SCHEMA, read_results

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def test_the_base_class_gives_choices_and_refuses_sampling(toy):
    from types import SimpleNamespace

    from synthprobe.backends import ScoringError

    b = load_backend("toy:x")
    item = SimpleNamespace(ctx="2 plus 2 is", endings=(" 4", " five"))
    (scores,) = b.score_choices([item])
    assert [s.logprob for s in scores] == [
        s.logprob for s in b.loglikelihood([("2 plus 2 is", e) for e in item.endings])
    ]
    assert b.count_tokens("abc") == 3 and b.describe()["name"] == "toy:x"
    with pytest.raises(ScoringError, match="cannot sample"):
        b.sample(["x"], n=2, temperature=1.0, seeds=[0], max_new_tokens=2)


def test_toy_engine_scores_deeparithmark_through_the_cli(toy, tmp_path):
    out = tmp_path / "da.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(ROOT / "data" / "deeparithmark-1.jsonl"),
                "--model",
                "toy:bigram",
                "--limit",
                "8",
                "--no-progress",
                "--save-predictions",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["schema"] == SCHEMA
    read_results(out)  # the one reader takes it
    (entry,) = doc["models"]
    block = entry["results"]["deeparithmark"]
    assert entry["model"]["name"] == "toy:bigram" and block["dataset"]["n_items"] == 8
    assert len(block["predictions"]) == 8 and block["scorer_used"] == "reference"
    assert entry["row"]["model"] and "summary" in block


def test_toy_engine_scores_gpt3_through_the_cli(toy, tmp_path):
    out = tmp_path / "gpt3.json"
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
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["schema"] == SCHEMA and "benchmark" not in doc  # the one results document
    (entry,) = doc["models"]
    assert entry["model"]["name"] == "toy:bigram"
    rows = entry["results"]["gpt3"]["rows"]
    assert [r["setting"] for r in rows] == ["zero", "one", "few"]
    assert all(r["n"] == 4 for r in rows)
    (read,) = read_results(out).models  # the one reader takes it
    assert read.results["gpt3"].data["rows"] == rows


def test_an_unknown_engine_option_is_bad_input(tmp_path):
    code = main(
        [
            "score",
            "gpt3",
            "--model-arg",
            "nonsense=1",
            "--limit",
            "1",
            "--tasks",
            "2D+",
            "--quiet",
            "--output",
            str(tmp_path / "x.json"),
        ]
    )
    assert code == 2


def test_an_engine_without_a_weights_fingerprint_is_never_cached(toy, tmp_path, monkeypatch):
    """Scores are cached under the weights fingerprint: an engine that has none must not share
    entries between its models, so nothing of it is cached."""
    import toy_engine

    real_init = toy_engine.ToyBackend.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        self.fingerprint = ""

    monkeypatch.setattr(toy_engine.ToyBackend, "__init__", init)
    scores = Path(os.environ["SYNTHPROBE_CACHE"]) / "scores"
    out = tmp_path / "da.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(ROOT / "data" / "deeparithmark-1.jsonl"),
                "--model",
                "toy:bigram",
                "--limit",
                "4",
                "--no-progress",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    out2 = tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "toy:bigram",
                "--limit",
                "2",
                "--tasks",
                "2D+",
                "--shots",
                "0",
                "--quiet",
                "--output",
                str(out2),
            ]
        )
        == 0
    )
    assert not scores.exists() or not any(scores.iterdir())
