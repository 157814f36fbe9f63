"""The prompt pass in groups of rows of near one length (``row_groups``): no group reads the
padding the batch's longest row would give it, and decoding goes on from the joined cache as it
would from the whole batch's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthprobe.backends.hf import generate as gen
from synthprobe.backends.hf.generate import row_groups


def test_row_groups_split_a_spread_batch_and_cover_every_row_once():
    lengths = [40] * 10 + [20] * 10 + [10] * 12
    groups = row_groups(lengths)
    assert [r for g in groups for r in g] == list(range(len(lengths)))
    assert groups == [range(0, 10), range(10, 20), range(20, 32)]
    fed = sum(len(g) * lengths[g.start] for g in groups)
    assert fed == sum(lengths) < len(lengths) * lengths[0]


@pytest.mark.parametrize(
    "lengths",
    [
        [30] * 32,  # one length: nothing to save
        [30] * 15,  # too few rows for two groups of 8
        [30] * 10 + [29] * 8,  # saves 8 of 540 positions, under a second pass's overhead (2 %)
        [10] * 8 + [40] * 8,  # not longest first: the caller's order is not a length order
    ],
)
def test_row_groups_keep_one_pass_where_a_split_saves_too_little(lengths):
    assert row_groups(lengths) == [range(len(lengths))]


def test_row_groups_never_make_a_group_under_the_minimum():
    lengths = [100, 99] + [10] * 30  # two long rows alone would be a split worth making, but too small
    groups = row_groups(lengths, min_rows=8)
    assert all(len(g) >= 8 for g in groups)


def tiny_model():
    """A tiny random Llama with peaked distributions (a wrong cache would change its tokens)."""
    from scoring_support import tiny_llama

    return tiny_llama(0, vocab_size=40, max_position_embeddings=128)


def spread_batch():
    """20 prompts over one opening, own tokens 1-20 long, longest first."""
    import random

    rnd = random.Random(7)
    batch = [[5, 6, 7, 8] + [rnd.randrange(1, 40) for _ in range(n)] for n in range(20, 0, -1)]
    return batch


def test_grouped_decoding_writes_what_one_pass_and_one_prompt_at_a_time_write(monkeypatch):
    torch = pytest.importorskip("torch")
    model = tiny_model()
    tok = SimpleNamespace(pad_token_id=0, eos_token_id=None, decode=lambda ids, **_: " ".join(map(str, ids)))
    setup = gen._decoding_setup(model, tok)
    setup["eos"] = {39}
    batch = spread_batch()
    tails = [len(ids) - 4 for ids in batch]
    groups = row_groups(tails)
    assert len(groups) >= 2, "the batch must split for this test to mean anything"

    widths = []
    forward = model.forward

    def spy(*args, **kwargs):
        widths.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", spy)
    with torch.inference_mode():
        grouped = gen._decode_batch(model, tok, batch, stops=(), max_new_tokens=6, **setup)
    # the opening once, then one pass per group, each as wide as its own longest row
    assert widths[0] == (1, 4)
    assert widths[1 : 1 + len(groups)] == [(len(g), tails[g.start]) for g in groups]
    assert widths[1 + len(groups)][1] == 1  # then decoding steps

    monkeypatch.setattr(gen, "row_groups", lambda lengths, **_: [range(len(lengths))])
    widths.clear()
    with torch.inference_mode():
        single = gen._decode_batch(model, tok, batch, stops=(), max_new_tokens=6, **setup)
        alone = [gen._decode_batch(model, tok, [ids], stops=(), max_new_tokens=6, **setup)[0] for ids in batch]
    assert widths[1] == (len(batch), max(tails))  # the whole batch in one pass, padded to 20
    as_tuples = [[(g.text, g.finish, g.n_tokens) for g in gens] for gens in (grouped, single, alone)]
    assert as_tuples[0] == as_tuples[1] == as_tuples[2]
    assert len({g.n_tokens for g in grouped}) > 1 or any(g.finish == "eos" for g in grouped)


def test_the_joined_cache_holds_what_the_whole_batch_pass_holds():
    torch = pytest.importorskip("torch")
    model = tiny_model()
    batch = spread_batch()
    shared, k = 4, len(batch)
    tails = [ids[shared:] for ids in batch]
    width = max(map(len, tails))
    ids = torch.zeros((k, width), dtype=torch.long)
    mask = torch.zeros((k, width), dtype=torch.long)
    for r, t in enumerate(tails):
        ids[r, width - len(t) :] = torch.tensor(t)
        mask[r, width - len(t) :] = 1
    positions = shared + (mask.cumsum(-1) - 1).clamp(min=0)
    mask = torch.cat([mask.new_ones((k, shared)), mask], dim=1)
    cache_kw = "cache" if gen._accepts(model, "cache") else "past_key_values"
    kw = dict(device="cpu", cache_kw=cache_kw, extra={"logits_to_keep": 1})
    with torch.inference_mode():
        prefix, n = gen._read_shared_prefix(model, batch, copies=False, **kw)
        assert n == shared and gen._joinable(prefix)
        whole_prefix, _ = gen._read_shared_prefix(model, batch, **kw)
        out = model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{cache_kw: whole_prefix},
        )
        whole = getattr(out, "cache", None) or out.past_key_values
        joined, logits = gen._grouped_prompt_pass(
            model,
            prefix,
            row_groups([len(t) for t in tails]),
            input_ids=ids,
            mask=mask,
            positions=positions,
            shared=shared,
            cache_kw=cache_kw,
            extra={"logits_to_keep": 1},
        )
    real = mask.bool()[:, None, :, None]  # the positions the mask lets attention read
    for a, b in zip(joined.layers, whole.layers):
        assert a.keys.shape == b.keys.shape and a.values.shape == b.values.shape
        assert torch.allclose(a.keys * real, b.keys * real, atol=1e-5)
        assert torch.allclose(a.values * real, b.values * real, atol=1e-5)
    assert torch.allclose(logits, out.logits[:, -1, :], atol=1e-5)
