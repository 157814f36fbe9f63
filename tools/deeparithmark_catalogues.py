#!/usr/bin/env python3
"""Make (and with --write, ship) the role-balanced group catalogues of Deep Arithmark's families.

    python tools/deeparithmark_catalogues.py                    # every built-in family: groups found
    python tools/deeparithmark_catalogues.py money_discount_fee --draws 50000
    python tools/deeparithmark_catalogues.py --write            # rewrite src/.../resources/deeparithmark_groups/

A catalogue depends only on its family's code and the number of draws
(:mod:`synthprobe.benchmarks.deeparithmark.groups`); re-ship it whenever a family's numbers or
mistakes change (the test ``test_groups.py`` fails on a stale one).
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from synthprobe.benchmarks.deeparithmark import groups  # noqa: E402
from synthprobe.benchmarks.deeparithmark.build import load_families  # noqa: E402


def one(name: str, draws: int, write: bool) -> tuple[str, int, int, float]:
    fam = load_families()[name]
    t0 = time.perf_counter()
    cat = groups.build_catalogue(fam, name, draws, progress=False)
    if write:
        groups.write_catalogue(cat, groups.shipped_path(name))
    row = groups.summarise([cat])[0]
    return name, row["groups"], row["stories"], time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("families", nargs="*", help="templates (default: every built-in one)")
    ap.add_argument("--draws", type=int, default=groups.CATALOGUE_DRAWS, help="draws per template")
    ap.add_argument("--write", action="store_true", help="ship the catalogues (only with the default --draws)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.write and args.draws != groups.CATALOGUE_DRAWS:
        ap.error("--write ships catalogues of exactly CATALOGUE_DRAWS draws")
    names = args.families or sorted(load_families())
    print(f"{'template':28s} {'groups':>7s} {'stories':>8s} {'seconds':>8s}")
    with ProcessPoolExecutor(args.workers) as pool:
        for name, g, s, sec in pool.map(one, names, [args.draws] * len(names), [args.write] * len(names)):
            print(f"{name:28s} {g:7d} {s:8d} {sec:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
