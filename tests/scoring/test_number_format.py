"""``synthprobe probe number-format`` end to end on the embedded model (small n): the results
document's block, its figures recomputed from the per-item outcomes, the cache, the report page."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from synthprobe.metrics.stats import paired_difference
from synthprobe.results import read_results



def env() -> dict:
    """The environment now (the per-test score cache is set by conftest's fixture)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1"}
ARGS = ["probe", "number-format", "--seed", "3", "--n", "16", "--tasks", "4D+,2D+", "--gpt3-n", "4",
        "--threads", "1", "--batch-size", "8", "--no-progress"]


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synthprobe", *argv], env=env(), capture_output=True, text=True,
                          timeout=900)


def _check_rows(rows, outcomes, formats, key):
    """Every row's figures, recomputed from the per-item outcomes."""
    for row in rows:
        items = outcomes(row)
        k = formats.index(row["format"])
        want = paired_difference([bool(it["correct"][0]) for it in items], [bool(it["correct"][k]) for it in items])
        assert row["n"] == want["n"] == len(items)
        assert row["accuracy"] == want["accuracy"] and row["correct"] == want["correct"], (key, row)
        if row["format"] == "plain":
            assert row["delta"] is None and row["p_mcnemar"] is None and row["changed"] == 0
        else:
            assert (row["b"], row["c"], row["delta"]) == (want["b"], want["c"], want["delta"])
            assert row["p_mcnemar"] == pytest.approx(want["p_mcnemar"])


@pytest.mark.slow
def test_number_format_probe_end_to_end(tmp_path, _isolated_score_cache):
    out = tmp_path / "nf.json"
    proc = cli(*ARGS, "--output", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "McNemar p" in proc.stdout and "| 4D+ | comma |" in proc.stdout

    results = read_results(out)
    [(entry, block)] = results.blocks("number_format")
    nf = block.data
    assert nf["version"] == 1 and nf["formats"] == ["plain", "comma", "space"]
    assert entry.model["name"].startswith("SmolLM2-135M")

    deep = nf["deeparithmark"]
    formats = nf["formats"]
    assert len(deep["items"]) == 16 and [r["depth"] for r in deep["rows"][::3]] == ["all", 2, 3, 4, 5]
    for fmt in formats[1:]:
        assert deep["changed"][fmt] == sum(fmt in it["changed"] for it in deep["items"])
        # an item no format changes keeps its plain outcome
        for it in deep["items"]:
            if fmt not in it["changed"]:
                assert it["correct"][formats.index(fmt)] == it["correct"][0]
    _check_rows(deep["rows"], lambda r: [it for it in deep["items"] if r["depth"] in ("all", it["depth"])],
                formats, "depth")

    g = nf["gpt3"]
    by_task = {t["code"]: t["items"] for t in g["tasks"]}
    assert set(by_task) == {"4D+", "2D+"} and all(len(v) == 4 for v in by_task.values())
    _check_rows(g["rows"], lambda r: by_task[r["code"]], formats, "task")
    rows = {(r["code"], r["format"]): r for r in g["rows"]}
    assert rows["4D+", "comma"]["changed"] == 4 and rows["2D+", "space"]["changed"] == 0

    # the one runner cached every score: the same command again reads them back, same block
    cache_files = list((_isolated_score_cache / "scores").glob("*.jsonl"))
    assert len(cache_files) >= 5  # plain / comma / space Deep Arithmark, 4D+ in three formats, 2D+ plain
    again = tmp_path / "again.json"
    proc = cli(*ARGS, "--output", str(again))
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc, doc_again = json.loads(out.read_text()), json.loads(again.read_text())
    assert doc_again["models"][0]["results"] == doc["models"][0]["results"]

    # an existing output is refused without --overwrite
    proc = cli(*ARGS, "--output", str(out))
    assert proc.returncode == 2 and "--overwrite" in proc.stderr

    # the report page renders the block
    report = tmp_path / "report"
    proc = cli("report", str(out), "--out", str(report))
    assert proc.returncode == 0, proc.stderr
    page = (report / "index.html").read_text(encoding="utf-8")
    assert 'id="number-format"' in page and "McNemar p" in page and "4D+" in page
