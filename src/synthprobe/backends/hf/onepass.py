"""The one-pass multiple-choice scorer: each context goes through the model once.

Layout of one item (one row of the batch)::

    [ctx][e1 without its last token][e2 ...][e3 ...][e4 ...]

* A 4-D attention mask lets every context token see the earlier context tokens, and every
  ending token see the context plus the earlier tokens of its own ending - never another
  ending. ``position_ids`` restart at ``len(ctx)`` for each ending, so each ending is
  computed exactly as in its own ``ctx + ending`` row.
* Endings form a trie: tokens that several endings start with (the leading space, a shared
  first digit) are fed once. An ending's last token predicts nothing that is scored, so it is
  not fed; the first token of every ending is predicted from the context's last position.
* Logits are produced only at the positions that predict ending tokens (transformers'
  boolean ``logits_to_keep``): the ``[B, L, V]`` tensor is never built. Log-softmax in fp32.
* If the endings of one item see differently truncated contexts (left-truncation at
  ``max_context - len(ending)`` with endings of unequal length), the row holds one context
  copy per distinct truncation, each followed by its endings: still exact.
* Items are sorted by row length (longest first) and packed into right-padded forwards by a
  token budget (:func:`plan_batches`): a forward takes items while its padded size
  ``rows x longest row`` stays within ``token_budget`` and its rows within ``batch_size``
  (a cap). Sorting keeps the padding small (under 1 % of the fed tokens on the release file
  at the default settings); a padding token attends only to itself.
* Attention runs in transformers' ``eager`` implementation during one-pass scoring (restored
  afterwards): with the explicit additive mask its result for a row does not depend on how
  far the row is padded, whereas the CPU SDPA kernel's blocking follows the padded length
  and moved per-token log-probs by ~3e-5 between batch sizes. Every matmul also gets at
  least ``MIN_ROWS`` rows (see :func:`build_batch`).

The result equals the per-ending reference (:mod:`synthprobe.backends.hf.reference`) up to
floating-point rounding (3e-5 nats at most on the embedded model in fp32), and a row's
scores do not depend on the batch it is in (identical at batch sizes 1, 8 and 32 there).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from synthprobe.backends.base import EndingScore, ItemCallback
from synthprobe.backends.hf.common import BAR_FORMAT, deliver_batch, model_device, target_logprobs
from synthprobe.backends.hf.encode import EncodedItem


@dataclass(frozen=True)
class RowLayout:
    """One item laid out as a tree in a single row.

    Every token has a parent (the token before it on its path; ``-1`` for the first context
    token) and sees exactly its ancestors and itself. Its position id is its depth.
    """

    tokens: tuple[int, ...]
    positions: tuple[int, ...]
    parents: tuple[int, ...]
    #: Per ending, per ending token: (row index whose output predicts it, target token id).
    targets: tuple[tuple[tuple[int, int], ...], ...]

    @property
    def length(self) -> int:
        return len(self.tokens)

    def visibility(self):
        """``[n, n]`` boolean matrix: query ``j`` may attend to key ``k``."""
        import numpy as np

        n = self.length
        vis = np.zeros((n, n), dtype=bool)
        for j, p in enumerate(self.parents):
            if p >= 0:
                vis[j, :j] = vis[p, :j]
            vis[j, j] = True
        return vis


def layout_item(enc: EncodedItem) -> RowLayout:
    """Lay out one item: one context chain per distinct truncation, then a trie of the endings.

    Endings that start with the same tokens share those tokens' positions (their hidden
    states are identical: same tokens, same positions, same visible context), so e.g. the
    leading-space token common to all endings is computed once. An ending's last token is
    not fed; it is only a target.
    """
    tokens: list[int] = []
    positions: list[int] = []
    parents: list[int] = []
    targets: list[tuple[tuple[int, int], ...] | None] = [None] * len(enc.ending_ids)
    groups: dict[int, list[int]] = {}
    for j in range(len(enc.ending_ids)):
        groups.setdefault(enc.visible_ctx_len(j), []).append(j)
    for n_ctx in sorted(groups, reverse=True):
        ctx = enc.ctx_ids[len(enc.ctx_ids) - n_ctx :]
        base = len(tokens)
        tokens.extend(ctx)
        positions.extend(range(n_ctx))
        parents.extend([-1] + [base + t for t in range(n_ctx - 1)])
        last_ctx = base + n_ctx - 1
        trie: dict[tuple[int, int], int] = {}  # (parent row index, token) -> row index
        for j in groups[n_ctx]:
            e = enc.ending_ids[j]
            node = last_ctx
            preds = [last_ctx]
            for depth, tok in enumerate(e[:-1]):
                key = (node, tok)
                if key not in trie:
                    trie[key] = len(tokens)
                    tokens.append(tok)
                    positions.append(n_ctx + depth)
                    parents.append(node)
                node = trie[key]
                preds.append(node)
            targets[j] = tuple(zip(preds, e))
    return RowLayout(tuple(tokens), tuple(positions), tuple(parents), tuple(targets))  # type: ignore[arg-type]


#: Every matrix product in a forward gets at least this many rows. CPU GEMM kernels switch
#: to other code paths below ~12 rows (measured: M in 1-3, 5-7, 9-11 round differently from
#: M >= 12 on this machine's MKL), which moved log-probs by up to 3e-5 between batch sizes.
MIN_ROWS = 16


def build_batch(layouts: Sequence[RowLayout], *, pad_id: int, mask_dtype):
    """Tensors for one forward: ids, position ids, the additive 4-D mask, and the keep mask.

    The batch is padded so that ``B * L >= MIN_ROWS``, and extra (ignored) positions are kept
    so that at least ``MIN_ROWS`` rows reach the LM head: a row's result then does not depend
    on how many other rows share its forward.
    """
    import numpy as np
    import torch

    B = len(layouts)
    L = max(max(r.length for r in layouts), -(-MIN_ROWS // B))
    ids = torch.full((B, L), pad_id, dtype=torch.long)
    pos = torch.zeros((B, L), dtype=torch.long)
    keep = torch.zeros((B, L), dtype=torch.bool)
    # Padding sees only itself.
    allowed = np.broadcast_to(np.eye(L, dtype=bool), (B, L, L)).copy()
    for b, r in enumerate(layouts):
        n = r.length
        ids[b, :n] = torch.tensor(r.tokens, dtype=torch.long)
        pos[b, :n] = torch.tensor(r.positions, dtype=torch.long)
        allowed[b, :n, :n] = r.visibility()
        for ending in r.targets:
            for p, _ in ending:
                keep[b, p] = True
    short = MIN_ROWS - int(keep.sum())
    if short > 0:
        spare = (~keep).reshape(-1).nonzero().reshape(-1)[:short]
        keep.view(-1)[spare] = True
    mask = torch.zeros((B, 1, L, L), dtype=mask_dtype)
    mask.masked_fill_(~torch.from_numpy(allowed)[:, None], torch.finfo(mask_dtype).min)
    return ids, pos, mask, keep


def forward_selected(model, ids, pos, mask, keep, *, logits_mode: str = "keep"):
    """Logits ``[N, V]`` at the ``keep`` positions, in row-major order."""
    import torch

    device = model_device(model)
    kwargs = dict(
        input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=pos.to(device), use_cache=False
    )
    with torch.inference_mode():
        if logits_mode == "keep":
            return model(**kwargs, logits_to_keep=keep.to(device)).logits
        logits = model(**kwargs).logits
        return logits[keep.to(device)]


@contextlib.contextmanager
def attention_implementation(model, impl: str | None) -> Iterator[str]:
    """Temporarily switch the model's attention implementation (if it allows it); yields the one in use."""
    config = model.config
    before = getattr(config, "_attn_implementation", None)
    if impl is None or impl == before or not hasattr(model, "set_attn_implementation"):
        yield before
        return
    try:
        model.set_attn_implementation(impl)
    except Exception:  # a model that cannot switch keeps its own implementation
        yield getattr(config, "_attn_implementation", before)
        return
    try:
        yield getattr(config, "_attn_implementation", before)
    finally:
        with contextlib.suppress(Exception):
            model.set_attn_implementation(before)


#: Default padded tokens per forward (rows x longest row). On a CPU the throughput is flat
#: from ~2k tokens a forward upwards (``bench/bench_packing.py``); the cap bounds memory:
#: the eager attention holds ``heads x L x L`` scores per row.
DEFAULT_TOKEN_BUDGET = 4096


def plan_batches(
    lengths: Sequence[int], *, batch_size: int = 32, token_budget: int | None = DEFAULT_TOKEN_BUDGET
) -> list[list[int]]:
    """Item indices per forward: sorted longest first (ties by index), each forward filled while
    ``len(batch) <= batch_size`` and ``len(batch) * longest <= token_budget`` (one item always fits).
    ``token_budget=None``: ``batch_size`` items per forward."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        cur = batches[-1] if batches else None
        if (
            cur is None
            or len(cur) >= batch_size
            or (token_budget is not None and (len(cur) + 1) * lengths[cur[0]] > token_budget)
        ):
            batches.append([i])
        else:
            cur.append(i)
    return batches


def score_onepass(
    model,
    encoded: Sequence[EncodedItem],
    *,
    batch_size: int = 32,
    pad_id: int = 0,
    progress: bool = True,
    on_item: ItemCallback | None = None,
    logits_mode: str = "keep",
    attn_implementation: str | None = "eager",
    token_budget: int | None = DEFAULT_TOKEN_BUDGET,
    desc: str = "scoring (one-pass)",
) -> list[list[EndingScore]]:
    """Scores of every ending of every item; forwards as :func:`plan_batches` packs them
    (``batch_size``: the most items a forward takes; ``token_budget``: its padded tokens)."""
    with attention_implementation(model, attn_implementation):
        return _score_onepass(
            model,
            encoded,
            batch_size=batch_size,
            pad_id=pad_id,
            progress=progress,
            on_item=on_item,
            logits_mode=logits_mode,
            desc=desc,
            token_budget=token_budget,
        )


def _score_onepass(model, encoded, *, batch_size, pad_id, progress, on_item, logits_mode, desc, token_budget):
    import torch
    from tqdm.auto import tqdm

    device = model_device(model)
    mask_dtype = next(model.parameters()).dtype
    layouts = [layout_item(e) for e in encoded]
    n = len(encoded)
    results: list[list[EndingScore] | None] = [None] * n
    with tqdm(total=n, unit="item", desc=desc, disable=not progress, dynamic_ncols=True, bar_format=BAR_FORMAT) as bar:
        for batch in plan_batches([r.length for r in layouts], batch_size=batch_size, token_budget=token_budget):
            rows = [layouts[i] for i in batch]
            ids, pos, mask, keep = build_batch(rows, pad_id=pad_id, mask_dtype=mask_dtype)
            logits = forward_selected(model, ids, pos, mask, keep, logits_mode=logits_mode)
            L = ids.shape[1]
            flat_index = (keep.reshape(-1).cumsum(0) - 1).tolist()
            q_rows, tgts = [], []
            for b, r in enumerate(rows):
                for ending in r.targets:
                    for p, t in ending:
                        q_rows.append(flat_index[b * L + p])
                        tgts.append(t)
            with torch.inference_mode():
                lp, greedy = target_logprobs(
                    logits, torch.tensor(q_rows, device=device), torch.tensor(tgts, device=device)
                )
            deliver_batch(batch, encoded, lp, greedy, results, on_item)
            bar.update(len(batch))
    return results  # type: ignore[return-value]


def forward_tokens(encoded: Sequence[EncodedItem]) -> int:
    """Tokens the one-pass layout feeds through the model (no padding)."""
    return sum(layout_item(e).length for e in encoded)
