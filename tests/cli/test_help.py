"""Every ``--help`` reads in an ordinary terminal, and small mistakes get a sentence, not usage."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from synthprobe.cli import _build

WIDTH = 100


def _all_parsers():
    parser, _ = _build()
    out = [("synthprobe", parser)]
    todo = [("synthprobe", parser)]
    while todo:
        name, p = todo.pop()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    out.append((f"{name} {sub_name}", sub))
                    todo.append((f"{name} {sub_name}", sub))
    return out


def test_every_help_line_fits_an_ordinary_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    parsers = _all_parsers()
    assert len(parsers) > 25 and any(n == "synthprobe score gpt3" for n, _ in parsers)
    long = [(name, line) for name, p in parsers for line in p.format_help().splitlines() if len(line) > WIDTH]
    assert not long, "\n".join(f"{n}: {len(l)} chars: {l}" for n, l in long)


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "synthprobe", *args], capture_output=True, text=True, timeout=120)


def test_shots_on_deep_arithmark_says_it_is_zero_shot():
    res = _cli("score", "deeparithmark", "--shots", "1")
    assert res.returncode == 2 and "Deep Arithmark is zero-shot" in res.stderr, res.stderr
    assert "usage: synthprobe score deeparithmark" in res.stderr


def test_an_unknown_flag_is_reported_by_its_own_sub_command():
    res = _cli("score", "gpt3", "--no-such-flag")
    assert res.returncode == 2 and "usage: synthprobe score gpt3" in res.stderr
    assert "unrecognized arguments: --no-such-flag" in res.stderr


def test_report_given_a_data_file_names_it(tmp_path):
    data = tmp_path / "items.jsonl"
    res = _cli("build", "deeparithmark", "--n", "4", "--out", str(data), "--no-progress")
    assert res.returncode == 0, res.stderr
    res = _cli("report", str(data), "--out", str(tmp_path / "r"))
    assert res.returncode == 2 and "this is a data file" in res.stderr and "not a results file" in res.stderr
    one = tmp_path / "one.jsonl"
    one.write_text(data.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    res = _cli("report", str(one), "--out", str(tmp_path / "r"))
    assert res.returncode == 2 and "this is a data file" in res.stderr, res.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_float16_on_a_cpu_warns_and_says_what_to_use(tmp_path):
    res = _cli("score", "deeparithmark", "--limit", "1", "--dtype", "float16", "--device", "cpu", "--no-progress",
               "--no-cache", "--output", str(tmp_path / "r.json"))
    assert res.returncode == 0, res.stderr
    assert "float16 on a CPU" in res.stderr and "--dtype float32" in res.stderr
    assert res.stdout.rstrip().splitlines()[-1] == f"results: {tmp_path / 'r.json'}"
