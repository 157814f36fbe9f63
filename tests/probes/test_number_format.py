"""``synthprobe probe number-format`` end to end on the embedded model (small n): the results
document's block, its figures recomputed from the per-item outcomes, the cache, the report page."""

from __future__ import annotations

import json
import os

import pytest

from synthprobe.metrics.stats import paired_difference
from synthprobe.results import read_results
from tests.support.cli import synthprobe


def env() -> dict:
    """The environment now (the per-test score cache is set by conftest's fixture)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1"}


ARGS = [
    "probe",
    "number-format",
    "--seed",
    "3",
    "--n",
    "16",
    "--tasks",
    "4D+,2D+",
    "--gpt3-n",
    "4",
    "--threads",
    "1",
    "--batch-size",
    "8",
    "--no-progress",
]


cli = synthprobe  # the shared runner (tests/support/cli.py)


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
    _check_rows(
        deep["rows"], lambda r: [it for it in deep["items"] if r["depth"] in ("all", it["depth"])], formats, "depth"
    )

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


def test_chat_template_scores_every_format_under_the_template_and_is_recorded(tmp_path, _isolated_score_cache):
    """--chat-template / --system-prompt on the number-format probe: the plain variant's outcomes
    are those of `score deeparithmark` with the same template on the same items (a tiny random
    model), and the settings record the template and system prompt with their hashes."""
    import hashlib

    from scoring_support import save_tiny_llama, write_turns_template

    from synthprobe.cli import main

    model = save_tiny_llama(tmp_path / "tiny")
    template = write_turns_template(tmp_path / "turns.jinja")
    chat = ["--chat-template", str(template), "--system-prompt", "Be exact."]
    common = ["--model", str(model), "--device", "cpu", "--dtype", "float32", "--threads", "1", "--no-progress"]
    out = tmp_path / "nf.json"
    assert (
        main(
            [
                "probe",
                "number-format",
                "--seed",
                "3",
                "--n",
                "12",
                "--tasks",
                "none",
                "--batch-size",
                "8",
                *common,
                *chat,
                "--output",
                str(out),
            ]
        )
        == 0
    )
    [(entry, block)] = read_results(out).blocks("number_format")
    assert entry.settings["chat"] == {
        "chat_template": str(template),
        "chat_template_name": "turns.jinja",
        "chat_template_sha256": hashlib.sha256(template.read_bytes()).hexdigest(),
        "system_prompt": "Be exact.",
        "system_prompt_sha256": hashlib.sha256(b"Be exact.").hexdigest(),
        "fewshot_layout": "zero-shot",
    }
    data = tmp_path / "variant.jsonl"
    assert main(["build", "deeparithmark", "--seed", "3", "--n", "12", "--out", str(data), "--no-progress"]) == 0
    scored = tmp_path / "score.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(data),
                "--batch-size",
                "8",
                "--save-predictions",
                *common,
                *chat,
                "--output",
                str(scored),
            ]
        )
        == 0
    )
    doc = json.loads(scored.read_text())
    [deep] = [e["results"]["deeparithmark"] for e in doc["models"]]
    assert [int(r["correct_acc_norm"]) for r in deep["predictions"]] == [
        it["correct"][0] for it in block.data["deeparithmark"]["items"]
    ]
    # the probe stored its plain scores under the template's cache key: the same items, the same
    # template, and every score comes back from the cache
    assert deep["cached_items"] == 12
    plain = tmp_path / "plain.json"
    assert (
        main(
            [
                "probe",
                "number-format",
                "--seed",
                "3",
                "--n",
                "12",
                "--tasks",
                "none",
                "--batch-size",
                "8",
                *common,
                "--output",
                str(plain),
            ]
        )
        == 0
    )
    [(plain_entry, _)] = read_results(plain).blocks("number_format")
    assert plain_entry.settings["chat"]["chat_template"] == "none"
