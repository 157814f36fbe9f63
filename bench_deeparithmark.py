#!/usr/bin/env python3
"""Score causal LMs on Deep Arithmark, optionally beside ArithMark 3.0 on the same weights.

A thin wrapper over ``synthprobe score deeparithmark`` (same flags, same code); default data
paths are resolved against this file's folder. Examples::

    python bench_deeparithmark.py                                   # the embedded model
    python bench_deeparithmark.py --compare --model HuggingFaceTB/SmolLM2-135M

Run ``python bench_deeparithmark.py --help`` for every flag.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from synthprobe.benchmarks.deeparithmark.commands.score import bench_main  # noqa: E402

if __name__ == "__main__":
    sys.exit(bench_main(root=Path(__file__).resolve().parent))
