"""``first_token`` through a real vLLM server (CPU build, tools/vllm_cpu.py, the session's
``vllm_server`` fixture: one server for every module that needs it) against the HF engine's.

The first release items asked under ``letters`` as user turns: the chat endpoint
(``openai-chat:``, ``logprobs: true, top_logprobs``) gets the conversations and applies the
model's own template; the completions endpoint (``openai:``, ``logprobs: top_k``) gets them
rendered by that template; the HF engine reads ``first_token_chat`` with the model's own
template in fp32, over the whole vocabulary.

Tolerance: the server runs the model in fp32 too (``--dtype float32``; its log says
``dtype=torch.float32``), so the two differ only by the order of fp32 sums in vLLM's CPU kernels
and torch's. bench/bench_first_token.py measured the largest |Δ| over the letters' log-probabilities
of 32 items at 2.7e-5 (8 items: 2.3e-5); :data:`TOLERANCE` is about 7 times that, and far below
what a server computing in bf16 would differ by (~1e-2), which it would therefore catch.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.server, pytest.mark.model]

#: Release items compared (the bench runs 32).
N_ITEMS = 8
#: The letters budget and stop of ``--protocol letters`` (tasks/protocols.py).
MAX_NEW = 8
STOP = ["\n"]
LETTERS = ["A", "B", "C", "D"]
#: Largest |Δ| allowed between a server's and the HF engine's log-probabilities (see the module docstring).
TOLERANCE = 2e-4
TOP_K = 20


def letters_conversations(n: int) -> list[list[dict]]:
    from pathlib import Path

    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts.protocols import prompt

    data = Path(__file__).resolve().parents[2] / "data" / "deeparithmark-1.jsonl"
    return [[{"role": "user", "content": prompt(it, "letters", chat=True)}] for it in load_arithmark3(data)[:n]]


@pytest.fixture(scope="module")
def reference():
    """The conversations, the HF engine's first tokens for them and the prompts its template renders."""
    from synthprobe.backends import load_backend

    convs = letters_conversations(N_ITEMS)
    hf = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    try:
        want = hf.first_token_chat(convs, LETTERS + [" A"], MAX_NEW, STOP, progress=False)
        rendered = hf.render_chat(convs)
    finally:
        hf.close()
    return convs, want, rendered


@pytest.fixture(scope="module")
def chat(vllm_server):
    from synthprobe.backends import load_backend

    backend = load_backend(f"openai-chat:{vllm_server.url}", concurrency=4, progress=False)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def completions(vllm_server):
    from synthprobe.backends import load_backend

    backend = load_backend(f"openai:{vllm_server.url}", concurrency=4, progress=False)
    yield backend
    backend.close()


def agree(want, got, where: str) -> None:
    deltas = [abs(w.candidates[c] - g.candidates[c]) for w, g in zip(want, got) for c in LETTERS]
    print(f"\n{where}: {len(got)} items, largest |Δ logprob| over A-D {max(deltas):.2e}")
    assert max(deltas) < TOLERANCE
    assert [g.top[0][0] for g in got] == [w.top[0][0] for w in want]
    assert all(abs(g.top[0][1] - w.top[0][1]) < TOLERANCE for w, g in zip(want, got))
    assert [g.generation.text for g in got] == [w.generation.text for w in want]
    assert [g.generation.finish for g in got] == [w.generation.finish for w in want]
    # a server returns its top_k only: the tokens come most likely first, the letters among them
    for g in got:
        assert g.top_k == TOP_K == len(g.top)
        assert [lp for _, lp in g.top] == sorted((lp for _, lp in g.top), reverse=True)
        assert all(g.candidates[c] == dict(g.top)[c] for c in LETTERS)


def test_chat_endpoint_top_logprobs_match_hf(chat, reference):
    convs, want, _ = reference
    got = chat.first_token_chat(convs, LETTERS + [" A"], MAX_NEW, STOP, top_k=TOP_K, progress=False)
    agree(want, got, "chat endpoint (top_logprobs)")
    # " A" is one token of the vocabulary, far below the top 20 here: exact in process, None from a server
    assert all(w.candidates[" A"] < g.top[-1][1] and g.candidates[" A"] is None for w, g in zip(want, got))
    # the continuation is what the engine's generate gives for the same conversations
    gens = chat.generate_chat(convs, MAX_NEW, STOP, details=True, progress=False)
    assert [g.generation for g in got] == gens
    # strings are single user turns, as generate takes them
    text = [c[0]["content"] for c in convs[:2]]
    assert chat.first_token(text, LETTERS + [" A"], MAX_NEW, STOP, progress=False) == got[:2]
    with pytest.raises(ValueError, match="cannot apply a chat template of its own"):
        chat.first_token_chat(convs[:1], LETTERS, template="{{ messages }}", progress=False)


def test_completions_endpoint_logprobs_match_hf(completions, reference):
    _, want, rendered = reference
    got = completions.first_token(rendered, LETTERS, MAX_NEW, STOP, top_k=TOP_K, progress=False)
    agree(want, got, "completions endpoint (logprobs)")
    gens = completions.generate(rendered, MAX_NEW, STOP, details=True, progress=False)
    assert [g.generation for g in got] == gens
    assert {g.generation.finish for g in got} >= {"eos"}  # ended by <|im_end|>, as generate maps it
    # an answer cut by a stop string is 'stop'; a raw prompt's candidates are matched by token string
    cut = completions.first_token(["Count: one, two,"], [" three", " four"], 6, [","], top_k=3, progress=False)[0]
    assert cut.generation.text == " three" and cut.generation.finish == "stop"
    assert cut.candidates[" three"] == cut.top[0][1] and len(cut.top) == cut.top_k == 3
    assert cut.generation == completions.generate(["Count: one, two,"], 6, [","], details=True, progress=False)[0]
