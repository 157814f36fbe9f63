"""One-pass scorer vs the per-ending reference on a tiny random Llama (fast cases)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from scoring_support import embedded_tokenizer, fixture_items, max_abs_diff, tiny_llama

from synthprobe.backends.hf.encode import encode_items
from synthprobe.backends.hf.onepass import build_batch, forward_tokens, layout_item, score_onepass
from synthprobe.backends.hf.reference import score_reference
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import item_from_record


@pytest.fixture(scope="module")
def model():
    return tiny_llama(seed=1)


@pytest.fixture(scope="module")
def tok():
    return embedded_tokenizer()


@pytest.fixture(scope="module")
def items():
    return [item_from_record(r, path="fixture", line=i + 1) for i, r in enumerate(fixture_items())]


def direct_scores(model, tok, ctx: str, ending: str) -> tuple[float, bool]:
    """log P(ending | ctx) from one unpadded forward, written out by hand."""
    c = tok(ctx, add_special_tokens=False)["input_ids"]
    e = tok(ending, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([c + e])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0].float(), -1)
    lp = sum(logp[len(c) + t - 1, e[t]].item() for t in range(len(e)))
    greedy = all(logp[len(c) + t - 1].argmax().item() == e[t] for t in range(len(e)))
    return lp, greedy


def test_reference_equals_a_hand_written_forward(model, tok, items):
    enc = encode_items(tok, items[:3], max_context=1024)
    ref = score_reference(model, enc, batch_size=2, progress=False)
    for item, scores in zip(items[:3], ref):
        for ending, s in zip(item.endings, scores):
            lp, greedy = direct_scores(model, tok, item.ctx, ending)
            assert s.logprob == pytest.approx(lp, abs=1e-4)
            assert s.is_greedy == greedy
            assert s.n_chars == len(ending)
            assert s.n_tokens == len(tok(ending, add_special_tokens=False)["input_ids"])


def test_onepass_equals_reference(model, tok, items):
    enc = encode_items(tok, items, max_context=1024)
    ref = score_reference(model, enc, batch_size=3, progress=False)
    one = score_onepass(model, enc, batch_size=3, progress=False)
    assert max_abs_diff(ref, one) <= 1e-5
    assert [[s.is_greedy for s in r] for r in ref] == [[s.is_greedy for s in r] for r in one]
    assert [[s.n_tokens for s in r] for r in ref] == [[s.n_tokens for s in r] for r in one]
    # Scores are not trivially equal across endings: the check above has something to compare.
    assert len({round(s.logprob, 3) for r in ref for s in r}) > len(items) * 2


def test_onepass_is_batch_invariant(model, tok, items):
    enc = encode_items(tok, items, max_context=1024)
    base = score_onepass(model, enc, batch_size=32, progress=False)
    for bs in (1, 3, 8):
        assert max_abs_diff(base, score_onepass(model, enc, batch_size=bs, progress=False)) <= 1e-5


def test_onepass_feeds_fewer_tokens_and_shares_ending_prefixes(tok, items):
    enc = encode_items(tok, items, max_context=1024)
    assert forward_tokens(enc) * 2.5 < sum(e.reference_tokens for e in enc)
    card = enc[0]  # " 26 crates." / " 29 ..." / " 27 ..." / " 31 ...": all start with the space token
    lay = layout_item(card)
    fed_without_trie = len(card.ctx_ids) + sum(len(e) - 1 for e in card.ending_ids)
    assert lay.length < fed_without_trie
    # Each ending's first token is predicted from the last context token.
    last_ctx = len(card.ctx_ids) - 1
    assert all(t[0][0] == last_ctx for t in lay.targets)
    # Position ids restart after the context for every ending.
    for _ending, targets in zip(card.ending_ids, lay.targets):
        for depth, (row, _) in enumerate(targets[1:]):
            assert lay.positions[row] == len(card.ctx_ids) + depth


def test_mask_keeps_endings_apart():
    enc = SimpleNamespace()  # a hand-made layout: ctx [1, 2], endings [5, 6, 7] and [5, 8, 9]
    from synthprobe.backends.hf.encode import EncodedItem

    enc = EncodedItem(ctx_ids=(1, 2), ending_ids=((5, 6, 7), (5, 8, 9)), n_chars=(3, 3), max_context=64)
    lay = layout_item(enc)
    assert lay.tokens == (1, 2, 5, 6, 8)  # the shared "5" is fed once, last tokens not at all
    assert lay.positions == (0, 1, 2, 3, 3)
    vis = lay.visibility()
    assert vis[3].tolist() == [True, True, True, True, False]  # "6" sees ctx, "5", itself
    assert vis[4].tolist() == [True, True, True, False, True]  # "8" never sees "6"
    ids, pos, mask, keep = build_batch(
        [lay, layout_item(EncodedItem((1,), ((4,),), (1,), 64))], pad_id=0, mask_dtype=torch.float32
    )
    # Rows are padded (and unused positions kept) so every matmul sees >= MIN_ROWS rows.
    assert ids.shape == (2, 8) and keep[1, 0] and keep[0, [1, 2, 3, 4]].all()
    assert int(keep.sum()) >= 16
    # Padding attends only to itself; real tokens never attend to padding.
    pad = mask[1, 0, 1:, 1:]
    assert ((pad == 0) == torch.eye(7, dtype=torch.bool)).all()
    assert (mask[1, 0, 0, 1:] < 0).all() and mask[1, 0, 0, 0] == 0


def test_left_truncation_with_unequal_endings(model, tok):
    item = SimpleNamespace(
        ctx="one two three four five six seven eight nine ten eleven twelve thirteen",
        endings=(" fourteen", " fifteen sixteen seventeen eighteen", " x"),
        line=1,
    )
    full = encode_items(tok, [item], max_context=1024)[0]
    mc = len(full.ctx_ids) + 1  # every ending loses context, each by a different amount
    enc = encode_items(tok, [item], max_context=mc)
    assert enc[0].truncated and not full.truncated
    lens = [enc[0].visible_ctx_len(i) for i in range(3)]
    assert len(set(lens)) == len({len(e) for e in enc[0].ending_ids})
    assert all(n + len(e) <= mc for n, e in zip(lens, enc[0].ending_ids))
    ref = score_reference(model, enc, batch_size=1, progress=False)
    one = score_onepass(model, enc, batch_size=1, progress=False)
    assert max_abs_diff(ref, one) <= 1e-5
    # The reference really saw the truncated context: it differs from the untruncated score.
    untrunc = score_reference(model, [full], batch_size=1, progress=False)
    assert max_abs_diff(ref, untrunc) > 1e-3
    # And it equals a hand-written forward on the truncated context.
    kept = tok.decode(enc[0].visible_ctx(0))
    assert tok(kept, add_special_tokens=False)["input_ids"] == list(enc[0].visible_ctx(0))
    assert ref[0][0].logprob == pytest.approx(direct_scores(model, tok, kept, " fourteen")[0], abs=1e-4)


def test_join_straddling_tokens_are_scored_separately(model, tok):
    # "Ans" + "wer" would merge into one token if tokenised together; the protocol tokenises
    # context and ending separately, so the ending keeps its own tokens and is scored.
    item = SimpleNamespace(ctx="The final Ans", endings=("wer", "wers", "w"), line=1)
    enc = encode_items(tok, [item], max_context=64)[0]
    joint = tok("The final Answer", add_special_tokens=False)["input_ids"]
    assert list(enc.ctx_ids) + list(enc.ending_ids[0]) != joint
    assert enc.ending_ids[0] == tuple(tok("wer", add_special_tokens=False)["input_ids"])
    ref = score_reference(model, [enc], batch_size=1, progress=False)
    one = score_onepass(model, [enc], batch_size=1, progress=False)
    assert max_abs_diff(ref, one) <= 1e-5
    assert all(s.n_tokens >= 1 for s in one[0])


def test_ending_as_long_as_max_context_is_an_input_error(tok):
    item = SimpleNamespace(ctx="Count:", endings=(" one two three four five six", " one"), line=7)
    with pytest.raises(InputError) as err:
        encode_items(tok, [item], max_context=4, source="f.jsonl")
    assert "f.jsonl:7" in str(err.value) and "endings" in str(err.value) and "--max-context" in str(err.value)


def test_bos_is_prepended_to_the_context(tok):
    item = SimpleNamespace(ctx="Hello", endings=(" world",), line=1)
    plain = encode_items(tok, [item], max_context=64)[0]
    with_bos = encode_items(tok, [item], max_context=64, bos_id=tok.bos_token_id)[0]
    assert with_bos.ctx_ids == (tok.bos_token_id,) + plain.ctx_ids
    assert tok.bos_token_id not in plain.ctx_ids


def test_on_item_callback_reports_every_item_once(model, tok, items):
    enc = encode_items(tok, items, max_context=1024)
    seen = {}
    out = score_onepass(model, enc, batch_size=3, progress=False, on_item=lambda i, s: seen.setdefault(i, s))
    assert sorted(seen) == list(range(len(items)))
    assert all(seen[i] == out[i] for i in seen)


def _backend(model, tok):
    return SimpleNamespace(
        model=model,
        tokenizer=tok,
        bos=False,
        bos_token_id=tok.bos_token_id,
        pad_token_id=0,
        dtype="float32",
        capabilities={},
        name="tiny",
        max_positions=512,
    )


def test_engine_falls_back_when_the_model_ignores_the_tree_mask(tok, items):
    from transformers import LlamaForCausalLM

    from synthprobe.backends.hf.loglik import score_items

    class MaskIgnoringLlama(LlamaForCausalLM):
        """Attends causally over the whole row, as a recurrent or ALiBi model effectively would."""

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kw):
            if attention_mask is not None and attention_mask.dim() == 4:
                attention_mask, position_ids = None, None
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, **kw)

    class PositionIgnoringLlama(LlamaForCausalLM):
        """Honours the mask but numbers positions 0..L-1 along the row."""

        def forward(self, input_ids=None, attention_mask=None, position_ids=None, **kw):
            return super().forward(input_ids=input_ids, attention_mask=attention_mask, position_ids=None, **kw)

    good = tiny_llama(seed=2)
    for cls in (MaskIgnoringLlama, PositionIgnoringLlama):
        broken = cls(good.config).eval()
        broken.load_state_dict(good.state_dict())
        run = score_items(_backend(broken, tok), items[:3], batch_size=2, progress=False)
        assert run.scorer_used == "reference" and "scored alone" in run.fallback_reason
    ok = score_items(_backend(good, tok), items[:3], batch_size=2, progress=False)
    assert ok.scorer_used == "onepass" and ok.fallback_reason is None
    assert max_abs_diff(run.scores, ok.scores) <= 1e-5  # the fallback still gives the right scores


def test_engine_falls_back_for_non_attention_layers(tok, items):
    from synthprobe.backends.hf.loglik import score_items

    model = tiny_llama(seed=2)
    model.config.layer_types = ["full_attention", "linear_attention"]
    run = score_items(_backend(model, tok), items[:2], batch_size=2, progress=False)
    assert run.scorer_used == "reference" and "linear_attention" in run.fallback_reason


def test_requests_longer_than_the_model_are_an_input_error(tok, items):
    from synthprobe.backends.hf.loglik import score_items

    b = _backend(tiny_llama(seed=2), tok)
    b.max_positions = 16
    with pytest.raises(InputError, match="--max-context"):
        score_items(b, items[:1], progress=False)
    run = score_items(b, items[:1], max_context=16, progress=False)
    assert run.truncated == 1 and all(e.longest_request <= 16 for e in run.encoded)
