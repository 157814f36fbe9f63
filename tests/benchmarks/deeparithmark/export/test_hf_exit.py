"""``synthprobe export hf`` exits cleanly: no Arrow worker thread outlives the export (what aborted
the interpreter now and then at exit), and ``bench/soak_export_hf.py`` runs the export as a
subprocess a few times without an abort and counts a failing one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]


_THREADS_AFTER_EXPORT = """
import os, sys
from synthprobe.benchmarks.deeparithmark.export.hf import export_hf
import pyarrow  # noqa: F401  (its own start-up threads are not the export's)
before = len(os.listdir("/proc/self/task"))
export_hf(sys.argv[1])
print(before, len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts native threads through /proc")
def test_export_hf_leaves_no_arrow_worker_thread_alive_for_the_interpreter_exit(tmp_path):
    """Arrow's pool threads still alive at exit are what abort (exit 134) now and then; the
    export must start none that outlive it. BLAS is pinned to one thread, so any new native
    thread is Arrow's."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    p = subprocess.run(
        [sys.executable, "-c", _THREADS_AFTER_EXPORT, str(tmp_path / "hf")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    before, after = map(int, p.stdout.split())
    assert after == before, f"{after - before} native threads outlive the export"
    assert (tmp_path / "hf" / "data" / "test-00000-of-00001.parquet").is_file()


def test_soak_script_runs_the_export_a_few_times_without_an_abort(tmp_path):
    p = subprocess.run(
        [sys.executable, str(REPO / "bench" / "soak_export_hf.py"), "--runs", "2"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    summary = p.stdout.strip().splitlines()[-1]
    assert summary.startswith("export hf soak: 2 runs, 0 aborts (exit 134/SIGABRT), 0 other failures, 2 ok;"), summary


def test_soak_script_counts_a_failing_export(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    p = subprocess.run(
        [sys.executable, str(REPO / "bench" / "soak_export_hf.py"), "--runs", "1", "--data", str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert p.returncode == 1
    assert "1 runs, 0 aborts (exit 134/SIGABRT), 1 other failures, 0 ok" in p.stdout, p.stdout
    assert "run 1: failure (exit 2)" in p.stderr, p.stderr
