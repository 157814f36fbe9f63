"""The transformers backend on the real embedded model and on local folders."""

from __future__ import annotations

import json
import time

import pytest
from scoring_support import embedded_backend, embedded_folder, save_tiny_llama

from synthprobe.backends import ModelLoadError, load_backend
from synthprobe.backends.base import Backend
from synthprobe.backends.hf.gguf import PROVENANCE, file_digest
from synthprobe.backends.spec import EMBEDDED_ALIAS, resolve_spec
from synthprobe.io.read import sha256_file

pytestmark = pytest.mark.slow


def test_embedded_model_identity():
    b = embedded_backend()
    assert isinstance(b, Backend)
    d = b.describe()
    assert d["params"] == 134_515_008  # the dequantised Llama: 30 layers, 576 wide, tied embeddings
    assert (d["dtype"], d["device"], d["source"]) == ("float32", "cpu", "gguf")
    assert len(b.fingerprint) == 64 and int(b.fingerprint, 16) >= 0
    assert b.max_positions == 8192 and b.bos is False


def test_dequantised_cache_is_complete_and_fast_to_reload():
    folder = embedded_folder()
    gguf = resolve_spec(EMBEDDED_ALIAS).gguf_path
    prov = json.loads((folder / PROVENANCE).read_text())
    assert prov["source_sha256"] == sha256_file(gguf) == file_digest(gguf)
    assert folder.name == prov["source_sha256"]
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["model_type"] == "llama"
    assert not list(folder.parent.glob(f".{folder.name}.*"))  # no half-written siblings left
    t0 = time.perf_counter()
    again = load_backend(EMBEDDED_ALIAS, dtype="float32", device="cpu", progress=False)
    assert time.perf_counter() - t0 < 60  # seconds from the cache (minutes from the GGUF)
    assert again.fingerprint == embedded_backend().fingerprint
    again.close()


def test_cached_tokenizer_equals_the_gguf_tokenizer():
    from transformers import AutoTokenizer

    gguf = resolve_spec(EMBEDDED_ALIAS).gguf_path
    original = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    cached = embedded_backend().tokenizer
    texts = [
        " 26 crates.",
        "A warehouse held 420 units.",
        "Lena  paid $1,250.50\n\nQ: 9:40?",
        " ünïcode – dash",
        "<|im_start|>user",
    ]
    for t in texts:
        assert cached(t, add_special_tokens=False)["input_ids"] == original(t, add_special_tokens=False)["input_ids"]
    assert (cached.bos_token_id, cached.eos_token_id) == (original.bos_token_id, original.eos_token_id)


def test_loglikelihood_matches_score_choices_and_keeps_order():
    b = embedded_backend()

    class It:
        ctx = "The capital of France is"
        endings = (" Paris.", " London.")
        line = 1

    mc = b.score_choices([It()], progress=False)[0]
    pairs = [("The capital of France is", " London."), ("", "Hello"), ("The capital of France is", " Paris.")]
    ll = b.loglikelihood(pairs)
    assert ll[0].logprob == pytest.approx(mc[1].logprob, abs=1e-5)
    assert ll[2].logprob == pytest.approx(mc[0].logprob, abs=1e-5)
    assert ll[2].logprob > ll[0].logprob  # the model knows this much
    assert ll[1].n_tokens >= 1 and ll[1].logprob < 0


def test_generate_delegates_to_greedy_generation():
    out = embedded_backend().generate(["The capital of France is"], max_new_tokens=3, stop="\n", progress=False)
    assert isinstance(out, list) and len(out) == 1 and isinstance(out[0], str) and out[0]


def test_local_folder_loads_and_broken_folder_fails_clearly(tmp_path):
    folder = save_tiny_llama(tmp_path / "tiny")
    b = load_backend(str(folder), device="cpu", progress=False)
    assert b.spec.kind == "folder" and b.n_params < 5_000_000 and b.dtype == "float32"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": 10}))
    (broken / "model.safetensors").write_bytes(b"not safetensors")
    (broken / "tokenizer_config.json").write_text("{}")  # past the tokenizer check: the load itself fails
    with pytest.raises(ModelLoadError, match="could not load model"):
        load_backend(str(broken), device="cpu", progress=False)


def test_unreachable_hub_model_is_a_load_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ModelLoadError, match="hub"):
        load_backend("synthprobe-test/does-not-exist", device="cpu", progress=False)


def test_closing_a_small_model_frees_its_weights_without_a_full_collection(tmp_path, monkeypatch):
    import gc
    import weakref

    from synthprobe.backends.hf.backend import COLLECT_FROM_BYTES

    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    folder = save_tiny_llama(tmp_path / "tiny")
    small = load_backend(str(folder), dtype="float32", device="cpu", progress=False)
    weights = weakref.ref(small.model)
    small.close()
    assert weights() is None and calls == []  # reference counting alone let the weights go
    big = load_backend(str(folder), dtype="float32", device="cpu", progress=False)
    big.n_params = COLLECT_FROM_BYTES // 4  # as many float32 weights as the threshold's bytes
    big.close()
    assert len(calls) == 1
