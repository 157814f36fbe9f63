"""The one-pass verdict of the HF engine (backends/hf/loglik.py) is kept on disk and reused, keyed by
the weights, dtype and model class (the embedded model)."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def embedded():
    from synthprobe.backends import load_backend

    return load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)


def _count_forwards(model):
    calls = []
    handle = model.register_forward_pre_hook(lambda *a: calls.append(1))
    return calls, handle


@pytest.mark.model
def test_onepass_verdict_is_kept_on_disk_and_reused(embedded, _isolated_score_cache):
    """The 3-forward probe runs once per (weights, dtype, device, versions); a new process (here:
    a backend with empty in-memory capabilities) reads the stored verdict and runs no forward."""
    from synthprobe.backends.hf.loglik import check_onepass, verdict_path

    embedded.capabilities.clear()
    path = verdict_path(embedded)
    assert path is not None and path.parent.parent == _isolated_score_cache and not path.exists()
    calls, handle = _count_forwards(embedded.model)
    try:
        first = check_onepass(embedded)
        assert first == (True, None, "keep") and len(calls) >= 3
        assert json.loads(path.read_text()) == {"onepass_ok": True, "onepass_reason": None, "logits_mode": "keep"}
        embedded.capabilities.clear()
        calls.clear()
        assert check_onepass(embedded) == first and calls == []
        # A damaged or foreign file is ignored: the probe runs again and rewrites it.
        path.write_text('{"onepass_ok": "yes"}')
        embedded.capabilities.clear()
        assert check_onepass(embedded) == first and len(calls) >= 3
        assert json.loads(path.read_text())["onepass_ok"] is True
    finally:
        handle.remove()


@pytest.mark.model
def test_onepass_verdict_key_changes_with_dtype_and_model_class(embedded):
    from types import SimpleNamespace

    from synthprobe.backends.hf.loglik import verdict_path

    base = verdict_path(embedded)
    other_dtype = SimpleNamespace(**{**vars(embedded), "dtype": "bfloat16"})
    assert verdict_path(other_dtype) != base
    no_fingerprint = SimpleNamespace(**{**vars(embedded), "fingerprint": ""})
    assert verdict_path(no_fingerprint) is None
