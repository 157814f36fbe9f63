"""A benchmark with no sweep code of its own joins ``synthprobe sweep`` through the generic sweep
part (synthprobe.sweep.generic): the third-party test benchmark ``larger`` (tests/plugin_benchmark,
pip-installed into a throwaway folder and found through its entry point), swept through the
command line on the tests' toy engine and (slow) on the embedded model, serially and on Ray."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthprobe.cli import main
from tests.test_benchmarks import plugin, plugin_site  # noqa: F401 - the installed plugin fixtures


@pytest.fixture()
def toy(monkeypatch):
    from synthprobe.backends import ENGINES

    monkeypatch.setitem(ENGINES, "toy", ("toy_engine", None))  # tests/support/toy_engine.py


def _sweep(tmp_path: Path, out: str, *args: str) -> int:
    return main(
        [
            "sweep",
            "--task",
            "larger",
            "--serial",
            "--no-progress",
            "--yes",
            "--data-dir",
            str(tmp_path / "data"),
            "--output",
            str(tmp_path / out),
            *args,
        ]
    )


def test_an_installed_benchmark_sweeps_with_no_sweep_code_of_its_own(plugin, toy, tmp_path, capsys):
    models = ["--model", "toy:a", "--model", "toy:b"]
    assert _sweep(tmp_path, "sweep.json", *models, "--seeds", "release,1-2", "--limit", "6", "--batch-size", "4") == 0
    printed = capsys.readouterr().out
    doc = json.loads((tmp_path / "sweep.json").read_text())
    assert [(e["sweep"]["label"], e["sweep"]["seed_label"], e["sweep"]["seed"]) for e in doc["models"]] == [
        (m, s, v) for m in ("toy:a", "toy:b") for s, v in (("release", 0), ("1", 1), ("2", 2))
    ]
    assert doc["sweep"]["grid"]["tasks"] == ["larger"]

    # each job's data file is `build larger` at the seed, and its block is `score larger` on it
    built = tmp_path / "built.jsonl"
    assert main(["build", "larger", "--n", "6", "--seed", "1", "--out", str(built)]) == 0
    assert (tmp_path / "data" / "larger-seed1-n6.jsonl").read_bytes() == built.read_bytes()
    scored = tmp_path / "scored.json"
    assert (
        main(
            [
                "score",
                "larger",
                "--data",
                str(tmp_path / "data" / "larger-seed1-n6.jsonl"),
                "--out",
                str(scored),
                "--model",
                "toy:b",
                "--no-progress",
                "--batch-size",
                "2",
            ]
        )
        == 0
    )
    direct = json.loads(scored.read_text())["models"][0]["results"]["larger"]
    job = doc["models"][4]["results"]["larger"]  # toy:b, seed 1
    assert direct["cached_items"] == 6  # the sweep's job had cached every item
    assert job["records"] == direct["records"] and job["summary"] == direct["summary"]
    assert job["dataset"] == direct["dataset"] and "seconds" not in job and "cached_items" not in job

    # the seed-to-seed spread is of correct / total, as printed per job
    summary = doc["sweep"]["summary"]["larger"]
    acc = [e["results"]["larger"]["summary"]["correct"] / 6 for e in doc["models"]]
    assert summary["metric"] == "accuracy"
    assert summary["models"]["toy:a"]["mean"] == pytest.approx(sum(acc[:3]) / 3)
    assert summary["models"]["toy:b"]["n_seeds"] == 3 and summary["seeds_compared"] == ["release", "1", "2"]
    assert f"job 4: toy:b · larger · seed 1: accuracy {100 * acc[4]:.2f} %" in printed
    assert "larger (accuracy over seeds):" in printed

    # the same grid again (every score from the cache) writes the same bytes, and its report
    # shows the spread of the same scores
    assert (
        _sweep(
            tmp_path,
            "again.json",
            *models,
            "--seeds",
            "release,1-2",
            "--limit",
            "6",
            "--batch-size",
            "4",
            "--report",
            str(tmp_path / "rep"),
        )
        == 0
    )
    assert "(6 cached," in capsys.readouterr().out
    assert (tmp_path / "again.json").read_bytes() == (tmp_path / "sweep.json").read_bytes()
    md = (tmp_path / "rep" / "leaderboard.md").read_text()
    assert "## Sweep: spread across seeds" in md and "### larger (" in md
    spread = summary["models"]["toy:b"]
    assert (
        f"| toy:b | 3 | {100 * spread['mean']:.2f} | {100 * spread['sd']:.2f} | {100 * spread['min']:.2f} | "
        f"{100 * spread['max']:.2f} |"
    ) in md


def test_without_a_limit_the_generic_part_builds_its_default_size(plugin, toy, tmp_path, monkeypatch):
    from synthprobe.sweep import generic

    monkeypatch.setattr(generic, "DEFAULT_ITEMS", 5)
    assert _sweep(tmp_path, "sweep.json", "--model", "toy:a", "--seeds", "3", "--no-cache") == 0
    [entry] = json.loads((tmp_path / "sweep.json").read_text())["models"]
    assert entry["results"]["larger"]["dataset"]["items"] == 5
    assert (tmp_path / "data" / "larger-seed3-n5.jsonl").read_text().count("\n") == 5


def test_a_generic_sweep_asks_under_the_chat_template_as_score_name_does(plugin, tmp_path):
    """--chat-template / --system-prompt on a sweep of the installed benchmark (a tiny random
    model): the job's work function gets the setup, so `score larger` with the same flags on the
    job's file finds every score in the cache, and the entry records the template."""
    from scoring_support import save_tiny_llama, write_turns_template

    model = save_tiny_llama(tmp_path / "tiny")
    template = write_turns_template(tmp_path / "turns.jinja")
    common = [
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--threads",
        "1",
        "--batch-size",
        "2",
        "--chat-template",
        str(template),
        "--system-prompt",
        "Be exact.",
    ]
    assert _sweep(tmp_path, "sweep.json", *common, "--seeds", "1", "--limit", "4") == 0
    [entry] = json.loads((tmp_path / "sweep.json").read_text())["models"]
    assert entry["chat"]["chat_template_name"] == "turns.jinja" and entry["chat"]["system_prompt"] == "Be exact."
    scored = tmp_path / "scored.json"
    assert (
        main(
            [
                "score",
                "larger",
                "--data",
                str(tmp_path / "data" / "larger-seed1-n4.jsonl"),
                "--out",
                str(scored),
                "--no-progress",
                *common,
            ]
        )
        == 0
    )
    [again] = json.loads(scored.read_text())["models"]
    assert again["results"]["larger"]["cached_items"] == 4 and again["chat"] == entry["chat"]
    assert again["results"]["larger"]["records"] == entry["results"]["larger"]["records"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--task", "larger:x"], "benchmark 'larger' has no sub-tasks; expected 'larger', got 'larger:x'"),
        (["--task", "nosuch"], "expected a benchmark NAME or NAME:SUB, NAME one of ['deeparithmark', 'gpt3', 'larger'"),
    ],
)
def test_bad_generic_sweeps_are_one_error_and_write_nothing(plugin, toy, tmp_path, capsys, args, message):
    assert (
        main(
            [
                "sweep",
                "--task",
                "larger",
                *args,
                "--model",
                "toy:a",
                "--seeds",
                "1",
                "--serial",
                "--data-dir",
                str(tmp_path / "data"),
                "--output",
                str(tmp_path / "out.json"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "data").exists()


def test_a_benchmark_without_the_parts_a_sweep_needs_is_refused(monkeypatch, tmp_path):
    from synthprobe import registry
    from synthprobe.errors import InputError
    from synthprobe.sweep.grid import make_grid

    monkeypatch.setitem(registry.BUILTIN, "bare", "tests.sweep.test_generic_part:BARE")
    registry.find.cache_clear()
    try:
        with pytest.raises(
            InputError,
            match=r"benchmark 'bare' cannot join a sweep: it has no 'sweep' part, "
            r"and no 'build', 'load', 'work' part for the generic one",
        ):
            make_grid(grid_file=None, models=["toy:a"], seeds="1", tasks=["bare"], limit=None)
    finally:
        registry.find.cache_clear()


def _bare():
    from synthprobe.registry import Benchmark

    return Benchmark(name="bare", title="Bare", metrics="synthprobe.metrics.stats:accuracy_block")


BARE = _bare()


@pytest.mark.slow
def test_an_installed_benchmark_sweeps_on_ray_as_it_does_serially(plugin_site, tmp_path):
    """Another process, which sees the plugin only as an installed package (PYTHONPATH), sweeps
    the embedded model over two seeds of 4 items in this process and on a local Ray with two
    workers (which import the plugin the same way): the same bytes."""
    from synthprobe.backends.spec import cache_root

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(plugin_site), os.environ.get("PYTHONPATH", "")]),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
    }

    def sweep(out: str, *extra: str) -> subprocess.CompletedProcess:
        root = tmp_path / f"cache-{out}"  # a fresh score cache for each run, the weights shared
        root.mkdir()
        for sub in ("models", "digests"):
            if (cache_root() / sub).is_dir():
                (root / sub).symlink_to(cache_root() / sub)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "synthprobe",
                "sweep",
                "--task",
                "larger",
                "--model",
                "smollm2-135m-instruct",
                "--seeds",
                "1-2",
                "--limit",
                "4",
                "--batch-size",
                "2",
                "--no-progress",
                "--yes",
                "--data-dir",
                str(tmp_path / "data"),
                "--output",
                str(tmp_path / out),
                *extra,
            ],
            env={**env, "SYNTHPROBE_CACHE": str(root)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0, done.stderr
        return done

    sweep("serial.json", "--serial")
    doc = json.loads((tmp_path / "serial.json").read_text())
    assert [e["results"]["larger"]["summary"]["total"] for e in doc["models"]] == [4, 4]
    assert all(r["pick"] in (0, 1) for e in doc["models"] for r in e["results"]["larger"]["records"])
    ray = sweep("ray.json", "--workers", "2")
    assert "on a local Ray with 2 CPUs" in ray.stderr
    assert (tmp_path / "ray.json").read_bytes() == (tmp_path / "serial.json").read_bytes()
