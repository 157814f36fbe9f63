"""``synthprobe probe twins`` end to end on the embedded model (slow): the release's first
originals with twins and their twins under every protocol with the A/A check, the same run again
from the cache, and the block read back by the results reader."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED, RELEASE_SIZE
from synthprobe.report.reader import read_document
from tests.support.cli import synthprobe

from .test_probe_twins import KINDS, write_twin_build

ROOT = Path(__file__).resolve().parents[4]

pytestmark = pytest.mark.slow


_run = partial(synthprobe, cwd=ROOT, check=True)  # the shared runner (tests/support/cli.py)


def _comparable(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc.pop("command", None)
    for e in doc["models"]:
        e.pop("load_s")
        for r in e["results"]["twins"]["runs"]:
            r.pop("seconds"), r.pop("cached_items")
    return doc


def test_embedded_model_every_protocol_with_the_aa_check(tmp_path):
    manifest = write_twin_build(tmp_path / "twins", seed=RELEASE_SEED, n=RELEASE_SIZE, stem="deeparithmark-1")
    assert (tmp_path / "twins" / "deeparithmark-1.jsonl").read_bytes() == (
        ROOT / "data/deeparithmark-1.jsonl"
    ).read_bytes()
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    common = ["probe", "twins", str(manifest), "--limit", "3", "--protocol", "loglik,letters,free", "--aa", "2"]
    common += ["--save-items", "--threads", "2", "--no-progress"]
    out = _run(*common, "--output", str(a)).stdout
    assert "| loglik | irrelevant_clause | 3 |" in out and "A/A (seed 2)" in out
    block = read_document(a).models[0].results["twins"].data
    assert block["originals"]["n"] == 3 and set(block["summary"]) == {"loglik", "letters", "free"}
    assert len(block["items"]) == 3 * len(KINDS) * 3
    for it in block["items"]:
        assert it["twin_of"] != it["id"] and it["kind"] in KINDS
        if it["protocol"] == "loglik":
            assert it["original"]["pick"] in range(4) and it["twin"]["pick"] in range(4)
    c = block["summary"]["loglik"]["irrelevant_clause"]
    assert c["both_right"] + c["both_wrong"] + c["right_to_wrong"] + c["wrong_to_right"] == 3
    assert 0 <= c["p_mcnemar"] <= c["p_holm"] <= 1 and "uptake" in c
    assert block["aa"]["summary"]["loglik"]["aa"]["n"] == block["aa"]["n"] >= 1
    _run(*common, "--output", str(b))
    assert all(
        r["cached_items"] == r["items"] for r in json.loads(b.read_text())["models"][0]["results"]["twins"]["runs"]
    )
    assert _comparable(a) == _comparable(b)
