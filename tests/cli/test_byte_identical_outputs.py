"""The same bytes across processes and hash seeds from the writers the builders' own determinism
tests do not cover (Deep Arithmark in ``tests/benchmarks/deeparithmark/test_build.py``, every GPT-3 task
in ``tests/benchmarks/gpt3/test_determinism.py``): a SAT file from a user file and both exports, through
the command line in one process per hash seed."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from tests.support.cli import synthprobe


def _synthprobe(args: list[str], hash_seed: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m synthprobe.cli ARGS`` under ``PYTHONHASHSEED``, through the shared runner."""
    return synthprobe(*args, module="synthprobe.cli", cwd=cwd, extra_env={"PYTHONHASHSEED": hash_seed})


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_builds_and_exports_are_byte_identical_across_hash_seeds(tmp_path):
    """One process per hash seed writes a Deep Arithmark file, a SAT file from a user file, and
    both exports of a GPT-3 task file; every output file has the same bytes in both."""
    sat = tmp_path / "sat.txt"
    sat.write_text(
        "1 s\nlull trust v:n\na b n:n\nc d n:n\ne f n:n\ng h n:n\ni j n:n\nb\n\n"
        "2 s\nhot cold a:a\nup down a:a\nk l n:n\nm n n:n\no p n:n\nq r n:n\na\n",
        encoding="utf-8",
    )
    trees = []
    for hs in ("0", "4242"):
        out = tmp_path / f"run{hs}"
        out.mkdir()
        script = [
            ["build", "deeparithmark", "--seed", "11", "--n", "40", "--out", out / "da.jsonl", "--no-progress"],
            ["build", "sat_analogies", "--sat-file", sat, "--out", out / "sat.jsonl"],
            ["build", "arithmetic_1dc", "--n", "30", "--seed", "3", "--out", out / "1dc.jsonl"],
            ["export", "hf", "--data", out / "da.jsonl", "--out", out / "hf"],
            [
                "export",
                "lm-eval",
                "--data",
                out / "da.jsonl",
                "--gpt3",
                f"one_dc={out / '1dc.jsonl'}",
                "--gpt3",
                f"sat={out / 'sat.jsonl'}",
                "--out",
                out / "lm",
            ],
        ]
        for args in script:
            proc = _synthprobe(args, hs, out)
            assert proc.returncode == 0, (args, proc.stderr)
        trees.append(_tree(out))
    a, b = trees
    assert len(a) >= 10 and a.keys() == b.keys()
    # lm-eval YAMLs record the absolute data path, which differs between the two folders
    for k in a:
        if a[k] == b[k]:
            continue
        assert k.startswith("lm/") and k.endswith((".yaml", ".md")), f"{k} differs between hash seeds"
        ta = (tmp_path / "run0" / k).read_text(encoding="utf-8").replace(str(tmp_path / "run0"), "@")
        tb = (tmp_path / "run4242" / k).read_text(encoding="utf-8").replace(str(tmp_path / "run4242"), "@")
        assert ta == tb, k
