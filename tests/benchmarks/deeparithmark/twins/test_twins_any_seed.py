"""``build twins`` on fresh seeds: an original without a usable twin is counted, not a failed
build; the build record ``FILE.build.json`` that ``build deeparithmark`` writes stands in for
``--seed``; a record that does not describe the file is refused (exit 2, nothing written).
Real builds throughout, with legacy decoys."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS
from synthprobe.benchmarks.deeparithmark.commands.build import main as script_main
from synthprobe.benchmarks.deeparithmark.twins.build import MAX_TWIN_ATTEMPTS, TwinStats, iter_twins
from synthprobe.benchmarks.deeparithmark.twins.build_record import RECORD_FORMAT, record_path
from synthprobe.benchmarks.deeparithmark.twins.check import check_build
from synthprobe.cli import main


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


def _refused(argv: list[str], out: Path, capsys, *messages: str) -> str:
    before = _tree(out)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    for message in messages:
        assert message in err, err
    assert err.count("error:") == 1, err
    assert _tree(out) == before
    return err


def _build(data: Path, seed: int, n: int, *extra: str) -> None:
    """A legacy-decoy build (the counts below are legacy builds'; a groups build takes minutes)."""
    argv = ["build", "deeparithmark", "--seed", str(seed), "--n", str(n), "--decoys", "legacy", "--out", str(data)]
    assert main([*argv, *extra, "--no-progress"]) == 0


@pytest.fixture(scope="module")
def seed7(tmp_path_factory) -> Path:
    """Seed 7 at 200 items, with its build record: its item 83 (stock_percent_pack) has no usable
    irrelevant_clause twin in the first MAX_TWIN_ATTEMPTS draws."""
    data = tmp_path_factory.mktemp("seed7") / "s7.jsonl"
    _build(data, 7, 200)
    return data


def test_the_build_writes_its_record(seed7):
    rec = json.loads(record_path(seed7).read_text(encoding="utf-8"))
    assert rec["format"] == RECORD_FORMAT
    assert (rec["data"], rec["seed"], rec["n"], rec["decoys"], rec["number_format"]) == (
        "s7.jsonl",
        7,
        200,
        "legacy",
        "plain",
    )
    assert rec["sha256"] == hashlib.sha256(seed7.read_bytes()).hexdigest()


@pytest.mark.slow  # ~10 s: the audit's classifier on the twins and their originals
def test_seed_7_twins_count_the_original_without_a_usable_twin(seed7, capsys):
    out = seed7.parent / "tw"
    capsys.readouterr()
    # no --seed: the build record names it
    argv = ["build", "twins", "--data", str(seed7), "--kinds", "irrelevant_clause", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    shown = capsys.readouterr().out
    assert "seed 7, legacy decoys" in shown
    assert f"originals without a usable twin in {MAX_TWIN_ATTEMPTS} draws (1): stock_percent_pack (1)" in shown
    m = json.loads((out / "s7.twins.json").read_text(encoding="utf-8"))
    assert (m["originals"]["seed"], m["originals"]["n"], m["originals"]["decoys"]) == (7, 200, "legacy")
    entry = m["kinds"]["irrelevant_clause"]
    assert (entry["n"], entry["unsupported"], entry["no_usable_twin"]) == (199, {}, {"stock_percent_pack": 1})
    assert entry["audit"]["ok"] is True
    twinned = {
        json.loads(line)["metadata"]["twin_of"]
        for line in (out / "s7.twins-irrelevant_clause.jsonl").read_text(encoding="utf-8").splitlines()
    }
    originals = [json.loads(line) for line in seed7.read_text(encoding="utf-8").splitlines()]
    missing = [o for o in originals if o["source_id"] not in twinned]
    assert [o["metadata"]["template"] for o in missing] == ["stock_percent_pack"]
    assert check_build(out, classifier=False).ok


def test_seed_2_counts_its_shortfall_without_a_file():
    """Seed 2 at 1,000 items (the review's failing build): drawn in memory, one kind."""
    stats = TwinStats()
    n = sum(1 for _item, tw in iter_twins(("irrelevant_clause",), 2, 1000, stats=stats, decoys="legacy") if tw)
    assert n == stats.written["irrelevant_clause"] == 999
    assert dict(stats.no_usable) == {("irrelevant_clause", "stock_percent_pack"): 1}
    assert sum(c for (k, _r), c in stats.no_usable_why.items() if k == "irrelevant_clause") == MAX_TWIN_ATTEMPTS


def test_seed_7_every_kind_counts_every_original():
    """Per kind, every original is twinned or counted: unsupported, or without a usable twin."""
    stats = TwinStats()
    for _item, _tw in iter_twins(tuple(TWIN_KINDS), 7, 200, stats=stats, decoys="legacy"):
        pass
    for kind in TWIN_KINDS:
        counted = sum(c for (k, _f), c in [*stats.unsupported.items(), *stats.no_usable.items()] if k == kind)
        assert stats.written[kind] + counted == 200, kind
    assert dict(stats.no_usable) == {("irrelevant_clause", "stock_percent_pack"): 1}


@pytest.mark.slow
def test_seed_2_twins_build_through_the_command(tmp_path, capsys):
    data = tmp_path / "s2.jsonl"
    _build(data, 2, 1000)
    out = tmp_path / "tw"
    argv = ["build", "twins", "--data", str(data), "--kinds", "irrelevant_clause", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    m = json.loads((out / "s2.twins.json").read_text(encoding="utf-8"))
    entry = m["kinds"]["irrelevant_clause"]
    assert (entry["n"], entry["no_usable_twin"]) == (999, {"stock_percent_pack": 1})


def test_seed_and_decoys_must_agree_with_the_record(seed7, capsys):
    out = seed7.parent / "tw_agree"
    argv = ["build", "twins", "--data", str(seed7), "--kinds", "reordered", "--out", str(out), "--no-progress"]
    _refused([*argv, "--seed", "8"], out, capsys, "s7.jsonl.build.json says the file was built from seed 7", "--seed")
    _refused([*argv, "--decoys", "groups"], out, capsys, "built with --decoys legacy", "--decoys")
    capsys.readouterr()
    assert main([*argv, "--seed", "7", "--decoys", "legacy"]) == 0
    m = json.loads((out / "s7.twins.json").read_text(encoding="utf-8"))
    assert m["originals"]["seed"] == 7
    # legacy decoys leak: the trained screen flags the originals, and their twins inherit it
    # without failing the twin build (the file's own audit is where that shows)
    assert m["trained_audit"]["sets"]["originals"]["status"] == "fails"
    assert "the originals themselves fail the trained screen" in capsys.readouterr().out


def test_a_record_whose_sha256_disagrees_is_refused(tmp_path, capsys):
    data = tmp_path / "s7.jsonl"
    _build(data, 7, 200)
    rec = record_path(data)
    doc = json.loads(rec.read_text(encoding="utf-8"))
    doc["sha256"] = "0" * 64
    rec.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "tw"
    argv = ["build", "twins", "--data", str(data), "--out", str(out), "--no-progress"]
    err = _refused(argv, out, capsys, str(rec), "'sha256'", "the file changed since it was built")
    assert not out.exists(), err
    # the file edited after its build (its record intact): the same refusal
    edited = tmp_path / "again.jsonl"
    _build(edited, 7, 200)
    edited.write_bytes(edited.read_bytes().replace(b'"split": "test"', b'"split": "test" ', 1))
    _refused(["build", "twins", "--data", str(edited), "--out", str(out)], out, capsys, "'sha256'")
    assert not out.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("n", "many", "expected the build's number of items"),
        ("seed", -1, "expected the build's seed"),
        ("decoys", "sideways", "expected one of groups, legacy"),
        ("number_format", "roman", "expected one of plain, comma, space"),
        ("format", "other", '"format": "synthprobe/deeparithmark-build"'),
        ("version", 99, "expected version 1"),
    ],
)
def test_a_malformed_record_is_one_error_naming_its_field(seed7, tmp_path, capsys, field, value, message):
    data = tmp_path / "s7.jsonl"
    data.write_bytes(seed7.read_bytes())
    doc = json.loads(record_path(seed7).read_text(encoding="utf-8"))
    record_path(data).write_text(json.dumps({**doc, field: value}), encoding="utf-8")
    out = tmp_path / "tw"
    _refused(["build", "twins", "--data", str(data), "--out", str(out)], out, capsys, f"'{field}'", message)
    assert not out.exists()


def test_a_record_that_is_not_json_is_refused(seed7, tmp_path, capsys):
    data = tmp_path / "s7.jsonl"
    data.write_bytes(seed7.read_bytes())
    record_path(data).write_text("{not json", encoding="utf-8")
    out = tmp_path / "tw"
    _refused(["build", "twins", "--data", str(data), "--out", str(out)], out, capsys, str(record_path(data)))


def test_an_empty_file_without_a_record_is_refused(tmp_path, capsys):
    data = tmp_path / "empty.jsonl"
    data.write_bytes(b"")
    out = tmp_path / "tw"
    _refused(["build", "twins", "--data", str(data), "--out", str(out)], out, capsys, "holds 0 items", "--data")


def test_an_existing_record_is_refused_without_overwrite(tmp_path, capsys):
    data = tmp_path / "s.jsonl"
    record_path(data).write_text("{}", encoding="utf-8")
    argv = ["build", "deeparithmark", "--seed", "7", "--n", "20", "--decoys", "legacy", "--out", str(data)]
    argv.append("--no-progress")
    err = _refused(argv, tmp_path, capsys, "s.jsonl.build.json", "--overwrite")
    assert not data.exists(), err
    assert main([*argv, "--overwrite"]) == 0
    assert json.loads(record_path(data).read_text(encoding="utf-8"))["n"] == 20


def test_the_release_default_build_writes_no_record(tmp_path):
    """``deeparithmark.py build`` (the release path): no record, so no tracked file changes."""
    assert script_main(["build", "--seed", "7", "--n", "20", "--decoys", "legacy", "--no-progress"], root=tmp_path) == 0
    written = sorted(p.name for p in (tmp_path / "data").iterdir())
    assert written == ["deeparithmark-1.jsonl"]


@pytest.mark.parametrize(
    ("twins", "originals", "ok"),
    [
        (215, 176, False),  # seed 1's one_step_more classifier: 28.67 % vs 23.47 %, 5.2 points apart
        (215, 190, True),  # 28.67 % vs 25.33 %: 3.3 points, beyond one score's band, within a difference's
        (200, 100, True),  # 26.67 %: within the band of chance, whatever the originals did
    ],
)
def test_the_audit_holds_a_difference_to_the_band_of_a_difference(twins, originals, ok):
    from synthprobe.benchmarks.deeparithmark.audit import CLASSIFIER, StrategyScore
    from synthprobe.benchmarks.deeparithmark.twins.check import FileCheck

    fc = FileCheck("one_step_more", 750, audit=[StrategyScore(CLASSIFIER, twins, 750)])
    fc.original_audit = [StrategyScore(CLASSIFIER, originals, 750)]
    assert round(fc.tolerance, 1) == 3.1 and round(fc.tolerance_vs_originals, 1) == 4.4
    assert fc.audit_ok is ok
    assert fc.audit_json()["strategies"][CLASSIFIER]["ok"] is ok
    assert ("outside 25 ± 3.1" in fc.summary()) is (not ok)
