"""The guard behind the markers of what a test needs: a real model, the vLLM server, a browser, Ray.

`make check` runs the tests that need none of the four (``pytest -m "not slow"``; each marker
implies ``slow``, see conftest.py). This module fails a test that reaches for one of them without
its marker (or ``slow``), at the call that starts it (or, for a model, as soon as it has loaded):

* ``model``: :func:`synthprobe.backends.load_backend` with the ``hf`` or ``vllm`` engine, when
  it returns a real model (:data:`REAL_MODEL_PARAMS`; a load refused as bad input, or a tiny
  random model built by a test, needs no marker);
* ``server``: ``tools/vllm_cpu.Server.start``;
* ``browser``: starting Playwright (``sync_playwright()``'s ``__enter__``/``start``, before its
  driver process starts: no browser runs without it);
* ``ray``: ``ray.init``.

Each is wrapped right after its module is first imported (a meta-path finder), so the guard
imports nothing heavy itself. It watches the test process and, through a ``sitecustomize`` put
on the ``PYTHONPATH`` of every subprocess a test starts (conftest.py), the commands a test runs
as subprocesses too: there the test's id and markers arrive in environment variables, and a
refusal is written to a file the test process reads when the test ends.
"""

from __future__ import annotations

import importlib.util
import os
import sys

NEEDS = {
    "model": "loads a real model (synthprobe.backends.load_backend with the hf or vllm engine)",
    "server": "starts the real vLLM server (tools/vllm_cpu.Server.start)",
    "browser": "starts Playwright to drive a browser",
    "ray": "starts Ray (ray.init)",
}

#: A loaded model this large is a real one (the embedded model has 135 M parameters); the tiny
#: random Llamas some tests build (2-8 M, nearly all of it the real tokenizer's 49k-word embedding)
#: load in a second and need no marker.
REAL_MODEL_PARAMS = 20_000_000

#: the running test's id, what it may use ("*" when marked slow, else its need markers), and the
#: file where a subprocess writes a refusal
TEST_ENV = "SYNTHPROBE_TEST_ID"
ALLOWS_ENV = "SYNTHPROBE_TEST_ALLOWS"
REPORT_ENV = "SYNTHPROBE_TEST_REFUSALS"

_RUNNING: dict = {"item": None}


class UnmarkedNeed(BaseException):
    """Raised where an unmarked test reaches for a model, server, browser or Ray (a BaseException,
    so a command's own ``except Exception`` cannot swallow it)."""


def allows(item) -> str:
    """What a collected test may use, as :data:`ALLOWS_ENV` carries it."""
    if item.get_closest_marker("slow"):
        return "*"
    return ",".join(need for need in NEEDS if item.get_closest_marker(need))


def check(need: str) -> None:
    item = _RUNNING["item"]
    if item is not None:
        allowed, test, where = allows(item), item.nodeid, ""
    else:
        test = os.environ.get(TEST_ENV)
        if not test:
            return
        allowed, where = os.environ.get(ALLOWS_ENV, ""), " (in a subprocess it ran)"
    if allowed == "*" or need in allowed.split(","):
        return
    message = (
        f"{test} {NEEDS[need]}{where} but is not marked @pytest.mark.{need}: mark it, so that "
        f"`make check` leaves it out"
    )
    report = os.environ.get(REPORT_ENV)
    if report:
        with open(report, "a", encoding="utf-8") as fh:
            fh.write(message + "\n")
    raise UnmarkedNeed(message)


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
                    # judged on success: a test of a refused spec, option or checkpoint (bad input,
                    # remote code, a broken file) loads nothing and needs no marker
                    backend = value(*args, **kwargs)
                    params = getattr(backend, "n_params", None)
                    if params is None or params >= REAL_MODEL_PARAMS:
                        check("model")
                    return backend

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
        check(need)
        return original(*args, **kwargs)

    wrapper._guarded = True
    setattr(owner, name, wrapper)


#: module -> how to guard it once it is imported (now, or later by the code under test)
GUARDS = {
    "synthprobe.backends": _guard_model,
    "vllm_cpu": lambda m: _guard_method(m.Server, "start", "server"),
    "playwright.sync_api": lambda m: _guard_method(m.PlaywrightContextManager, "__enter__", "browser"),
    "ray": lambda m: _guard_method(m, "init", "ray"),
}


class _GuardOnImport:
    """A meta-path finder that guards a module of :data:`GUARDS` right after its first import."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in GUARDS:
            return None
        sys.meta_path.remove(self)
        try:
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
                GUARDS[fullname](module)

            def __getattr__(self, name):  # resources, source, … as the real loader has them
                return getattr(original, name)

        spec.loader = Loader()
        return spec


def install() -> None:
    """Guard what is imported already and what will be (once per process)."""
    if any(isinstance(f, _GuardOnImport) for f in sys.meta_path):
        return
    for name, guard in GUARDS.items():
        if name in sys.modules:
            guard(sys.modules[name])
    sys.meta_path.insert(0, _GuardOnImport())


SITECUSTOMIZE = """\
# written by tests/conftest.py: guard the subprocesses a test starts (tests/support/needs_guard.py)
import importlib.util as _u
import sys as _s
_spec = _u.spec_from_file_location("needs_guard", {path!r})
_m = _u.module_from_spec(_spec)
_s.modules["needs_guard"] = _m
_spec.loader.exec_module(_m)
_m.install()
"""
