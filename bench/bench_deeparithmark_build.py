#!/usr/bin/env python3
"""Time the Deep Arithmark builder, selftest and shortcut audit.

    python bench/bench_deeparithmark_build.py                  # 1,000 items, then 1,000,000
    python bench/bench_deeparithmark_build.py --large 100000   # a smaller large run
    python bench/bench_deeparithmark_build.py --large 0        # the small run only

Small run: build + selftest + audit of a ``--small``-item file (default 1,000, the release
size). Large run: build of a ``--large``-item file (default 1,000,000) streamed to disk with
a tqdm bar, in a child process so that its peak resident memory is measured on its own.
Files go to a temporary folder (or ``--keep DIR``); ``--json PATH`` saves the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.io import atomic_write_json  # noqa: E402
from synthprobe.tasks.deeparithmark.composition import RELEASE_SEED  # noqa: E402


def _peak_rss_mib() -> float:
    """This process's resident-memory high-water mark. ``VmHWM`` belongs to the address
    space, so unlike ``ru_maxrss`` it does not inherit the parent's peak across ``exec``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def small_run(folder: Path, n: int, seed: int) -> dict:
    from synthprobe.tasks.deeparithmark.audit import audit, format_table, load_audit_items
    from synthprobe.tasks.deeparithmark.build import build
    from synthprobe.tasks.deeparithmark.selftest import selftest

    path = folder / f"deeparithmark-{n}.jsonl"
    t0 = time.perf_counter()
    res = build(path, seed=seed, n=n, progress=False)
    t_build = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = selftest(path)
    t_selftest = time.perf_counter() - t0
    t0 = time.perf_counter()
    items = load_audit_items(path)
    rows = audit(items)
    t_audit = time.perf_counter() - t0
    print(format_table(rows, title=f"audit of the {n:,}-item file"))
    return {"n": n, "seed": seed, "sha256": res.sha256, "build_s": round(t_build, 3),
            "draws_per_item": round(sum(res.stats.attempts.values()) / n, 3),
            "selftest_s": round(t_selftest, 3), "selftest_ok": report.ok,
            "selftest_failed": report.failed, "audit_s": round(t_audit, 3),
            "file_bytes": path.stat().st_size}


def large_child(path: Path, n: int, seed: int) -> None:
    """Runs in the child: build, then print one JSON line of figures."""
    from synthprobe.tasks.deeparithmark.build import build

    res = build(path, seed=seed, n=n, progress=True)
    print(json.dumps({"n": n, "seed": seed, "sha256": res.sha256, "build_s": round(res.seconds, 1),
                      "items_per_s": round(n / res.seconds, 1),
                      "draws_per_item": round(sum(res.stats.attempts.values()) / n, 3),
                      "off_length_items": sum(res.stats.off_length.values()),
                      "file_bytes": path.stat().st_size,
                      "peak_rss_mib": round(_peak_rss_mib(), 1)}))


def large_run(folder: Path, n: int, seed: int) -> dict:
    path = folder / f"deeparithmark-{n}.jsonl"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", str(path), "--large", str(n),
                           "--seed", str(seed)], stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"large build failed (exit {proc.returncode})")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", type=int, default=1000, help="items in the build+selftest+audit run")
    p.add_argument("--large", type=int, default=1_000_000, help="items in the build-only run (0: skip)")
    p.add_argument("--seed", type=int, default=RELEASE_SEED)
    p.add_argument("--keep", metavar="DIR", help="write the files here instead of a temporary folder")
    p.add_argument("--json", metavar="PATH", help="save the figures as JSON")
    p.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        large_child(Path(args.child), args.large, args.seed)
        return 0

    env = {"python": platform.python_version(), "machine": platform.machine(),
           "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="deeparithmark-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        figures = {"env": env, "small": small_run(folder, args.small, args.seed)}
        s = figures["small"]
        print(f"\n{s['n']:,} items: build {s['build_s']:.2f} s ({s['draws_per_item']} draws/item), "
              f"selftest {s['selftest_s']:.2f} s ({'PASS' if s['selftest_ok'] else 'FAIL'}), "
              f"audit {s['audit_s']:.2f} s")
        if args.large > 0:
            figures["large"] = big = large_run(folder, args.large, args.seed)
            print(f"{big['n']:,} items: build {big['build_s']:.1f} s ({big['items_per_s']:,.0f} items/s, "
                  f"{big['draws_per_item']} draws/item), {big['file_bytes'] / 2**20:,.0f} MiB on disk, "
                  f"peak RSS {big['peak_rss_mib']:,.0f} MiB")
    if args.json:
        atomic_write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
