"""A mistyped option through the real command lines: ``synthprobe`` and the card's own scripts
(``deeparithmark.py``, ``bench_deeparithmark.py``) answer it in one line naming the nearest option
of the sub-command that was given it, also when a required option is missing too (the unknown
option is the mistake), with exit status 2; and the card's script re-fills its help to the
terminal's width like every synthprobe command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from synthprobe.cli import main
from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    return synthprobe(ROOT / name, *args, module=None, timeout=120, extra_env={"COLUMNS": str(columns)})


def _one_error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, stderr
    return errors[0]


@pytest.mark.parametrize(
    "args, prog, typo, meant",
    [
        (["build", "--chek"], "deeparithmark.py build", "--chek", "--check"),
        (["build", "--nn", "3", "--out", "x.jsonl"], "deeparithmark.py build", "--nn 3", "--n"),
        (["selftest", "--upstrem"], "deeparithmark.py selftest", "--upstrem", "--upstream"),
        (["audit", "--by-tempalte"], "deeparithmark.py audit", "--by-tempalte", "--by-template"),
        (["--hepl"], "deeparithmark.py", "--hepl", "--help"),
    ],
)
def test_the_card_script_names_the_nearest_option_of_its_sub_command(args, prog, typo, meant, tmp_path):
    res = _script("deeparithmark.py", *args)
    assert res.returncode == 2
    assert _one_error(res.stderr) == f"{prog}: error: unrecognized arguments: {typo}; did you mean {meant}?"
    assert f"usage: {prog} " in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "x.jsonl").exists() and not (ROOT / "x.jsonl").exists()


def test_the_bench_script_names_the_nearest_option():
    res = _script("bench_deeparithmark.py", "--limt", "3")
    assert res.returncode == 2
    assert _one_error(res.stderr).endswith("unrecognized arguments: --limt 3; did you mean --limit?")


@pytest.mark.parametrize("columns", [72, 120])
def test_the_card_script_help_is_filled_to_the_terminal(columns):
    for args in (["--help"], ["build", "--help"], ["selftest", "--help"], ["audit", "--help"]):
        res = _script("deeparithmark.py", *args, columns=columns)
        assert res.returncode == 0, res.stderr
        long = [line for line in res.stdout.splitlines() if len(line) > columns]
        assert not long, long
    # the build's description is one paragraph, re-filled: at 120 columns the source's line break
    # after "give a" is gone, as is the epilog's after "from seed"
    text = _script("deeparithmark.py", "build", "--help", columns=120).stdout
    assert "the same seed and size give a byte-identical file on any machine" in text
    assert "from seed 20261027;" in text


# --- an unknown option wins over a missing required one ---------------------------------------------


@pytest.mark.parametrize(
    "argv, typo, meant",
    [
        (["build", "deeparithmark", "--nn", "3"], "--nn 3", "--n"),
        (["build", "deeparithmark", "--seed", "4", "--nn=3"], "--nn=3", "--n"),
        (
            ["contamination", "--corpus", "c.txt", "--taks", "deeparithmark", "--output", "o.json"],
            "--taks deeparithmark",
            "--task",
        ),
        (["export", "hf", "--ot", "dir"], "--ot dir", "--out"),
        (["study", "serve", "--bd", "s.db"], "--bd s.db", "--db"),
    ],
)
def test_a_mistyped_option_wins_over_a_missing_required_one(argv, typo, meant, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    line = _one_error(capsys.readouterr().err)
    assert line.endswith(f": error: unrecognized arguments: {typo}; did you mean {meant}?"), line
    assert not list(tmp_path.iterdir())


def test_an_unknown_option_near_nothing_wins_too(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["build", "deeparithmark", "--zzzzzz"])
    assert exc.value.code == 2
    assert _one_error(capsys.readouterr().err).endswith(
        "synthprobe build deeparithmark: error: unrecognized arguments: --zzzzzz"
    )


def test_a_missing_required_option_alone_is_still_named(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["build", "deeparithmark", "--n", "3"])
    assert exc.value.code == 2
    assert _one_error(capsys.readouterr().err).endswith("error: the following arguments are required: --out")


def test_a_bad_value_is_still_named_before_an_unknown_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["build", "deeparithmark", "--n", "ten", "--nn", "3"])
    assert exc.value.code == 2
    assert "argument --n: expected a whole number" in _one_error(capsys.readouterr().err)
