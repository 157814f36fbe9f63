"""Fuzzing every file loader: any bytes and any JSON either load or raise one located InputError.

Never a traceback of another kind (KeyError, TypeError, IndexError, RecursionError, ...), and
the error always names the file read.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthprobe.benchmarks.deeparithmark.audit import load_audit_items
from synthprobe.benchmarks.deeparithmark.export.release import load_release
from synthprobe.benchmarks.gpt3.export.lm_eval import gpt3_files, user_pool
from synthprobe.benchmarks.gpt3.sat import load_sat
from synthprobe.errors import InputError
from synthprobe.probes.items import load_grammar, load_novel_words
from synthprobe.report.reader import rows as read_rows
from synthprobe.study.articles import load_articles
from synthprobe.study.items import load_items

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "src" / "synthprobe" / "resources"
RELEASE_LINES = (ROOT / "data" / "deeparithmark-1.jsonl").read_bytes().splitlines(keepends=True)[:3]

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

_scalars = (
    st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=False) | st.text(max_size=30)
)
_json = st.recursive(
    _scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=5), max_leaves=12
)


def _keys_of(lines: list[bytes]) -> list[str]:
    keys: list[str] = []
    for raw in lines:
        for k in json.loads(raw):
            if k not in keys:
                keys.append(k)
    return keys


def _records(keys: list[str]):
    """Objects with the loader's own field names (so the checks past 'unknown field' run) and any values."""
    return st.dictionaries(st.sampled_from(keys + ["extra"]), _json, max_size=len(keys) + 1)


def _mutated(good: list[bytes]):
    """Good lines with one line replaced, truncated, or with one field set to any JSON value."""
    objs = [json.loads(x) for x in good]

    @st.composite
    def strat(draw):
        out = [dict(o) for o in objs]
        i = draw(st.integers(0, len(out) - 1))
        how = draw(st.sampled_from(["set", "drop", "raw"]))
        if how == "set":
            out[i][draw(st.sampled_from(sorted(out[i])))] = draw(_json)
        elif how == "drop":
            out[i].pop(draw(st.sampled_from(sorted(out[i]))))
        lines = [json.dumps(o).encode() + b"\n" for o in out]
        if how == "raw":
            cut = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:cut] + draw(st.binary(max_size=8)) + b"\n"
        return b"".join(lines)

    return strat()


def _load_gpt3_task(path: Path):
    return gpt3_files(user_pool("fuzz", path), path.parent / "out")


LOADERS = {
    "novel-words": (load_novel_words, (RES / "novel_words.jsonl").read_bytes().splitlines(keepends=True)[:3]),
    "grammar": (load_grammar, (RES / "grammar.jsonl").read_bytes().splitlines(keepends=True)[:4]),
    "articles": (load_articles, (RES / "study_sample.jsonl").read_bytes().splitlines(keepends=True)[:2]),
    "study-items": (
        load_items,
        [
            json.dumps(
                {
                    "id": f"a{i}",
                    "article_id": "x",
                    "title": f"T{i}",
                    "subtitle": "S",
                    "condition": "model",
                    "model": "m",
                    "length": 200,
                    "human": {"text": "H.", "words": 1},
                    "machine": {"text": "M.", "words": 1},
                }
            ).encode()
            + b"\n"
            for i in range(2)
        ],
    ),
    "release": (load_release, RELEASE_LINES),
    "audit-items": (load_audit_items, RELEASE_LINES),
    "gpt3-task": (
        _load_gpt3_task,
        [json.dumps({"context": "\n\nQ: What is 1 plus 2?\n\nA:", "completion": " 3"}).encode() + b"\n"] * 2,
    ),
}


def _check(loader, path: Path) -> None:
    try:
        loader(path)
    except InputError as exc:
        assert str(path) in str(exc), str(exc)
        assert exc.path == str(path)


@pytest.mark.parametrize("kind", sorted(LOADERS))
def test_good_seed_lines_load(tmp_path, kind):
    """The seed lines the fuzzers mutate are valid, so mutations probe the checks past parsing."""
    loader, good = LOADERS[kind]
    p = tmp_path / "good.jsonl"
    p.write_bytes(b"".join(good))
    loader(p)


@pytest.mark.parametrize("kind", sorted(LOADERS))
@FUZZ
@given(data=st.data())
def test_jsonl_loaders_never_crash(tmp_path, kind, data):
    loader, good = LOADERS[kind]
    blob = data.draw(
        st.one_of(
            _mutated(good),
            st.lists(_records(_keys_of(good)), min_size=1, max_size=4).map(
                lambda objs: b"".join(json.dumps(o).encode() + b"\n" for o in objs)
            ),
            st.binary(max_size=200),
            st.lists(_json, max_size=3).map(lambda vs: b"".join(json.dumps(v).encode() + b"\n" for v in vs)),
        ),
        label="file",
    )
    p = tmp_path / "fuzz.jsonl"
    p.write_bytes(blob)
    _check(loader, p)


_word = st.text(string.ascii_lowercase, min_size=1, max_size=6)
_pos = st.sampled_from(["n:n", "v:n", "a:n", "n:v", "x", "n:n:n", ""])
_sat_line = st.one_of(
    st.tuples(_word, _word, _pos).map(" ".join),
    st.text(max_size=20),
    st.sampled_from(["a", "b", "e", "f", "", "# c", "ab"]),
)


@FUZZ
@given(lines=st.lists(_sat_line, max_size=20), crlf=st.booleans(), bom=st.booleans())
def test_sat_loader_never_crashes(tmp_path, lines, crlf, bom):
    p = tmp_path / "sat.txt"
    text = ("\r\n" if crlf else "\n").join(lines)
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
    try:
        questions = load_sat(p)
    except InputError as exc:
        assert exc.path == str(p)
    else:
        assert questions and all(len(q.choices) == 5 and 0 <= q.answer < 5 for q in questions)


@FUZZ
@given(
    doc=_json
    | st.dictionaries(
        st.sampled_from(["models", "results", "dataset", "schema", "version", "model", "metrics", "config"]),
        _json,
        max_size=5,
    )
)
def test_results_loader_never_crashes(tmp_path, doc):
    p = tmp_path / "results.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    _check(lambda path: read_rows(path, "deeparithmark"), p)
