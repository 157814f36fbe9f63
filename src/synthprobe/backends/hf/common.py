"""Pieces shared by the reference and the one-pass scorer."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.backends.base import EndingScore

#: Progress bars always show items/s (tqdm would switch to s/item below one item a second).
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_noinv_fmt}]"


def model_device(model):
    import torch

    try:
        return next(model.parameters()).device
    except StopIteration:  # pragma: no cover - a model without parameters
        return torch.device("cpu")


def right_padded(batch, pad_id: int, device):
    """Token id lists as a right-padded ``(ids, attention_mask)`` pair of long tensors on ``device``."""
    import torch

    width = max(len(s) for s in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, s in enumerate(batch):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1
    return ids.to(device), mask.to(device)


def target_logprobs(logits, rows, targets):
    """Log-probabilities of ``targets`` under ``logits[rows]`` (log-softmax in fp32) and greedy flags.

    ``logits``: ``[N, V]`` next-token logits at the selected positions (any dtype);
    ``rows``/``targets``: ``[T]`` long tensors, one entry per scored token.
    Returns two Python lists of length ``T``.
    """
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    lp = logp[rows, targets]
    greedy = logits.argmax(dim=-1)[rows] == targets
    return lp.double().tolist(), greedy.tolist()


def ending_scores(
    token_lp: Sequence[float], token_greedy: Sequence[bool], n_tokens: Sequence[int], n_chars: Sequence[int]
) -> list[EndingScore]:
    """Sum consecutive runs of token log-probs (ending by ending, tokens in order) into records."""
    out = []
    k = 0
    for n, c in zip(n_tokens, n_chars):
        # A fixed left-to-right order in double precision: both scorers sum identically.
        s = 0.0
        g = True
        for t in range(k, k + n):
            s += token_lp[t]
            g = g and bool(token_greedy[t])
        k += n
        out.append(EndingScore(logprob=s, n_tokens=n, n_chars=c, is_greedy=g))
    return out


def deliver_batch(
    batch: Sequence[int], encoded, token_lp: Sequence[float], token_greedy: Sequence[bool], results: list, on_item=None
) -> None:
    """Split one batch's target log-probs (items in ``batch`` order, endings and tokens in
    order) into each item's :class:`EndingScore` list, store it and report it to ``on_item``."""
    k = 0
    for i in batch:
        enc = encoded[i]
        n_tokens = [len(e) for e in enc.ending_ids]
        m = sum(n_tokens)
        scores = ending_scores(token_lp[k : k + m], token_greedy[k : k + m], n_tokens, enc.n_chars)
        k += m
        results[i] = scores
        if on_item is not None:
            on_item(i, scores)
