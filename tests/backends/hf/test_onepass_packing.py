"""Token-budget packing of the one-pass scorer: the plan, and scores that do not depend on it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_support import embedded_tokenizer, fixture_items, max_abs_diff, tiny_llama

from synthprobe.backends.hf.encode import encode_items
from synthprobe.backends.hf.onepass import DEFAULT_TOKEN_BUDGET, layout_item, plan_batches, score_onepass
from synthprobe.formats.arithmark3 import item_from_record


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 300), max_size=60), st.integers(1, 40), st.one_of(st.none(), st.integers(1, 2000)))
def test_plan_covers_every_item_once_within_cap_and_budget(lengths, cap, budget):
    plan = plan_batches(lengths, batch_size=cap, token_budget=budget)
    flat = [i for b in plan for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    # longest first, ties by index: the same order as the scorer has always used
    assert flat == sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    for b in plan:
        assert 1 <= len(b) <= cap
        padded = len(b) * max(lengths[i] for i in b)
        assert budget is None or len(b) == 1 or padded <= budget
    # greedy: a forward was closed only because the next item would break the cap or the budget
    for b, _nxt in zip(plan, plan[1:]):
        assert len(b) == cap or (budget is not None and (len(b) + 1) * lengths[b[0]] > budget)


def test_no_budget_is_fixed_item_count():
    assert plan_batches([5, 9, 7, 9, 1], batch_size=2, token_budget=None) == [[1, 3], [2, 0], [4]]
    assert plan_batches([5, 9, 7, 9, 1], batch_size=8, token_budget=18) == [[1, 3], [2, 0], [4]]
    assert plan_batches([5, 9, 7, 9, 1], batch_size=8, token_budget=5) == [[1], [3], [2], [0], [4]]
    with pytest.raises(ValueError):
        plan_batches([3], batch_size=0)


def test_release_rows_fill_the_default_budget_with_little_padding():
    from pathlib import Path

    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(Path(__file__).resolve().parents[3] / "data" / "deeparithmark-1.jsonl")[:200]
    lengths = [layout_item(e).length for e in encode_items(embedded_tokenizer(), items, max_context=1024)]
    for cap in (32, 10_000):
        plan = plan_batches(lengths, batch_size=cap, token_budget=DEFAULT_TOKEN_BUDGET)
        fed = sum(len(b) * lengths[b[0]] for b in plan)
        assert all(len(b) * lengths[b[0]] <= DEFAULT_TOKEN_BUDGET for b in plan)
        assert 1 - sum(lengths) / fed < (0.05 if cap == 32 else 0.10)  # sorted rows: little padding


@pytest.fixture(scope="module")
def scored():
    tok = embedded_tokenizer()
    items = [item_from_record(r, path="fixture", line=i + 1) for i, r in enumerate(fixture_items())]
    enc = encode_items(tok, items, max_context=1024)
    return tiny_llama(seed=1), enc


def test_scores_do_not_depend_on_the_packing(scored):
    """fp32: every plan (one item a forward, a tight budget, everything in one forward) gives the
    same scores as the default, within the tolerance of the batch-size invariance test."""
    model, enc = scored
    base = score_onepass(model, enc, progress=False)
    longest = max(layout_item(e).length for e in enc)
    for cap, budget in ((1, None), (3, None), (64, longest * 2), (64, longest), (64, 10**6)):
        other = score_onepass(model, enc, batch_size=cap, token_budget=budget, progress=False)
        assert max_abs_diff(base, other) <= 1e-5, (cap, budget)
