#!/usr/bin/env python3
"""Time the Deep Arithmark builder, selftest and shortcut audit, against the builder as it was.

    python bench/bench_deeparithmark_build.py                  # 1,000 items; 100,000 vs baseline; 1,000,000
    python bench/bench_deeparithmark_build.py --large 100000   # a smaller large run
    python bench/bench_deeparithmark_build.py --large 0 --baseline-n 0   # the small run only

Small run: build + selftest + audit of a ``--small``-item file (default 1,000, the release
size). Comparison: a ``--baseline-n``-item build (default 100,000) by this tree's builder and
by the builder of ``--baseline`` (default the commit before the speed work, extracted with
``git archive`` into a temporary folder), alternating A B A B for ``--repeats`` pairs, with the
same ``--workers``; the two files must have the same SHA-256. Large run: a ``--large``-item build
(default 1,000,000) by this tree's builder. Every build runs in a child process streaming to
disk, so its peak resident memory is its own; its CPU time is the child's plus its worker
processes' (``getrusage`` of the child and its reaped children), which a loaded machine
disturbs far less than wall time. Printed per build: wall seconds, items/s in total, items per
CPU-second (what one core does) and CPU µs per item. Files go to a temporary folder (or
``--keep DIR``); ``--json PATH`` saves the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED  # noqa: E402
from synthprobe.io.write import atomic_write_json  # noqa: E402


def small_run(folder: Path, n: int, seed: int) -> dict:
    from synthprobe.benchmarks.deeparithmark.audit import audit, format_table, load_audit_items
    from synthprobe.benchmarks.deeparithmark.build import build
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

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
    return {
        "n": n,
        "seed": seed,
        "sha256": res.sha256,
        "build_s": round(t_build, 3),
        "draws_per_item": round(sum(res.stats.attempts.values()) / n, 3),
        "selftest_s": round(t_selftest, 3),
        "selftest_ok": report.ok,
        "selftest_failed": report.failed,
        "audit_s": round(t_audit, 3),
        "file_bytes": path.stat().st_size,
    }


#: The last commit before the builder's speed work (issue 15): the comparator.
BASELINE_REV = "1bfe861"

#: Run in a child process with the builder under test first on ``sys.path``: build, then print
#: one JSON line of figures. CPU time comes from getrusage (the child and its reaped workers),
#: so it means the same for a builder that does not report its own.
CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from synthprobe.benchmarks.deeparithmark.build import build

path, n, seed, workers, progress = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5] == "1"
res = build(path, seed=seed, n=n, progress=progress, workers=workers)
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
peak = 0.0
for line in Path("/proc/self/status").read_text().splitlines():
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) / 1024.0
print(json.dumps({"n": n, "seed": seed, "workers": workers, "sha256": res.sha256,
                  "build_s": round(res.seconds, 2), "cpu_s": round(cpu, 2),
                  "draws_per_item": round(sum(res.stats.attempts.values()) / n, 3),
                  "file_bytes": path.stat().st_size, "peak_rss_mib": round(peak, 1)}))
"""


def run_build(src: Path, path: Path, n: int, seed: int, workers: int, progress: bool) -> dict:
    """One build in a child process whose ``synthprobe`` comes from ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(n), str(seed), str(workers), "1" if progress else "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    if proc.returncode != 0:
        raise SystemExit(f"build from {src} failed (exit {proc.returncode})")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall_s"] = round(time.perf_counter() - t0, 2)
    out["items_per_s"] = round(n / out["build_s"], 1)
    out["items_per_cpu_s"] = round(n / out["cpu_s"], 1)
    out["cpu_us_per_item"] = round(1e6 * out["cpu_s"] / n, 1)
    path.unlink()
    return out


def baseline_src(rev: str, folder: Path) -> Path:
    """The ``src`` tree of ``rev``, extracted with ``git archive`` (no checkout, no branch)."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], stdout=subprocess.PIPE, check=True).stdout
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=tar, check=True)
    return folder / "src"


def line(label: str, r: dict) -> str:
    return (
        f"{label}: {r['n']:,} items, {r['workers']} worker{'s' if r['workers'] != 1 else ''}: "
        f"{r['build_s']:.1f} s, {r['items_per_s']:,.0f} items/s in total, "
        f"{r['items_per_cpu_s']:,.0f} items per CPU-second, {r['cpu_us_per_item']:,.0f} µs CPU "
        f"per item, peak RSS {r['peak_rss_mib']:,.0f} MiB"
    )


def compare(folder: Path, n: int, seed: int, workers: int, rev: str, repeats: int) -> dict:
    src = baseline_src(rev, folder / "baseline")
    runs: dict[str, list[dict]] = {"after": [], "before": []}
    for _ in range(repeats):  # A B A B: both see the same load, on average
        runs["after"].append(run_build(ROOT / "src", folder / "after.jsonl", n, seed, workers, False))
        runs["before"].append(run_build(src, folder / "before.jsonl", n, seed, workers, False))
    shas = {r["sha256"] for rs in runs.values() for r in rs}
    if len(shas) != 1:
        raise SystemExit(f"the builders disagree: {sorted(shas)}")
    med = {k: {f: statistics.median(r[f] for r in rs) for f in ("build_s", "cpu_s")} for k, rs in runs.items()}
    return {
        "n": n,
        "workers": workers,
        "baseline": rev,
        "sha256": shas.pop(),
        "runs": runs,
        "cpu_ratio": round(med["before"]["cpu_s"] / med["after"]["cpu_s"], 2),
        "wall_ratio": round(med["before"]["build_s"] / med["after"]["build_s"], 2),
    }


def main(argv: list[str] | None = None) -> int:
    from synthprobe.benchmarks.deeparithmark.build import available_cpus

    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--small", type=int, default=1000, help="items in the build+selftest+audit run")
    p.add_argument("--baseline-n", type=int, default=100_000, help="items in the before/after comparison (0: skip)")
    p.add_argument(
        "--baseline",
        default=BASELINE_REV,
        metavar="REV",
        help=f"git revision of the comparator builder (default {BASELINE_REV})",
    )
    p.add_argument("--repeats", type=int, default=1, help="A B pairs in the comparison (median)")
    p.add_argument("--large", type=int, default=1_000_000, help="items in the build-only run (0: skip)")
    p.add_argument(
        "--workers",
        type=int,
        default=available_cpus(),
        help="worker processes of the comparison and the large run "
        f"(default {available_cpus()}: every CPU this process may use)",
    )
    p.add_argument("--seed", type=int, default=RELEASE_SEED)
    p.add_argument("--keep", metavar="DIR", help="write the files here instead of a temporary folder")
    p.add_argument("--json", metavar="PATH", help="save the figures as JSON")
    args = p.parse_args(argv)

    env = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "usable_cpus": available_cpus(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(f"{env['usable_cpus']} usable CPUs, load average {env['load_average']}")
    with tempfile.TemporaryDirectory(prefix="deeparithmark-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        figures: dict = {"env": env}
        if args.small > 0:
            figures["small"] = s = small_run(folder, args.small, args.seed)
            print(
                f"\n{s['n']:,} items: build {s['build_s']:.2f} s ({s['draws_per_item']} draws/item), "
                f"selftest {s['selftest_s']:.2f} s ({'PASS' if s['selftest_ok'] else 'FAIL'}), "
                f"audit {s['audit_s']:.2f} s"
            )
        if args.baseline_n > 0:
            figures["compare"] = c = compare(
                folder, args.baseline_n, args.seed, args.workers, args.baseline, args.repeats
            )
            for a, b in zip(c["runs"]["after"], c["runs"]["before"]):
                print(line("after ", a))
                print(line(f"before ({c['baseline']})", b))
            print(
                f"before/after (median of {args.repeats}): CPU per item {c['cpu_ratio']:.2f}×, "
                f"wall {c['wall_ratio']:.2f}×; same SHA-256 {c['sha256'][:12]}…"
            )
        if args.large > 0:
            figures["large"] = big = run_build(
                ROOT / "src", folder / f"deeparithmark-{args.large}.jsonl", args.large, args.seed, args.workers, True
            )
            print(
                line("large", big) + f"; {big['file_bytes'] / 2**20:,.0f} MiB on disk, "
                f"{big['draws_per_item']} draws/item"
            )
            if big["build_s"] > 0:
                print(
                    f"  1,000,000 items at this rate: {1e6 / big['items_per_s']:,.0f} s wall; at "
                    f"this CPU cost on {args.workers} fully free cores: "
                    f"{1e6 * big['cpu_us_per_item'] / 1e6 / args.workers:,.0f} s"
                )
    if args.json:
        atomic_write_json(args.json, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
