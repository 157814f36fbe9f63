"""Byte-identity pins for the Deep Arithmark builder's speed work (issue 15).

The sha256 values were taken from the builder *before* any of the speed changes (commit
1bfe861), for private seeds at n=5,000 and one odd size; every optimisation of the shared
machinery must leave them unchanged, for the serial and the parallel builder alike. They pin the
legacy decoy selection (``decoys="legacy"``, the default until the role-balanced build replaced
it), which the trained audit keeps as its positive control.
"""

from __future__ import annotations

import hashlib

import pytest

from synthprobe.benchmarks.deeparithmark import build as B

PINS = {
    (1, 5000): "6485dc914f8529fbcbab1c244cc20435974fdfa04c6fa8aec64d98b27894aec3",
    (7, 5000): "162e9c05603c72e3afc835669c669f9772a030d7d65a21e63f15acde8292c280",
    (424242, 5000): "17aa185fb6e6bada6f0e43c50d43dcd7a02d3efae2e07891f085aef6268bb0c4",
    (20261027, 5000): "24d83e21b20653f055e9f124c44b2871cb7bcd7e91f154667af5b5a680c42b61",
    (11, 1237): "eab0f814bdd19231c81a69486544f497f01725cae76453309d00d56a4d05d219",
}


@pytest.mark.parametrize(("seed", "n"), sorted(PINS))
def test_serial_build_matches_the_pinned_bytes(seed, n):
    assert hashlib.sha256(B.render_bytes(seed=seed, n=n, decoys="legacy")).hexdigest() == PINS[seed, n]


@pytest.mark.parametrize(("seed", "n"), [(7, 5000), (11, 1237)])
def test_parallel_build_matches_the_pinned_bytes(tmp_path, seed, n):
    res = B.build(tmp_path / "p.jsonl", seed=seed, n=n, progress=False, workers=2, decoys="legacy")
    assert res.sha256 == PINS[seed, n]
    assert hashlib.sha256(res.path.read_bytes()).hexdigest() == PINS[seed, n]
