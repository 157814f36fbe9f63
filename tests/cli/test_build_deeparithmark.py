"""Deep Arithmark command line: deeparithmark.py and 'synthprobe build deeparithmark'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.build import dumps_item
from synthprobe.benchmarks.deeparithmark.commands.build import main
from synthprobe.cli import main as synthprobe_main
from synthprobe.io.read import sha256_file
from tests.support.cli import in_process, synthprobe

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def run(argv, capsys):
    """``deeparithmark.py ARGV`` run here, through the shared runner: (status, stdout, stderr)."""
    return in_process(argv, main=main, root=ROOT)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["build", "--n", "0"], "argument --n: expected a whole number from 1 to 100,000,000, got 0"),
        (["build", "--n", "-5"], "argument --n: expected a whole number from 1 to 100,000,000, got -5"),
        (
            ["build", "--n", "ten"],
            "argument --n: expected a whole number from 1 to 100,000,000 (ASCII digits), got 'ten'",
        ),
        (["build", "--seed", "-1"], "argument --seed: expected a whole number >= 0, got -1"),
        (["build", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["audit", "--n", "3"], "unrecognized arguments: --n"),
    ],
)
def test_bad_arguments_exit_2_with_one_message(argv, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv, root=ROOT)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_unwritable_or_directory_out_path_exit_2(tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _, err = run(["build", "--n", "20", "--out", str(blocker / "sub" / "x.jsonl")], capsys)
    assert code == 2 and "is not a directory" in err and err.count("\n") == 1
    code, _, err = run(["build", "--n", "20", "--out", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_missing_and_malformed_files_exit_2(tmp_path, capsys):
    code, _, err = run(["selftest", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 2 and "nope.jsonl: file does not exist" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"ctx": "x", "endings": [" 1", "2"], "label": "0"}\n')
    code, _, err = run(["audit", str(bad)], capsys)
    assert code == 2 and "bad.jsonl:1: field 'endings'" in err and "leading space" in err


def test_check_accepts_the_release_and_rejects_a_changed_copy(tmp_path, capsys):
    code, out, _ = run(["build", "--check"], capsys)
    assert code == 0 and f"sha256 {sha256_file(RELEASE)}" in out
    copy = tmp_path / "copy.jsonl"
    data = RELEASE.read_bytes().replace(b'"split": "test"', b'"split": "Test"', 1)
    copy.write_bytes(data)
    code, _, err = run(["build", "--check", "--out", str(copy)], capsys)
    assert code == 1 and "line 1 differs" in err
    assert copy.read_bytes() == data  # --check never writes


def test_selftest_and_audit_exit_codes(tmp_path, capsys):
    code, out, _ = run(["audit", "--no-trained"], capsys)  # the fixed strategies (the trained ones: test_trained_audit)
    assert code == 0 and "char-3-gram classifier over option text" in out and "FAIL" not in out
    # every correct option moved to slot 0: fixed-slot strategies leave chance
    rows = []
    for line in RELEASE.read_text("utf-8").splitlines()[:200]:
        o = json.loads(line)
        lab = int(o["label"])
        for key in ("endings",):
            o[key].insert(0, o[key].pop(lab))
        md = o["metadata"]
        for key in ("option_values", "option_sources"):
            md[key].insert(0, md[key].pop(lab))
        o["label"] = "0"
        rows.append(dumps_item(o))
    moved = tmp_path / "moved.jsonl"
    moved.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, _ = run(["audit", "--no-trained", str(moved)], capsys)
    assert code == 1 and "fixed slot 0" in out and "100.00 %" in out
    code, out, _ = run(["selftest", str(moved)], capsys)
    assert code == 1 and "correct slot balance" in out and "FAIL" in out


def test_synthprobe_build_verb_writes_a_variant_that_passes_selftest(tmp_path, capsys):
    out = tmp_path / "variant.jsonl"
    code = synthprobe_main(
        ["build", "deeparithmark", "--seed", "99", "--n", "200", "--out", str(out), "--no-progress", "--selftest"]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert f"sha256 {sha256_file(out)}" in text and "checks passed" in text
    assert len(out.read_text("utf-8").splitlines()) == 200


def test_synthprobe_build_needs_out_and_rejects_bad_n(capsys):
    with pytest.raises(SystemExit) as exc:
        synthprobe_main(["build", "deeparithmark", "--n", "5"])
    assert exc.value.code == 2 and "--out" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        synthprobe_main(["build", "deeparithmark", "--n", "0", "--out", "x.jsonl"])
    assert exc.value.code == 2 and "whole number from 1 to 100,000,000" in capsys.readouterr().err


def test_help_texts_explain_the_commands(capsys):
    for argv, words in (
        (["--help"], ["build", "selftest", "audit", "Exit status"]),
        (["build", "--help"], ["--seed", "--n", "--check", "byte", "20261027"]),
        (["selftest", "--help"], ["--upstream", "n-grams", "roundness"]),
        (["audit", "--help"], ["classifier", "roundest", "--by-template"]),
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv, root=ROOT)
        assert exc.value.code == 0
        text = capsys.readouterr().out
        for w in words:
            assert w in text, (argv, w)


def test_root_script_runs_from_any_directory(tmp_path):
    proc = synthprobe(ROOT / "deeparithmark.py", "build", "--check", module=None, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sha256_file(RELEASE) in proc.stdout
