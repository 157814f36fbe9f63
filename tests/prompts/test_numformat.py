"""--number-format: plain stays today's bytes, comma and spaced groups keep every fairness check,
tricky numbers render right, McNemar agrees with statsmodels, bad input exits 2."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.build import format_item, iter_items, render_bytes
from synthprobe.benchmarks.deeparithmark.checks import item_faults
from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, resolve_tasks, serialize
from synthprobe.errors import InputError
from synthprobe.metrics.stats import mcnemar_exact, paired_difference
from synthprobe.prompts.numformat import format_int, format_numbers, group_digits, join_groups
from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[2]


def env() -> dict:
    """The environment now (the per-test score cache is set by conftest's fixture)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1"}


#: sha256 of small builds taken before --number-format existed (the plain rendering must not move);
#: the Deep Arithmark one is the legacy decoy selection's (``decoys="legacy"``), the default then
DEEP_SEED7_N200 = "57c62f3d099fe3bac0b0dae13ed3eb2fcc41688daf21ce5e1b6093d4ced43c35"
GPT3_ARITHMETIC_SEED3_N60 = "46c8997443fe660d610e30f08c9d1a8b22b545038a0ce1c7c0a187d66d15be72"


cli = synthprobe  # the shared runner (tests/support/cli.py)


# -- plain is today's bytes ------------------------------------------------------------------


def test_plain_deeparithmark_build_is_todays_bytes(tmp_path):
    """The pin is the legacy builder's (``decoys="legacy"``); a default (role-balanced) build in
    plain digits is the bytes of the same build without the option."""
    assert hashlib.sha256(render_bytes(7, 200, decoys="legacy")).hexdigest() == DEEP_SEED7_N200
    assert hashlib.sha256(render_bytes(7, 200, "plain", decoys="legacy")).hexdigest() == DEEP_SEED7_N200
    out = tmp_path / "plain.jsonl"
    proc = cli(
        "build",
        "deeparithmark",
        "--seed",
        "7",
        "--n",
        "200",
        "--out",
        str(out),
        "--number-format",
        "plain",
        "--decoys",
        "legacy",
    )
    assert proc.returncode == 0, proc.stderr
    assert hashlib.sha256(out.read_bytes()).hexdigest() == DEEP_SEED7_N200
    default = render_bytes(7, 200)
    assert render_bytes(7, 200, "plain") == default
    grouped = tmp_path / "grouped.jsonl"
    proc = cli("build", "deeparithmark", "--seed", "7", "--n", "200", "--out", str(grouped), "--number-format", "plain")
    assert proc.returncode == 0, proc.stderr
    assert grouped.read_bytes() == default


def test_plain_gpt3_arithmetic_is_todays_bytes():
    h = hashlib.sha256()
    for layout in ("openai", "eleuther"):
        for t in resolve_tasks("arithmetic"):
            items = build_items(BuildConfig(t.name, seed=3, n=60, format=layout, number_format="plain"))
            h.update(serialize(items).encode())
    assert h.hexdigest() == GPT3_ARITHMETIC_SEED3_N60


def test_release_file_still_checks():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "deeparithmark.py"), "build", "--check"],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


# -- rendering -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,comma,space",
    [
        ("12345", "12,345", "12 345"),
        ("1234567", "1,234,567", "1 234 567"),
        ("999 and 1000", "999 and 1,000", "999 and 1 000"),
        ("$1250.50 in total", "$1,250.50 in total", "$1 250.50 in total"),  # money: only the whole part
        ("12.5000 kg", "12.5000 kg", "12.5000 kg"),  # decimals: fraction untouched
        ("from 10:30 a.m. to 1:05 p.m.", "from 10:30 a.m. to 1:05 p.m.", "from 10:30 a.m. to 1:05 p.m."),
        ("35% of 4800", "35% of 4,800", "35% of 4 800"),
        ("a 1200-litre tank", "a 1,200-litre tank", "a 1 200-litre tank"),
        ("already 1,250", "already 1,250", "already 1,250"),  # grouped text is not regrouped
        (" $4032.", " $4,032.", " $4 032."),  # an ending
    ],
)
def test_tricky_numbers(text, comma, space):
    assert format_numbers(text, "comma") == comma
    assert format_numbers(text, "space") == space
    assert format_numbers(text, "plain") == text
    if "," not in text:
        assert join_groups(comma, "comma") == text and join_groups(space, "space") == text


def test_whole_numbers_and_signs():
    assert [format_int(v, "comma") for v in (0, 999, 1000, -1234, -47152, 199998)] == [
        "0",
        "999",
        "1,000",
        "-1,234",
        "-47,152",
        "199,998",
    ]
    assert format_int(-1234, "space") == "-1 234" and format_int(-1234, "plain") == "-1234"
    assert group_digits("100000", "comma") == "100,000"


def test_gpt3_items_pair_across_formats():
    plain = build_items(BuildConfig("arithmetic_5ds", seed=1, n=50))
    for fmt, sep in (("comma", ","), ("space", " ")):
        other = build_items(BuildConfig("arithmetic_5ds", seed=1, n=50, number_format=fmt))
        assert len(other) == len(plain)
        for a, b in zip(plain, other):
            assert join_groups(b.context, fmt) == a.context and join_groups(b.completion, fmt) == a.completion
            assert int(b.completion.replace(sep, "")) == int(a.completion)
        assert any(sep in b.completion.strip() for b in other)
    # 1DC's numbers are all below 1,000: every format writes the same items
    assert build_items(BuildConfig("1DC", seed=1, n=50, number_format="space")) == build_items(
        BuildConfig("1DC", seed=1, n=50)
    )
    with pytest.raises(InputError, match="only the arithmetic tasks"):
        build_items(BuildConfig("cycle_letters", seed=1, n=5, number_format="comma"))
    with pytest.raises(InputError, match="expected one of plain, comma, space"):
        build_items(BuildConfig("4D+", seed=1, n=5, number_format="dots"))


# -- every fairness guarantee per format -------------------------------------------------------


@pytest.mark.parametrize("fmt", ["comma", "space"])
def test_each_format_passes_selftest_and_audit(tmp_path, fmt):
    out = tmp_path / f"{fmt}.jsonl"
    proc = cli(
        "build",
        "deeparithmark",
        "--seed",
        "7",
        "--n",
        "300",
        "--out",
        str(out),
        "--number-format",
        fmt,
        "--selftest",
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "33/33 checks passed" in proc.stdout  # the trained choices-only audit included
    audit = subprocess.run(
        [sys.executable, str(ROOT / "deeparithmark.py"), "audit", "--no-trained", str(out)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    # the same items: ids, labels, values and steps pair with the plain build; only text differs
    plain = [json.loads(line) for line in render_bytes(7, 300).decode().splitlines()]
    other = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    changed = 0
    for a, b in zip(plain, other, strict=True):
        assert (a["ind"], a["source_id"], a["label"]) == (b["ind"], b["source_id"], b["label"])
        assert b["metadata"] == {**a["metadata"], "number_format": fmt}
        assert join_groups(b["ctx"], fmt) == a["ctx"]
        assert [join_groups(e, fmt) for e in b["endings"]] == a["endings"]
        changed += (a["ctx"], a["endings"]) != (b["ctx"], b["endings"])
    assert 30 < changed < 270  # the numbers of 1,000 and more, in a good share of the items
    # --check compares a rendering in the same format
    check = cli(
        "build", "deeparithmark", "--seed", "7", "--n", "300", "--out", str(out), "--number-format", fmt, "--check"
    )
    assert check.returncode == 0, check.stderr


def test_checks_catch_a_wrongly_rendered_item():
    item = next(
        it
        for it in iter_items(7, 60)
        if format_item(it, "comma") != it and format_item(it, "comma")["endings"] != it["endings"]
    )
    comma = format_item(item, "comma")
    assert item_faults(comma, comma["ind"]) == []
    plain_endings = {**comma, "endings": item["endings"]}  # endings left in plain digits
    assert any(rule == "unit" for rule, _ in item_faults(plain_endings, comma["ind"]))
    wrong_key = {**item, "metadata": {**item["metadata"], "number_format": "plain"}}
    assert [rule for rule, _ in item_faults(wrong_key, item["ind"])] == ["schema"]
    unknown = {**item, "metadata": {**item["metadata"], "number_format": "dots"}}
    assert [rule for rule, _ in item_faults(unknown, item["ind"])] == ["schema"]


# -- McNemar ----------------------------------------------------------------------------------


def test_mcnemar_matches_statsmodels_on_a_known_table():
    from statsmodels.stats.contingency_tables import mcnemar

    # plain right & format right 50, plain only 12, format only 4, both wrong 34
    reference = [True] * 50 + [True] * 12 + [False] * 4 + [False] * 34
    other = [True] * 50 + [False] * 12 + [True] * 4 + [False] * 34
    got = paired_difference(reference, other)
    want = mcnemar([[50, 12], [4, 34]], exact=True).pvalue
    assert got["b"] == 12 and got["c"] == 4 and got["n"] == 100
    assert got["p_mcnemar"] == pytest.approx(want, abs=1e-12)
    # exact: 2 · P(X <= 4), X ~ Binomial(16, 1/2)
    assert got["p_mcnemar"] == pytest.approx(2 * (1 + 16 + 120 + 560 + 1820) / 2**16, abs=1e-12)
    assert got["accuracy"] == 54.0 and got["reference_accuracy"] == 62.0 and got["delta"] == -8.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 7) == pytest.approx(2 / 2**7)
    with pytest.raises(ValueError):
        paired_difference([True], [True, False])


# -- bad input: exit 2, nothing written --------------------------------------------------------


@pytest.mark.parametrize(
    "argv,needle",
    [
        (
            ["build", "deeparithmark", "--seed", "1", "--n", "10", "--out", "{out}", "--number-format", "dots"],
            "invalid choice",
        ),
        (["build", "gpt3", "--n", "3", "--out-dir", "{dir}", "--number-format", "comma"], "only the arithmetic tasks"),
        (["build", "CL", "--n", "3", "--out", "{out}", "--number-format", "comma"], "unrecognized arguments"),
        (["probe", "number-format", "--formats", "plain", "--output", "{out}"], "besides plain"),
        (["probe", "number-format", "--formats", "comma,dots", "--output", "{out}"], "unknown number format"),
        (["probe", "number-format", "--tasks", "CL", "--output", "{out}"], "writes no numbers"),
        (["probe", "number-format", "--n", "0", "--tasks", "none", "--output", "{out}"], "nothing to score"),
        (["probe", "number-format", "--tasks", "4D+", "--gpt3-n", "5000", "--output", "{out}"], "--gpt3-n"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, argv, needle):
    out, folder = tmp_path / "out.json", tmp_path / "dir"
    proc = cli(*[a.format(out=out, dir=folder) for a in argv])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]  # the one error line (argparse prints its usage above)
    assert needle in last and "error" in last and "Traceback" not in proc.stderr
    assert not out.exists() and not folder.exists()


def test_release_build_refuses_another_format(tmp_path):
    before = (ROOT / "data" / "deeparithmark-1.jsonl").read_bytes()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "deeparithmark.py"), "build", "--number-format", "comma"],
        cwd=ROOT,
        env=env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2 and "pass --out" in proc.stderr
    assert (ROOT / "data" / "deeparithmark-1.jsonl").read_bytes() == before


def test_results_reader_checks_the_block_version(tmp_path):
    from synthprobe.results import SCHEMA, SCHEMA_VERSION, read_results

    doc = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "models": [{"model": {"name": "m"}, "results": {"number_format": {"version": 2, "formats": []}}}],
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError, match=r"models\[0\]\.results\.number_format\.version"):
        read_results(path)
    doc["models"][0]["results"]["number_format"]["version"] = 1
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert [e.where for e, _ in read_results(path).blocks("number_format")] == ["models[0]"]


def test_parallel_build_gives_the_same_bytes_in_every_format(tmp_path):
    from synthprobe.benchmarks.deeparithmark.build import build

    for fmt in ("comma", "space"):
        serial, parallel = tmp_path / f"{fmt}1.jsonl", tmp_path / f"{fmt}2.jsonl"
        a = build(serial, seed=5, n=300, progress=False, workers=1, number_format=fmt)
        b = build(parallel, seed=5, n=300, progress=False, workers=2, number_format=fmt)
        assert a.sha256 == b.sha256 and serial.read_bytes() == parallel.read_bytes()
        assert serial.read_bytes() == render_bytes(5, 300, fmt)
