"""HF ``first_token`` on the embedded model (SmolLM2-135M-Instruct): its answers are
``greedy_generate``'s for the same prompts and batch size, its candidates' log-probabilities are a
plain forward pass's log-softmax, its first top token is the argmax; and the letterprob
certification it feeds holds: a certified letter is the letter a full greedy letters answer
gives, read back by the letters rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpt3_model import embedded_backend, one_torch_thread

from synthprobe.benchmarks.deeparithmark.scoring.letterprob import certified, read_letters
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.prompts import protocols as proto
from synthprobe.scoring.records import generation_record

pytestmark = pytest.mark.model

_one_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)

DATA = Path(__file__).resolve().parents[3] / "data" / "deeparithmark-1.jsonl"
CANDIDATES = list(proto.letter_candidates(4))


@pytest.fixture(scope="module")
def backend():
    # the test process's one embedded backend (gpt3_model caches it): other modules use it after
    # this one, so it is not closed here
    return embedded_backend()


@pytest.fixture(scope="module")
def items():
    return load_arithmark3(DATA)[:12]


def _chat_prompts(backend, items, system: str | None = None) -> list[str]:
    convs = []
    for it in items:
        msgs = [{"role": "system", "content": system}] if system else []
        convs.append([*msgs, {"role": "user", "content": proto.prompt(it, "letterprob", chat=True)}])
    return backend.render_chat(convs)


def test_generation_logprobs_and_top_token_match_generate_and_a_plain_forward(backend, items):
    import torch

    from synthprobe.backends.hf.generate import greedy_generate

    # chat-rendered and raw prompts of different lengths, in batches of 3 (padding in every batch)
    prompts = _chat_prompts(backend, items[:4]) + [proto.prompt(it, "letterprob") for it in items[4:7]]
    firsts = backend.first_token(prompts, CANDIDATES, 2, ["\n"], batch_size=3, progress=False)
    gens = greedy_generate(
        backend.model,
        backend.tokenizer,
        prompts,
        max_new_tokens=2,
        stop=["\n"],
        batch_size=3,
        progress=False,
        details=True,
    )
    assert [f.generation for f in firsts] == gens
    tok = backend.tokenizer
    for p, f in zip(prompts, firsts):
        assert f.top_k is None  # the whole vocabulary: every candidate exact
        ids = tok(p, add_special_tokens=False, return_tensors="pt").input_ids
        with torch.inference_mode():
            logits = backend.model(ids, attention_mask=torch.ones_like(ids)).logits[0, -1].float()
        logp = torch.log_softmax(logits, dim=-1)
        for c, lp in f.candidates.items():
            cid = tok(c, add_special_tokens=False)["input_ids"]
            assert len(cid) == 1 and lp is not None, c
            assert abs(lp - logp[cid[0]].item()) < 1e-4, (c, lp, logp[cid[0]].item())
        best = int(logp.argmax())
        assert f.top[0][0] == tok.decode([best])
        assert abs(f.top[0][1] - logp[best].item()) < 1e-4
        assert [t[1] for t in f.top] == sorted((t[1] for t in f.top), reverse=True)


def test_a_certified_letter_is_the_letter_a_full_letters_answer_gives(backend, items):
    """SmolLM2 answers ``A.`` (never the letter alone), so under letters' stop ``\\n`` nothing is
    certified (or next to nothing); with the stop strings ``\\n`` and ``.`` its answer ends after the letter: the same
    prompts are then certified, and a full greedy answer (letters' budget of 8, the same stops and
    batches) read back by the letters rules gives the certified letter on every certified item."""
    from synthprobe.backends.hf.generate import greedy_generate

    prompts = _chat_prompts(backend, items)
    for stop, expect_some in ((["\n"], False), (["\n", "."], True)):
        firsts = backend.first_token(prompts, CANDIDATES, 2, stop, batch_size=4, progress=False)
        full = greedy_generate(
            backend.model,
            backend.tokenizer,
            prompts,
            max_new_tokens=8,
            stop=stop,
            batch_size=4,
            progress=False,
            details=True,
        )
        n_cert = 0
        for it, f, g in zip(items, firsts, full):
            rec = f.to_dict()
            reading = read_letters(rec, 4)
            assert reading["pred"] is not None and 0 < reading["mass"] <= 1 + 1e-6
            if not certified(rec, reading):
                continue
            n_cert += 1
            as_letters = generation_record(it, "letters", g.text, finish=g.finish, n_tokens=g.n_tokens)
            assert as_letters["outcome"] == "answered" and as_letters["pred"] == reading["pred"], (rec, g)
        if expect_some:
            assert n_cert > 0  # the check above ran on real certified items
