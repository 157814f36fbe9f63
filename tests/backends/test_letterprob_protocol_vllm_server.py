"""``score deeparithmark --protocol letterprob`` through a real vLLM server's chat endpoint (the
session's ``vllm_server`` fixture, CPU build, fp32) against the same command in process with
``--chat-template auto``: the one-pass letter, the tokenisation read, the certification and the
letters-equivalent answers are the same item by item, and the letter probabilities agree within
the tolerance ``tests/backends/test_first_token_vllm_server.py`` measured for ``first_token``
(the server returns its top 20 first tokens; every letter of these items is among them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.model]

ROOT = Path(__file__).resolve().parents[2]
N_ITEMS = 12
#: Largest |Δ| between the server's letter probabilities and the HF engine's (probabilities, not
#: log-probabilities: 2e-4 nats on a probability below 1 moves it by less than 2e-4).
TOLERANCE = 2e-4


def synthprobe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthprobe", *args],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_letterprob_through_the_chat_server_reads_what_the_hf_engine_reads(vllm_server, tmp_path):
    common = ["score", "deeparithmark", "--protocol", "letterprob", "--limit", str(N_ITEMS), "--save-predictions"]
    common += ["--no-progress", "--no-cache"]
    served_out, local_out = tmp_path / "server.json", tmp_path / "hf.json"
    r = synthprobe(*common, "--model", f"openai-chat:{vllm_server.url}", "--output", str(served_out))
    assert r.returncode == 0, r.stderr[-3000:]
    r = synthprobe(
        *common,
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--chat-template",
        "auto",
        "--output",
        str(local_out),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    served = json.loads(served_out.read_text())["models"][0]["results"]["deeparithmark"]
    local = json.loads(local_out.read_text())["models"][0]["results"]["deeparithmark"]
    assert served["letterprob"]["top_k"] == 20 and local["letterprob"]["top_k"] is None
    sp, hp = served["predictions"], local["predictions"]
    assert [p["id"] for p in sp] == [p["id"] for p in hp] and len(sp) == N_ITEMS
    largest = 0.0
    for a, b in zip(sp, hp):
        assert a["letters_missing"] == 0, a["id"]  # every letter came back, so the mass is exact
        assert (a["pred"], a["tokenisation"], a["certified"], a["top_token"]) == (
            b["pred"],
            b["tokenisation"],
            b["certified"],
            b["top_token"],
        ), a["id"]
        assert a["letters"]["raw"] == b["letters"]["raw"] and a["letters"]["pred"] == b["letters"]["pred"], a["id"]
        largest = max(largest, *(abs(x - y) for x, y in zip(a["probs"], b["probs"])))
    print(f"\n{N_ITEMS} items: largest |Δ letter probability| server vs HF {largest:.2e}")
    assert largest < TOLERANCE
    # the block's figures follow from the same records on both sides
    for key in ("certified", "fallback", "tokenisation", "no_letter"):
        assert served["letterprob"][key] == local["letterprob"][key], key
    assert served["summary"]["metrics"]["accuracy"]["acc"] == local["summary"]["metrics"]["accuracy"]["acc"]
