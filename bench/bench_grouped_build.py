#!/usr/bin/env python3
"""Time the role-balanced builder (``--decoys groups``) against the legacy one, in the same run.

    python bench/bench_grouped_build.py                 # the release size and 100,000 items
    python bench/bench_grouped_build.py --large 0       # the release size only

Each build runs in its own child process streaming to disk (``deeparithmark.py build --out``), one
worker, alternating legacy and groups for ``--repeats`` pairs; printed per size and mode: the median
wall seconds, items/s and the ratio groups / legacy. The goals: the release size in ≤ 10 s and
100,000 items in ≤ 10 min on 2 cores. The catalogues the groups build reads ship with the package,
so their making is not timed (``tools/deeparithmark_catalogues.py`` makes them: about a minute a
template).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed_build(folder: Path, n: int, seed: int, decoys: str) -> float:
    out = folder / f"{decoys}-{n}.jsonl"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(ROOT / "deeparithmark.py"), "build", "--seed", str(seed), "--n", str(n)]
    cmd += ["--out", str(out), "--workers", "1", "--decoys", decoys, "--no-progress"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def compare(folder: Path, n: int, seed: int, repeats: int) -> None:
    walls: dict[str, list[float]] = {"legacy": [], "groups": []}
    for _ in range(repeats):
        for decoys in walls:
            walls[decoys].append(timed_build(folder, n, seed, decoys))
    med = {k: statistics.median(v) for k, v in walls.items()}
    for k, v in med.items():
        rounds = ", ".join(f"{x:.2f}" for x in walls[k])
        print(f"{n:>9,} items  {k:6s}  {v:8.2f} s  {n / v:9,.0f} items/s  (rounds: {rounds})")
    print(f"{n:>9,} items  groups / legacy wall time: {med['groups'] / med['legacy']:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--small", type=int, default=1000, help="the small build's size (default 1,000)")
    ap.add_argument("--large", type=int, default=100_000, help="the large build's size (0: none)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="legacy/groups pairs at the small size")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        compare(Path(tmp), args.small, args.seed, args.repeats)
        if args.large:
            compare(Path(tmp), args.large, args.seed, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
