"""The per-item score cache, the out-of-memory back-off and the ``synthprobe cache`` commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.scoring.cache import ScoreCache, cache_key
from synthprobe.scoring.runner import run_with_oom_backoff

SHA = "ab" * 32
MODEL = {"name": "m", "weights_sha256": "cd" * 32}
SETTINGS = {"dtype": "float32", "max_context": 1024, "bos": False, "scorer": "onepass"}


@pytest.fixture
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_key_depends_on_every_part_but_not_on_key_order():
    base = cache_key(MODEL, SHA, SETTINGS)
    assert base == cache_key(dict(reversed(MODEL.items())), SHA, dict(reversed(SETTINGS.items())))
    assert (
        len(
            {
                base,
                cache_key(MODEL | {"name": "n"}, SHA, SETTINGS),
                cache_key(MODEL, "ef" * 32, SETTINGS),
                *(
                    cache_key(MODEL, SHA, SETTINGS | {k: v})
                    for k, v in (("dtype", "bfloat16"), ("max_context", 2048), ("bos", True), ("scorer", "reference"))
                ),
            }
        )
        == 7
    )
    with pytest.raises(ValueError):
        cache_key(MODEL, "short", SETTINGS)


def test_records_round_trip_per_batch(cache_env):
    c = ScoreCache(cache_key(MODEL, SHA, SETTINGS))
    assert c.load() == {}
    assert c.append([{"id": "1", "scores": [-1.5, -2.0]}, {"id": "2", "scores": [-0.1, -9.0]}]) == 2
    assert c.append([]) == 0
    c.append([{"id": "3", "scores": [0.0, -1e-9]}])
    got = ScoreCache(c.key).load()
    assert list(got) == ["1", "2", "3"] and got["3"]["scores"] == [0.0, -1e-9]
    assert c.path.parent == cache_env / "scores"


def test_torn_last_line_is_ignored_and_the_next_batch_starts_clean(cache_env):
    c = ScoreCache("k" * 64)
    c.append([{"id": "1", "v": 1}])
    with open(c.path, "ab") as fh:
        fh.write(b'{"id": "2", "v"')  # a kill in the middle of a write
    assert list(c.load()) == ["1"]
    c.append([{"id": "2", "v": 2}])
    assert c.load() == {"1": {"id": "1", "v": 1}, "2": {"id": "2", "v": 2}}


@pytest.mark.parametrize("bad", [b"not json", b'{"no_id": 1}', b'{"id": 7}', b"\xff\xfe"])
def test_damage_before_the_last_line_is_located(cache_env, bad):
    c = ScoreCache("d" * 64)
    c.append([{"id": "1"}])
    with open(c.path, "ab") as fh:
        fh.write(bad + b"\n")
    c.append([{"id": "3"}])
    with pytest.raises(InputError) as exc:
        c.load()
    assert exc.value.line == 2 and exc.value.path == str(c.path) and "cache clear" in str(exc.value)


def test_unwritable_cache_is_a_clear_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(blocker))
    with pytest.raises(InputError, match="--no-cache"):
        ScoreCache("e" * 64).append([{"id": "1"}])


_WRITER = """
import sys, time
from synthprobe.scoring.cache import ScoreCache
c = ScoreCache(sys.argv[1])
for b in range(100000):
    c.append([{"id": f"{b}-{i}", "batch": b, "pad": "x" * 3000} for i in range(8)])
    print(b, flush=True)
"""


def test_sigkill_mid_run_leaves_whole_batches(cache_env):
    """A real process appending batches is SIGKILLed; the cache holds only whole, valid batches."""
    env = {**os.environ, "SYNTHPROBE_CACHE": str(cache_env)}
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, "f" * 64], stdout=subprocess.PIPE, env=env)
    try:
        for _ in range(30):  # wait until some batches are on disk
            proc.stdout.readline()
        time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    done = ScoreCache("f" * 64).load()
    assert len(done) >= 30 * 8
    batches: dict[int, int] = {}
    for rec in done.values():
        batches[rec["batch"]] = batches.get(rec["batch"], 0) + 1
    assert sorted(batches) == list(range(len(batches)))  # a prefix of the batches
    # fsync per batch: at most the batch in flight can be short
    assert all(n == 8 for b, n in batches.items() if b < len(batches) - 1)


class _FakeOOMModel:
    """Runs a real torch op, raising torch.OutOfMemoryError above a memory budget (in rows)."""

    def __init__(self, budget: int):
        self.budget = budget
        self.calls: list[int] = []

    def __call__(self, batch: int):
        self.calls.append(batch)
        if batch > self.budget:
            raise torch.OutOfMemoryError(f"CUDA out of memory (batch {batch})")
        return torch.ones(batch, 3).sum().item()


def test_oom_halves_the_batch_until_it_fits():
    model, halved = _FakeOOMModel(budget=5), []
    result, size = run_with_oom_backoff(model, 32, on_halve=lambda a, b: halved.append((a, b)))
    assert size == 4 and result == 12.0
    assert model.calls == [32, 16, 8, 4] and halved == [(32, 16), (16, 8), (8, 4)]


def test_oom_at_batch_one_and_other_errors_propagate():
    with pytest.raises(torch.OutOfMemoryError):
        run_with_oom_backoff(_FakeOOMModel(budget=0), 8)
    calls = []

    def broken(n):
        calls.append(n)
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        run_with_oom_backoff(broken, 8)
    assert calls == [8]  # not retried: only out-of-memory halves the batch
    with pytest.raises(ValueError):
        run_with_oom_backoff(broken, 0)


def test_cache_info_and_clear_commands(cache_env, capsys):
    ScoreCache("a" * 64).append([{"id": "1"}])
    (cache_env / "models" / "x").mkdir(parents=True)
    (cache_env / "models" / "x" / "w.bin").write_bytes(b"\0" * 100)
    assert main(["cache", "info", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["scores"]["files"] == 1 and doc["models"]["files"] == 1 and doc["models"]["bytes"] == 100
    assert main(["cache", "clear"]) == 2
    assert "--scores, --models or --all" in capsys.readouterr().err
    assert main(["cache", "clear", "--scores"]) == 0
    assert not (cache_env / "scores").exists() and (cache_env / "models" / "x" / "w.bin").exists()
    assert main(["cache", "clear", "--all"]) == 0
    assert not (cache_env / "models").exists()
    assert main(["cache", "clear", "--all"]) == 0
    assert "nothing to remove" in capsys.readouterr().out
