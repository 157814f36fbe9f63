"""The batches a generative run asks: longest first by the engine's ``prompt_lengths`` (token
counts in process), so a padded prompt pass pads little."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture
def fixed():
    from fixed_answer_engine import FixedAnswers

    register_engine("fixed", "fixed_answer_engine")
    FixedAnswers.BATCHES.clear()
    yield FixedAnswers
    ENGINES.pop("fixed", None)


def test_a_run_asks_its_batches_longest_first_by_the_engines_prompt_lengths(tmp_path, fixed, monkeypatch):
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts import protocols as proto

    items = load_arithmark3(DATA)[:6]
    questions = [proto.prompt(it, "free", chat=False) for it in items]
    # an engine whose lengths order the prompts shortest text first: the batches must follow it
    monkeypatch.setattr(fixed, "prompt_lengths", lambda self, texts: [-len(t) for t in texts])
    args = ["score", "deeparithmark", "--data", str(DATA), "--limit", "6", "--no-progress", "--no-cache"]
    out = tmp_path / "r.json"
    assert main([*args, "--model", "fixed:x", "--protocol", "free", "--batch-size", "2", "--output", str(out)]) == 0
    shortest_first = sorted(range(6), key=lambda i: (len(questions[i]), i))
    assert fixed.BATCHES == [[questions[i] for i in shortest_first[s : s + 2]] for s in (0, 2, 4)]


def tokenizer_engine():
    """The HF and vLLM engines' shared base over the embedded model's real tokenizer (no weights
    loaded: ordering and rendering read the tokenizer alone)."""
    from scoring_support import embedded_tokenizer

    from synthprobe.backends.base import TokenizerBackend

    engine = TokenizerBackend()
    engine.tokenizer = embedded_tokenizer()
    return engine


def test_the_base_engine_orders_by_characters_and_a_tokenizer_engine_by_tokens():
    from toy_engine import ToyBackend

    texts = ["12 + 345 = ?", "What is seven times eight?", "x"]
    assert ToyBackend("x").prompt_lengths(texts) == [12, 26, 1]
    engine = tokenizer_engine()
    assert engine.prompt_lengths(texts) == [engine.count_tokens(t) for t in texts]
    assert engine.prompt_lengths(texts) != [len(t) for t in texts]
    assert engine.prompt_lengths([]) == []


def test_the_releases_letters_batches_by_tokens_pad_under_one_percent_of_the_prompt_pass():
    """Padding of the prompt passes of a whole-release ``letters`` run under the embedded model's
    chat template, 32 a batch: ordered by characters (before) it was 8 %; by tokens it is 0.5 %."""
    from synthprobe.backends.hf.generate import shared_prefix_length
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts import protocols as proto

    backend = tokenizer_engine()
    items = load_arithmark3(DATA)
    questions = [proto.prompt(it, "letters", chat=True) for it in items]
    rendered = backend.render_chat([[{"role": "user", "content": q}] for q in questions])
    encoded = backend.tokenizer(rendered, add_special_tokens=False)["input_ids"]

    def padding(lengths: list[int]) -> float:
        order = sorted(range(len(items)), key=lambda i: (-lengths[i], i))
        pad = fed = 0
        for s in range(0, len(order), 32):
            batch = [encoded[i] for i in order[s : s + 32]]
            own = [len(ids) - shared_prefix_length(batch) for ids in batch]
            pad += sum(max(own) - n for n in own)
            fed += max(own) * len(own)
        return pad / fed

    by_tokens = padding(backend.prompt_lengths(questions))
    by_chars = padding([len(q) for q in questions])
    assert by_tokens < 0.01 < 0.05 < by_chars
