"""A user's GPT-3 task file in OpenAI's released format (``score gpt3 --task-file``): scored end to end,
and a bad file, a file that names no task or two files for one task refused before the model loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items


def _write_lines(path: Path, records) -> Path:
    import json

    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.slow
def test_score_a_released_format_file_end_to_end(tmp_path):
    """Two files in OpenAI's format, one named by its released file name, one by NAME=PATH,
    scored by the CLI with the embedded model: the items are the files' (in file order), not
    the built pools, and the results name each file with its SHA-256."""
    import hashlib
    import json
    import os
    import subprocess
    import sys

    from synthprobe.results import read_results

    # OpenAI's layout, in an order no build gives (the file's own items must be scored)
    arith = [json.loads(it.to_json()) for it in build_items(BuildConfig("2D+", n=40, seed=5))][::-1]
    words = [json.loads(it.to_json()) for it in build_items(BuildConfig("RW", n=40, seed=7))][::-1]
    a_path = _write_lines(tmp_path / "two_digit_addition.jsonl", arith)
    w_path = _write_lines(tmp_path / "my words.jsonl", words)
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "score",
            "gpt3",
            "--task-file",
            str(a_path),
            "--task-file",
            f"reversed_words={w_path}",
            "--shots",
            "zero,one",
            "--limit",
            "3",
            "--threads",
            "1",
            "--save-predictions",
            "--quiet",
            "--no-cache",
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (entry,) = read_results(out).models  # the one results document, through the one reader
    assert entry.settings["tasks"] == ["arithmetic_2da", "reversed_words"]
    assert entry.settings["task_files"] == [
        {
            "task": "arithmetic_2da",
            "path": str(a_path),
            "sha256": hashlib.sha256(a_path.read_bytes()).hexdigest(),
            "items": 40,
            "format": "openai",
        },
        {
            "task": "reversed_words",
            "path": str(w_path),
            "sha256": hashlib.sha256(w_path.read_bytes()).hexdigest(),
            "items": 40,
            "format": "openai",
        },
    ]
    rows = {(r["task"], r["setting"]): r for r in entry.results["gpt3"].data["rows"]}
    assert sorted(rows) == [
        ("arithmetic_2da", "one"),
        ("arithmetic_2da", "zero"),
        ("reversed_words", "one"),
        ("reversed_words", "zero"),
    ]
    for (task, setting), r in rows.items():
        source = arith if task == "arithmetic_2da" else words
        assert r["task_file"] == str(a_path if task == "arithmetic_2da" else w_path)
        assert r["n"] == 3 and [it["gold"] for it in r["items"]] == [rec["completion"] for rec in source[:3]]
        assert all(it["n_shots"] == (1 if setting == "one" else 0) for it in r["items"])
        assert r["correct"] == sum(it["prediction"].strip() == it["gold"].strip() for it in r["items"])
        assert "paper" in r  # compared with GPT-3 as usual


def _good_arith():
    return [
        {"context": "\n\nQ: What is 98 plus 45?\n\nA:", "completion": " 143"},
        {"context": "\n\nQ: What is 7 plus 0?\n\nA:", "completion": " 7"},
    ]


BAD_FILES = [
    # (file name or NAME=, records, line, field, words in the message)
    (
        "two_digit_addition.jsonl",
        _good_arith() + [{"context": "\n\nQ: What is 1 plus 1?\n\nA:", "completion": " 2", "label": 0}],
        3,
        "label",
        "unexpected",
    ),
    ("two_digit_addition.jsonl", [{"context": "\n\nQ: What is 1 plus 1?\n\nA:"}], 1, "completion", "non-empty"),
    (
        "two_digit_addition.jsonl",
        _good_arith() + [{"context": "\n\nQ: What is 12 plus 30?\n\nA:", "completion": " 43"}],
        3,
        "completion",
        "wrong answer",
    ),
    (
        "two_digit_addition.jsonl",
        [{"context": "\n\nQ: What is 12 minus 30?\n\nA:", "completion": " -18"}],
        1,
        "context",
        "plus",
    ),
    (
        "two_digit_addition.jsonl",
        [{"context": "\n\nQ: What is 123 plus 3?\n\nA:", "completion": " 126"}],
        1,
        "context",
        "below 100",
    ),
    (
        "two_digit_addition.jsonl",
        [{"context": "\n\nQ: What is 1 plus 2?\n\nA:", "completion": " \u0663"}],
        1,
        "completion",
        "ASCII",
    ),
    (
        "two_digit_addition.jsonl",
        _good_arith() + [{"context": "Question: What is 1 plus 2?\nAnswer:", "completion": " 3"}],
        3,
        "context",
        "layout",
    ),
    ("two_digit_addition.jsonl", _good_arith() + _good_arith()[:1], 3, "context", "repeats the item of line 1"),
    (
        "A1=x.jsonl",
        [
            {"context": "\ncorruption =", "completion": " corruption"},
            {"context": "\nprocurtion =", "completion": " corruption"},
        ],
        2,
        "context",
        "first and last letter kept",
    ),
    ("mid_word_1_anagrams.jsonl", _good_arith(), 1, "context", "scrambled"),
    (
        "reversed_words.jsonl",
        [{"context": "\nstcejbo =", "completion": " objects"}, {"context": "\nabc =", "completion": " abd"}],
        2,
        "context",
        "the reversal of",
    ),
]


@pytest.mark.parametrize("name,records,line,field,words", BAD_FILES)
def test_bad_task_file_is_one_located_error_before_the_model_loads(tmp_path, capsys, name, records, line, field, words):
    from synthprobe.cli import main

    label, sep, fname = name.partition("=")
    path = _write_lines(tmp_path / (fname if sep else name), records)
    spec = f"{label}={path}" if sep else str(path)
    out = tmp_path / "out.json"
    # a model path that does not exist: the file error must come first (exit 2, not a load failure)
    code = main(
        ["score", "gpt3", "--task-file", spec, "--model", str(tmp_path / "no-model"), "--output", str(out), "--quiet"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{path}:{line}: field {field!r}" in err and words in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    "spec,words",
    [
        ("nonsense_task.jsonl", "names no GPT-3 task"),
        ("bogus={path}", "names no GPT-3 task"),
        ("SAT={path}", "--sat-file"),
    ],
)
def test_task_file_that_names_no_task(tmp_path, capsys, spec, words):
    from synthprobe.cli import main

    path = _write_lines(tmp_path / "nonsense_task.jsonl", _good_arith())
    spec = spec.format(path=path) if "{" in spec else str(path)
    code = main(
        [
            "score",
            "gpt3",
            "--task-file",
            spec,
            "--model",
            str(tmp_path / "no-model"),
            "--quiet",
            "--output",
            str(tmp_path / "out.json"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and words in err and "--task-file" in err, err


def test_two_files_for_one_task_are_refused(tmp_path, capsys):
    from synthprobe.cli import main

    a = _write_lines(tmp_path / "two_digit_addition.jsonl", _good_arith())
    b = _write_lines(tmp_path / "b.jsonl", _good_arith()[:1])
    code = main(
        [
            "score",
            "gpt3",
            "--task-file",
            str(a),
            "--task-file",
            f"2D+={b}",
            "--model",
            str(tmp_path / "no-model"),
            "--quiet",
            "--output",
            str(tmp_path / "out.json"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and "again" in err and str(b) in err, err


def test_task_file_loader_reads_released_layouts(tmp_path):
    from synthprobe.benchmarks.gpt3.taskfile import load_task_file

    # both arithmetic layouts, 1DC, and every word task as synthprobe builds it (OpenAI's layout)
    for code in ("2D-", "3D+", "2Dx", "1DC", "CL", "A1", "A2", "RI", "RW"):
        for fmt in ("openai", "eleuther") if code[0].isdigit() else ("openai",):
            items = build_items(BuildConfig(code, n=300, format=fmt))
            path = tmp_path / f"{code.replace('+', 'p').replace('-', 'm')}_{fmt}.jsonl"
            path.write_text("".join(it.to_json() + "\n" for it in items), encoding="utf-8")
            tf = load_task_file(f"{code}={path}")
            assert tf.items == items and (tf.format == (fmt if code[0].isdigit() else None))
