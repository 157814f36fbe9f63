"""Results files with saved predictions for the item viewer's tests, scored by the toy engine
(tests/support/toy_engine.py: a real backend of its own, no model) through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"
EVIL = "</script><script>window.pwned = 1</script><!-- <b>bold</b> & \u2028"


def score_toy(data: Path, out: Path, *, limit: int = 8) -> Path:
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(data),
                "--model",
                "toy:bigram",
                "--limit",
                str(limit),
                "--no-progress",
                "--no-cache",
                "--save-predictions",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    return out


def evil_data(path: Path, n: int = 6) -> Path:
    """The first ``n`` release items with markup and a script-closing tag in the prompt, an
    ending, a template name and a named mistake."""
    lines = RELEASE.read_text("utf-8").splitlines()[:n]
    out = []
    for k, line in enumerate(lines):
        rec = json.loads(line)
        if k == 0:
            rec["ctx"] = EVIL + " " + rec["ctx"]
            rec["endings"][0] = " " + EVIL
            rec["metadata"]["template"] = EVIL
            rec["metadata"]["option_sources"][0] = EVIL
        out.append(json.dumps(rec, ensure_ascii=False))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def page_data(html: str) -> dict:
    """The JSON the item viewer embeds."""
    m = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))
