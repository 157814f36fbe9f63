"""`synthprobe contamination --ray`: the same job on Ray Data (a local Ray started for the run)
gives exactly the single-machine results, on a corpus of every format with planted items."""

from __future__ import annotations

import json

import pytest

from synthprobe.cli import main
from tests.contamination.test_scan import flags, plants, write_corpus  # noqa: F401 - the shared fixture

pytest.importorskip("ray")


@pytest.mark.slow
def test_ray_data_scan_is_identical_to_the_local_scan(plants, tmp_path):  # noqa: F811
    folder = tmp_path / "corpus"
    for fmt in ("text", "jsonl", "parquet", "datasets"):
        write_corpus(fmt, plants["docs"], folder / fmt)
    docs = {}
    for name, extra in (("local", []), ("ray", ["--ray"])):
        out = tmp_path / f"{name}.json"
        rc = main(
            [
                "contamination",
                "--corpus",
                str(folder),
                "--task",
                plants["release"],
                "--task",
                plants["gpt3"],
                "--shard-bytes",
                "2048",
                "--output",
                str(out),
                "--no-progress",
                *extra,
            ]
        )
        assert rc == 0
        docs[name] = json.loads(out.read_text("utf-8"))["contamination"]
    local, ray = docs["local"], docs["ray"]
    assert ray["run"]["engine"] == "ray" and local["run"]["engine"] == "local"
    assert ray["run"]["shards"] == local["run"]["shards"] > 4
    assert ray["tasks"] == local["tasks"]
    assert ray["corpus"] == local["corpus"]
    assert flags({"contamination": ray}) == plants["expected"]
    # every format found each planted item: the first match is in the first file in walk order
    files = {
        it[k]["file"] for t in ray["tasks"] for it in t["items"] for k in ("ngram13", "ngram8", "arithmetic") if it[k]
    }
    assert all("/datasets/" in f or f.endswith(".arrow") for f in files)
