"""The straightforward per-ending scorer, as lm-eval and the ArithMark 3.0 script compute it.

Every (context, ending) pair is its own row ``visible_ctx + ending``; items are sorted by
their longest request, ``batch_size`` items (all their endings) form one right-padded batch
with a 2-D attention mask; the model returns logits for every position (``[rows, L, V]``),
and the ending tokens' log-probabilities are read from an fp32 log-softmax at the positions
that predict them. This is the yardstick the one-pass scorer must equal, and what
``bench/bench_scorer.py`` compares its speed with.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.backends.base import EndingScore, ItemCallback
from synthprobe.backends.hf.common import BAR_FORMAT, deliver_batch, model_device, target_logprobs
from synthprobe.backends.hf.encode import EncodedItem


def score_reference(
    model,
    encoded: Sequence[EncodedItem],
    *,
    batch_size: int = 32,
    pad_id: int = 0,
    progress: bool = True,
    on_item: ItemCallback | None = None,
    desc: str = "scoring (reference)",
) -> list[list[EndingScore]]:
    import torch
    from tqdm.auto import tqdm

    device = model_device(model)
    n = len(encoded)
    order = sorted(range(n), key=lambda i: (-encoded[i].longest_request, i))
    results: list[list[EndingScore] | None] = [None] * n
    with tqdm(total=n, unit="item", desc=desc, disable=not progress, dynamic_ncols=True, bar_format=BAR_FORMAT) as bar:
        for start in range(0, n, batch_size):
            batch = order[start : start + batch_size]
            rows: list[tuple[int, ...]] = []
            starts: list[int] = []
            for i in batch:
                enc = encoded[i]
                for j, e in enumerate(enc.ending_ids):
                    ctx = enc.visible_ctx(j)
                    rows.append(ctx + e)
                    starts.append(len(ctx))
            width = max(len(r) for r in rows)
            ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            q_rows, q_pos, tgts = [], [], []
            for r, (toks, s) in enumerate(zip(rows, starts)):
                ids[r, : len(toks)] = torch.tensor(toks, dtype=torch.long)
                mask[r, : len(toks)] = 1
                for p in range(s, len(toks)):
                    q_rows.append(r)
                    q_pos.append(p - 1)
                    tgts.append(toks[p])
            with torch.inference_mode():
                logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), use_cache=False).logits
                sel = logits[torch.tensor(q_rows, device=device), torch.tensor(q_pos, device=device)]
                del logits
                lp, greedy = target_logprobs(
                    sel, torch.arange(len(tgts), device=device), torch.tensor(tgts, device=device)
                )
            deliver_batch(batch, encoded, lp, greedy, results, on_item)
            bar.update(len(batch))
    return results  # type: ignore[return-value]
