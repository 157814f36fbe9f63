#!/usr/bin/env python3
"""Deep Arithmark-1: build the release, re-check its card, audit shortcut strategies.

    python deeparithmark.py build            # render data/deeparithmark-1.jsonl (seed 20261027)
    python deeparithmark.py build --check    # compare with the committed file instead
    python deeparithmark.py selftest [PATH] [--upstream ARITHMARK3.jsonl]
    python deeparithmark.py audit [PATH]

A thin wrapper over :mod:`synthprobe.benchmarks.deeparithmark.commands.build`; paths default to this
directory's ``data/`` whatever the working directory.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.benchmarks.deeparithmark.commands.build import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(root=ROOT))
