"""Deep Arithmark parallel build (``--workers``): the same bytes, stats and failures as serial.

Worker processes draw the legacy decoy selection only (``decoys="legacy"``): a role-balanced build
(the default) draws each item once from its catalogue and always runs in one process, so the
tests of the pool, its re-draws and its interrupts build in legacy mode."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark import build as B
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED
from tests.support.legacy_release import LEGACY_RELEASE_SHA256

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"
REPEAT = "context repeats an earlier item"


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def test_parallel_build_of_the_release_is_byte_identical(tmp_path):
    res = B.build(tmp_path / "r.jsonl", seed=RELEASE_SEED, n=1000, progress=False, workers=2)
    assert res.path.read_bytes() == RELEASE.read_bytes()
    # the pool itself, on the legacy release's bytes
    legacy = B.build(tmp_path / "l.jsonl", seed=RELEASE_SEED, n=1000, progress=False, workers=2, decoys="legacy")
    assert legacy.workers == 2 and legacy.sha256 == LEGACY_RELEASE_SHA256


def test_parallel_build_redraws_a_repeated_context_as_the_serial_build(tmp_path):
    # Seed 7, n 3000 is known to hit the repeated-context rule: the serial build discards
    # exactly one draw for it (asserted below), and the parallel parent re-draws exactly one
    # item (stats.redrawn, counted only on that path) — so the path is really exercised.
    one = B.build(tmp_path / "1.jsonl", seed=7, n=3000, progress=False, workers=1, decoys="legacy")
    two = B.build(tmp_path / "2.jsonl", seed=7, n=3000, progress=False, workers=2, decoys="legacy")
    serial, parallel = one.stats, two.stats
    assert serial.discarded[REPEAT] == 1 and serial.redrawn == 0
    assert parallel.redrawn == 1
    assert (tmp_path / "1.jsonl").read_bytes() == (tmp_path / "2.jsonl").read_bytes()
    assert one.sha256 == two.sha256
    for f in ("n", "attempts", "discarded", "slots", "ranks", "grid", "templates", "off_length"):
        assert getattr(serial, f) == getattr(parallel, f), f


def test_parallel_build_with_more_workers_than_chunks(tmp_path):
    res = B.build(tmp_path / "s.jsonl", seed=3, n=40, progress=False, workers=3, decoys="legacy")
    assert res.path.read_bytes() == B.render_bytes(seed=3, n=40, decoys="legacy")


def test_a_faulty_item_fails_the_parallel_build_like_the_serial_one(monkeypatch, tmp_path):
    real = B.item_faults

    def faults(item, ind):  # inherited by the forked workers
        return [("R1", "planted fault")] if ind == 37 else real(item, ind)

    monkeypatch.setattr(B, "item_faults", faults)
    monkeypatch.setitem(B.ITEM_RULES, "R1", "a planted rule")
    msgs = []
    for workers in (1, 2):
        with pytest.raises(B.BuildError) as exc:
            B.build(tmp_path / "f.jsonl", seed=7, n=600, progress=False, workers=workers, decoys="legacy")
        msgs.append(str(exc.value))
        assert list(tmp_path.iterdir()) == []
    assert msgs[0] == msgs[1] and "item 37" in msgs[0]


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="needs /proc and pgrep")
def test_cli_workers_option_and_interrupt_leave_nothing(tmp_path):
    help_ = subprocess.run(
        [sys.executable, "-m", "synthprobe", "build", "deeparithmark", "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    ).stdout
    assert "--workers" in help_ and "one per CPU" in help_
    out = tmp_path / "c.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "synthprobe",
        "build",
        "deeparithmark",
        "--n",
        "200",
        "--seed",
        "5",
        "--out",
        str(out),
        "--no-progress",
    ]
    legacy = ["--decoys", "legacy"]  # the mode worker processes draw (a groups build has none)
    subprocess.run(cmd + ["--workers", "2", *legacy], env=_env(), check=True, capture_output=True)
    serial = tmp_path / "s.jsonl"
    subprocess.run(
        cmd[:-3] + ["--out", str(serial), "--no-progress", "--workers", "1", *legacy],
        env=_env(),
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == serial.read_bytes()
    for p in (out, serial):  # each build wrote the file and its build record (FILE.build.json)
        p.unlink()
        p.with_name(p.name + ".build.json").unlink()
    for how in ("Ctrl-C", "kill -9"):
        proc = subprocess.Popen(
            [*cmd[:5], "--n", "200000", *cmd[7:], "--workers", "2", *legacy],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        # both workers started, then a second of drawing (not a fixed wait: the 200,000 items
        # keep both cores busy for as long as the test waits)
        deadline = time.time() + 60
        kids: list[str] = []
        while len(kids) < 2 and proc.poll() is None and time.time() < deadline:
            time.sleep(0.1)
            kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        time.sleep(1)
        kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert len(kids) == 2, how
        if how == "Ctrl-C":
            os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C: the whole process group
        else:
            proc.kill()  # the parent alone: its workers must notice and exit
        proc.communicate(timeout=60)
        assert proc.returncode != 0, how
        deadline = time.time() + 10
        while any(Path(f"/proc/{k}").exists() for k in kids) and time.time() < deadline:
            time.sleep(0.2)
        assert not any(Path(f"/proc/{k}").exists() for k in kids), how
        assert list(tmp_path.iterdir()) == [], how
