"""A run says what it is about to do: its plan (tasks x settings x items), an estimate from a
short calibration on the loaded model, and a long run waits for --yes instead of starting."""

from __future__ import annotations

import subprocess
import sys

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def test_a_run_prints_its_plan_and_estimate_then_scores(toy, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["score", "gpt3", "--model", "toy:bigram", "--tasks", "2D+,CL", "--shots", "0,1", "--limit", "120",
                 "--quiet", "--no-cache", "--output", str(out)]) == 0
    cap = capsys.readouterr()
    assert "plan: 2 tasks (2D+, CL) x 2 settings = 4 runs, 480 items (zero 240, one 240)" in cap.err, cap.err
    assert "estimate: about" in cap.err
    assert cap.out.rstrip().splitlines()[-1] == f"results: {out}" and out.is_file()


def test_a_run_estimated_over_the_limit_waits_for_yes(toy, tmp_path, capsys, monkeypatch):
    import synthprobe.scoring.gpt3_cli as gpt3_cli

    monkeypatch.setattr(gpt3_cli, "CONFIRM_ABOVE_S", 0.0)   # the toy engine is fast: make any run "long"
    out = tmp_path / "r.json"
    args = ["score", "gpt3", "--model", "toy:bigram", "--tasks", "2D+", "--shots", "0", "--limit", "300", "--quiet",
            "--no-cache", "--output", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "plan: 1 task (2D+) x 1 setting = 1 runs, 300 items" in err and "pass --yes to start it" in err, err
    assert "--limit N" in err and not out.exists()
    assert main([*args, "--yes"]) == 0 and out.is_file()


def test_a_small_run_is_planned_without_a_calibration(toy, tmp_path, capsys):
    assert main(["score", "gpt3", "--model", "toy:bigram", "--tasks", "2D+", "--shots", "0", "--limit", "5",
                 "--quiet", "--no-cache", "--output", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert "plan: 1 task (2D+) x 1 setting = 1 runs, 5 items" in err and "estimate" not in err


@pytest.mark.slow
def test_score_gpt3_with_no_tasks_shows_the_whole_grid_and_does_not_start(tmp_path):
    out = tmp_path / "r.json"
    res = subprocess.run([sys.executable, "-m", "synthprobe", "score", "gpt3", "--quiet", "--output", str(out)],
                         capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "plan: 16 tasks" in res.stderr and "x 3 settings = 48 runs" in res.stderr, res.stderr
    assert "estimate: over" in res.stderr and "pass --yes to start it" in res.stderr
    assert not out.exists()
