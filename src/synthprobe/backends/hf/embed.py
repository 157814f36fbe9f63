"""Frozen text embeddings from a loaded causal LM: the mean of its last hidden states.

What AFLite's linear probe reads (frozen representations of an ending's text), taken from the
model under test instead of RoBERTa: each text is tokenised alone (the model's BOS first when it
runs with one), run through the model's body without its output layer, and its last layer's
hidden states (after the final norm) are averaged over the text's own tokens. float32 rows, one
per text, in the order given.

Texts are run shortest first in batches of ``batch_size`` with right padding and an attention mask,
so an embedding does not depend on which other texts share its batch beyond float rounding; the
order is fixed by the texts themselves, so the same texts give the same bytes on one machine.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from synthprobe.backends.hf.common import right_padded

#: longest text, in tokens, that an embedding reads (an ending is a few tokens)
MAX_TOKENS = 64


def _body(model):
    """The transformer under the LM head (``LlamaModel`` under ``LlamaForCausalLM``)."""
    body = getattr(model, "base_model", None)
    if body is None or body is model:
        body = getattr(model, "model", None)
    if body is None:
        raise TypeError(f"{type(model).__name__} exposes no base model to read hidden states from")
    return body


def _encode(backend, texts: Sequence[str]) -> list[list[int]]:
    tok = backend.tokenizer
    bos = [backend.bos_token_id] if backend.bos and backend.bos_token_id is not None else []
    out = []
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"][: MAX_TOKENS - len(bos)]
        out.append(bos + ids if ids or bos else [backend.pad_token_id])
    return out


def embed_texts(
    backend,
    texts: Sequence[str],
    *,
    batch_size: int = 128,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """``(len(texts), hidden)`` float32: each text's mean last hidden state (see the module)."""
    encoded = _encode(backend, texts)
    body = _body(backend.model)
    out = None
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
    was_training = backend.model.training
    backend.model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                rows = _mean_hidden(body, [encoded[i] for i in idx], backend.pad_token_id, backend.device)
                if out is None:
                    out = np.zeros((len(encoded), rows.shape[1]), dtype=np.float32)
                out[idx] = rows
                if progress is not None:
                    progress(len(idx))
    finally:
        backend.model.train(was_training)
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def _mean_hidden(body, batch: Sequence[Sequence[int]], pad_id: int, device: str) -> np.ndarray:
    ids, mask = right_padded(batch, pad_id, device)
    hidden = body(input_ids=ids, attention_mask=mask).last_hidden_state.float()
    weights = mask.to(hidden.device).unsqueeze(-1).float()
    mean = (hidden * weights).sum(1) / weights.sum(1)
    return mean.cpu().numpy().astype(np.float32)
