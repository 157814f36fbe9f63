"""`synthprobe export hf`: a Hub dataset folder that loads back as exactly the release rows."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from synthprobe.benchmarks.deeparithmark.export.hf import PARQUET_NAME, export_hf, size_category
from synthprobe.cli import main
from synthprobe.errors import InputError

REPO = Path(__file__).resolve().parents[4]
RELEASE = REPO / "data" / "deeparithmark-1.jsonl"


def small_release(path: Path, n: int = 40, seed: int = 11) -> list[dict]:
    """A fresh Deep Arithmark variant from the real builder (same generator as the release)."""
    from synthprobe.benchmarks.deeparithmark.build import build

    build(path, seed=seed, n=n, progress=False)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def strict_equal(a, b) -> bool:
    """Equal values of equal JSON types (26 is not 26.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return a == b


def load_folder(folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch):
    """``datasets.load_dataset`` on the folder, offline; monkeypatch restores the environment and
    ``datasets.config`` (which reads the variables once, at import) after the test."""
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
    return datasets.load_dataset(str(folder), split="test", cache_dir=str(cache))


def read_card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


@pytest.fixture()
def release(tmp_path) -> tuple[Path, list[dict]]:
    path = tmp_path / "deeparithmark-small.jsonl"
    return path, small_release(path)


def test_round_trip_row_for_row(release, tmp_path, monkeypatch):
    path, rows = release
    out = tmp_path / "hf"
    assert main(["export", "hf", "--out", str(out), "--data", str(path)]) == 0
    ds = load_folder(out, tmp_path / "cache", monkeypatch)
    assert len(ds) == len(rows)
    for i, (got, want) in enumerate(zip(ds, rows)):
        assert strict_equal(got, want), (i, got, want)
        assert list(got) == list(want)  # key order kept as well
    assert ds.features["metadata"]["option_values"].feature.dtype == "int64"
    assert ds.features["label"].dtype == "string"  # the ArithMark contract's stringified int
    assert (out / "data" / path.name).read_bytes() == path.read_bytes()


def test_card_header_and_figures_come_from_the_data(release, tmp_path):
    import hashlib

    path, rows = release
    out = tmp_path / "hf"
    export_hf(out, data=path, repo_id="someone/deep-arithmark-1")
    header, body = read_card(out)
    assert header["license"] == "apache-2.0"
    assert header["language"] == ["en"]
    assert header["task_categories"] == ["multiple-choice"]
    assert header["size_categories"] == ["n<1K"]
    assert header["pretty_name"] == "Deep Arithmark-1"
    assert header["configs"] == [{"config_name": "default", "data_files": [{"split": "test", "path": PARQUET_NAME}]}]
    assert (out / PARQUET_NAME).is_file()
    # honest about its status
    assert "Unofficial" in body and "not affiliated with, endorsed by, or published by AxiomicLabs" in body
    assert 'load_dataset("someone/deep-arithmark-1", split="test")' in body
    # figures recomputed here independently of the exporter
    assert hashlib.sha256(path.read_bytes()).hexdigest() in body
    for depth, count in Counter(r["metadata"]["depth"] for r in rows).items():
        assert f"| {depth} | {count} |" in body
    for tpl, count in Counter(r["metadata"]["template"] for r in rows).items():
        md = next(r["metadata"] for r in rows if r["metadata"]["template"] == tpl)
        assert f"| `{tpl}` | {md['topic']} | {md['depth']} | {count} |" in body
    slots = Counter(int(r["label"]) for r in rows)
    assert "Correct slot (0–3): " + " / ".join(str(slots[s]) for s in range(4)) in body
    ranks = Counter(r["metadata"]["answer_rank"] for r in rows)
    assert " / ".join(str(ranks[s]) for s in range(4)) in body
    words = [len(r["ctx"].split()) for r in rows]
    assert f"mean {sum(words) / len(words):.1f}, min {min(words)}, max {max(words)}" in body
    # the audit table is the audit module's output on this very file
    from synthprobe.benchmarks.deeparithmark.audit import audit, load_audit_items

    for row in audit(load_audit_items(path)):
        assert f"| {row.name} | {100 * row.correct / row.n:.2f} % |" in body
    # and the selftest verdicts are the selftest's own
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

    report = selftest(path)
    passed = sum(c.ok is True for c in report.checks)
    assert f"{passed} of {len(report.checks)} checks pass" in body
    for c in report.checks:
        if not c.name.startswith("shortcut: "):
            assert f"| {c.name} | {c.figure.replace('|', chr(92) + '|')} | {c.status} |" in body
    assert '"source_id": "' + rows[0]["source_id"] + '"' in body  # the first item, shown


def test_export_is_deterministic(release, tmp_path):
    path, _ = release
    a, b = tmp_path / "a", tmp_path / "b"
    export_hf(a, data=path)
    export_hf(b, data=path)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert not any(p.name.startswith(".") for p in files_a)  # no temp files left behind
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert len(files_a) == 3
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_malformed_release_fails_located_and_writes_nothing(release, tmp_path, capsys):
    path, rows = release
    bad = dict(rows[5])
    bad["metadata"] = {k: v for k, v in bad["metadata"].items() if k != "depth"}
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[5] = json.dumps(bad)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "hf"
    with pytest.raises(InputError) as err:
        export_hf(out, data=path)
    assert err.value.line == 6 and err.value.field == "metadata.depth"
    assert not out.exists()
    assert main(["export", "hf", "--out", str(out), "--data", str(path)]) == 2
    msg = capsys.readouterr().err
    assert f"{path}:6" in msg and "metadata.depth" in msg
    assert not out.exists()


def test_type_that_cannot_round_trip_is_refused(release, tmp_path):
    path, rows = release
    rows[7]["ind"] = "7"  # the contract allows a string id, but not mixed with ints
    assert isinstance(rows[0]["ind"], int)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_hf(tmp_path / "hf", data=path)
    assert (err.value.line, err.value.field) == (8, "ind")
    assert "str here but int on line 1" in str(err.value)
    rows[7]["ind"] = 7
    rows[9]["metadata"]["option_values"][0] = 26.5  # a float among int64 values
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(InputError) as err:
        export_hf(tmp_path / "hf", data=path)
    assert (err.value.line, err.value.field) == (10, "metadata.option_values")
    assert not (tmp_path / "hf").exists()


def test_missing_data_file_and_bad_repo_id(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        export_hf(tmp_path / "hf", data=tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="OWNER/NAME"):
        export_hf(tmp_path / "hf", data=tmp_path / "nope.jsonl", repo_id="no-slash")
    file_as_out = tmp_path / "file"
    file_as_out.write_text("x")
    assert main(["export", "hf", "--out", str(file_as_out), "--data", str(tmp_path / "x.jsonl")]) == 2


def test_size_categories():
    assert size_category(999) == "n<1K"
    assert size_category(1_000) == "1K<n<10K"
    assert size_category(250_000) == "100K<n<1M"


def test_help_explains(capsys):
    with pytest.raises(SystemExit):
        main(["export", "hf", "--help"])
    out = capsys.readouterr().out
    assert "load_dataset" in out and "--repo-id" in out and "README.md" in out


@pytest.mark.skipif(not RELEASE.exists(), reason="the release file is built by `python deeparithmark.py build`")
def test_release_round_trips(tmp_path, monkeypatch):
    out = tmp_path / "hf"
    export_hf(out, data=RELEASE)
    rows = [json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines() if line.strip()]
    ds = load_folder(out, tmp_path / "cache", monkeypatch)
    assert len(ds) == len(rows) == 1000
    for i, (got, want) in enumerate(zip(ds, rows)):
        assert strict_equal(got, want), (i, got, want)
    header, body = read_card(out)
    assert header["size_categories"] == ["1K<n<10K"]
    assert "| 2 | 250 |" in body and "| 5 | 250 |" in body
