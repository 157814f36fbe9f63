#!/usr/bin/env python3
"""Time building the release's perturbation twins (every kind) against building the release itself.

    python bench/bench_twins_build.py               # 5 repeats of each, alternating
    python bench/bench_twins_build.py --repeats 3 --json twins_bench.json

Both run in this process, one after the other, ``--repeats`` times (A B A B ...): the release
build (``build.build`` of the 1,000-item release into a temporary file) and the twin build
(``twins.build.build_twins`` of every kind a family supports, from that file: it re-draws the
originals, compares them byte for byte, draws the twins, checks every twin and its file's
shortcut audit on the twins and on their originals, and computes the controls); and the
drawing alone (``iter_twins``: the originals and their twins, each checked against the item
rules). Printed: the median wall seconds of each and the ratios to the release build. Most of
the twin build is the audit's cross-validated classifier, run twice per kind.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED, RELEASE_SIZE  # noqa: E402
from synthprobe.io.write import atomic_write_json  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="runs of each build (default 5)")
    ap.add_argument("--json", metavar="PATH", help="also save the figures as JSON")
    args = ap.parse_args(argv)

    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers families and twins)
    from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS, TWINS
    from synthprobe.benchmarks.deeparithmark.build import build
    from synthprobe.benchmarks.deeparithmark.twins.build import build_twins, iter_twins

    kinds = [k for k in TWIN_KINDS if any(kind == k for _f, kind in TWINS)]
    release_s, twins_s, draw_s, written = [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(args.repeats):
            data = folder / f"r{i}" / "deeparithmark-1.jsonl"
            t0 = time.perf_counter()
            res = build(data, seed=RELEASE_SEED, n=RELEASE_SIZE, progress=False, workers=1)
            release_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tw = build_twins(data, folder / f"t{i}", kinds=kinds, progress=False)
            twins_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for _item in iter_twins(kinds):
                pass
            draw_s.append(time.perf_counter() - t0)
            written = sum(tw.stats.written.values())
    rel, twn, drw = statistics.median(release_s), statistics.median(twins_s), statistics.median(draw_s)
    print(f"release build ({RELEASE_SIZE:,} items, sha256 {res.sha256[:12]}…): median {rel:.3f} s of {args.repeats}")
    print(
        f"twin build ({', '.join(kinds)}: {written:,} twins, checks, audit and controls): "
        f"median {twn:.3f} s of {args.repeats}"
    )
    print(f"  of which drawing the originals and twins (iter_twins alone): median {drw:.3f} s")
    print(f"ratio twins / release: {twn / rel:.2f} (drawing alone: {drw / rel:.2f})")
    if args.json:
        atomic_write_json(
            args.json,
            {
                "python": platform.python_version(),
                "machine": platform.machine(),
                "repeats": args.repeats,
                "kinds": kinds,
                "twins": written,
                "release_s": [round(x, 4) for x in release_s],
                "twins_s": [round(x, 4) for x in twins_s],
                "release_median_s": round(rel, 4),
                "twins_median_s": round(twn, 4),
                "draw_s": [round(x, 4) for x in draw_s],
                "draw_median_s": round(drw, 4),
                "ratio": round(twn / rel, 3),
                "draw_ratio": round(drw / rel, 3),
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
