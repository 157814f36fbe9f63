"""Atomic writes (synthprobe.io.write): a failed write leaves the old file and nothing else."""

from __future__ import annotations

import pytest

from synthprobe.io.write import atomic_open, atomic_write_text


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half-")
            raise RuntimeError("boom")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]
