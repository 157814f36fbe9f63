"""Per-item records: everything the analysis and the results file need about one scored item.

A record is a plain dict (JSON-ready)::

    id, line, category (activity_label), template, depth, topic   # template/depth/topic from
                                                                   # metadata, None when absent
    protocol     how the item was put to the model: "loglik" (each ending scored by its
                 log-likelihood); records written before the field existed are "loglik" too
    label, n_endings
    logprob      [per ending]  summed log-prob of the ending tokens
    n_tokens     [per ending]
    n_chars      [per ending]
    per_token    [per ending]  logprob / n_tokens  (ArithMark 3.0 normalisation)
    per_char     [per ending]  logprob / n_chars   (lm-eval's acc_norm normalisation)
    is_greedy    [per ending]
    pred_acc, pred_acc_norm, pred_acc_char         argmax, ties to the lowest index
    correct_acc, correct_acc_norm, correct_acc_char
    soft         softmax(per_token)[label]
    option_values, option_sources, answer_rank     from metadata when present, else None
    chosen_source  option_sources[pred_acc_norm]   (None without metadata)
    chosen_rank    rank of option_values[pred_acc_norm] among the values, 0 = smallest
    truncated    whether the context was left-truncated for any ending
"""

from __future__ import annotations

from typing import Any, Sequence

from synthprobe.backends.base import EndingScore
from synthprobe.metrics.choice import argmax_first, softmax


#: how these records score an item: every ending by its log-likelihood
PROTOCOL = "loglik"


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.replace(",", ""))
        except ValueError:
            return None
    return None


def value_rank(values: Sequence[Any], index: int) -> int | None:
    """Rank (0 = smallest) of ``values[index]`` among numeric ``values``; None if not all numeric."""
    nums = [_number(v) for v in values]
    if any(v is None for v in nums):
        return None
    return sum(1 for v in nums if v < nums[index])  # type: ignore[operator]


def _meta_list(md: dict, key: str, n: int) -> list | None:
    v = md.get(key)
    return list(v) if isinstance(v, (list, tuple)) and len(v) == n else None


def item_record(item: Any, scores: Sequence[EndingScore], *, truncated: bool = False) -> dict[str, Any]:
    md = getattr(item, "metadata", None) or {}
    n = len(scores)
    logprob = [s.logprob for s in scores]
    per_token = [s.per_token for s in scores]
    per_char = [s.per_char for s in scores]
    label = int(item.label)
    p_acc, p_norm, p_char = argmax_first(logprob), argmax_first(per_token), argmax_first(per_char)
    values = _meta_list(md, "option_values", n)
    sources = _meta_list(md, "option_sources", n)
    depth = md.get("depth")
    return {
        "id": str(item.id),
        "line": getattr(item, "line", None),
        "category": getattr(item, "category", None),
        "template": md.get("template"),
        "depth": depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        "topic": md.get("topic"),
        "protocol": PROTOCOL,
        "label": label,
        "n_endings": n,
        "logprob": logprob,
        "n_tokens": [s.n_tokens for s in scores],
        "n_chars": [s.n_chars for s in scores],
        "per_token": per_token,
        "per_char": per_char,
        "is_greedy": [s.is_greedy for s in scores],
        "pred_acc": p_acc,
        "pred_acc_norm": p_norm,
        "pred_acc_char": p_char,
        "correct_acc": p_acc == label,
        "correct_acc_norm": p_norm == label,
        "correct_acc_char": p_char == label,
        "soft": softmax(per_token)[label],
        "option_values": values,
        "option_sources": sources,
        "answer_rank": md.get("answer_rank"),
        "chosen_source": sources[p_norm] if sources else None,
        "chosen_rank": value_rank(values, p_norm) if values else None,
        "truncated": truncated,
    }


def build_records(items: Sequence[Any], scores: Sequence[Sequence[EndingScore]],
                  truncated: Sequence[bool] | None = None) -> list[dict[str, Any]]:
    if truncated is None:
        truncated = [False] * len(items)
    return [item_record(it, sc, truncated=t) for it, sc, t in zip(items, scores, truncated)]
