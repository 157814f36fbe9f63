"""SAT analogies: the strict Turney-format loader, the shipped sample, GPT-3's prompt."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items
from synthprobe.benchmarks.gpt3.sat import load_sat, sample_path
from synthprobe.errors import InputError

RECORD = """190 FROM REAL SATs
lull trust v:n
balk fortitude v:n
betray loyalty v:n
cajole compliance v:n
hinder destination v:n
soothe passion v:n
c
"""


def write(tmp_path, text: str | bytes, name: str = "sat.txt"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_sample_is_labelled_and_loads():
    text = sample_path().read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert "synthprobe-written sample" in header[0]
    assert "NOT the SAT" in " ".join(header)
    questions = load_sat()
    assert len(questions) == 16
    assert {q.answer for q in questions} == {0, 1, 2, 3, 4}
    assert all(len(q.choices) == 5 for q in questions)


def test_gpt3_prompt_strings(tmp_path):
    q = load_sat(write(tmp_path, "# comment\n#\n" + RECORD))[0]
    item = q.to_item(0)
    assert item.ctx == "lull is to trust as"
    assert item.endings == (
        " balk is to fortitude",
        " betray is to loyalty",
        " cajole is to compliance",
        " hinder is to destination",
        " soothe is to passion",
    )
    assert item.label == 2 and item.completion == " cajole is to compliance"
    assert q.source == "190 FROM REAL SATs" and q.stem.pos == "v:n" and q.line == 3


def test_records_use_their_last_eight_lines_and_tolerate_crlf_and_comments(tmp_path):
    text = "# header\n\n" + "an extra leading line\n" + RECORD + "\n\n# between\n" + RECORD.replace("\nc\n", "\nA\n")
    questions = load_sat(write(tmp_path, text.replace("\n", "\r\n").encode()))
    assert [q.answer for q in questions] == [2, 0]
    assert questions[0].source == "190 FROM REAL SATs"


@pytest.mark.parametrize(
    "text,line,field,words",
    [
        (RECORD.replace("soothe passion v:n\n", ""), 1, None, "record has 7 line"),
        (RECORD.replace("\nc\n", "\nf\n"), 8, "answer", "answer letter a-e"),
        (RECORD.replace("\nc\n", "\nab\n"), 8, "answer", "answer letter a-e"),
        (RECORD.replace("lull trust v:n", "lull trust"), 2, "stem", "part-of-speech pair"),
        (RECORD.replace("betray loyalty v:n", "betray loyalty vn"), 4, "choice b", "part-of-speech pair"),
        (RECORD.replace("soothe passion v:n", "soothe the passion v:n"), 7, "choice e", "two words"),
        # one answer line too many: said so on that line, not read as a bad "choice e"
        (RECORD.replace("\nc\n", "\nc\nd\n"), 9, None, "a second answer line ('d' after 'c')"),
    ],
)
def test_bad_records_raise_located_errors(tmp_path, text, line, field, words):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_sat(path)
    assert err.value.line == line and err.value.field == field and err.value.path == str(path)
    assert words in str(err.value)


def test_bad_files(tmp_path):
    with pytest.raises(InputError, match="Peter Turney"):
        load_sat(tmp_path / "SAT-package-V3.txt")
    with pytest.raises(InputError, match="no analogy records"):
        load_sat(write(tmp_path, "# only comments\n\n"))
    with pytest.raises(InputError) as err:
        load_sat(write(tmp_path, RECORD.encode().replace(b"lull", b"l\xffll")))
    assert err.value.line == 2 and "UTF-8" in str(err.value)
    with pytest.raises(InputError, match="not a regular file"):
        load_sat(tmp_path)


def test_build_writes_choice_items(tmp_path):
    items = build_items(BuildConfig("SAT"))
    assert len(items) == 16 and items[0].id == "sat-001"
    assert build_items(BuildConfig("sat", n=3)) == items[:3]
    with pytest.raises(InputError, match="holds 16 questions"):
        build_items(BuildConfig("SAT", n=17))
    obj = json.loads(items[0].to_json())
    assert obj["ctx"] == "puppy is to dog as" and obj["label"] == 0 and len(obj["endings"]) == 5


def test_cli_rejects_a_bad_file_and_writes_nothing(tmp_path):
    bad = write(tmp_path, RECORD.replace("\nc\n", "\nz\n"))
    out = tmp_path / "sat.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "synthprobe.cli", "build", "SAT", "--sat-file", str(bad), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{bad}:8: field 'answer'" in proc.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]
