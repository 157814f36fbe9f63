"""The arithmetic of ``bench/gen_multiply_adds.py`` (the generative runs' multiply-add account), on
a tiny config worked by hand, and its layout of our passes against the passes ``_decode_batch``
really makes on a tiny random Llama."""

from __future__ import annotations

from types import SimpleNamespace

import gen_multiply_adds as gm  # bench/ is on the test path (pyproject.toml)
import pytest

TINY = SimpleNamespace(
    hidden_size=8,
    intermediate_size=12,
    num_hidden_layers=2,
    num_attention_heads=2,
    num_key_value_heads=1,
    vocab_size=10,
)


def test_costs_of_a_tiny_config():
    c = gm.Costs.from_config(TINY)
    # per layer: q 8x8, k and v 8x4 each, o 8x8, gate/up/down 3 x 8x12
    assert c.body == 2 * (64 + 2 * 32 + 64 + 3 * 96) == 960
    assert c.head == 80
    # QK^T and AV: 2 heads x 4 dims each, per (query, key) pair, per layer
    assert c.pair == 2 * 2 * 2 * 4 == 32


def test_count_adds_layers_head_attention_and_padding():
    costs = gm.Costs(body=10, head=3, pair=1)
    passes = [
        gm.Forward(rows=2, width=4, past=0, keep=1, real=6, kind="prompt"),  # 2 of 8 positions padding
        gm.Forward(rows=2, width=1, past=4, keep=1, real=2, kind="decode"),
    ]
    c = gm.count(passes, costs)
    assert c.linear == 8 * 10 + 2 * 10
    assert c.head == 2 * 3 + 2 * 3
    assert c.attention == 2 * 4 * 4 + 2 * 1 * 5
    assert c.padding == 2 * 10
    assert c.total == c.linear + c.head + c.attention
    assert c.by_kind == {"prompt": 80 + 6 + 32, "decode": 20 + 6 + 10}
    assert (c.passes, c.positions) == (2, 10)


def test_row_passes():
    assert gm.row_passes(3, "stop") == 3  # the third token held the stop string
    assert gm.row_passes(8, "length") == 8
    assert gm.row_passes(2, "eos") == 3  # the end-of-sequence token took a pass, and is not counted
    assert gm.row_passes(0, "eos") == 1


def test_ours_reads_the_shared_opening_once_and_drops_finished_rows():
    batch = [[1, 2, 3, 4, 5], [1, 2, 3, 9], [1, 2, 7]]
    f = gm.ours_forwards(batch, [3, 1, 2])
    assert f[0] == gm.Forward(1, 2, 0, 1, 2, "prefix")
    assert f[1] == gm.Forward(3, 3, 2, 1, 3 + 2 + 1, "prompt")
    assert f[2:] == [gm.Forward(2, 1, 5, 1, 2, "decode"), gm.Forward(1, 1, 6, 1, 1, "decode")]


def test_one_row_has_no_shared_opening():
    assert gm.ours_forwards([[1, 2, 3]], [1]) == [gm.Forward(1, 3, 0, 1, 3, "prompt")]


def test_padded_keeps_every_row_to_the_longest_answer():
    f = gm.padded_forwards([5, 4, 3], 3)
    assert f == [
        gm.Forward(3, 5, 0, 1, 12, "prompt"),
        gm.Forward(3, 1, 5, 1, 3, "decode"),
        gm.Forward(3, 1, 6, 1, 3, "decode"),
    ]
    assert gm.logged_run([{"lengths": [5, 4, 3], "steps": 3}]) == f


def test_runs_batch_as_each_side_does():
    encoded = [[1] * 3, [1] * 6, [1] * 4, [1] * 5]
    passes = [1, 2, 3, 1]
    # lm-eval: longest in tokens first, two a batch: (6, 5) then (4, 3)
    f = gm.lm_eval_run(encoded, passes, 2)
    assert [(x.rows, x.width, x.kind) for x in f] == [(2, 6, "prompt"), (2, 1, "decode"), (2, 4, "prompt")] + [
        (2, 1, "decode")
    ] * 2
    # ours: chunks by the lengths the run orders by (here the reverse of the token order), then by tokens
    ours = gm.ours_run(encoded, passes, [40, 10, 30, 20], 2)
    kinds = [(x.rows, x.width, x.past, x.kind) for x in ours]
    assert kinds == [
        (1, 2, 0, "prefix"), (2, 2, 2, "prompt"), (1, 1, 4, "decode"), (1, 1, 5, "decode"),  # items 2, 0
        (1, 4, 0, "prefix"), (2, 2, 4, "prompt"), (1, 1, 6, "decode"),  # items 1, 3
    ]  # fmt: skip


SMALL = [[5, 6, 7, 8, 9, 10, 11], [5, 6, 7, 20, 21], [5, 6, 7, 30], [5, 6, 7, 31, 32, 33]]
#: 20 prompts over one opening, 1-20 own tokens: the prompt pass goes in groups (``row_groups``)
SPREAD = [[5, 6, 7] + [(7 * n + j) % 37 + 1 for j in range(n)] for n in range(1, 21)]


@pytest.mark.parametrize("batch", [SMALL, SPREAD], ids=["one-prompt-pass", "grouped-prompt-pass"])
def test_the_layout_is_the_passes_decode_batch_makes(batch):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from synthprobe.backends.hf.generate import _decode_batch, _decoding_setup

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=40,
        hidden_size=16,
        intermediate_size=24,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
    )
    model = transformers.LlamaForCausalLM(cfg).eval()
    tok = SimpleNamespace(
        pad_token_id=0, eos_token_id=None, decode=lambda ids, **_: "".join(chr(65 + i % 26) for i in ids)
    )
    setup = _decoding_setup(model, tok)
    setup["eos"] = set(range(0, 40, 3))  # a third of the vocabulary ends a row: rows end at different steps
    batch = sorted(batch, key=len, reverse=True)
    seen = []

    def pre(module, args, kwargs):
        cache = kwargs.get("cache", kwargs.get("past_key_values"))
        past = cache.get_seq_length() if cache is not None else 0
        seen.append((kwargs["input_ids"].shape[0], kwargs["input_ids"].shape[1], int(past)))

    handle = model.register_forward_pre_hook(pre, with_kwargs=True)
    try:
        with torch.inference_mode():
            gens = _decode_batch(model, tok, batch, stops=(), max_new_tokens=6, **setup)
    finally:
        handle.remove()
    passes = [gm.row_passes(g.n_tokens, g.finish) for g in gens]
    assert len(set(passes)) > 1, "the rows should end at different steps for this test to mean anything"
    counted = gm.ours_forwards(batch, passes)
    assert seen == [(f.rows, f.width, f.past) for f in counted]
    if len(batch) == len(SPREAD):
        assert sum(f.kind == "prompt" for f in counted) > 1
