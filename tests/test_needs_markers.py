"""The markers of what a test needs (model, server, browser, Ray) and the guard in conftest.py.

Each case runs pytest in a subprocess on a small test file beside a copy of this suite's
conftest.py: an unmarked test that loads the embedded model, or reaches for the vLLM server,
Playwright's browser or Ray, fails at that call with a message naming the marker it lacks (the
server, browser and Ray before they start; the model once loaded, so that a refused load stays
a fast test of bad input). A marked one is left out of the fast subset (``-m "not slow"``, `make check`).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from needs_guard import NEEDS

HERE = Path(__file__).resolve().parent

CASES = {
    "model": "from synthprobe.backends import load_backend\n    load_backend('smollm2-135m-instruct')",
    "server": "import vllm_cpu\n    vllm_cpu.Server(Path('nowhere'), python=Path(sys.executable)).start()",
    "ray": "import ray\n    ray.init(address='local', num_cpus=1)",
    "browser": "from playwright.sync_api import sync_playwright\n    with sync_playwright() as p:\n"
    "        p.chromium.launch()",
}


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(HERE.parent / "tools"), os.environ.get("PYTHONPATH")) if p),
    }
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder), str(folder), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _check_inner_run(tmp_path: Path, needs: list[str]) -> None:
    """One inner suite with, per need, an unmarked test that reaches for it and a marked one."""
    for helper in ("needs_guard.py", "figure_memo.py"):
        shutil.copy(HERE / "support" / helper, tmp_path / helper)
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_inner.py").write_text(
        "import sys\nfrom pathlib import Path\nimport pytest\n"
        + "".join(
            f"\n\ndef test_unmarked_{need}():\n    {CASES[need]}\n\n"
            f"@pytest.mark.{need}\ndef test_marked_{need}_is_slow():\n    pass\n"
            for need in needs
        ),
        encoding="utf-8",
    )
    res = _pytest(tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    for need in needs:
        assert f"test_inner.py::test_unmarked_{need} {NEEDS[need]}" in res.stdout, res.stdout
        assert f"but is not marked @pytest.mark.{need}" in res.stdout, res.stdout
    assert f"{len(needs)} failed, {len(needs)} passed" in res.stdout, res.stdout
    # the marked tests are slow: the fast subset leaves them out
    fast = _pytest(tmp_path, "-m", "not slow", "-k", "marked")
    assert f"{len(needs)} deselected" in fast.stdout, fast.stdout


def test_an_unmarked_test_that_starts_a_server_browser_or_ray_fails_at_that_call(tmp_path):
    """The three needs that start something are refused before it starts: one inner run holds them all."""
    # installed or not, found without importing them here (the inner run imports them)
    needs = ["server"] + [
        need
        for need, package in (("ray", "ray"), ("browser", "playwright"))
        if importlib.util.find_spec(package) is not None
    ]
    _check_inner_run(tmp_path, needs)


@pytest.mark.model  # its inner run loads the embedded model (the guard fails a test only once a real
# model has loaded), so it needs the model itself and is left out of the fast subset
def test_an_unmarked_test_that_loads_the_model_fails_once_it_has_loaded(tmp_path):
    _check_inner_run(tmp_path, ["model"])


@pytest.mark.model  # its inner run loads the embedded model
def test_an_unmarked_test_whose_subprocess_loads_the_model_fails(tmp_path):
    shutil.copy(HERE / "conftest.py", tmp_path / "conftest.py")
    for helper in ("needs_guard.py", "figure_memo.py"):
        shutil.copy(HERE / "support" / helper, tmp_path / helper)
    (tmp_path / "test_inner.py").write_text(
        "import subprocess, sys\n\n"
        "def test_unmarked_cli():\n"
        "    res = subprocess.run([sys.executable, '-m', 'synthprobe', 'score', 'deeparithmark', '--limit', '1',\n"
        f"                          '--data', {str(HERE.parent / 'data' / 'deeparithmark-1.jsonl')!r},\n"
        "                          '--output', 'x.json'], capture_output=True, text=True)\n"
        "    assert res.returncode != 0   # the command dies at the load; the test would pass on that alone\n",
        encoding="utf-8",
    )
    res = _pytest(tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert (
        "test_inner.py::test_unmarked_cli loads a real model (synthprobe.backends.load_backend with the hf "
        "or vllm engine) (in a subprocess it ran) but is not marked @pytest.mark.model"
    ) in res.stdout, res.stdout
    assert not (tmp_path / "x.json").exists()


def test_every_slow_need_is_a_registered_marker():
    import needs_guard

    assert set(needs_guard.NEEDS) == {"model", "server", "browser", "ray"}
