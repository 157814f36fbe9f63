#!/usr/bin/env python3
"""Soak test of ``synthprobe export hf``: does it ever abort at interpreter exit?

pyarrow's thread pools can be torn down while a worker thread is still alive, and the process
then dies after its work is done with "terminate called without an active exception" (exit 134,
SIGABRT). The export keeps Arrow off its thread pools and releases its Arrow objects before it
returns; this script checks that by running the real command as a fresh subprocess ``--runs``
times (default 200), each into a new temporary folder, and reports:

* aborts: exit 134, death by SIGABRT, or "terminate called" on stderr;
* other failures: any other non-zero exit, or a run that wrote no Parquet file;
* the wall time, in all and per run.

    python bench/soak_export_hf.py              # 200 runs
    python bench/soak_export_hf.py --runs 20

Exit status 0 when every run succeeded, 1 otherwise. Run it on a quiet machine: the race
depends on timing, so one clean soak is evidence, not proof.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARQUET = Path("data") / "test-00000-of-00001.parquet"


def positive_int(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def is_abort(returncode: int, stderr: str) -> bool:
    return returncode in (134, -signal.SIGABRT) or "terminate called" in stderr


def one_run(data: Path | None, timeout: float) -> tuple[str, int, str]:
    """Run the export once into a fresh folder; returns (abort|failure|ok, exit status, stderr tail)."""
    with tempfile.TemporaryDirectory(prefix="soak-export-hf-") as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "synthprobe", "export", "hf", "--out", str(out)]
        if data is not None:
            cmd += ["--data", str(data)]
        try:
            p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "failure", -1, f"no exit within {timeout:g} s"
        tail = p.stderr[-2000:]
        if is_abort(p.returncode, p.stderr):
            return "abort", p.returncode, tail
        if p.returncode != 0 or not (out / PARQUET).is_file():
            return "failure", p.returncode, tail
        return "ok", 0, tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--runs", type=positive_int, default=200, help="exports to run (default 200)")
    ap.add_argument("--data", type=Path, default=None, help="release JSONL (default: the shipped release)")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds one run may take (default 300)")
    args = ap.parse_args(argv)

    env_path = os.environ.get("PYTHONPATH", "")
    if str(ROOT / "src") not in env_path.split(os.pathsep):  # run this checkout's synthprobe
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env_path) if p)
    counts = {"ok": 0, "abort": 0, "failure": 0}
    started = time.perf_counter()
    for i in range(1, args.runs + 1):
        kind, rc, tail = one_run(args.data, args.timeout)
        counts[kind] += 1
        if kind != "ok":
            print(f"run {i}: {kind} (exit {rc})\n{tail.rstrip()}", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - started
    print(
        f"export hf soak: {args.runs} runs, {counts['abort']} aborts (exit 134/SIGABRT), "
        f"{counts['failure']} other failures, {counts['ok']} ok; "
        f"{seconds:.1f} s ({seconds / args.runs:.2f} s per run)",
        flush=True,
    )
    return 0 if counts["ok"] == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
