"""Same seed, same bytes: GPT-3 task files built in two processes with different hash seeds."""

from __future__ import annotations

import os
import subprocess
import sys

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, serialize, task_names


def _build(out_dir, hash_seed: str, *extra: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "synthprobe.cli", "build", "gpt3", "--out-dir", str(out_dir), "--quiet", *extra],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr


def test_byte_identical_across_processes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _build(a, "0")
    _build(b, "12345")
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(f"{n}.jsonl" for n in task_names())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    # the files equal an in-process build, and a different seed changes them
    assert (a / "arithmetic_3da.jsonl").read_text() == serialize(build_items(BuildConfig("3D+")))
    assert (a / "anagrams2.jsonl").read_text() == serialize(build_items(BuildConfig("A2")))
    lines = (a / "reversed_words.jsonl").read_text().splitlines()
    assert len(lines) == 10_000


def test_other_seed_and_format(tmp_path):
    c = tmp_path / "c"
    _build(c, "7", "--seed", "5", "--n", "50", "--tasks", "2D+,CL", "--format", "eleuther")
    assert sorted(p.name for p in c.iterdir()) == ["arithmetic_2da.jsonl", "cycle_letters.jsonl"]
    assert (c / "arithmetic_2da.jsonl").read_text() == serialize(
        build_items(BuildConfig("2D+", seed=5, n=50, format="eleuther"))
    )
    assert (c / "arithmetic_2da.jsonl").read_text() != serialize(
        build_items(BuildConfig("2D+", n=50, format="eleuther"))
    )
