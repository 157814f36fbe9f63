"""Answers that contradict themselves, echo the question or run out of tokens, sent by a chat
server with exactly these texts, through ``score deeparithmark --model openai-chat:URL``.

The server is a STUB (a stdlib HTTP server on a loopback port, the chat half of
tests/backends/test_openai_hostile_servers.py): no real model writes "A. $66" on demand. What the
embedded model really writes is read in test_answer_outcomes_embedded_model_texts.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from json_handler import JSONHandler

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"
ITEMS = [json.loads(line) for line in DATA.read_text().splitlines()[:3]]

#: per release item: (letters answer, finish), (free answer, finish). Item 0: B ($66) is right;
#: item 1: A (187 litres); item 2: B (638 litres; C is 38).
TEXTS = [
    (("A. $66", "stop"), ("Idris bought a backpack priced at $45", "length")),  # B's value; the question
    (("A. 187 litres", "stop"), ("187 litres", "stop")),  # right and consistent
    (("A. 38 litres", "stop"), ("The water left was", "length")),  # C's value; cut off
]


def test_the_texts_fit_the_release_items():
    """The answers above are written for these three items of the release: if it is re-rendered,
    they must be written again for its new items."""
    assert [(it["endings"], int(it["label"])) for it in ITEMS] == [
        ([" $54.", " $66.", " $69.", " $57."], 1),
        ([" 187 litres.", " 367 litres.", " 637 litres.", " 337 litres."], 0),
        ([" 278 litres.", " 638 litres.", " 38 litres.", " 398 litres."], 1),
    ]
    assert ITEMS[0]["ctx"].startswith(TEXTS[0][1][0]) and ITEMS[2]["ctx"].endswith(TEXTS[2][1][0])


class Answers(JSONHandler):
    def do_GET(self):
        self._send({"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "stub"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        question = body["messages"][-1]["content"]
        k = next(i for i, it in enumerate(ITEMS) if it["ctx"].rstrip() in question)
        text, finish = TEXTS[k][0 if "Reply with the letter" in question else 1]
        self._send(
            {
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
            }
        )


@pytest.fixture(scope="module")
def url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def score(url: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "score",
            "deeparithmark",
            "--model",
            f"openai-chat:{url}",
            "--limit",
            "3",
            "--protocol",
            "letters,free",
            "--no-progress",
            "--no-cache",
            "--save-predictions",
            "--output",
            str(out),
            *extra,
        ],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_inconsistent_echoed_and_cut_off_answers_are_counted_and_never_credited(url, tmp_path):
    out = tmp_path / "r.json"
    r = score(url, out)
    assert r.returncode == 0, r.stderr
    letters, free = (e["results"]["deeparithmark"] for e in json.loads(out.read_text())["models"])
    recs = letters["predictions"]
    assert [(r["parsed"], r["outcome"], r["written_option"], r["correct"]) for r in recs] == [
        ("A", "inconsistent", 1, False),
        ("A", "answered", 0, True),
        ("A", "inconsistent", 2, False),
    ]
    assert recs[0]["outcome_note"] == "letter A, but the value written (66) is option B's"
    assert letters["summary"]["metrics"] == {"accuracy": letters["summary"]["metrics"]["accuracy"]}
    assert letters["summary"]["metrics"]["accuracy"]["correct"] == 1
    assert letters["extraction"]["outcomes"] == {
        "answered": 1,
        "unparsed": 0,
        "inconsistent": 2,
        "echo": 0,
        "cut_off": 0,
    }
    assert letters["extraction"]["answered_accuracy"]["acc"] == 1.0 and letters["extraction"]["resolve"] == "none"

    recs = free["predictions"]
    assert [(r["parsed"], r["outcome"], r["correct"]) for r in recs] == [
        (45, "echo", False),
        (187, "answered", True),
        (None, "unparsed", False),
    ]
    assert [r["cut_off"] for r in recs] == [True, False, True]
    assert free["extraction"]["outcomes"]["echo"] == 1 and free["extraction"]["finished_by_budget"] == 2
    assert free["wrong_answers"] == {"echo": 1, "unparsed": 1}

    printed = r.stdout
    assert "answers: answered 1 (33.3 %), unparsed 0 (0.0 %), inconsistent 2 (66.7 %), cut off 0 (0.0 %)" in printed
    assert "accuracy 33.33 % (1 of 3); over the 1 answered item 100.00 %" in printed
    assert "acc_norm" not in printed and "soft 0.00" not in printed


@pytest.mark.parametrize(
    "rule,credited", [("letter-first", [False, True, False]), ("value-first", [True, True, False])]
)
def test_a_resolve_rule_credits_inconsistent_answers_and_says_so(url, tmp_path, rule, credited):
    out = tmp_path / "r.json"
    r = score(url, out, "--resolve", rule)
    assert r.returncode == 0, r.stderr
    entry = json.loads(out.read_text())["models"][0]
    block = entry["results"]["deeparithmark"]
    assert [p["correct"] for p in block["predictions"]] == credited
    assert [p["resolved_by"] for p in block["predictions"]] == [rule, None, rule]
    assert block["extraction"]["resolve"] == rule and block["extraction"]["resolved"] == 2
    assert entry["protocol"]["resolve"] == rule and f"letters+{rule}" in entry["row"]["model"]
    right = credited.count(True) - 1  # item 1 is right without any rule
    assert f"the 2 inconsistent resolved by --resolve {rule}, {right} of them right" in r.stdout
    # its metric line says how they were credited, not that they count wrong
    assert "an inconsistent answer is credited by" in block["summary"]["primary_label"]
    assert "inconsistent answers count wrong" not in r.stdout.split("[free")[0]


def test_resolve_without_letters_is_refused(url, tmp_path):
    out = tmp_path / "r.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "score",
            "deeparithmark",
            "--model",
            f"openai-chat:{url}",
            "--protocol",
            "free",
            "--resolve",
            "letter-first",
            "--output",
            str(out),
        ],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "--resolve letter-first reads letters answers only" in r.stderr
    assert not out.exists()
