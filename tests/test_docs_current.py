"""The data-derived blocks of the design doc and the release card match the code and the data."""

from __future__ import annotations

import subprocess
import sys

from synthprobe.tasks.deeparithmark import docs


def test_generated_blocks_are_current():
    proc = subprocess.run([sys.executable, "-m", "synthprobe.tasks.deeparithmark.docs", "--check"],
                          capture_output=True, text=True, cwd=docs.ROOT)
    assert proc.returncode == 0, (f"stale docs — run `python -m synthprobe.tasks.deeparithmark.docs`\n"
                                  f"{proc.stdout}{proc.stderr}")


def test_every_marker_has_a_maker():
    makers = docs.blocks()
    for doc in docs.DOCS:
        names = set(docs._BLOCK.findall(doc.read_text(encoding="utf-8")))
        found = {n[1] for n in names}
        assert found and found <= set(makers), (doc, found - set(makers))
