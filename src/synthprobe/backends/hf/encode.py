"""Tokenisation under the ArithMark 3.0 protocol, shared by every scorer.

* ``ctx`` and each ending are tokenised **separately** with ``add_special_tokens=False`` and
  concatenated; no BOS or EOS is added (``bos=True`` prepends the BOS token to the context;
  it is then part of the context and truncated with it).
* Whitespace is never moved: the leading space belongs to the ending.
* The context is **left-truncated** per ending to ``max_context - len(ending_ids)`` tokens, so
  the request ``ctx + ending`` never exceeds ``max_context``. Items where this happened are
  counted (``truncated``).
* An ending of ``max_context`` tokens or more cannot be scored and raises
  :class:`~synthprobe.errors.InputError`; so does an empty context or ending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from synthprobe.errors import InputError


@dataclass(frozen=True)
class EncodedItem:
    """The token ids of one item's context and endings."""

    ctx_ids: tuple[int, ...]
    ending_ids: tuple[tuple[int, ...], ...]
    n_chars: tuple[int, ...]
    max_context: int

    def visible_ctx_len(self, i: int) -> int:
        """Context tokens ending ``i`` sees after left-truncation."""
        return min(len(self.ctx_ids), self.max_context - len(self.ending_ids[i]))

    def visible_ctx(self, i: int) -> tuple[int, ...]:
        n = self.visible_ctx_len(i)
        return self.ctx_ids[len(self.ctx_ids) - n :]

    @property
    def truncated(self) -> bool:
        return any(self.visible_ctx_len(i) < len(self.ctx_ids) for i in range(len(self.ending_ids)))

    @property
    def longest_request(self) -> int:
        return max(self.visible_ctx_len(i) + len(e) for i, e in enumerate(self.ending_ids))

    @property
    def reference_tokens(self) -> int:
        """Tokens a per-ending scorer feeds through the model for this item."""
        return sum(self.visible_ctx_len(i) + len(e) for i, e in enumerate(self.ending_ids))


def _where(item: Any, source: str | None) -> dict[str, Any]:
    line = getattr(item, "line", None)
    return {"path": source, "line": line if line else None}


def encode_items(
    tokenizer,
    items: Sequence[Any],
    *,
    max_context: int,
    bos_id: int | None = None,
    source: str | None = None,
    empty_ctx_id: int | None = None,
) -> list[EncodedItem]:
    """Encode items that have ``ctx`` and ``endings`` (strings).

    ``empty_ctx_id``: for free log-likelihood pairs, an empty context becomes this single
    token (lm-eval uses BOS, else EOS); for multiple-choice items it is ``None`` and an empty
    context is an error.
    """
    if max_context < 2:
        raise InputError(f"max context {max_context} is too small; expected at least 2", field="--max-context")
    texts: list[str] = []
    for item in items:
        texts.append(item.ctx)
        texts.extend(item.endings)
    ids = tokenizer(texts, add_special_tokens=False)["input_ids"] if texts else []
    out: list[EncodedItem] = []
    k = 0
    for item in items:
        ctx = list(ids[k])
        k += 1
        endings = []
        for j, text in enumerate(item.endings):
            e = tuple(ids[k])
            k += 1
            if not e:
                raise InputError(f"ending {j} {text!r} tokenises to nothing", field="endings", **_where(item, source))
            if len(e) >= max_context:
                raise InputError(
                    f"ending {j} is {len(e)} tokens long; it must be shorter than --max-context {max_context}",
                    field="endings",
                    **_where(item, source),
                )
            endings.append(e)
        prefix = bos_id
        if not ctx:
            if empty_ctx_id is None:
                raise InputError(
                    "context tokenises to nothing; expected a non-empty context", field="ctx", **_where(item, source)
                )
            ctx = [empty_ctx_id]
            if empty_ctx_id == bos_id:
                prefix = None  # the stand-in token already is BOS
        if prefix is not None:
            ctx = [prefix] + ctx
        out.append(
            EncodedItem(
                ctx_ids=tuple(ctx),
                ending_ids=tuple(endings),
                n_chars=tuple(len(t) for t in item.endings),
                max_context=max_context,
            )
        )
    return out


def group_pairs(pairs: Sequence[Any]) -> tuple[list[list[int]], list[SimpleNamespace]]:
    """Free ``(context, continuation)`` pairs as multiple-choice items, one per distinct context
    (so the context runs once): returns each item's pair positions and the items, which
    :func:`encode_items` takes. A pair that is not two strings with a non-empty continuation is
    an :class:`InputError`."""
    groups: dict[str, list[int]] = {}
    for k, pair in enumerate(pairs):
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], str)
            or not pair[1]
        ):
            raise InputError(f"pair {k}: expected (context, non-empty continuation) strings, got {pair!r}")
        groups.setdefault(pair[0], []).append(k)
    items = [
        SimpleNamespace(ctx=ctx, endings=tuple(pairs[k][1] for k in ks), line=ks[0] + 1) for ctx, ks in groups.items()
    ]
    return list(groups.values()), items
