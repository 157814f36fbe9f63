"""Bad input through the real command line: every file synthprobe reads and every sub-command.

Each case runs ``synthprobe.cli.main`` in-process and checks the contract: exit status 2, one
``synthprobe: error:`` line naming the file (and line and field where there is one) and what was
expected, no traceback, and nothing written at the output path.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

from synthprobe.io.read import MAX_LINE_BYTES
from tests.support.cli import in_process
from tests.support.permissions import as_nobody, unreadable_file, unwritable_folder

os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "src" / "synthprobe" / "resources"
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def first_lines(path: Path, n: int) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)[:n]


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """(exit status, stderr) of the command line run here, through the shared runner."""
    rc, _, err = in_process(argv)
    return rc, err


def assert_bad_input(rc: int, err: str, *, path=None, line=None, field=None, words=None, out=None):
    assert rc == 2, err
    assert "Traceback" not in err
    assert "error:" in err
    if path is not None:
        assert str(path) in err, err
    if line is not None:
        assert f"{path}:{line}" in err, err
    if field is not None:
        assert f"field {field!r}" in err, err
    if words is not None:
        assert words.lower() in err.lower(), err
    if out is not None:
        assert not Path(out).exists(), f"{out} was written despite the error"
        parent = Path(out).parent
        if parent.exists():
            assert not [p for p in parent.iterdir() if p.name.endswith(".tmp")], "temporary file left"


# --- generic JSONL corruptions, applied after `good` valid lines of each file type ----------------


def _oversized() -> bytes:
    return b'{"x": "' + b"a" * (MAX_LINE_BYTES + 16) + b'"}\n'


GENERIC = [
    # id, bytes appended after the good lines, line offset (None: no line), words
    ("malformed-json", b'{"word": "x", \n', 1, "invalid JSON"),
    ("truncated-json", b'{"a": [1, 2\n', 1, "invalid JSON"),
    ("non-utf8", b'{"x": "caf\xe9"}\n', 1, "UTF-8"),
    ("array-not-object", b"[1, 2, 3]\n", 1, "JSON object"),
    ("string-not-object", b'"just text"\n', 1, "JSON object"),
    ("oversized-line", None, 1, "bytes"),
]


def generic_cases(kind: str, good: list[bytes]):
    for cid, tail, off, words in GENERIC:
        tail = _oversized() if tail is None else tail
        yield pytest.param(kind, b"".join(good) + tail, len(good) + off, None, words, id=f"{kind}-{cid}")
    yield pytest.param(kind, b"", None, None, "empty", id=f"{kind}-empty")
    yield pytest.param(kind, b"\n  \n\n", None, None, "empty", id=f"{kind}-blank-only")
    # a BOM is tolerated, but a broken first line after it is still located at line 1
    yield pytest.param(kind, b"\xef\xbb\xbf{not json\n", 1, None, "invalid JSON", id=f"{kind}-bom-then-bad")


def _json_line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


# --- the commands that read each kind of file (argv builders; IN = input, OUT = output) ---------


def _cmd(kind: str, inp: Path, tmp: Path) -> tuple[list, Path]:
    out = tmp / "out" / "result"
    if kind == "novel-words":
        return ["probe", "novel-words", "--items", inp, "--out", out, "--quiet"], out
    if kind == "grammar":
        return ["probe", "grammar", "--items", inp, "--out", out, "--quiet"], out
    if kind == "articles":
        out = tmp / "study.jsonl"
        return ["study", "generate", "--articles", inp, "--out", out, "--quiet"], out
    if kind == "release-hf":
        return ["export", "hf", "--data", inp, "--out", out], out
    if kind == "release-lm-eval":
        return ["export", "lm-eval", "--data", inp, "--out", out], out
    if kind == "gpt3-task":
        return ["export", "lm-eval", "--gpt3", f"t2da={inp}", "--out", out], out
    if kind == "score-data":
        out = tmp / "results.json"
        return ["score", "deeparithmark", "--data", inp, "--output", out, "--no-progress"], out
    if kind == "score-compare":
        out = tmp / "results.json"
        return [
            "score",
            "deeparithmark",
            "--data",
            RELEASE,
            "--compare",
            "--compare-data",
            inp,
            "--output",
            out,
            "--no-progress",
        ], out
    if kind == "study-items":
        out = tmp / "study.db"
        return ["study", "serve", "--items", inp, "--db", out, "--port", "0"], out
    raise AssertionError(kind)


NOVEL_GOOD = first_lines(RES / "novel_words.jsonl", 2)
GRAMMAR_GOOD = first_lines(RES / "grammar.jsonl", 2)
ARTICLES_GOOD = first_lines(RES / "study_sample.jsonl", 1)
RELEASE_GOOD = first_lines(RELEASE, 2)
GPT3_GOOD = [_json_line({"context": "\n\nQ: What is 1 plus 2?\n\nA:", "completion": " 3"})]
NOVEL = [json.loads(x) for x in NOVEL_GOOD]
ARTICLE = json.loads(ARTICLES_GOOD[0])
REL = [json.loads(x) for x in RELEASE_GOOD]
STUDY_ITEM = {
    "id": "a1",
    "article_id": "x",
    "title": "A title",
    "subtitle": "Sub",
    "condition": "model",
    "model": "m",
    "length": 200,
    "human": {"text": "Human text.", "words": 2},
    "machine": {"text": "Machine text.", "words": 2},
}


def _field_cases():
    """(kind, content, line, field, words) for missing, mistyped, out-of-range and duplicate values."""
    nw0, nw1 = NOVEL
    yield "novel-words", [nw0, {k: v for k, v in nw1.items() if k != "definition"}], 2, "definition", "missing"
    yield "novel-words", [nw0, nw1 | {"pos": "adverb"}], 2, "pos", "expected one of"
    yield "novel-words", [nw0, nw1 | {"word": 12}], 2, "word", "string"
    yield "novel-words", [nw0, nw1, nw1 | {"word": nw1["word"].upper()}], 3, "word", "already appears"
    yield "novel-words", [nw0, nw1 | {"colour": "red"}], 2, "colour", "unknown field"
    g0 = json.loads(GRAMMAR_GOOD[0])
    yield "grammar", [g0, {"input": ""}], 2, "input", None
    yield "grammar", [g0, {"input": 5}], 2, "input", None
    yield "grammar", [g0, {"input": "x", "output": "y", "reference": "z"}], 2, "reference", "not both"
    yield "grammar", [g0, {"input": "x"}, {"input": "y", "output": "z"}], 3, "output", "must all come first"
    yield "articles", [ARTICLE | {"title": ""}], 1, "title", "non-empty string"
    yield "articles", [{k: v for k, v in ARTICLE.items() if k != "article"}], 1, "article", "missing"
    yield "articles", [ARTICLE | {"subtitle": ["a"]}], 1, "subtitle", "string"
    yield "articles", [ARTICLE | {"id": "a"}, ARTICLE | {"id": "a", "title": "Other"}], 2, "id", "repeats"
    yield "articles", [ARTICLE | {"id": "a"}, ARTICLE | {"id": "b"}], 2, "title", "repeats"
    yield "articles", [ARTICLE | {"article": "x" * 200_000}], 1, "article", "at most"
    for kind in ("release-hf", "release-lm-eval", "score-data", "score-compare"):
        r0, r1 = REL
        yield kind, [r0, r1 | {"label": 9}], 2, "label", "out of range"
        yield kind, [r0, r1 | {"label": "one"}], 2, "label", "integer"
        yield kind, [r0, {k: v for k, v in r1.items() if k != "endings"}], 2, "endings", "missing"
        yield kind, [r0, r1 | {"ind": r0["ind"]}], 2, None, "duplicate id"
        if kind.startswith("release"):
            md = dict(r1["metadata"], answer_rank=99)
            yield kind, [r0, r1 | {"metadata": md}], 2, "metadata.answer_rank", "answer_rank"
    good = json.loads(GPT3_GOOD[0])
    yield "gpt3-task", [good, good | {"completion": 3}], 2, "completion", "non-empty string"
    yield "gpt3-task", [good, {"context": "x"}], 2, "completion", "non-empty string"
    yield "gpt3-task", [good, good | {"context": ""}], 2, "context", "non-empty string"
    yield (
        "study-items",
        [STUDY_ITEM, STUDY_ITEM | {"id": "a2", "title": "B", "condition": "robot"}],
        2,
        "condition",
        "expected one of",
    )
    yield (
        "study-items",
        [STUDY_ITEM, STUDY_ITEM | {"id": "a2", "title": "B", "length": -5}],
        2,
        "length",
        "positive integer",
    )
    yield "study-items", [STUDY_ITEM, STUDY_ITEM | {"title": "B"}], 2, "id", "repeats"
    yield "study-items", [STUDY_ITEM, {k: v for k, v in STUDY_ITEM.items() if k != "machine"}], 2, "machine", "missing"


def _all_cases():
    goods = {
        "novel-words": NOVEL_GOOD,
        "grammar": GRAMMAR_GOOD,
        "articles": ARTICLES_GOOD,
        "release-hf": RELEASE_GOOD,
        "release-lm-eval": RELEASE_GOOD,
        "gpt3-task": GPT3_GOOD,
        "score-data": RELEASE_GOOD,
        "score-compare": RELEASE_GOOD,
        "study-items": [_json_line(STUDY_ITEM)],
    }
    for kind, good in goods.items():
        yield from generic_cases(kind, good)
    for n, (kind, objs, line, field, words) in enumerate(_field_cases()):
        yield pytest.param(
            kind, b"".join(_json_line(o) for o in objs), line, field, words, id=f"{kind}-field-{field}-{n}"
        )


@pytest.mark.parametrize("kind, content, line, field, words", list(_all_cases()))
def test_bad_jsonl_file_is_located_and_nothing_written(tmp_path, capsys, kind, content, line, field, words):
    inp = tmp_path / "input.jsonl"
    inp.write_bytes(content)
    argv, out = _cmd(kind, inp, tmp_path)
    rc, err = run_cli(argv, capsys)
    assert_bad_input(rc, err, path=inp, line=line, field=field, words=words, out=out)


# --- SAT analogy files (text records) ---------------------------------------------------------

SAT_GOOD = "1 src\nlull trust v:n\na b n:n\nc d n:n\ne f n:n\ng h n:n\ni j n:n\nb\n"


@pytest.mark.parametrize(
    "content, line, field, words",
    [
        (b"", None, None, "no analogy records"),
        (b"# only a comment\n\n", None, None, "no analogy records"),
        (SAT_GOOD.encode() + b"\n2 src\nfoo bar\n", 10, None, "expected 8"),
        (SAT_GOOD.replace("lull trust v:n", "lull trust").encode(), 2, "stem", "part-of-speech"),
        (SAT_GOOD.replace("c d n:n", "c d n-n").encode(), 4, "choice b", "part-of-speech"),
        (SAT_GOOD.replace("\nb\n", "\nz\n").encode(), 8, "answer", "answer letter"),
        (SAT_GOOD.replace("\nb\n", "\nab\n").encode(), 8, "answer", "answer letter"),
        (SAT_GOOD.replace("e f", "\xe9 f").encode("latin-1"), 5, None, "UTF-8"),
    ],
    ids=["empty", "comment-only", "short-record", "bad-stem", "bad-choice", "bad-letter", "two-letters", "non-utf8"],
)
@pytest.mark.parametrize("verb", ["sat_analogies", "gpt3"])
def test_bad_sat_file(tmp_path, capsys, verb, content, line, field, words):
    sat = tmp_path / "sat.txt"
    sat.write_bytes(content)
    if verb == "gpt3":
        out = tmp_path / "gpt3"
        argv = ["build", "gpt3", "--tasks", "sat", "--sat-file", sat, "--out-dir", out, "--quiet"]
    else:
        out = tmp_path / "sat.jsonl"
        argv = ["build", "sat_analogies", "--sat-file", sat, "--out", out]
    rc, err = run_cli(argv, capsys)
    assert_bad_input(rc, err, path=sat, line=line, field=field, words=words, out=out)


def test_sat_file_with_bom_and_crlf_builds(tmp_path, capsys):
    sat = tmp_path / "sat.txt"
    sat.write_bytes(b"\xef\xbb\xbf" + SAT_GOOD.replace("\n", "\r\n").encode())
    out = tmp_path / "sat.jsonl"
    rc, err = run_cli(["build", "sat_analogies", "--sat-file", sat, "--out", out], capsys)
    assert rc == 0, err
    item = json.loads(out.read_text(encoding="utf-8"))
    assert item["ctx"] == "lull is to trust as" and item["label"] == 1


# --- results JSON for reports ----------------------------------------------------------------


@pytest.mark.parametrize(
    "content, line, words",
    [
        (b"", 1, "invalid JSON"),
        (b'{"models": [\n', 2, "invalid JSON"),
        (b'\xff\xfe{"a": 1}', None, "UTF-8"),
        (b"[1, 2]", None, None),
        (b'"text"', None, None),
        (b'{"unrelated": true}', None, None),
    ],
    ids=["empty", "truncated", "utf16", "array", "string", "unrelated-object"],
)
def test_bad_results_json_for_report(tmp_path, capsys, content, line, words):
    res = tmp_path / "results.json"
    res.write_bytes(content)
    out = tmp_path / "report"
    rc, err = run_cli(["report", "deeparithmark", res, "--out", out], capsys)
    assert_bad_input(rc, err, path=res, line=line, words=words, out=out)


# --- missing, unreadable and wrong-kind paths ------------------------------------------------


def _path_commands(tmp: Path, bad: Path):
    out = tmp / "o"
    return {
        "probe-novel-words": ["probe", "novel-words", "--items", bad, "--out", out],
        "probe-grammar": ["probe", "grammar", "--items", bad, "--out", out],
        "study-generate": ["study", "generate", "--articles", bad, "--out", out / "s.jsonl"],
        "study-serve": ["study", "serve", "--items", bad, "--db", out / "s.db", "--port", "0"],
        "study-results": ["study", "results", "--db", bad],
        "export-hf": ["export", "hf", "--data", bad, "--out", out],
        "export-lm-eval": ["export", "lm-eval", "--data", bad, "--out", out],
        "export-lm-eval-gpt3": ["export", "lm-eval", "--gpt3", bad, "--out", out],
        "report": ["report", "deeparithmark", bad, "--out", out],
        "build-sat": ["build", "sat_analogies", "--sat-file", bad, "--out", out / "s.jsonl"],
        "score-deeparithmark": ["score", "deeparithmark", "--data", bad, "--output", out / "r.json"],
        "score-gpt3-sat": [
            "score",
            "gpt3",
            "--tasks",
            "SAT",
            "--shots",
            "0",
            "--sat-file",
            bad,
            "--output",
            out / "r.json",
            "--quiet",
        ],
    }, out


COMMANDS = sorted(_path_commands(Path("/x"), Path("/y"))[0])


@pytest.mark.parametrize("what", ["missing", "directory", "unreadable"])
@pytest.mark.parametrize("name", COMMANDS)
def test_bad_input_paths(tmp_path, capsys, name, what):
    if what == "missing":
        bad = tmp_path / "no-such-file.jsonl"
    elif what == "directory":
        bad = tmp_path / "a-folder"
        bad.mkdir()
    else:
        bad = unreadable_file(tmp_path / "locked.jsonl", RELEASE_GOOD[0])
    cmds, out = _path_commands(tmp_path, bad)
    with as_nobody(tmp_path) if what == "unreadable" else contextlib.nullcontext():  # root reads every file
        rc, err = run_cli(cmds[name], capsys)
    assert_bad_input(rc, err, path=bad, out=out)


@pytest.mark.parametrize("name", ["export-hf", "export-lm-eval"])
def test_output_folder_that_is_a_file(tmp_path, capsys, name):
    blocker = tmp_path / "taken"
    blocker.write_text("keep me\n", encoding="utf-8")
    argv = ["export", name.split("-", 1)[1], "--data", RELEASE, "--out", blocker]
    rc, err = run_cli(argv, capsys)
    assert_bad_input(rc, err, path=blocker)
    assert blocker.read_text(encoding="utf-8") == "keep me\n"


def test_corrupt_study_database(tmp_path, capsys):
    db = tmp_path / "study.db"
    db.write_bytes(b"this is not an SQLite database" * 40)
    rc, err = run_cli(["study", "results", "--db", db, "--json", tmp_path / "r.json"], capsys)
    assert_bad_input(rc, err, path=db, out=tmp_path / "r.json")


OUT_UNDER_A_FILE = {
    "build-2da": ["build", "arithmetic_2da", "--n", "3", "--out", "{blocker}/x.jsonl"],
    "build-sat": ["build", "sat_analogies", "--n", "2", "--out", "{blocker}/x.jsonl"],
    "build-gpt3": ["build", "gpt3", "--tasks", "2D+,CL", "--n", "3", "--out-dir", "{blocker}/g", "--quiet"],
    "build-deeparithmark": ["build", "deeparithmark", "--n", "10", "--out", "{blocker}/d.jsonl", "--no-progress"],
    "export-hf": ["export", "hf", "--data", str(RELEASE), "--out", "{blocker}/hf"],
    "export-lm-eval": ["export", "lm-eval", "--data", str(RELEASE), "--out", "{blocker}/lm"],
    "report": ["report", "deeparithmark", "{tmp}/r.json", "--out", "{blocker}/rep"],
}


@pytest.mark.parametrize("name", sorted(OUT_UNDER_A_FILE))
def test_output_under_a_file_is_refused(tmp_path, capsys, name):
    """A missing output folder is created; one that cannot exist (a file is in the way) is an error."""
    blocker = tmp_path / "blocker"
    blocker.write_text("keep me\n", encoding="utf-8")
    (tmp_path / "r.json").write_text("{}", encoding="utf-8")
    argv = [a.replace("{blocker}", str(blocker)).replace("{tmp}", str(tmp_path)) for a in OUT_UNDER_A_FILE[name]]
    rc, err = run_cli(argv, capsys)
    assert_bad_input(rc, err, path=blocker)  # the outputs are checked before any input is read
    assert "not a folder" in err or "not a directory" in err, err
    assert blocker.read_text(encoding="utf-8") == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocker", "r.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX permissions")
def test_build_into_unwritable_folder(tmp_path, capsys):
    with unwritable_folder(tmp_path / "locked") as locked:
        out = locked / "sub" / "x.jsonl"
        rc, err = run_cli(["build", "arithmetic_2da", "--n", "5", "--out", out], capsys)
        assert_bad_input(rc, err, path=out.parent if "sub" in err and str(out) not in err else out)
        assert not out.exists()
        rc, err = run_cli(["build", "deeparithmark", "--n", "10", "--out", locked / "d.jsonl", "--no-progress"], capsys)
        assert_bad_input(rc, err, out=locked / "d.jsonl")
        assert list(locked.iterdir()) == []


@pytest.mark.skipif(sys.platform == "win32", reason="needs POSIX permissions")
@pytest.mark.parametrize(
    "argv",
    [
        ["score", "deeparithmark", "--limit", "2", "--no-cache", "--output", "{locked}/r.json"],
        ["score", "gpt3", "--tasks", "2D+", "--limit", "2", "--no-cache", "--output", "{locked}/g.json"],
    ],
    ids=["score-deeparithmark", "score-gpt3"],
)
def test_an_unwritable_output_is_refused_before_a_model_loads(tmp_path, capsys, argv):
    """A read-only folder for --output is found by the checks made before any model loads (not after
    the scoring, when the work is lost): exit 2, one line, nothing written."""
    with unwritable_folder(tmp_path / "locked") as locked:
        rc, err = run_cli([a.replace("{locked}", str(locked)) for a in argv], capsys)
        assert rc == 2 and "not writable" in err, err
        assert "loading" not in err.lower() and list(locked.iterdir()) == []


# --- bad command-line values -----------------------------------------------------------------


def _flag_cases():
    o = "{tmp}/o"
    yield "build-da-negative-n", ["build", "deeparithmark", "--n", "-5", "--out", o + ".jsonl"]
    yield "build-da-zero-n", ["build", "deeparithmark", "--n", "0", "--out", o + ".jsonl"]
    yield "build-da-negative-seed", ["build", "deeparithmark", "--seed", "-1", "--out", o + ".jsonl"]
    yield "build-da-text-seed", ["build", "deeparithmark", "--seed", "abc", "--out", o + ".jsonl"]
    yield "build-da-check-missing", ["build", "deeparithmark", "--check", "--out", o + ".jsonl"]
    yield "build-2da-negative-n", ["build", "arithmetic_2da", "--n", "-3", "--out", o + ".jsonl"]
    yield "build-2da-zero-n", ["build", "arithmetic_2da", "--n", "0", "--out", o + ".jsonl"]
    yield "build-2da-negative-seed", ["build", "arithmetic_2da", "--seed", "-7", "--out", o + ".jsonl"]
    yield "build-2da-bad-format", ["build", "arithmetic_2da", "--format", "xml", "--out", o + ".jsonl"]
    yield "build-sat-too-many", ["build", "sat_analogies", "--n", "10000", "--out", o + ".jsonl"]
    yield "build-gpt3-unknown-task", ["build", "gpt3", "--tasks", "nonsense", "--out-dir", o]
    yield "build-gpt3-empty-tasks", ["build", "gpt3", "--tasks", "", "--out-dir", o]
    yield "build-gpt3-negative-n", ["build", "gpt3", "--tasks", "2D+", "--n", "-1", "--out-dir", o]
    yield "build-unknown-task", ["build", "arithmetic_9dz", "--out", o + ".jsonl"]
    yield "score-gpt3-unknown-task", ["score", "gpt3", "--tasks", "nonsense", "--output", o + ".json"]
    yield "score-gpt3-negative-limit", ["score", "gpt3", "--tasks", "2D+", "--limit", "-1", "--output", o + ".json"]
    yield "score-gpt3-zero-limit", ["score", "gpt3", "--tasks", "2D+", "--limit", "0", "--output", o + ".json"]
    yield "score-gpt3-bad-shots", ["score", "gpt3", "--tasks", "2D+", "--shots", "many", "--output", o + ".json"]
    yield "score-gpt3-negative-shots", ["score", "gpt3", "--tasks", "2D+", "--shots", "-2", "--output", o + ".json"]
    yield "score-gpt3-zero-batch", ["score", "gpt3", "--tasks", "2D+", "--batch-size", "0", "--output", o + ".json"]
    yield "score-gpt3-bad-dtype", ["score", "gpt3", "--tasks", "2D+", "--dtype", "int3", "--output", o + ".json"]
    yield "score-gpt3-bad-device", ["score", "gpt3", "--tasks", "2D+", "--device", "tpu", "--output", o + ".json"]
    yield "score-gpt3-zero-context", ["score", "gpt3", "--tasks", "2D+", "--max-context", "0", "--output", o + ".json"]
    yield (
        "score-gpt3-missing-model",
        [
            "score",
            "gpt3",
            "--tasks",
            "2D+",
            "--limit",
            "1",
            "--shots",
            "0",
            "--model",
            "{tmp}/no-model",
            "--output",
            o + ".json",
        ],
    )
    yield "score-da-negative-limit", ["score", "deeparithmark", "--limit", "-1", "--output", o + ".json"]
    yield "score-da-zero-batch", ["score", "deeparithmark", "--batch-size", "0", "--output", o + ".json"]
    yield "score-da-negative-context", ["score", "deeparithmark", "--max-context", "-8", "--output", o + ".json"]
    yield "score-da-bad-scorer", ["score", "deeparithmark", "--scorer", "magic", "--output", o + ".json"]
    yield (
        "score-da-missing-model",
        [
            "score",
            "deeparithmark",
            "--limit",
            "2",
            "--model",
            "{tmp}/no-model",
            "--output",
            o + ".json",
            "--no-progress",
        ],
    )
    yield (
        "score-da-malformed-hub-id",
        ["score", "deeparithmark", "--limit", "2", "--model", "a/b/c/../d", "--output", o + ".json", "--no-progress"],
    )
    yield "probe-nw-negative-samples", ["probe", "novel-words", "--samples", "-1", "--out", o]
    yield "probe-nw-negative-temp", ["probe", "novel-words", "--temperature", "-0.5", "--out", o]
    yield "probe-nw-top-p-high", ["probe", "novel-words", "--top-p", "1.5", "--out", o]
    yield "probe-nw-samples-greedy", ["probe", "novel-words", "--samples", "3", "--out", o]
    yield "probe-grammar-zero-tokens", ["probe", "grammar", "--max-new-tokens", "0", "--out", o]
    yield "probe-grammar-missing-model", ["probe", "grammar", "--model", "{tmp}/no-model", "--out", o, "--quiet"]
    yield "study-gen-negative-limit", ["study", "generate", "--limit", "-1", "--out", o + ".jsonl"]
    yield "study-gen-zero-samples", ["study", "generate", "--samples", "0", "--out", o + ".jsonl"]
    yield "study-gen-bad-length", ["study", "generate", "--length", "300", "--out", o + ".jsonl"]
    yield "study-gen-bad-condition", ["study", "generate", "--conditions", "model,alien", "--out", o + ".jsonl"]
    yield "study-gen-negative-temp", ["study", "generate", "--temperature", "-1", "--out", o + ".jsonl"]
    yield "study-gen-limit-below-context", ["study", "generate", "--limit", "3", "--out", o + ".jsonl"]
    yield (
        "study-gen-missing-model",
        ["study", "generate", "--model", "{tmp}/no-model", "--limit", "4", "--out", o + ".jsonl", "--quiet"],
    )
    yield "study-serve-bad-port", ["study", "serve", "--items", "{tmp}/none.jsonl", "--db", o + ".db", "--port", "-4"]
    yield "study-serve-remote-host", ["study", "serve", "--db", o + ".db", "--host", "0.0.0.0", "--port", "0"]
    yield "export-lm-eval-bad-gpt3-spec", ["export", "lm-eval", "--gpt3", "=", "--out", o]
    yield "export-hf-bad-repo-id", ["export", "hf", "--repo-id", "not a repo id!", "--out", o]


FLAG_CASES = list(_flag_cases())


@pytest.mark.parametrize("argv", [c[1] for c in FLAG_CASES], ids=[c[0] for c in FLAG_CASES])
def test_bad_command_line_values(tmp_path, capsys, argv):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    rc, err = run_cli(argv, capsys)
    assert_bad_input(rc, err)
    written = [p for p in tmp_path.rglob("*") if p.name.startswith("o")]
    assert not written, f"written despite the error: {written}"


# --- interrupted builds ----------------------------------------------------------------------


@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
def test_interrupted_build_leaves_no_output(tmp_path, sig):
    """Ctrl-C (exit 130, a one-line message) or a kill mid-build never leaves a partial file."""
    import signal
    import subprocess
    import time

    out = tmp_path / "da.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "synthprobe.cli",
            "build",
            "deeparithmark",
            "--n",
            "50000",
            "--out",
            str(out),
            "--no-progress",
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    # mid-build: once the build's worker processes are up (one per CPU), or after 4 s with none
    deadline = time.time() + 4
    while time.time() < deadline and not subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True).stdout:
        time.sleep(0.1)
    time.sleep(0.5)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    proc.send_signal(getattr(signal, sig))
    err = proc.communicate(timeout=60)[1]
    if sig == "SIGINT":
        assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
        assert list(tmp_path.iterdir()) == []
    else:
        assert proc.returncode == -signal.SIGKILL
        assert not out.exists()
