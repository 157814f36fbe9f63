"""Multiply-adds of a scoring pass: ours (one-pass layout) against the per-ending protocol.

Shared by ``bench/profile_scorer.py`` and ``bench/bench_whole_process.py``. Counted per fed
position: the decoder layers' projections (q, k, v, o and the gated MLP); the LM head only where
logits are read. Ours: every position of every packed forward, padding included, with the LM
head at the positions that predict ending tokens. The per-ending protocol (lm-eval, the
ArithMark 3.0 script): one row per ending, ``ctx + ending`` minus its last token fed, logits at
every position; its padding is not counted, so its figure is a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MultiplyAdds:
    body: int  # per token, in the decoder layers
    head: int  # per position, in the LM head
    fed: int  # tokens our layout feeds
    padded: int  # ... with the padding of the packed forwards
    kept: int  # positions whose logits we read
    peer_fed: int  # tokens the per-ending protocol feeds

    @property
    def ours(self) -> int:
        return self.padded * self.body + self.kept * self.head

    @property
    def peer(self) -> int:
        return self.peer_fed * (self.body + self.head)

    @property
    def ratio(self) -> float:
        return self.peer / self.ours


def per_token(config) -> tuple[int, int]:
    """``(decoder layers, LM head)`` multiply-adds per position of a Llama-style config."""
    hidden, inter, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    head_dim = getattr(config, "head_dim", None) or hidden // config.num_attention_heads
    q_out, kv_out = config.num_attention_heads * head_dim, config.num_key_value_heads * head_dim
    body = layers * (hidden * q_out + 2 * hidden * kv_out + q_out * hidden + 3 * hidden * inter)
    return body, hidden * config.vocab_size


def count(config, encoded, *, batch_size: int = 32) -> MultiplyAdds:
    """The multiply-adds of scoring ``encoded`` (:func:`synthprobe.backends.hf.encode.encode_items`)."""
    from synthprobe.backends.hf.onepass import DEFAULT_TOKEN_BUDGET, layout_item, plan_batches

    layouts = [layout_item(e) for e in encoded]
    batches = plan_batches([r.length for r in layouts], batch_size=batch_size, token_budget=DEFAULT_TOKEN_BUDGET)
    body, head = per_token(config)
    return MultiplyAdds(
        body=body,
        head=head,
        fed=sum(r.length for r in layouts),
        padded=sum(len(b) * max(layouts[i].length for i in b) for b in batches),
        kept=sum(len({pos for ending in r.targets for pos, _ in ending}) for r in layouts),
        peer_fed=sum(e.reference_tokens - len(e.ending_ids) for e in encoded),
    )
