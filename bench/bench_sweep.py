#!/usr/bin/env python3
"""Wall time of ``synthprobe sweep``: serial (one process) vs a local Ray with two workers, on the
same small grid in one run, and the ratio.

    python bench/bench_sweep.py                                   # 2 models x 2 seeds x 16 items
    python bench/bench_sweep.py --seeds release,1-3 --limit 32 --json out.json

The grid: the embedded model and the same model with BOS prepended (two specs, two sets of
scores), on Deep Arithmark at the given seeds. Each run gets a fresh score cache (the converted
weights are shared), so both really score every item; the data files are built before either
run is timed. Both runs must write byte-identical results files (checked). The figures are
wall-clock seconds of the whole command, Ray's start-up included: on a small grid that start-up
and each worker's imports weigh a lot, so the ratio grows with the grid.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.io.write import atomic_write_json  # noqa: E402


def fresh_cache(folder: Path, name: str) -> dict:
    from synthprobe.backends.spec import cache_root

    root = folder / name
    root.mkdir()
    for sub in ("models", "digests"):
        if (cache_root() / sub).is_dir():
            (root / sub).symlink_to(cache_root() / sub)
    env = {**os.environ, "SYNTHPROBE_CACHE": str(root)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run(folder: Path, grid: Path, out: str, env: dict, args: argparse.Namespace, *extra: str) -> float:
    cmd = [
        sys.executable,
        "-m",
        "synthprobe",
        "sweep",
        "--grid",
        str(grid),
        "--batch-size",
        str(args.batch_size),
        "--data-dir",
        str(folder / "data"),
        "--output",
        str(folder / out),
        "--no-progress",
        *extra,
    ]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"sweep failed ({' '.join(extra)}):\n{r.stderr}")
    return seconds


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="release,1", help="seeds of the grid (default: %(default)s)")
    p.add_argument("--limit", type=int, default=16, help="items per job (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=8, help="items per forward pass (default: %(default)s)")
    p.add_argument("--workers", type=int, default=2, help="CPUs of the local Ray (default: %(default)s)")
    p.add_argument("--json", type=Path, default=None, help="also save the figures here")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        folder = Path(tmp)
        grid = folder / "grid.yaml"
        grid.write_text(
            "models:\n  - smollm2-135m-instruct\n"
            "  - {spec: smollm2-135m-instruct, label: smollm2-bos, model_args: {bos: true}}\n"
            f"seeds: {json.dumps(args.seeds)}\nlimit: {args.limit}\n"
        )
        from synthprobe.sweep.grid import make_grid
        from synthprobe.sweep.run import prepare_data

        g = make_grid(grid_file=grid, models=None, seeds=None, tasks=None, limit=None)
        prepare_data(g, folder / "data", progress=False)
        jobs = len(g.jobs())
        serial = run(folder, grid, "serial.json", fresh_cache(folder, "serial"), args, "--serial")
        ray = run(folder, grid, "ray.json", fresh_cache(folder, "ray"), args, "--workers", str(args.workers))
        identical = (folder / "serial.json").read_bytes() == (folder / "ray.json").read_bytes()
    figures = {
        "jobs": jobs,
        "items_per_job": args.limit,
        "seeds": args.seeds,
        "workers": args.workers,
        "serial_s": round(serial, 2),
        "ray_s": round(ray, 2),
        "ratio": round(serial / ray, 3),
        "identical": identical,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(f"sweep of {jobs} jobs x {args.limit} items (2 models, seeds {args.seeds}), {os.cpu_count()} CPUs:")
    print(f"  serial            {serial:8.1f} s")
    print(f"  Ray, {args.workers} workers    {ray:8.1f} s")
    print(f"  ratio serial/Ray  {serial / ray:8.2f}x   results identical: {identical}")
    if args.json:
        atomic_write_json(args.json, figures)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
