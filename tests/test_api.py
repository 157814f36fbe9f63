"""synthprobe.loglik / synthprobe.generate: lazy, and the same numbers as the backend."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from gpt3_model import embedded_backend, one_torch_thread

import synthprobe
from synthprobe.backends.hf.generate import greedy_generate

_one_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


def test_import_stays_light():
    code = (
        "import sys, synthprobe; assert callable(synthprobe.loglik) and callable(synthprobe.generate); "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    assert {"loglik", "generate"} <= set(dir(synthprobe))
    with pytest.raises(AttributeError):
        synthprobe.no_such_helper  # noqa: B018


def test_helpers_reject_other_objects():
    with pytest.raises(TypeError):
        synthprobe.generate(42, "hi")


@pytest.mark.slow
def test_helpers_match_the_backend():
    backend = embedded_backend()
    ctx = "Q: What is 17 minus 14?\n\nA: 3\n\nQ: What is 2 plus 2?\n\nA:"
    good, bad = synthprobe.loglik(backend, ctx, " 4"), synthprobe.loglik(backend, ctx, " 9")
    assert good == pytest.approx(backend.loglikelihood([(ctx, " 4")])[0].logprob, abs=1e-6)
    assert math.isfinite(good) and good < 0 and good > bad
    text = synthprobe.generate(backend, ctx, max_new_tokens=6, stop="\n")
    assert (
        text == greedy_generate(backend.model, backend.tokenizer, [ctx], max_new_tokens=6, stop="\n", progress=False)[0]
    )
    assert "\n" not in text
    # a spec string loads the model once and gives the same numbers
    assert synthprobe.loglik("smollm2-135m-instruct", ctx, " 4") == pytest.approx(good, abs=1e-4)


def _long_prompt(tok, max_tokens: int):
    """A few-shot 2D+ prompt of as many demonstrations as fit ``max_tokens``, and its gold answer."""
    from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, get_task
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

    pool = build_items(BuildConfig("2D+", n=400))
    prompt = build_prompt(
        get_task("2D+"),
        pool,
        0,
        PromptConfig(shots=100, max_context=max_tokens),
        count_tokens=lambda t: len(tok(t, add_special_tokens=False)["input_ids"]),
    )
    return prompt.text, pool[0].completion


@pytest.mark.slow
def test_loglik_uses_the_whole_long_context():
    import torch

    backend = embedded_backend()
    tok, model = backend.tokenizer, backend.model
    ctx, gold = _long_prompt(tok, 1_100)
    ctx_ids = tok(ctx, add_special_tokens=False)["input_ids"]
    cont_ids = tok(gold, add_special_tokens=False)["input_ids"]
    assert 1_050 < len(ctx_ids) + len(cont_ids) < backend.max_positions
    # direct computation over the full sequence, nothing cut
    ids = torch.tensor([ctx_ids + cont_ids])
    with torch.inference_mode():
        logp = torch.log_softmax(model(ids).logits[0, :-1].double(), dim=-1)
    n = len(cont_ids)
    direct = float(logp[-n:].gather(1, ids[0, -n:, None]).sum())
    assert synthprobe.loglik(backend, ctx, gold) == pytest.approx(direct, abs=2e-3)
    # the backend's 1,024-token default cuts the context's start and gives another number
    cut = backend.loglikelihood([(ctx, gold)])[0].logprob
    assert abs(cut - direct) > 2e-2


@pytest.mark.slow
def test_loglik_refuses_a_pair_longer_than_the_model():
    from synthprobe.errors import InputError

    backend = embedded_backend()
    ctx = "the quick brown fox jumps over the lazy dog. " * 1_000  # ~10,000 tokens
    with pytest.raises(InputError, match=r"tokens, but .* has only 8,192 positions"):
        synthprobe.loglik(backend, ctx, " end")
