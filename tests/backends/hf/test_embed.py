"""Frozen text embeddings from a causal LM (``HFBackend.embed``, ``backends.text_embedder``), the
representation the trained audit's embedding adversary reads: on a tiny real llama folder (fast)
and, for the adversary itself, on the embedded model (slow): it sees a leak written in the endings'
text and stays at chance on the release."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scoring_support import save_tiny_llama

from synthprobe.backends import load_backend, text_embedder
from synthprobe.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
TEXTS = ["12 pears", "$4.50", "12 pears", "3 h 20 min", "1,250 g", "7", "a longer ending of several words"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("tiny") / "llama")


def test_each_text_gets_one_row_whatever_shares_its_batch(tiny):
    backend = load_backend(str(tiny), device="cpu", progress=False)
    try:
        rows = backend.embed(TEXTS)
        assert rows.dtype == np.float32 and rows.shape == (len(TEXTS), backend.model.config.hidden_size)
        assert np.array_equal(rows[0], rows[2])  # the same text, the same row
        assert not np.allclose(rows[0], rows[1])
        for size in (1, 2, 5):
            assert np.allclose(backend.embed(TEXTS, batch_size=size), rows, atol=1e-5)
        alone = backend.embed(TEXTS[-1:])
        assert np.allclose(alone[0], rows[-1], atol=1e-5)  # padding beside a short text changes nothing
    finally:
        backend.close()


def test_the_embedder_loads_on_first_use_and_embeds_each_text_once(tiny):
    embed = text_embedder(str(tiny), device="cpu")
    assert embed.backend is None  # nothing loaded until asked
    first = embed(TEXTS)
    backend = embed.backend
    assert backend is not None and len(embed.seen) == len(set(TEXTS))
    again = embed(list(reversed(TEXTS)))
    assert embed.backend is backend and np.array_equal(again, first[::-1])
    assert embed.describe()["fingerprint"] == backend.fingerprint
    embed.close()
    assert embed.backend is None


def test_an_engine_without_embeddings_is_refused_before_anything_loads():
    with pytest.raises(InputError, match="gives no text embeddings"):
        text_embedder("openai:some-model@http://127.0.0.1:9")


def test_the_audit_command_names_its_embedder_and_refuses_a_bad_one(capsys):
    from synthprobe.benchmarks.deeparithmark.commands.build import main
    from tests.support.cli import in_process

    quick = ["audit", "--budget", "small", "--train-items", "200", "--audit-items", "100", "--no-controls"]
    code, text, _ = in_process([*quick, "--adversaries", "embedding", "--embedder", "char-ngram"], main=main, root=ROOT)
    assert code == 1 and "embedding adversary: frozen embeddings of the endings from char-ngram" in text
    code, _, err = in_process(
        [*quick, "--adversaries", "embedding", "--embedder", "no/such-model"], main=main, root=ROOT
    )
    assert code == 2 and "field '--embedder': could not load model 'no/such-model'" in err


@pytest.mark.slow
def test_the_embedded_models_probe_sees_a_text_leak_and_not_the_release():
    """The embedding adversary on SmolLM2's frozen embeddings: the odd-one-out control (the key's
    ending written with another final mark) is found almost always; trained on fresh role-balanced
    builds, it stays near 25 % on the release."""
    from synthprobe.benchmarks.deeparithmark import trained_audit as ta
    from synthprobe.metrics.choices_only import EmbeddingAdversary

    embed = text_embedder("smollm2-135m-instruct", device="cpu")
    try:
        leak = EmbeddingAdversary(embed).fit(ta.flawed_build("odd-one-out", 1, 300))
        test = ta.flawed_build("odd-one-out", 2, 200)
        hits = sum(p == it.label for p, it in zip(leak.predict(test), test))
        assert hits / len(test) > 0.9

        fair = EmbeddingAdversary(embed).fit(ta.build(ta.train_seeds(1, 1)[0], 600))
        release, _ = ta.load_file(ROOT / "data" / "deeparithmark-1.jsonl")
        hits = sum(p == it.label for p, it in zip(fair.predict(release), release))
        assert 0.20 < hits / len(release) < 0.30, hits
    finally:
        embed.close()
