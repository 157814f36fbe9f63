"""Every ``--help`` reads in an ordinary terminal, and small mistakes get a sentence, not usage."""

from __future__ import annotations

import argparse

import pytest

from synthprobe.cli import _build
from tests.support.cli import synthprobe

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
    assert not long, "\n".join(f"{n}: {len(text)} chars: {text}" for n, text in long)


_cli = synthprobe  # the shared runner (tests/support/cli.py)


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
    res = _cli(
        "score",
        "deeparithmark",
        "--limit",
        "1",
        "--dtype",
        "float16",
        "--device",
        "cpu",
        "--no-progress",
        "--no-cache",
        "--output",
        str(tmp_path / "r.json"),
    )
    assert res.returncode == 0, res.stderr
    assert "float16 on a CPU" in res.stderr and "--dtype float32" in res.stderr
    assert res.stdout.rstrip().splitlines()[-1] == f"results: {tmp_path / 'r.json'}"


# --- wrapping, length, and what the main commands' help says --------------------------------------

MAIN_COMMANDS = (["score", "deeparithmark"], ["score", "gpt3"], ["report"])


def _help(argv, columns, capsys, monkeypatch) -> str:
    from synthprobe.cli import main

    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_prose_is_refilled_to_the_width_not_broken_mid_line(columns, capsys, monkeypatch):
    for argv in MAIN_COMMANDS:
        text = _help(argv, columns, capsys, monkeypatch)
        blocks = text.split("\n\n")
        prose = [
            b.splitlines()
            for b in blocks
            if b and not b[0].isspace() and not b.startswith("usage:") and ":" not in b.splitlines()[0][-1:]
        ]
        assert prose, argv
        for lines in prose:
            for line, nxt in zip(lines, lines[1:]):
                # a greedy fill: the next line's first word would not have fitted on this one
                assert len(line) + 1 + len(nxt.split()[0]) > columns - 2, (argv, columns, line, nxt)
        # nothing runs past the width but a single word longer than the room left for it
        assert all(len(line) <= columns or len(line.split()) == 1 for line in text.splitlines()), (argv, columns)


def test_the_formatter_keeps_tables_and_commands_and_refills_cells(monkeypatch):
    from synthprobe.commandline import CommandParser

    monkeypatch.setenv("COLUMNS", "50")
    p = CommandParser(
        prog="x",
        description="one two three four five six seven eight nine ten eleven twelve\n"
        "thirteen fourteen.\n"
        "exit status: 0 ok\n"
        "  name.txt   a cell whose text runs past the width of the\n"
        "             terminal and goes on here\n"
        "  x --flag value --another-flag value --third-flag value",
    )
    out = p.format_help().split("\n\n")[1].splitlines()
    assert out[:2] == ["one two three four five six seven eight nine ten", "eleven twelve thirteen fourteen."]
    assert out[2] == "exit status: 0 ok"
    assert out[3:6] == [
        "  name.txt   a cell whose text runs past the",
        "             width of the terminal and goes on",
        "             here",
    ]
    assert out[6:] == ["  x --flag value --another-flag value", "      --third-flag value"]


@pytest.mark.parametrize("argv", MAIN_COMMANDS)
def test_main_commands_help_fits_two_screens_and_points_to_the_docs(argv, capsys, monkeypatch):
    from pathlib import Path

    text = _help(argv, 80, capsys, monkeypatch)
    assert len(text.splitlines()) <= 130, (argv, len(text.splitlines()))
    assert "docs/command-line.md" in text
    assert (Path(__file__).resolve().parents[2] / "docs" / "command-line.md").is_file()


def test_model_arg_help_lists_every_engine_key(capsys, monkeypatch):
    from synthprobe.backends import openai, vllm
    from synthprobe.backends.hf import backend as hf

    text = " ".join(_help(["score", "deeparithmark"], 200, capsys, monkeypatch).split())
    block = {"dtype", "device", "trust_remote_code", "bos", "progress", "threads"}  # flags of their own
    for key in sorted((set(hf.OPTIONS) | set(vllm.OPTIONS) | set(openai.OPTIONS)) - block):
        assert key in text, key
    for key in ("tokenizer=PATH_OR_ID", "adapter=PATH", "revision=REV"):
        assert key in text


def test_data_default_is_the_checkout_file_or_the_cached_release(tmp_path):
    here = _cli("score", "deeparithmark", "--help")
    assert "(default: data/deeparithmark-1.jsonl)" in " ".join(here.stdout.split())
    env = {"SYNTHPROBE_CACHE": str(tmp_path / "cache"), "COLUMNS": "200"}
    elsewhere = synthprobe("score", "deeparithmark", "--help", timeout=120, cwd=tmp_path, extra_env=env)
    text = " ".join(elsewhere.stdout.split())
    assert f"the release, rendered once into {tmp_path / 'cache' / 'data' / 'deeparithmark-1.jsonl'}" in text
    assert not (tmp_path / "cache").exists()  # --help renders nothing


def test_report_help_shows_the_report_options(capsys, monkeypatch):
    text = _help(["report"], 80, capsys, monkeypatch)
    assert text == _help(["report", "deeparithmark"], 80, capsys, monkeypatch)
    for flag in ("--out DIR", "--overwrite", "--title", "--table", "--data FILE", "RESULTS.json"):
        assert flag in text


# --- a mistyped option ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, typo, meant",
    [
        (["score", "deeparithmark", "--protocl", "letters"], "--protocl letters", "--protocol"),
        (["score", "gpt3", "--limt=3"], "--limt=3", "--limit"),
        (["report", "x.json", "--out", "r", "--tittle", "T"], "--tittle T", "--title"),
        (["--verison"], "--verison", "--version"),
    ],
)
def test_a_mistyped_option_names_the_nearest_one(argv, typo, meant):
    res = _cli(*argv)
    assert res.returncode == 2
    error = [line for line in res.stderr.splitlines() if "error:" in line]
    assert error == [line for line in error if line.endswith(f"unrecognized arguments: {typo}; did you mean {meant}?")]
    assert len(error) == 1, res.stderr


def test_an_option_near_nothing_gets_no_guess():
    res = _cli("score", "gpt3", "--zzzzzz")
    assert res.returncode == 2 and res.stderr.rstrip().endswith("unrecognized arguments: --zzzzzz")
