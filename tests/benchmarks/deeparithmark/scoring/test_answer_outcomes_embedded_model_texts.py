"""What the embedded model really writes under ``letters`` and ``free``, read back.

``fixtures/smollm2_135m_instruct_chat_answers.jsonl`` holds the 2,000 texts (one per item of the
2026-10 release and protocol, with the engine's finish reason) that SmolLM2-135M-Instruct (the embedded model,
weights fingerprint ``158b3579…``) generated greedily, in fp32 on CPU, under its own chat template
(SHA-256 ``872be49d…``), with the default budgets (8 new tokens for letters, 16 for free)::

    synthprobe score deeparithmark --protocol letters,free --chat-template auto \
        --save-predictions --batch-size 32 --output full_lf.json

Reading them needs no model, so the figures docs/chat-and-protocols.md gives are checked here on
every run: how many answers contradict themselves, echo the question or were cut off, and the
accuracy with and without them. The items they answer are the 2026-10 release's, the legacy build of
the card's seed (``decoys="legacy"``), rebuilt here byte for byte (its SHA-256 is pinned); the
release that replaced it shows other options, so the texts are read against the items they answered.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.scoring.metrics import extraction_block, summarise
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.scoring.records import generation_record
from tests.support.legacy_release import write_legacy_release

ROOT = Path(__file__).resolve().parents[4]
TEXTS = Path(__file__).parent / "fixtures" / "smollm2_135m_instruct_chat_answers.jsonl"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """The 2026-10 release the texts answer, rebuilt (legacy decoys) and checked."""
    return write_legacy_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def records(release):
    items = {it.id: it for it in load_arithmark3(release)}
    out: dict[str, list[dict]] = {"letters": [], "free": []}
    for line in TEXTS.read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        out[t["protocol"]].append(
            generation_record(items[t["id"]], t["protocol"], t["raw"], finish=t["finish"], n_tokens=t["n_tokens"])
        )
    assert [len(v) for v in out.values()] == [1000, 1000]
    return out


def test_letters_on_the_first_20_items(records):
    first = records["letters"][:20]
    bad = [(r["id"], r["raw"], "ABCD"[r["written_option"]]) for r in first if r["outcome"] == "inconsistent"]
    # "A. $6966" where $6966 is B: two of these were credited before (A is right), and "A. 39 trays"
    # wrote the right value (C) under the wrong letter
    assert bad == [
        ("2", "A. 326 litres", "B"),
        ("8", "A. $6966", "B"),
        ("15", "A. 448 minutes", "B"),
        ("16", "A. 39 trays", "C"),
    ]
    assert sum(r["correct"] for r in first) == 3  # 5 by the letter alone
    assert sum(r["parsed"] == "ABCD"[r["label"]] for r in first) == 5


def test_letters_on_the_release(records):
    recs = records["letters"]
    ext = extraction_block(recs)
    assert ext["outcomes"] == {"answered": 838, "unparsed": 0, "inconsistent": 162, "echo": 0, "cut_off": 0}
    assert ext["rules"]["lax"] == 1000 and ext["finished_by_budget"] == 203
    assert Counter(r["parsed"] for r in recs) == {"A": 999, "D": 1}
    assert summarise(recs)["metrics"]["accuracy"]["correct"] == 199
    assert (ext["answered_accuracy"]["correct"], ext["answered_accuracy"]["total"]) == (199, 838)
    inconsistent = [r for r in recs if r["outcome"] == "inconsistent"]
    assert sum(r["parsed"] == "ABCD"[r["label"]] for r in inconsistent) == 53  # the letter alone was right
    assert sum(r["written_option"] == r["label"] for r in inconsistent) == 31  # the value alone was right
    assert {d: b["inconsistent"] for d, b in ext["outcomes_by_depth"].items()} == {"2": 20, "3": 38, "4": 66, "5": 38}


@pytest.mark.parametrize("rule,correct", [("none", 199), ("letter-first", 252), ("value-first", 230)])
def test_letters_under_each_resolve_rule(records, release, rule, correct):
    items = {it.id: it for it in load_arithmark3(release)}
    again = [
        generation_record(items[r["id"]], "letters", r["raw"], finish=r["finish"], resolve=rule)
        for r in records["letters"]
    ]
    assert sum(r["correct"] for r in again) == correct


def test_free_on_the_first_20_items(records):
    first = records["free"][:20]
    assert Counter(r["outcome"] for r in first) == {"echo": 13, "cut_off": 5, "unparsed": 1, "answered": 1}
    assert first[2]["raw"] == "A water tank held 376 litres. A pump filled it at " and first[2]["outcome"] == "echo"
    assert Counter(r["rule"] for r in first) == {"last": 17, "lax": 2, "unparsed": 1}


def test_free_on_the_release(records):
    recs = records["free"]
    ext = extraction_block(recs)
    assert ext["outcomes"] == {"answered": 92, "unparsed": 23, "inconsistent": 0, "echo": 662, "cut_off": 223}
    assert ext["rules"] == {"strict": 0, "lax": 87, "last": 890, "value": 0, "unparsed": 23}
    assert ext["finished_by_budget"] == 881
    assert summarise(recs)["metrics"]["accuracy"]["correct"] == 0 and ext["answered_accuracy"]["total"] == 92


def test_a_run_with_no_answer_at_all_writes_no_nan(records):
    none_answered = [r for r in records["free"] if r["outcome"] != "answered"]
    ext = extraction_block(none_answered)
    assert ext["answered_accuracy"] == {"correct": 0, "total": 0, "acc": None, "ci95": None}
    json.dumps(ext, allow_nan=False)  # the results reader refuses NaN
