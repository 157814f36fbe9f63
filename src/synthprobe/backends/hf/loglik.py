"""Choose and run a scorer for a loaded backend.

``score_items`` encodes items under the protocol (:mod:`synthprobe.backends.hf.encode`), checks
the request lengths against the model, and runs the one-pass scorer (default) or the
per-ending reference. Before the first one-pass run on a model it checks, on two small probe
items, that the model honours a custom 4-D mask and ``position_ids`` (attention-only
architectures do; recurrent or hybrid layers, ALiBi models that derive positions from a 2-D
mask, and flash-attention-2 do not) and whether it accepts a boolean ``logits_to_keep``.
Where the one-pass layout would not be exact, it falls back to the reference scorer and says
so in :attr:`ScoreRun.scorer_used` / :attr:`ScoreRun.fallback_reason`; it never returns
scores it has not checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from synthprobe.backends.base import SCORERS, EndingScore, ItemCallback
from synthprobe.backends.hf.encode import EncodedItem, encode_items, group_pairs
from synthprobe.errors import InputError

# Layer kinds that are attention and therefore follow a custom mask.
_ATTENTION_LAYER_TYPES = {"full_attention", "sliding_attention", "attention", "global", "local", "chunked_attention"}

_PROBE = (
    (
        "Mia had 14 marbles. She gave 5 to Tom and then bought 12 more, so now she has",
        (" 21 marbles.", " 9", " twenty-one marbles in a small blue bag"),
    ),
    (
        "The train left at 9:40 and the trip took 75 minutes. It arrived at",
        (" 10:55.", " 11:05 in the morning.", " noon"),
    ),
)


@dataclass
class ScoreRun:
    """Scores of one run plus what it cost."""

    scores: list[list[EndingScore]]
    scorer_requested: str
    scorer_used: str
    fallback_reason: str | None
    n_items: int
    truncated: int
    #: Sum over endings of ``len(visible ctx) + len(ending)``: the protocol's request tokens.
    request_tokens: int
    #: Tokens actually fed through the model (no padding).
    forward_tokens: int
    tokenize_s: float
    eval_s: float
    encoded: list[EncodedItem] = field(default_factory=list, repr=False)

    @property
    def items_per_s(self) -> float | None:
        return self.n_items / self.eval_s if self.n_items and self.eval_s > 0 else None

    @property
    def tokens_per_s(self) -> float | None:
        return self.request_tokens / self.eval_s if self.n_items and self.eval_s > 0 else None

    def timing(self) -> dict[str, Any]:
        """JSON-ready timing; rates are None when nothing was scored (e.g. all items cached)."""
        ips, tps = self.items_per_s, self.tokens_per_s
        return {
            "tokenize_s": round(self.tokenize_s, 3),
            "eval_s": round(self.eval_s, 3),
            "items_per_s": round(ips, 3) if ips is not None else None,
            "request_tokens": self.request_tokens,
            "forward_tokens": self.forward_tokens,
            "request_tokens_per_s": round(tps, 1) if tps is not None else None,
        }


def _structural_reason(model, max_request: int) -> str | None:
    config = model.config
    impl = str(getattr(config, "_attn_implementation", "") or "")
    if impl.startswith("flash") or "paged" in impl:
        return f"attention implementation {impl!r} ignores custom 4-D masks"
    layer_types = getattr(config, "layer_types", None)
    if isinstance(layer_types, (list, tuple)):
        other = sorted({str(t) for t in layer_types} - _ATTENTION_LAYER_TYPES)
        if other:
            return f"the model has non-attention layers ({', '.join(other)}) that see across endings"
    window = getattr(config, "sliding_window", None)
    uses_window = getattr(config, "use_sliding_window", True) is not False
    if isinstance(window, int) and window > 0 and uses_window and max_request > window:
        return (
            f"requests of up to {max_request} tokens exceed the sliding window ({window}), which a "
            "custom mask would bypass"
        )
    return None


def _max_diff(a: list[list[EndingScore]], b: list[list[EndingScore]]) -> float:
    return max(abs(x.logprob - y.logprob) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def check_onepass(backend) -> tuple[bool, str | None, str]:
    """Probe whether the one-pass layout is exact on this model. Returns (ok, reason, logits_mode).

    Two checks on two probe items whose endings differ in length:

    * self-consistency: every ending scored inside the shared row must equal the same ending
      scored alone in its own row (1e-4 nats in fp32, 0.5 in half precision). On the
      embedded model a mask that lets endings see each other moves these sums by ~15 nats and
      ignored ``position_ids`` by ~2.7, while bf16 rounding alone moves them by ~0.05;
    * agreement with the per-ending reference: within 1e-3 nats in fp32; in half precision
      only a sanity bound (2 nats), since bf16 rounding alone differs by ~0.4 on these sums.

    The result is cached in ``backend.capabilities`` and, for a backend with a fingerprint, on
    disk per (fingerprint, dtype, device, attention, model class, library versions): see
    :func:`verdict_path`. A later process on the same weights then skips the probe forwards.
    """
    caps = backend.capabilities
    if "onepass_ok" in caps:
        return caps["onepass_ok"], caps.get("onepass_reason"), caps.get("logits_mode", "keep")
    path = verdict_path(backend)
    cached = _read_verdict(path)
    if cached is not None:
        caps.update(cached)
        return caps["onepass_ok"], caps["onepass_reason"], caps["logits_mode"]
    from synthprobe.backends.hf.onepass import score_onepass
    from synthprobe.backends.hf.reference import score_reference

    bos = backend.bos_token_id if backend.bos else None
    items = [SimpleNamespace(ctx=c, endings=e, line=0) for c, e in _PROBE]
    singles = [SimpleNamespace(ctx=c, endings=(x,), line=0) for c, e in _PROBE for x in e]
    enc = encode_items(backend.tokenizer, items, max_context=4096, bos_id=bos)
    enc_single = encode_items(backend.tokenizer, singles, max_context=4096, bos_id=bos)
    ref = score_reference(backend.model, enc, batch_size=2, pad_id=backend.pad_token_id, progress=False)
    half = str(backend.dtype) in ("bfloat16", "float16")
    tol_self, tol_ref = (0.5, 2.0) if half else (1e-4, 1e-3)
    ok, reason, mode = False, None, "keep"
    for mode in ("keep", "full"):
        try:
            one = score_onepass(
                backend.model, enc, batch_size=2, pad_id=backend.pad_token_id, progress=False, logits_mode=mode
            )
            alone = score_onepass(
                backend.model,
                enc_single,
                batch_size=len(enc_single),
                pad_id=backend.pad_token_id,
                progress=False,
                logits_mode=mode,
            )
        except Exception as exc:  # an unsupported argument or shape: try the next mode
            reason = f"one-pass forward failed ({type(exc).__name__}: {exc})"
            continue
        flat = [[s] for row in one for s in row]
        d_self, d_ref = _max_diff(flat, alone), _max_diff(ref, one)
        if d_self <= tol_self and d_ref <= tol_ref:
            ok, reason = True, None
            break
        reason = (
            f"one-pass probe: endings scored together differ from endings scored alone by {d_self:.3g} "
            f"nats, and from the per-ending reference by {d_ref:.3g} nats"
        )
    caps.update(onepass_ok=ok, onepass_reason=reason, logits_mode=mode)
    _write_verdict(path, caps)
    return ok, reason, mode


def verdict_path(backend) -> Path | None:
    """Where the one-pass verdict of this backend is kept: ``$SYNTHPROBE_CACHE/onepass/<key>.json``,
    the key a SHA-256 of everything the verdict depends on; None for a backend without a fingerprint."""
    fingerprint = getattr(backend, "fingerprint", None)
    model = getattr(backend, "model", None)
    if not fingerprint or model is None:
        return None
    import torch
    import transformers

    from synthprobe.backends.spec import cache_root
    from synthprobe.version import __version__

    key = {
        "fingerprint": fingerprint,
        "dtype": str(backend.dtype),
        "device": str(getattr(backend, "device", "")),
        "bos": bool(getattr(backend, "bos", False)),
        "attn": str(getattr(model.config, "_attn_implementation", None)),
        "model_class": f"{type(model).__module__}.{type(model).__qualname__}",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "synthprobe": __version__,
        "probe": repr(_PROBE),
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()
    return cache_root() / "onepass" / f"{digest[:32]}.json"


def _read_verdict(path: Path | None) -> dict[str, Any] | None:
    """A stored verdict, or None when there is none or it is not exactly what we write."""
    if path is None:
        return None
    from synthprobe.io.read import loads_json

    try:
        data = loads_json(path.read_text(encoding="utf-8"), path=path)
    except (OSError, UnicodeDecodeError, InputError):
        return None
    if (
        isinstance(data, dict)
        and set(data) == {"onepass_ok", "onepass_reason", "logits_mode"}
        and isinstance(data["onepass_ok"], bool)
        and data["logits_mode"] in ("keep", "full")
        and (data["onepass_reason"] is None or isinstance(data["onepass_reason"], str))
    ):
        return data
    return None


def _write_verdict(path: Path | None, caps: dict[str, Any]) -> None:
    if path is None:
        return
    from synthprobe.io.write import atomic_write_json

    with contextlib.suppress(OSError, InputError):  # a read-only cache only costs the probe next time
        atomic_write_json(path, {k: caps[k] for k in ("onepass_ok", "onepass_reason", "logits_mode")})


def _check_lengths(backend, encoded: Sequence[EncodedItem], max_context: int) -> None:
    limit = getattr(backend, "max_positions", None)
    longest = max((e.longest_request for e in encoded), default=0)
    if limit and longest > limit:
        raise InputError(
            f"requests reach {longest} tokens but {backend.name} has only {limit} positions; "
            f"pass --max-context {limit} or less (now {max_context})",
            field="--max-context",
        )


def run_encoded(
    backend,
    encoded: list[EncodedItem],
    *,
    batch_size: int,
    scorer: str = "onepass",
    progress: bool = True,
    on_item: ItemCallback | None = None,
    desc: str | None = None,
    tokenize_s: float = 0.0,
    max_context: int = 1024,
) -> ScoreRun:
    from synthprobe.backends.hf.onepass import forward_tokens, score_onepass
    from synthprobe.backends.hf.reference import score_reference

    if scorer not in SCORERS:
        raise InputError(f"unknown scorer {scorer!r}; expected one of {', '.join(SCORERS)}", field="--scorer")
    if batch_size < 1:
        raise InputError(f"batch size {batch_size} must be at least 1", field="--batch-size")
    _check_lengths(backend, encoded, max_context)
    used, reason, mode = scorer, None, "keep"
    if scorer == "onepass":
        reason = _structural_reason(backend.model, max((e.longest_request for e in encoded), default=0))
        if reason is None:
            ok, reason, mode = check_onepass(backend)
        if reason is not None:
            used = "reference"
    t0 = time.perf_counter()
    # Out-of-memory errors propagate unchanged, so a caller can retry with a smaller batch.
    if used == "onepass":
        scores = score_onepass(
            backend.model,
            encoded,
            batch_size=batch_size,
            pad_id=backend.pad_token_id,
            progress=progress,
            on_item=on_item,
            logits_mode=mode,
            desc=desc or "scoring (one-pass)",
        )
        fed = forward_tokens(encoded)
    else:
        scores = score_reference(
            backend.model,
            encoded,
            batch_size=batch_size,
            pad_id=backend.pad_token_id,
            progress=progress,
            on_item=on_item,
            desc=desc or "scoring (reference)",
        )
        fed = sum(e.reference_tokens for e in encoded)
    eval_s = time.perf_counter() - t0
    return ScoreRun(
        scores=scores,
        scorer_requested=scorer,
        scorer_used=used,
        fallback_reason=reason,
        n_items=len(encoded),
        truncated=sum(e.truncated for e in encoded),
        request_tokens=sum(e.reference_tokens for e in encoded),
        forward_tokens=fed,
        tokenize_s=tokenize_s,
        eval_s=eval_s,
        encoded=encoded,
    )


def score_items(
    backend,
    items: Sequence[Any],
    *,
    batch_size: int = 32,
    max_context: int = 1024,
    scorer: str = "onepass",
    progress: bool = True,
    on_item: ItemCallback | None = None,
    source: str | None = None,
    desc: str | None = None,
) -> ScoreRun:
    """Score multiple-choice items (objects with ``ctx``, ``endings`` and optionally ``line``)."""
    t0 = time.perf_counter()
    encoded = encode_items(
        backend.tokenizer,
        items,
        max_context=max_context,
        bos_id=backend.bos_token_id if backend.bos else None,
        source=source,
    )
    tok_s = time.perf_counter() - t0
    return run_encoded(
        backend,
        encoded,
        batch_size=batch_size,
        scorer=scorer,
        progress=progress,
        on_item=on_item,
        desc=desc,
        tokenize_s=tok_s,
        max_context=max_context,
    )


def score_pairs(
    backend,
    pairs: Sequence[tuple[str, str]],
    *,
    batch_size: int = 32,
    max_context: int = 1024,
    progress: bool = False,
    scorer: str = "onepass",
) -> list[EndingScore]:
    """``log P(continuation | context)`` for each pair; an empty context becomes BOS (else EOS).

    Pairs with the same context are scored as one item, so the context runs once.
    """
    groups, items = group_pairs(pairs)
    empty = backend.bos_token_id if backend.bos_token_id is not None else backend.tokenizer.eos_token_id
    encoded = encode_items(
        backend.tokenizer,
        items,
        max_context=max_context,
        bos_id=backend.bos_token_id if backend.bos else None,
        source="pairs",
        empty_ctx_id=empty,
    )
    run = run_encoded(
        backend,
        encoded,
        batch_size=batch_size,
        scorer=scorer,
        progress=progress,
        desc="log-likelihood",
        max_context=max_context,
    )
    out: list[EndingScore | None] = [None] * len(pairs)
    for ks, scores in zip(groups, run.scores):
        for k, s in zip(ks, scores):
            out[k] = s
    return out  # type: ignore[return-value]
