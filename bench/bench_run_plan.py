"""What a run's calibration (the ``estimate:`` line, :mod:`synthprobe.plan`) costs: the
same ``synthprobe score deeparithmark`` process with the calibration and without it (its
threshold raised above the run's size), alternating A B A B, score cache off. Prints the wall
times, the overhead, the printed estimate beside the measured scoring time, and whether the two
results files hold the same scores (less timings).

    .venv/bin/python bench/bench_run_plan.py --limit 200 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUN = (
    "import sys; import synthprobe.plan as p; p.CALIBRATE_ABOVE = int(sys.argv[1]); "
    "from synthprobe.cli import main; sys.exit(main(sys.argv[2:]))"
)


def without_timing(doc):
    if isinstance(doc, dict):
        return {
            k: without_timing(v)
            for k, v in doc.items()
            if k not in ("timing", "seconds", "load_s", "items_per_s", "eval_s")
        }
    if isinstance(doc, list):
        return [without_timing(v) for v in doc]
    return doc


def one(calibrated: bool, args, out: Path) -> tuple[float, str, dict]:
    threshold = "48" if calibrated else str(10**9)
    cmd = [
        sys.executable,
        "-c",
        RUN,
        threshold,
        "score",
        "deeparithmark",
        "--limit",
        str(args.limit),
        "--batch-size",
        str(args.batch_size),
        "--no-cache",
        "--save-predictions",
        "--quiet",
        "--output",
        str(out),
    ]
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{res.stderr}")
    estimate = next((line for line in res.stderr.splitlines() if line.startswith("estimate: ")), "")
    return wall, estimate, json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    walls: dict[bool, list[float]] = {True: [], False: []}
    docs: dict[bool, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for calibrated in (True, False):
                wall, estimate, doc = one(calibrated, args, Path(tmp) / f"{r}-{calibrated}.json")
                walls[calibrated].append(wall)
                docs[calibrated] = doc
                eval_s = doc["models"][0]["results"]["deeparithmark"]["timing"]["eval_s"]
                print(
                    f"round {r + 1} {'with' if calibrated else 'without'} calibration: {wall:.1f} s wall, "
                    f"scoring {eval_s:.1f} s after it" + (f"; {estimate}" if estimate else ""),
                    flush=True,
                )
    a, b = min(walls[True]), min(walls[False])
    same = without_timing(docs[True]) == without_timing(docs[False])
    print(
        f"\nbest of {args.rounds}: with {a:.1f} s, without {b:.1f} s: overhead {a - b:+.1f} s "
        f"({100 * (a / b - 1):+.1f} %); results identical less timings: {same}"
    )


if __name__ == "__main__":
    main()
