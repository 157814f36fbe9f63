"""``synthprobe validate`` refuses what it cannot run with one clear line, exit 2, nothing written,
before any model loads: a file without endings, a file that is not Deep Arithmark without
training items, training items too few for --sizes, bad sizes, an engine that cannot be trained."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def _mc(path: Path, n: int, *, prefix: str = "q") -> Path:
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "ind": i,
                        "ctx": f"{prefix} {i}: two plus two is",
                        "endings": [" 4.", " 5.", " 6.", " 7."],
                        "label": i % 4,
                        "activity_label": "toy",
                    }
                )
                + "\n"
            )
    return path


def test_a_file_without_endings_is_refused_at_its_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"ind": 0, "ctx": "x", "label": 0}) + "\n", encoding="utf-8")
    out = tmp_path / "v.json"
    assert main(["validate", str(bad), "--output", str(out)]) == 2
    line = _error(capsys)
    assert str(bad) in line and "endings" in line and not out.exists()


def test_a_file_that_is_not_deeparithmark_needs_training_items(tmp_path, capsys):
    data = _mc(tmp_path / "toy.jsonl", 10)
    out = tmp_path / "v.json"
    assert main(["validate", str(data), "--output", str(out)]) == 2
    line = _error(capsys)
    assert "is not a Deep Arithmark build" in line and "--train FILE" in line and not out.exists()


def test_too_few_training_items_for_the_sizes_is_refused(tmp_path, capsys):
    data = _mc(tmp_path / "toy.jsonl", 10)
    train = _mc(tmp_path / "train.jsonl", 30, prefix="t")
    assert (
        main(["validate", str(data), "--train", str(train), "--sizes", "0,100", "--output", str(tmp_path / "v.json")])
        == 2
    )
    line = _error(capsys)
    assert str(train) in line and "holds 30 items" in line and "asks for 100" in line


def test_training_items_equal_to_the_test_items_do_not_count(tmp_path, capsys):
    data = _mc(tmp_path / "toy.jsonl", 40)
    assert (
        main(["validate", str(data), "--train", str(data), "--sizes", "0,10", "--output", str(tmp_path / "v.json")])
        == 2
    )
    assert "holds 0 items that are not in the file under test" in _error(capsys)


def test_controls_on_a_file_that_is_not_deeparithmark_are_refused(tmp_path, capsys):
    data = _mc(tmp_path / "toy.jsonl", 10)
    train = _mc(tmp_path / "train.jsonl", 30, prefix="t")
    assert (
        main(
            [
                "validate",
                str(data),
                "--train",
                str(train),
                "--sizes",
                "0,20",
                "--controls",
                "all",
                "--output",
                str(tmp_path / "v.json"),
            ]
        )
        == 2
    )
    assert "positive controls are flawed Deep Arithmark builds" in _error(capsys)


@pytest.mark.parametrize(
    "sizes, expected",
    [("0", "at least one size above 0"), ("a,b", "comma-separated whole numbers"), ("-5,10", "whole numbers >= 0")],
)
def test_bad_sizes_are_refused(sizes, expected, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", f"--sizes={sizes}", "--output", str(tmp_path / "v.json")])
    assert exc.value.code == 2
    assert expected in capsys.readouterr().err


def test_an_unknown_control_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--controls", "nonsense", "--output", str(tmp_path / "v.json")])
    assert exc.value.code == 2
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    err = capsys.readouterr().err
    assert "no control 'nonsense'" in err and all(name in err for name in CONTROLS)


def test_a_chat_only_engine_cannot_be_trained(tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["validate", "--model", "openai-chat:http://127.0.0.1:9/v1", "--output", str(out)]) == 2
    line = _error(capsys)
    assert "cannot" in line and "--model" in line and not out.exists()


def test_an_existing_output_is_not_replaced(tmp_path, capsys):
    out = tmp_path / "v.json"
    out.write_text("keep", encoding="utf-8")
    assert main(["validate", "--output", str(out)]) == 2
    assert "already exists" in _error(capsys) and out.read_text(encoding="utf-8") == "keep"


def test_seed_variance_on_a_file_that_is_not_deeparithmark_is_refused_before_loading(tmp_path, capsys):
    data = _mc(tmp_path / "toy.jsonl", 10)
    train = _mc(tmp_path / "train.jsonl", 30, prefix="t")
    out = tmp_path / "v.json"
    assert (
        main(["validate", str(data), "--train", str(train), "--sizes", "0,20", "--seeds", "3", "--output", str(out)])
        == 2
    )
    assert "Deep Arithmark files only" in _error(capsys) and not out.exists()
