"""``synthprobe probe steps`` end to end on the embedded model (slow): a small run, the same run
without the cache (deterministic), the same run from the cache, and the report page."""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path

import pytest

from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[4]

pytestmark = pytest.mark.slow


_run = partial(synthprobe, cwd=ROOT, check=True)  # the shared runner (tests/support/cli.py)


def _comparable(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.pop("command", None)
    for e in doc["models"]:
        e.pop("load_s")
        for k in ("timing", "cached_items"):
            e["results"]["steps"].pop(k)
    return doc


def test_embedded_model_end_to_end_deterministic_and_resumable(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    common = ["probe", "steps", "--limit", "1", "--save-items", "--threads", "2", "--no-progress"]
    out = _run(*common, "--output", str(a)).stdout
    assert "step × depth" in out and "| d2 |" in out
    block = json.loads(a.read_text())["models"][0]["results"]["steps"]
    assert block["probes"] == 2 and block["cached_items"] == 0
    for rec in block["items"]:
        for mode in ("isolation", "chain"):
            m = rec[mode]
            assert len(m["logprobs"]) == 4 and all(math.isfinite(x) and x < 0 for x in m["logprobs"])
            assert isinstance(m["generated"], str) and "\n" not in m["generated"]
            assert m["choice"] == (m["pick"] == rec["label"])
    s = block["summary"]
    assert s["overall"]["chain"]["choice"]["n"] == 2 and set(s["first_broken"]["choice"]) == {"2"}
    # the same run without the cache: the same numbers; then from the cache: the same again
    _run(*common, "--no-cache", "--output", str(b))
    _run(*common, "--output", str(c))
    assert json.loads(c.read_text())["models"][0]["results"]["steps"]["cached_items"] == 2
    assert _comparable(a) == _comparable(b) == _comparable(c)
    _run("report", str(a), "--out", str(tmp_path / "rep"))
    assert "Per-step probe" in (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
