"""Per-item seeding (synthprobe.seeding): streams kept apart by a hash, the same in every process, and
the builder's per-item streams (``ItemStreams``) equal to ``item_rng``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from synthprobe.seeding import ItemStreams, derive_seed, item_rng


def test_item_rng_is_not_seed_plus_index():
    # Random(seed + idx) would make these equal; the hash keeps streams apart.
    a = item_rng("t", 10, 1).random()
    b = item_rng("t", 11, 0).random()
    assert a != b
    assert item_rng("t", 10, 1).random() == a
    assert item_rng("t", 10, 1, "retry", 1).random() != a
    assert item_rng("other", 10, 1).random() != a


def test_seed_independent_of_hash_randomisation():
    code = "from synthprobe.seeding import derive_seed; print(derive_seed('deeparithmark', 20261027, 5))"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": h}, check=True
        ).stdout
        for h in ("0", "1", "12345")
    }
    assert outs == {f"{derive_seed('deeparithmark', 20261027, 5)}\n"}


@pytest.mark.parametrize(
    ("task", "seed", "index"),
    [("deeparithmark/tank_fill", 20261027, 0), ("deeparithmark/trip_minutes", 1, 999_999), ("t", -3, 17)],
)
def test_item_streams_are_the_item_rng_streams(task, seed, index):
    streams = ItemStreams(task, seed, index)
    for attempt in (0, 1, 2, 49, 50, 1999):
        mine, ref = streams.rng(attempt), item_rng(task, seed, index, attempt)
        assert streams.seed(attempt) == derive_seed(task, seed, index, attempt)
        assert mine.getstate() == ref.getstate()
        assert [mine.random() for _ in range(5)] == [ref.random() for _ in range(5)]
    assert streams.seed("a", 2) == derive_seed(task, seed, index, "a", 2)
    with pytest.raises(ValueError):
        streams.seed()


def test_item_streams_reseed_clears_the_gaussian_cache():
    streams = ItemStreams("t", 1, 2)
    rng = streams.rng(0)
    rng.gauss(0, 1)  # leaves a cached second value
    assert streams.rng(0).gauss(0, 1) == item_rng("t", 1, 2, 0).gauss(0, 1)
