#!/usr/bin/env python3
"""The trained choices-only audit on role-balanced builds of the templates whose catalogues ship,
beside legacy builds of the same templates, in one run.

    python bench/groups_audit.py                       # 8,000 training items, a 4,100-item audit build
    python bench/groups_audit.py --train 2000 --audit 1000

Both modes use the same table (the shipped templates), seeds, adversaries (trees, kNN, DeepSets,
gap order) and sizes; printed per mode and adversary: the audit build's accuracy, its 90 % interval
(cluster-robust for groups) and whether it lies inside 23-27 %.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from synthprobe.benchmarks.deeparithmark import build as B  # noqa: E402
from synthprobe.benchmarks.deeparithmark import groups as G  # noqa: E402
from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES, user_table  # noqa: E402
from synthprobe.benchmarks.deeparithmark.trained_audit import choice_from_item  # noqa: E402
from synthprobe.metrics.choices_only import run_audit  # noqa: E402


def items(seed: int, n: int, decoys: str, table) -> list:
    return [choice_from_item(it) for it in B.iter_items(seed, n, decoys=decoys, templates=table)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train", type=int, default=8000)
    ap.add_argument("--audit", type=int, default=4100)
    args = ap.parse_args()
    shipped = [t for t in TEMPLATES if G.shipped_path(t.name).exists()]
    table = user_table(shipped)
    print("templates:", ", ".join(t.name for t in shipped))
    for decoys in ("legacy", "groups"):
        t0 = time.perf_counter()
        train = [x for s in (101, 102) for x in items(s, args.train // 2, decoys, table)]
        test = items(909, args.audit, decoys, table)
        rep = run_audit(train, {"audit build": test})
        for name, a in rep["test_sets"]["audit build"]["adversaries"].items():
            lo, hi = a["cp90"]
            clusters = a.get("clusters") or {}
            print(
                f"{decoys:7s} {name:10s} {100 * a['accuracy']:5.1f} %  90 % [{100 * lo:.1f}, {100 * hi:.1f}]"
                f"  {a['interval_used']}{' over ' + str(clusters.get('clusters')) + ' groups' if clusters else ''}"
                f"  inside 23-27 %: {a['passes']}"
            )
        print(f"{decoys:7s} verdict: {rep['verdict']['text']}  ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
