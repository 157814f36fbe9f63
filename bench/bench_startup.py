#!/usr/bin/env python3
"""Time to the first scored item with cached weights, as a separate process, and where it goes.

Runs ``python -X importtime -m synthprobe score deeparithmark --limit 1 --no-cache`` (embedded
model, fp32) ``--repeats`` times, alternating two cache states:

* **first run**: a fresh ``$SYNTHPROBE_CACHE`` that shares only the converted weights and the
  file-digest memo with yours, so the one-pass probe (3 small forwards) runs;
* **later runs**: the same cache again, so the stored one-pass verdict is read instead.

It prints the median wall time of each and, from the last run's ``-X importtime`` log, the
import time of the big libraries (cumulative, as the first importer saw it) and whether any of
``datasets``, ``pyarrow``, ``scipy``, ``matplotlib``, ``sklearn``, ``statsmodels`` and
``jinja2`` was imported (transformers itself imports jinja2 and, when it builds a model,
scipy.optimize; our own code imports scipy.stats only to summarise the scores).

    python bench/bench_startup.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBS = (
    "torch",
    "transformers",
    "safetensors",
    "tokenizers",
    "numpy",
    "scipy",
    "scipy.stats",
    "jinja2",
    "tqdm",
    "synthprobe.cli",
    "synthprobe.benchmarks.deeparithmark.scoring.score",
)
HEAVY = ("datasets", "pyarrow", "scipy", "matplotlib", "sklearn", "statsmodels", "jinja2")


def real_cache() -> Path:
    env = os.environ.get("SYNTHPROBE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "synthprobe"


def run(cache: Path, out: Path) -> tuple[float, str]:
    env = dict(os.environ, SYNTHPROBE_CACHE=str(cache), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--data",
        str(ROOT / "data" / "deeparithmark-1.jsonl"),
        "--limit",
        "1",
        "--no-cache",
        "--dtype",
        "float32",
        "--no-progress",
        "--output",
        str(out),
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(done.stderr[-3000:])
    return wall, done.stderr


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3, help="runs of each cache state (default: %(default)s)")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_startup_"))
    first, later = [], []
    log = ""
    try:
        for k in range(args.repeats):
            cache = work / f"cache{k}"
            cache.mkdir()
            for name in ("models", "digests"):
                (cache / name).symlink_to(real_cache() / name, target_is_directory=True)
            wall, _ = run(cache, work / "r.json")
            first.append(wall)
            wall, log = run(cache, work / "r.json")
            later.append(wall)
            print(f"  run {k + 1}: first {first[-1]:6.1f} s, later {later[-1]:6.1f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"time to the first scored item (1 item, whole process, load average {os.getloadavg()[0]:.1f}): "
        f"first run {statistics.median(first):.1f} s, later runs {statistics.median(later):.1f} s "
        f"(median of {args.repeats})"
    )
    cumulative = {}
    for m in re.finditer(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", log):
        cumulative.setdefault(m.group(3), int(m.group(1)))
    print(
        "imports (cumulative ms, as first imported): "
        + ", ".join(f"{lib} {cumulative[lib] / 1000:.0f}" for lib in LIBS if lib in cumulative)
    )
    heavy = sorted({name.split(".")[0] for name in cumulative} & set(HEAVY))
    print(f"heavy libraries imported at all: {', '.join(heavy) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
