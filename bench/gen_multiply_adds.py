"""Multiply-adds of a generative run (``letters``, ``free``, ``letterprob``): ours against the peers'.

Shared by ``bench/bench_generation_account.py`` and ``bench/bench_protocols.py`` (as
``bench/multiply_adds.py`` is for the log-likelihood scorer). A run is a list of
:class:`Forward` passes, each ``rows`` sequences of ``width`` new positions on top of a cache
of ``past`` positions, with logits read at ``keep`` positions per row. Per pass:

* the decoder layers' projections (q, k, v, o, the gated MLP): ``rows * width * body``,
  padding positions included (they go through the matrices like any other);
* the LM head: ``rows * keep * head``;
* attention's score and value products: ``rows * width * (past + width) * pair`` (every query
  against every key the pass holds, padding and the masked upper triangle included, as SDPA
  with an explicit mask computes them; a separate term, it grows with the context).

The layouts, from what each side's code does (the generation code read for facts):

* **ours** (:func:`ours_forwards`, ``synthprobe.backends.hf.generate._decode_batch``): the
  tokens every row of a batch starts with read once (one row), the rest of each prompt
  left-padded to the longest of its group (``row_groups``: rows of near one length read
  together, the groups' caches joined), logits at the last position only, then one position per
  live row per step; a row leaves the cache the step it finishes (stop string, end of sequence
  or the budget).
* **padded, every row to the last** (:func:`padded_forwards`): lm-eval 0.4.13's HF
  ``generate_until`` and inspect_ai's ``hf`` provider both call transformers' ``generate`` on a
  left-padded batch with no prefix reuse; transformers 5.25 reads logits at the last position
  only (``logits_to_keep=1``) and keeps every row in the batch, finished or not, until the last
  one stops (lm-eval: its stop sequences or ``max_gen_toks``; inspect's ``multiple_choice()``:
  end of sequence or ``max_tokens``, no stop string).

How many passes a row takes (:func:`row_passes`): the prompt pass gives its first token, and each
later pass one more; a row whose text ends at a stop string or the budget after ``n`` tokens took
``n`` passes, one that ended with an end-of-sequence token (not counted in ``n``) ``n + 1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Costs:
    """Multiply-adds per position in the layers, per LM-head row, per attention (query, key) pair."""

    body: int
    head: int
    pair: int

    @classmethod
    def from_config(cls, config) -> Costs:
        hidden, inter, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
        heads = config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or hidden // heads
        q_out, kv_out = heads * head_dim, config.num_key_value_heads * head_dim
        body = layers * (hidden * q_out + 2 * hidden * kv_out + q_out * hidden + 3 * hidden * inter)
        return cls(body=body, head=hidden * config.vocab_size, pair=2 * layers * heads * head_dim)


@dataclass(frozen=True)
class Forward:
    """One pass: ``rows`` x ``width`` new positions over a ``past``-position cache, ``keep``
    logits per row, ``real`` of the ``rows * width`` positions not padding; ``kind``: ``prefix``
    (a batch's shared opening), ``prompt`` or ``decode``."""

    rows: int
    width: int
    past: int = 0
    keep: int = 1
    real: int | None = None
    kind: str = "decode"

    @property
    def positions(self) -> int:
        return self.rows * self.width

    @property
    def padding(self) -> int:
        return self.positions - (self.positions if self.real is None else self.real)


@dataclass(frozen=True)
class Count:
    """Multiply-adds of a list of passes, by term and by kind of pass."""

    linear: int  # decoder layers' projections
    head: int  # LM head
    attention: int  # score and value products
    padding: int  # the linear multiply-adds spent on padding positions
    by_kind: dict[str, int]  # linear + head + attention per kind of pass
    passes: int
    positions: int  # positions through the layers, padding included

    @property
    def total(self) -> int:
        return self.linear + self.head + self.attention


def count(forwards: Iterable[Forward], costs: Costs) -> Count:
    linear = head = attention = padding = positions = passes = 0
    by_kind: dict[str, int] = {}
    for f in forwards:
        lin = f.positions * costs.body
        hd = f.rows * f.keep * costs.head
        att = f.rows * f.width * (f.past + f.width) * costs.pair
        linear, head, attention = linear + lin, head + hd, attention + att
        padding += f.padding * costs.body
        positions += f.positions
        passes += 1
        by_kind[f.kind] = by_kind.get(f.kind, 0) + lin + hd + att
    return Count(linear, head, attention, padding, by_kind, passes, positions)


def row_passes(n_tokens: int, finish: str | None) -> int:
    """Passes a row takes to produce ``n_tokens`` tokens that ended with ``finish``."""
    return n_tokens + 1 if finish == "eos" else max(1, n_tokens)


def shared_prefix_length(batch: Sequence[Sequence[int]]) -> int:
    """Leading tokens all rows share, each row keeping at least one of its own (as
    ``synthprobe.backends.hf.generate.shared_prefix_length``)."""
    if len(batch) < 2:
        return 0
    limit = min(len(ids) for ids in batch) - 1
    n = 0
    while n < limit and all(ids[n] == batch[0][n] for ids in batch):
        n += 1
    return n


def ours_forwards(batch: Sequence[Sequence[int]], passes: Sequence[int]) -> list[Forward]:
    """Our passes over one batch of prompts (token ids), row ``r`` taking ``passes[r]`` passes."""
    from synthprobe.backends.hf.generate import row_groups

    shared = shared_prefix_length(batch)
    out = [Forward(1, shared, 0, 1, shared, "prefix")] if shared else []
    tails = [len(ids) - shared for ids in batch]
    width = max(tails)
    # the prompt pass in groups of rows of near one length, each padded to its own longest
    # (``row_groups``; only over a shared opening, whose cache the groups copy)
    for rows in row_groups(tails) if shared else [range(len(batch))]:
        own = [tails[r] for r in rows]
        out.append(Forward(len(own), max(own), shared, 1, sum(own), "prompt"))
    for step in range(1, max(passes)):
        live = sum(1 for p in passes if p > step)
        out.append(Forward(live, 1, shared + width + step - 1, 1, live, "decode"))
    return out


def padded_forwards(batch: Sequence[Sequence[int]] | Sequence[int], steps: int) -> list[Forward]:
    """transformers ``generate`` on one left-padded batch (``batch``: the prompts' token ids or
    only their lengths), no prefix reuse, every row kept for ``steps`` passes (the longest row's)."""
    lengths = [n if isinstance(n, int) else len(n) for n in batch]
    rows, width = len(lengths), max(lengths)
    out = [Forward(rows, width, 0, 1, sum(lengths), "prompt")]
    out += [Forward(rows, 1, width + step - 1, 1, rows, "decode") for step in range(1, steps)]
    return out


def chunks(order: Sequence[int], size: int) -> list[list[int]]:
    return [list(order[s : s + size]) for s in range(0, len(order), size)]


def ours_run(
    encoded: Sequence[Sequence[int]], passes: Sequence[int], lengths: Sequence[int], batch_size: int
) -> list[Forward]:
    """Our passes over a Deep Arithmark run: items longest first by ``lengths`` (what the run
    orders by: the engine's ``prompt_lengths`` of the question texts, their tokens in process) in
    chunks of ``batch_size`` (``synthprobe.scoring.runner.batches``), each chunk's prompts longest
    in tokens first (``_greedy_batches``; one batch per chunk)."""
    order = sorted(range(len(encoded)), key=lambda i: (-lengths[i], i))
    out: list[Forward] = []
    for chunk in chunks(order, batch_size):
        rows = sorted(chunk, key=lambda i: (-len(encoded[i]), chunk.index(i)))
        out += ours_forwards([encoded[i] for i in rows], [passes[i] for i in rows])
    return out


def lm_eval_run(encoded: Sequence[Sequence[int]], passes: Sequence[int], batch_size: int) -> list[Forward]:
    """lm-eval 0.4.13's HF ``generate_until`` on the same prompts and answers: requests longest
    in tokens first (its ``Collator``), ``batch_size`` a batch, each batch until its longest answer."""
    order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
    out: list[Forward] = []
    for chunk in chunks(order, batch_size):
        out += padded_forwards([encoded[i] for i in chunk], max(passes[i] for i in chunk))
    return out


def logged_run(batches: Iterable[dict]) -> list[Forward]:
    """Passes of batches recorded from a peer's own run: ``{"lengths": [...], "steps": n}`` each
    (inspect_ai's ``hf`` provider: its tokenizer's lengths, the generated width it returned)."""
    out: list[Forward] = []
    for b in batches:
        out += padded_forwards(list(b["lengths"]), int(b["steps"]))
    return out
