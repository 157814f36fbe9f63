"""`synthprobe export hf`: a Hub dataset folder that loads back as exactly the release rows."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
import yaml

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.export.hf import PARQUET_NAME, export_hf, size_category

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO / "data" / "deeparithmark-1.jsonl"

CARD_ITEM = {
    "ind": 3,
    "activity_label": "deeparithmark::deeparithmark-1::multi_step_inventory::depth4::hard",
    "ctx": "A warehouse held 420 units. A delivery added 260, then 210 units were shipped out, "
           "and 40 were found damaged. The rest were packed into crates of 16. The number of "
           "full crates packed was",
    "endings": [" 26 crates.", " 29 crates.", " 27 crates.", " 31 crates."],
    "label": "0",
    "source_id": "deeparithmark_v1_multi_step_inventory_depth4_0003",
    "split": "test",
    "split_type": "synthetic",
    "metadata": {
        "answer": "26", "unit": "crates", "topic": "multi_step_inventory", "depth": 4,
        "option_values": [26, 29, 27, 31],
        "option_sources": ["correct", "forgot the damaged units",
                           "counted the loose units as a crate", "added the damaged units"],
        "answer_rank": 0,
        "solution_steps": ["after delivery: 420 + 260 = 680", "after shipping: 680 - 210 = 470",
                           "good units: 470 - 40 = 430", "full crates: 430 / 16 = 26 (remainder 14)"],
        "template": "inventory_boxes",
    },
}


def small_release(path: Path, n: int = 24) -> list[dict]:
    """Items shaped like the release card's example, varied in depth, template, slot, rank."""
    templates = [("money_discount_fee", "money_discount_fee", 2), ("share_then_split", "share", 3),
                 ("inventory_boxes", "multi_step_inventory", 4), ("salary_overtime_tax", "salary", 5)]
    rows = []
    for i in range(n):
        tpl, topic, depth = templates[i % 4]
        ans = 40 + 3 * i
        decoys = [ans - 6, ans + 4, ans + 9] if i % 3 else [ans - 9, ans - 4, ans + 7]
        slot = (i // 4) % 4
        values = decoys[:slot] + [ans] + decoys[slot:]
        sources = ["correct" if v == ans else f"mistake {j}" for j, v in enumerate(values)]
        row = json.loads(json.dumps(CARD_ITEM))
        row.update(ind=i, ctx=f"A store had {ans * 16 + i} units. " + "More arrived later. " * (i % 3)
                   + "The number of full crates packed was",
                   endings=[f" {v} crates." for v in values], label=str(slot),
                   activity_label=f"deeparithmark::deeparithmark-1::{topic}::depth{depth}::x",
                   source_id=f"deeparithmark_v1_{tpl}_depth{depth}_{i:04d}")
        row["metadata"].update(answer=str(ans), topic=topic, depth=depth, option_values=values,
                               option_sources=sources, answer_rank=sorted(values).index(ans),
                               solution_steps=[f"step {k}: 1 + 1 = 2" for k in range(depth)],
                               template=tpl)
        rows.append(row)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return rows


def strict_equal(a, b) -> bool:
    """Equal values of equal JSON types (26 is not 26.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return a == b


def load_folder(folder: Path, cache: Path):
    datasets = pytest.importorskip("datasets")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
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


def test_round_trip_row_for_row(release, tmp_path):
    path, rows = release
    out = tmp_path / "hf"
    assert main(["export", "hf", "--out", str(out), "--data", str(path)]) == 0
    ds = load_folder(out, tmp_path / "cache")
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
    assert header["configs"] == [{"config_name": "default",
                                  "data_files": [{"split": "test", "path": PARQUET_NAME}]}]
    assert (out / PARQUET_NAME).is_file()
    # honest about its status
    assert "Unofficial" in body and "not affiliated with, endorsed by, or published by AxiomicLabs" in body
    assert 'load_dataset("someone/deep-arithmark-1", split="test")' in body
    # figures recomputed here independently of the exporter
    assert hashlib.sha256(path.read_bytes()).hexdigest() in body
    for depth, count in Counter(r["metadata"]["depth"] for r in rows).items():
        assert f"| {depth} | {count} |" in body
    for tpl, count in Counter(r["metadata"]["template"] for r in rows).items():
        depth = next(r["metadata"]["depth"] for r in rows if r["metadata"]["template"] == tpl)
        assert f"`{tpl}` |" in body and f"| {depth} | {count} |" in body
    slots = Counter(int(r["label"]) for r in rows)
    assert "Correct slot (0–3): " + " / ".join(str(slots[s]) for s in range(4)) in body
    ranks = Counter(r["metadata"]["answer_rank"] for r in rows)
    assert " / ".join(str(ranks[s]) for s in range(4)) in body
    words = [len(r["ctx"].split()) for r in rows]
    assert f"mean {sum(words) / len(words):.1f}, min {min(words)}, max {max(words)}" in body
    # the audit table is the audit module's output on this very file
    from synthprobe.tasks.deeparithmark.audit import audit, load_audit_items

    for row in audit(load_audit_items(path)):
        assert f"| {row.name} | {100 * row.correct / row.n:.2f} % |" in body


def test_export_is_deterministic(release, tmp_path):
    path, _ = release
    a, b = tmp_path / "a", tmp_path / "b"
    export_hf(a, data=path)
    export_hf(b, data=path)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
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
def test_release_round_trips(tmp_path):
    out = tmp_path / "hf"
    export_hf(out, data=RELEASE)
    rows = [json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines() if line.strip()]
    ds = load_folder(out, tmp_path / "cache")
    assert len(ds) == len(rows) == 1000
    for i, (got, want) in enumerate(zip(ds, rows)):
        assert strict_equal(got, want), (i, got, want)
    header, body = read_card(out)
    assert header["size_categories"] == ["1K<n<10K"]
    assert "| 2 | 250 |" in body and "| 5 | 250 |" in body
