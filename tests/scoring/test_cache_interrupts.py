"""The score cache is exact under Ctrl-C and says what came from it.

* A real SIGINT is raised at every line of the cache's save path (``ScoreCache.append`` and
  what it calls) while the third batch of 6 items (batch 2) is being saved, through the real
  caller (``score_dataset``) on a tiny model: every item is on disk exactly once, every line is
  whole, and a resume gives an uninterrupted run's scores. (Before, Ctrl-C after the batch
  reached the disk wrote it again: 8 lines for 6 items, as 32 for 24 in the report.)
* A record whose line was cut short is never read back, whatever byte the cut lands on.
* Run twice, ``score deeparithmark`` and ``score gpt3`` say "N of N from the cache" instead of
  a 0/0 bar, and a partial resume says how many came from the cache.
"""

from __future__ import annotations

import json
import signal
import sys
from dataclasses import replace as dataclasses_replace
from pathlib import Path

import pytest
from scoring_support import RELEASE, save_tiny_llama

from synthprobe.cli import main
from synthprobe.scoring import cache as cache_mod
from synthprobe.scoring.cache import ScoreCache

N_ITEMS = 24
BATCH = 8


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama", seed=5)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    lines = RELEASE.read_text(encoding="utf-8").splitlines()[:N_ITEMS]
    out = tmp_path_factory.mktemp("data") / "slice.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _args(data: Path, model: Path, out: Path, *extra: str) -> list[str]:
    return [
        "score",
        "deeparithmark",
        "--data",
        str(data),
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--batch-size",
        str(BATCH),
        "--save-predictions",
        "--no-progress",
        "--output",
        str(out),
        *extra,
    ]


def _block(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["models"][0]["results"]["deeparithmark"]


@pytest.fixture(scope="module")
def fresh(data, tiny, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("fresh") / "fresh.json"
    assert main(_args(data, tiny, out, "--no-cache")) == 0
    return _block(out)


def _exact(path: Path, fresh: dict) -> list[str]:
    """Every line whole, every item once, every score the uninterrupted run's; returns the ids."""
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), "the cache ends in a torn line"
    recs = [json.loads(line) for line in raw.decode("utf-8").splitlines()]
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids)), f"{len(ids)} lines for {len(set(ids))} items"
    by_id = {p["id"]: p for p in fresh["predictions"]}
    for rec in recs:
        assert [row[0] for row in rec["scores"]] == by_id[rec["id"]]["logprob"]
    assert set(ScoreCache(path.stem, path.parent).load()) == set(ids)
    return ids


class _CtrlCInSave:
    """Trace the cache module; on the ``call``-th ``ScoreCache.append`` raise a real SIGINT at
    the ``at``-th line executed inside it (its callees in the module included)."""

    def __init__(self, call: int, at: int):
        self.call, self.at = call, at
        self.appends = 0
        self.lines = 0  # lines executed inside the traced append so far
        self.depth = 0
        self.fired = False

    def __call__(self, frame, event, arg):
        if event != "call" or frame.f_code.co_filename != cache_mod.__file__:
            return None
        if frame.f_code.co_name == "append" and self.depth == 0:
            self.appends += 1
        if self.appends != self.call or self.fired:
            return None
        return self._local

    def _local(self, frame, event, arg):
        if event == "line" and not self.fired:
            self.lines += 1
            if self.lines == self.at:
                self.fired = True
                signal.raise_signal(signal.SIGINT)
        return self._local


@pytest.fixture(scope="module")
def backend(tiny):
    from synthprobe.backends.hf.backend import load_backend

    b = load_backend(str(tiny), dtype="float32", device="cpu", progress=False)
    yield b
    b.close()


def test_ctrl_c_at_every_line_of_saving_a_batch_leaves_each_item_once(data, backend, tmp_path, monkeypatch):
    """The real caller (``score_dataset``) on a loaded tiny model: 6 items in batches of 2, a
    real SIGINT at the 1st, 2nd, ... line of saving the third batch, until the save completes
    before the signal could land."""
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig, load_dataset
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import score_dataset
    from synthprobe.scoring.runner import ScoringInterrupted

    ds = load_dataset(data, "deeparithmark", 6)
    config = ScoreConfig(data=data, batch_size=2, progress=False, save_items=True)
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "reference"))
    reference = score_dataset(backend, ds, dataclasses_replace(config, cache=False), echo=lambda s: None)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # the tracer runs only while ScoreCache.append runs (the model's forwards go untraced): it
    # sees every append called, and every line inside it and its callees in the cache module
    tracer = None
    real_append = ScoreCache.append

    def traced_append(self, *args, **kwargs):
        sys.settrace(tracer)
        try:
            return real_append(self, *args, **kwargs)
        finally:
            sys.settrace(None)

    monkeypatch.setattr(ScoreCache, "append", traced_append)
    at, duplicated, traced = 1, [], 0
    while True:
        monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / f"cache-{at}"))
        tracer = _CtrlCInSave(call=3, at=at)
        block, message = None, ""
        try:
            block = score_dataset(backend, ds, config, echo=lambda s: None)
        except ScoringInterrupted as exc:
            message = str(exc)
        if not tracer.fired:  # the save finished before the line counter reached ``at``
            assert block is not None and block["predictions"] == reference["predictions"]
            break
        assert block is None, f"Ctrl-C at line {at} of the save did not stop the run"
        (cache_file,) = (tmp_path / f"cache-{at}" / "scores").glob("*.jsonl")
        lines = cache_file.read_bytes().count(b"\n")
        ids = _exact(cache_file, reference)
        if lines != len(ids):
            duplicated.append((at, lines, len(ids)))
        # batches 1 and 2 were saved, batch 3 was scored: Ctrl-C keeps all 6, each once
        assert sorted(ids) == sorted(p["id"] for p in reference["predictions"]), at
        assert "6 of 6 items are cached" in message, message
        if at in (1, 5):  # resuming scores nothing and gives the same predictions
            again = score_dataset(backend, ds, config, echo=lambda s: None)
            assert again["cached_items"] == 6 and again["predictions"] == reference["predictions"]
            assert cache_file.read_bytes().count(b"\n") == 6
        traced = at
        at += 1
    assert not duplicated, f"(line, lines on disk, items): {duplicated}"
    assert traced >= 8, f"only {traced} lines traced in the save path"


def test_a_line_cut_short_at_any_byte_is_never_read_back_and_the_next_append_is_exact(tmp_path):
    whole = ScoreCache("a" * 64, tmp_path / "whole")
    recs = [{"id": str(i), "scores": [[-1.25 * i, 3, 9, i % 2 == 0]], "truncated": False} for i in range(3)]
    assert whole.append(recs) == 3
    assert whole.append(recs) == 0  # already on disk: nothing written twice
    raw = whole.path.read_bytes()
    ends = [i + 1 for i, b in enumerate(raw) if b == ord("\n")]
    for cut in range(len(raw) + 1):
        c = ScoreCache("b" * 64, tmp_path / f"cut-{cut}")
        c.folder.mkdir()
        c.path.write_bytes(raw[:cut])
        complete = sum(1 for e in ends if e <= cut)  # only lines with their newline count
        assert list(c.load()) == [str(i) for i in range(complete)], cut
        assert c.append(recs) == 3 - complete
        assert c.path.read_bytes() == raw, cut  # each record once, no torn bytes left


@pytest.mark.model
def test_score_deeparithmark_says_how_many_items_came_from_the_cache(tmp_path, capsys):
    """The embedded model through the CLI, progress on: 3 items, then 5 (3 cached), then 5 again."""
    base = [
        "score",
        "deeparithmark",
        "--data",
        str(RELEASE),
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--device",
        "cpu",
        "--batch-size",
        "4",
    ]
    assert main(base + ["--limit", "3", "--output", str(tmp_path / "a.json")]) == 0
    first = capsys.readouterr().err
    assert "from the cache" not in first
    assert main(base + ["--limit", "5", "--output", str(tmp_path / "b.json")]) == 0
    partial = capsys.readouterr().err
    assert (
        "\ndeeparithmark · SmolLM2-135M-Instruct (Q4_1 GGUF): 3 of 5 from the cache; scoring the other 2\n" in partial
    ), partial
    assert main(base + ["--limit", "5", "--output", str(tmp_path / "c.json")]) == 0
    again = capsys.readouterr().err
    assert "\ndeeparithmark · SmolLM2-135M-Instruct (Q4_1 GGUF): 5 of 5 from the cache\n" in again, again
    assert "0/0" not in again and "scoring the other" not in again
    assert _block(tmp_path / "c.json")["cached_items"] == 5
    assert _block(tmp_path / "c.json")["summary"] == _block(tmp_path / "b.json")["summary"]


@pytest.mark.model
def test_score_gpt3_says_how_many_items_came_from_the_cache(tmp_path, capsys):
    base = [
        "score",
        "gpt3",
        "--tasks",
        "2D+",
        "--shots",
        "zero",
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--device",
        "cpu",
        "--batch-size",
        "4",
        "--threads",
        "1",
    ]
    assert main(base + ["--limit", "2", "--output", str(tmp_path / "a.json")]) == 0
    assert "from the cache" not in capsys.readouterr().err
    assert main(base + ["--limit", "3", "--output", str(tmp_path / "b.json")]) == 0
    partial = capsys.readouterr().err
    assert "2D+ zero: 2 of 3 from the cache; scoring the other 1" in partial, partial
    assert main(base + ["--limit", "3", "--output", str(tmp_path / "c.json")]) == 0
    again = capsys.readouterr().err
    assert "2D+ zero: 3 of 3 from the cache\n" in again, again
    assert "0/0" not in again
