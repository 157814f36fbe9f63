"""Batched greedy generation equals one-prompt-at-a-time greedy decoding on the real model."""

from __future__ import annotations

import pytest
from gpt3_model import embedded_backend, one_torch_thread

from synthprobe.backends.hf.generate import cut_at_stop, greedy_generate
from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, get_task
from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

pytestmark = pytest.mark.slow

_one_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


def test_cut_at_stop():
    assert cut_at_stop(" 143\nQ: What", "\n") == " 143"
    assert cut_at_stop(" 143", "\n") == " 143"
    assert cut_at_stop("ab.cd\nef", ["\n", "."]) == "ab"
    assert cut_at_stop("abc", None) == "abc"
    with pytest.raises(ValueError):
        cut_at_stop("abc", "")


@pytest.fixture(scope="module")
def model_and_tokenizer():
    backend = embedded_backend()
    return backend.model, backend.tokenizer


@pytest.fixture(scope="module")
def prompts():
    out = []
    for code, shots, index in (
        ("2D+", 3, 0),
        ("3D-", 0, 1),
        ("1DC", 8, 2),
        ("CL", 5, 3),
        ("RI", 0, 4),
        ("RW", 2, 5),
        ("SAT", 1, 0),
    ):
        task = get_task(code)
        pool = build_items(BuildConfig(code, n=100 if task.default_n else None))
        out.append(build_prompt(task, pool, index, PromptConfig(shots=shots)).text)
    out += ["Hello", "The capital of France is", "1, 2, 3, 4,"]
    return out


def _one_at_a_time(model, tokenizer, prompt: str, max_new_tokens: int, stop):
    """Plain transformers greedy decoding of a single prompt, no padding."""
    import torch

    ids = tokenizer(prompt, add_special_tokens=False, return_tensors="pt").input_ids
    with torch.inference_mode():
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=tokenizer.eos_token_id,
        )
    return cut_at_stop(tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True), stop)


def test_batched_equals_one_prompt_at_a_time(model_and_tokenizer, prompts):
    model, tok = model_and_tokenizer
    reference = [_one_at_a_time(model, tok, p, 12, "\n") for p in prompts]
    assert any(r.strip() for r in reference)
    for batch_size in (3, 16):  # uneven batches, and all in one
        got = greedy_generate(model, tok, prompts, max_new_tokens=12, stop="\n", batch_size=batch_size, progress=False)
        assert got == reference, batch_size
    # without a stop string the whole continuation comes back, of which the cut one is a prefix
    free = greedy_generate(model, tok, prompts, max_new_tokens=12, batch_size=16, progress=False)
    assert [_one_at_a_time(model, tok, p, 12, None) for p in prompts[:2]] == free[:2]
    assert all(f.startswith(r) for f, r in zip(free, reference))
    assert any(len(f) > len(r) for f, r in zip(free, reference))


def test_edge_cases(model_and_tokenizer):
    model, tok = model_and_tokenizer
    assert greedy_generate(model, tok, [], max_new_tokens=5, progress=False) == []
    assert greedy_generate(model, tok, ["Hi", "Yo"], max_new_tokens=0, progress=False) == ["", ""]
    one = greedy_generate(model, tok, ["1, 2, 3, 4,"], max_new_tokens=6, stop=[",", "\n"], progress=False)
    assert one == [" 5"]
    with pytest.raises(ValueError, match="no tokens"):
        greedy_generate(model, tok, ["ok", ""], max_new_tokens=3, progress=False)
    with pytest.raises(TypeError):
        greedy_generate(model, tok, "a single string", max_new_tokens=3, progress=False)
    with pytest.raises(ValueError):
        greedy_generate(model, tok, ["ok"], max_new_tokens=-1, progress=False)
    with pytest.raises(ValueError):
        greedy_generate(model, tok, ["ok"], max_new_tokens=3, batch_size=0, progress=False)


def test_bos_goes_before_every_prompt(model_and_tokenizer, prompts):
    """With ``bos_id`` the continuation is the one plain greedy decoding gives after BOS + prompt."""
    import torch

    model, tok = model_and_tokenizer
    bos = tok.bos_token_id
    assert bos is not None
    got = greedy_generate(model, tok, prompts[:4], max_new_tokens=8, batch_size=3, progress=False, bos_id=bos)
    plain = greedy_generate(model, tok, prompts[:4], max_new_tokens=8, batch_size=3, progress=False)
    want = []
    for p in prompts[:4]:
        ids = torch.tensor([[bos, *tok(p, add_special_tokens=False).input_ids]])
        with torch.inference_mode():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=8,
                do_sample=False,
                pad_token_id=tok.eos_token_id,
            )
        want.append(tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True))
    assert got == want
    assert got != plain  # the BOS is really there: it changes at least one continuation
