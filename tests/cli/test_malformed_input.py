"""Malformed input of every class, as raw text, through the real command line.

Each case runs ``synthprobe.cli.main`` in-process on a real file and checks the contract: exit
status 2, one ``synthprobe: error:`` line naming the file (and the line and field where there is
one), no traceback, and nothing written. The bad values are generated as raw JSON text (never
``json.dumps`` output): integers of thousands of digits, nesting 65..100,000 levels deep, lone
surrogate escapes, NaN/Infinity, duplicated keys and digits from other scripts. Commands that
load a model are given one that does not exist: the input error must be reported first.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.io.read import MAX_INT_DIGITS, MAX_JSON_DEPTH, loads_json, read_jsonl
from tests.support.cli import in_process

ROOT = Path(__file__).resolve().parents[2]
RES = ROOT / "src" / "synthprobe" / "resources"
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"
DA_RESULTS = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
NO_MODEL = "/nonexistent/model-folder"

FEW = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def run_cli(argv: list) -> tuple[int, str]:
    """(exit status, stderr) of the command line run here, through the shared runner."""
    rc, _, err = in_process(argv)
    return rc, err


def assert_bad(rc: int, err: str, *, path=None, line=None, field=None, out=None) -> None:
    assert rc == 2, err
    assert "Traceback" not in err, err
    assert "error:" in err, err
    assert sum("error:" in line for line in err.splitlines()) == 1, err  # argparse adds only its usage
    if path is not None:
        assert f"{path}:{line}" in err if line is not None else str(path) in err, err
    if field is not None:
        assert f"field {field!r}" in err, err
    if out is not None:
        out = Path(out)
        assert not out.exists(), f"{out} was written despite the error"
        assert not [p for p in out.parent.iterdir() if p.name.endswith(".tmp")], "temporary file left"


# --- raw-text generators of every bad class ------------------------------------------------------

huge_ints = st.builds(
    lambda sign, digit, n: sign + digit + "0" * n,
    st.sampled_from(["", "-"]),
    st.sampled_from("123456789"),
    st.integers(MAX_INT_DIGITS, 6000),
)
deep_nests = st.builds(
    lambda d, obj: ('{"k": ' * d + "0" + "}" * d) if obj else ("[" * d + "0" + "]" * d),
    st.integers(MAX_JSON_DEPTH + 1, 100_000),
    st.booleans(),
)
surrogates = st.builds(
    lambda pre, cp, post: f'"{pre}\\u{cp:04x}{post}"',
    st.text("abc xyz", max_size=8),
    st.integers(0xD800, 0xDFFF),
    st.text("abc xyz", max_size=8),
)
non_finite = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-2.5E999"])
BAD_VALUES = st.one_of(huge_ints, deep_nests, surrogates, non_finite)
non_ascii_digits = st.text(st.characters(categories=("Nd",)).filter(lambda c: not c.isascii()), min_size=1, max_size=3)


def poison_line(line: str, value_text: str | None, dup_key: str | None) -> str:
    """``line`` (a JSON object on one line) with a bad value in a new field, or a key repeated."""
    line = line.rstrip("\r\n")
    if dup_key is not None:
        obj = json.loads(line)
        return line[:-1] + f', "{dup_key}": ' + json.dumps(obj[dup_key]) + "}"
    return '{"extra": ' + value_text + ", " + line[1:]


@st.composite
def bad_jsonl(draw, lines: list[str]):
    """``(text, bad line number)``: ``lines`` with one of them poisoned."""
    k = draw(st.integers(0, len(lines) - 1))
    keys = list(json.loads(lines[k]))
    if draw(st.booleans()):
        bad = poison_line(lines[k], None, draw(st.sampled_from(keys)))
    else:
        bad = poison_line(lines[k], draw(BAD_VALUES), None)
    return "".join(lines[:k]) + bad + "\n" + "".join(lines[k + 1 :]), k + 1


def _lines(path: Path, n: int) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)[:n]


# Every reader that loads a model reads its file first: NO_MODEL never gets looked at.
TARGETS = {
    "deeparithmark data": (
        _lines(RELEASE, 4),
        lambda f, out: ["score", "deeparithmark", "--data", f, "--model", NO_MODEL, "--output", out, "--no-progress"],
    ),
    "study articles": (
        _lines(RES / "study_sample.jsonl", 4),
        lambda f, out: ["study", "generate", "--articles", f, "--out", out, "--model", NO_MODEL, "--quiet"],
    ),
    "grammar items": (
        _lines(RES / "grammar.jsonl", 5),
        lambda f, out: ["probe", "grammar", "--items", f, "--out", out, "--model", NO_MODEL, "--quiet"],
    ),
    "novel-word items": (
        _lines(RES / "novel_words.jsonl", 3),
        lambda f, out: ["probe", "novel-words", "--items", f, "--out", out, "--model", NO_MODEL, "--quiet"],
    ),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_unpoisoned_files_pass_the_reader(target):
    lines, _ = TARGETS[target]
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "in.jsonl"
        f.write_text("".join(lines), encoding="utf-8")
        assert len(list(read_jsonl(f))) == len(lines)


@pytest.mark.parametrize("target", sorted(TARGETS))
@FEW
@given(data=st.data())
def test_every_bad_class_in_a_jsonl_file_is_one_located_error(target, data):
    lines, argv = TARGETS[target]
    text, bad_line = data.draw(bad_jsonl(lines))
    with tempfile.TemporaryDirectory() as tmp:
        f, out = Path(tmp) / "in.jsonl", Path(tmp) / "out.json"
        f.write_text(text, encoding="utf-8")
        rc, err = run_cli(argv(f, out))
        assert_bad(rc, err, path=f, line=bad_line, out=out)
        assert NO_MODEL not in err, err


@FEW
@given(digits=non_ascii_digits, k=st.integers(0, 3))
def test_a_label_in_other_digits_is_refused(digits, k):
    lines = _lines(RELEASE, 4)
    lines[k] = re.sub(r'"label": "[0-9]"', f'"label": "{digits}"', lines[k])
    with tempfile.TemporaryDirectory() as tmp:
        f, out = Path(tmp) / "in.jsonl", Path(tmp) / "out.json"
        f.write_text("".join(lines), encoding="utf-8")
        rc, err = run_cli(
            ["score", "deeparithmark", "--data", f, "--model", NO_MODEL, "--output", out, "--no-progress"]
        )
        assert_bad(rc, err, path=f, line=k + 1, field="label", out=out)


# --- results files through `synthprobe report` --------------------------------------------------


def _results_text() -> str:
    doc = json.loads(DA_RESULTS.read_text(encoding="utf-8"))
    for entry in doc["models"]:
        entry["results"]["deeparithmark"].pop("predictions", None)
    return json.dumps(doc, indent=2)


RESULTS = _results_text()
_SOFT = re.compile(r'("soft": )([-0-9.e]+)')


def test_unpoisoned_results_file_passes_the_reader():
    from synthprobe.report.reader import rows as read_rows

    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "r.json"
        f.write_text(RESULTS, encoding="utf-8")
        assert len(read_rows(f, "deeparithmark", required=False)) == 1


@FEW
@given(value=BAD_VALUES | st.just("DUP"))
def test_every_bad_class_in_a_results_file_is_one_located_error(value):
    if value == "DUP":
        text, line, field = RESULTS.replace('"chance": 0.25,', '"chance": 0.25, "chance": 0.5,', 1), None, "chance"
    else:
        m = _SOFT.search(RESULTS)
        text = RESULTS[: m.start(2)] + value + RESULTS[m.end(2) :]
        line, field = RESULTS.count("\n", 0, m.start()) + 1, "soft"
    with tempfile.TemporaryDirectory() as tmp:
        f, out = Path(tmp) / "r.json", Path(tmp) / "report"
        f.write_text(text, encoding="utf-8")
        rc, err = run_cli(["report", "deeparithmark", f, "--out", out])
        assert_bad(rc, err, path=f, line=line, out=out)
        if not value.startswith(("[", "{")):  # too deep: named by line, there is no field yet
            assert field in err, err


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"schema": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"k": ' * 70 + "0" + "}" * 70,
    ],
)
@pytest.mark.parametrize("verb", [["report"], ["report", "deeparithmark"]])
def test_a_results_file_that_is_one_deep_nest_is_one_located_error(tmp_path, text, verb):
    # the whole document on one line: the data-file sniff and the document reader share one decoder
    f, out = tmp_path / "r.json", tmp_path / "report"
    f.write_text(text, encoding="utf-8")
    rc, err = run_cli([*verb, f, "--out", out])
    assert_bad(rc, err, path=f, line=1, out=out)
    assert f"nested more than {MAX_JSON_DEPTH} levels deep" in err, err


@pytest.mark.parametrize(
    "old,new,field",
    [
        (r'("acc_norm": \{[^}]*?"p_vs_chance": )[0-9.e-]+', r"\g<1>NaN", "acc_norm.p_vs_chance"),
        (r'("acc_norm": \{[^}]*?"p_vs_chance": )[0-9.e-]+', r"\g<1>1.5", "acc_norm.p_vs_chance"),
        (r'"n": 1000,(\s+)"chance"', r'"n": -1000,\1"chance"', "summary.n"),
        # metrics.soft is the "soft" that closes the metrics after acc_char's block (the tiers' and
        # the predictions' "soft" follow a number or a boolean)
        (r'(\},\s+"soft": )0\.', r"\g<1>-0.", "metrics.soft"),
        (r'"by_depth": \{(\s+)"2"', '"by_depth": {\\1"\u0662"', "by_depth"),
    ],
)
def test_results_values_out_of_range_are_refused(old, new, field):
    text, n = re.subn(old, new, RESULTS, count=1)
    assert n == 1, old
    with tempfile.TemporaryDirectory() as tmp:
        f, out = Path(tmp) / "r.json", Path(tmp) / "report"
        f.write_text(text, encoding="utf-8")
        rc, err = run_cli(["report", f, "--out", out])
        assert_bad(rc, err, path=f, out=out)
        assert field in err, err


# --- number arguments ---------------------------------------------------------------------------

NUMBER_ARGS = [
    lambda v, tmp: ["build", "deeparithmark", "--n", v, "--out", tmp / "o.jsonl"],
    lambda v, tmp: ["build", "deeparithmark", "--seed", v, "--n", "10", "--out", tmp / "o.jsonl"],
    lambda v, tmp: ["score", "deeparithmark", "--limit", v, "--model", NO_MODEL, "--output", tmp / "o.jsonl"],
    lambda v, tmp: ["score", "gpt3", "--limit", v, "--model", NO_MODEL, "--output", tmp / "o.jsonl"],
    lambda v, tmp: ["study", "generate", "--max-new-tokens", v, "--out", tmp / "o.jsonl", "--model", NO_MODEL],
    lambda v, tmp: ["study", "generate", "--limit", v, "--out", tmp / "o.jsonl", "--model", NO_MODEL],
    lambda v, tmp: ["study", "generate", "--length", v, "--out", tmp / "o.jsonl", "--model", NO_MODEL],
    lambda v, tmp: ["probe", "grammar", "--max-new-tokens", v, "--out", tmp / "o", "--model", NO_MODEL],
]


@FEW
@given(digits=non_ascii_digits, which=st.integers(0, len(NUMBER_ARGS) - 1), pad=st.sampled_from(["", "0", "2"]))
def test_number_arguments_take_ascii_digits_only(digits, which, pad):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        argv = NUMBER_ARGS[which](pad + digits, tmp)
        rc, err = run_cli(argv)
        assert rc == 2, err
        assert "ASCII digits" in err, err
        assert not list(tmp.iterdir())


@pytest.mark.parametrize("value", ["٣٠", "５", "1_000", " 5", "+"])
def test_int_arguments_refuse_what_int_would_accept(value):
    from synthprobe.commandline import positive_int

    with pytest.raises(argparse.ArgumentTypeError):
        positive_int(value)
    assert positive_int("30") == 30


# --- single items --------------------------------------------------------------------------------


def test_duplicate_endings_are_refused(tmp_path):
    lines = _lines(RELEASE, 3)
    obj = json.loads(lines[1])
    obj["endings"][3] = obj["endings"][0]
    lines[1] = json.dumps(obj) + "\n"
    f, out = tmp_path / "d.jsonl", tmp_path / "o.json"
    f.write_text("".join(lines), encoding="utf-8")
    rc, err = run_cli(["score", "deeparithmark", "--data", f, "--model", NO_MODEL, "--output", out, "--no-progress"])
    assert_bad(rc, err, path=f, line=2, field="endings", out=out)
    assert "repeats entry 0" in err


def test_compare_data_is_checked_before_the_model(tmp_path):
    lines = _lines(RELEASE, 3)
    f, out = tmp_path / "am3.jsonl", tmp_path / "o.json"
    f.write_text(lines[0] + lines[1].replace('"label": "', '"label": "\u0661', 1), encoding="utf-8")
    rc, err = run_cli(
        [
            "score",
            "deeparithmark",
            "--data",
            RELEASE,
            "--compare",
            "--compare-data",
            f,
            "--model",
            NO_MODEL,
            "--output",
            out,
            "--no-progress",
            "--limit",
            "2",
        ]
    )
    assert_bad(rc, err, path=f, line=2, field="label", out=out)


def test_duplicate_keys_in_a_gpt3_task_file_are_refused(tmp_path):
    from synthprobe.benchmarks.gpt3.export.lm_eval import user_pool

    f = tmp_path / "arithmetic_2da.jsonl"
    f.write_text(
        '{"context": "Q: What is 1 plus 1?\\n\\nA:", "completion": " 2"}\n'
        '{"context": "Q: What is 2 plus 2?\\n\\nA:", "completion": " 4", "completion": " 5"}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as err:
        user_pool("arithmetic_2da", f)
    assert (err.value.path, err.value.line, err.value.field) == (str(f), 2, "completion")
    rc, msg = run_cli(["export", "lm-eval", "--out", tmp_path / "exp", "--gpt3", f"two={f}"])
    assert_bad(rc, msg, path=f, line=2, field="completion", out=tmp_path / "exp")


def test_duplicate_keys_in_study_articles_are_refused(tmp_path):
    lines = _lines(RES / "study_sample.jsonl", 5)
    lines[2] = lines[2].rstrip("\n")[:-1] + ', "title": "Another title"}\n'
    f, out = tmp_path / "a.jsonl", tmp_path / "items.jsonl"
    f.write_text("".join(lines), encoding="utf-8")
    rc, err = run_cli(["study", "generate", "--articles", f, "--out", out, "--model", NO_MODEL])
    assert_bad(rc, err, path=f, line=3, field="title", out=out)


def test_a_lone_surrogate_is_refused_not_written(tmp_path):
    lines = _lines(RES / "grammar.jsonl", 4)
    lines[3] = lines[3].replace('"input": "', '"input": "\\udc80', 1)
    f, out = tmp_path / "g.jsonl", tmp_path / "out"
    f.write_text("".join(lines), encoding="utf-8")
    rc, err = run_cli(["probe", "grammar", "--items", f, "--out", out, "--model", NO_MODEL])
    assert_bad(rc, err, path=f, line=4, field="input", out=out)


def test_a_huge_integer_in_the_score_cache_is_a_located_error(tmp_path):
    from synthprobe.scoring.cache import ScoreCache

    cache = ScoreCache("k", folder=tmp_path)
    cache.path.write_text(
        '{"id": "a", "scores": [1.0, -Infinity]}\n{"id": "b", "x": ' + "7" * 5000 + "}\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as err:
        cache.load()
    assert (err.value.line, err.value.field) == (2, "x") and "damaged score cache line" in str(err.value)


def test_strict_decoder_classes():
    for text, field in [
        ('{"a": 1, "b": {"c": 2, "c": 3}}', "b.c"),
        ('{"a": [1, NaN]}', "a[1]"),
        ('{"a": "\\ud800"}', "a"),
        ('{"n": ' + "1" * 4301 + "}", "n"),
    ]:
        with pytest.raises(InputError) as err:
            loads_json(text, path="x.json", line=7)
        assert (err.value.path, err.value.line, err.value.field) == ("x.json", 7, field)
    with pytest.raises(InputError, match="nested more than"):
        loads_json("[" * 100_000 + "]" * 100_000, path="x.json", line=1)
    assert loads_json('{"a": "\\ud83d\\ude00", "b": [1e5, -3]}') == {"a": "\U0001f600", "b": [1e5, -3]}
    edge = "9" * MAX_INT_DIGITS
    assert loads_json(f"[{edge}, -{edge}]") == [int(edge), -int(edge)]
    for text in (f"[{edge}1]", f"[-{edge}1]", "[1e309]", "[-Infinity]"):
        with pytest.raises(InputError, match="digits|finite"):
            loads_json(text, path="x.json", line=1)
    assert loads_json("[NaN, -Infinity, 1e309]", allow_nonfinite=True)[1:] == [float("-inf"), float("inf")]


# --- commands that load a model check their inputs first ----------------------------------------


def test_sat_file_is_checked_before_the_model(tmp_path):
    sat = tmp_path / "sat.txt"
    sat.write_text(
        "190 FROM REAL SATs\nlull trust v:n\nbalk fortitude v:n\nbetray loyalty v:n\n"
        "cajole compliance v:n\nhinder destination v:n\nsoothe passion v:n\nc\n",
        encoding="utf-8",
    )
    from synthprobe.benchmarks.gpt3.sat import load_sat

    assert len(load_sat(sat)) == 1  # well-formed: each change below is what gets reported
    out = tmp_path / "r.json"
    bad = tmp_path / "bad.txt"
    bad.write_text(sat.read_text().replace("cajole compliance v:n", "lull trust v:n x"), encoding="utf-8")
    rc, err = run_cli(
        ["score", "gpt3", "--tasks", "SAT", "--sat-file", bad, "--model", NO_MODEL, "--output", out, "--quiet"]
    )
    assert_bad(rc, err, path=bad, line=5, field="choice c", out=out)
    dup = tmp_path / "dup.txt"
    dup.write_text(sat.read_text().replace("soothe passion v:n", "balk fortitude v:n"), encoding="utf-8")
    rc, err = run_cli(
        ["score", "gpt3", "--tasks", "SAT", "--sat-file", dup, "--model", NO_MODEL, "--output", out, "--quiet"]
    )
    assert_bad(rc, err, path=dup, line=7, field="choice e", out=out)


def test_study_generate_needs_articles_error_names_the_file(tmp_path):
    lines = _lines(RES / "study_sample.jsonl", 3)
    f, out = tmp_path / "a.jsonl", tmp_path / "items.jsonl"
    f.write_text("".join(lines), encoding="utf-8")
    rc, err = run_cli(["study", "generate", "--articles", f, "--out", out, "--model", NO_MODEL])
    assert_bad(rc, err, path=f, field="--articles", out=out)
    assert "at least 4" in err


def test_study_generate_max_new_tokens_zero_is_refused(tmp_path):
    from synthprobe.study.generate import Settings

    out = tmp_path / "items.jsonl"
    rc, err = run_cli(["study", "generate", "--max-new-tokens", "0", "--out", out, "--model", NO_MODEL])
    assert_bad(rc, err, out=out)
    assert "--max-new-tokens" in err
    with pytest.raises(InputError, match="max new tokens"):
        Settings(max_new_tokens=0).sampling("model")
    assert Settings(max_new_tokens=7).sampling("model").max_new_tokens == 7
    assert Settings().sampling("model").max_new_tokens == 400


def test_build_size_has_a_documented_bound(tmp_path):
    out = tmp_path / "o.jsonl"
    rc, err = run_cli(["build", "deeparithmark", "--n", "1000000000000", "--out", out])
    assert_bad(rc, err, out=out)
    assert "100,000,000" in err
    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["build", "deeparithmark", "--help"])
    assert "1 to 100,000,000" in " ".join(help_text.getvalue().split())
    from synthprobe.benchmarks.deeparithmark.composition import MAX_BUILD_SIZE

    assert MAX_BUILD_SIZE >= 10_000_000


def test_model_arg_values_go_through_the_strict_decoder():
    """``--model-arg`` values are JSON only when the strict decoder takes them: deep nesting, NaN
    and huge integers stay text for the engine to check, never a RecursionError or a float NaN."""
    from synthprobe.commandline import model_arg

    assert model_arg("n=4") == ("n", 4) and model_arg("flag=true") == ("flag", True)
    deep = "[" * 100_000
    assert model_arg(f"x={deep}") == ("x", deep)
    assert model_arg("x=NaN") == ("x", "NaN")
    assert model_arg("x=" + "9" * 5000) == ("x", "9" * 5000)
