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

A generated answer (``--protocol letters|free``, :func:`generation_record`) has the item's
fields (id … answer_rank) plus ``protocol``, ``raw`` (the generated text), ``parsed`` (what
was read: a letter or a number; a clock time in minutes after midnight), ``rule`` (strict, lax,
last, value or unparsed: the rule that read it), ``unparsed_reason``, ``outcome`` (answered,
unparsed, inconsistent, echo or cut_off: :data:`synthprobe.metrics.extract.OUTCOMES`) with
``outcome_note`` (why it is not an answer, in words), ``written_option`` (letters: the option
whose value is written beside the letter), ``resolved_by`` (null, or the ``--resolve`` rule
that credited an inconsistent answer), ``finish`` and ``n_generated_tokens``, ``cut_off``
(``finish == "length"``: the text ran into the budget), and the answer: ``pred`` (the option
picked, None for none) and ``correct``. It has none of the log-likelihood fields (no
``logprob``, ``pred_acc*``, ``correct_acc*`` or ``soft``). ``chosen_source`` is the named
mistake picked (letters) or whose value was written (free), ``"none of the options"`` for
another value, ``"unparsed"`` when nothing was read, and the outcome (``"inconsistent"``,
``"echo"``, ``"cut_off"``) for an answer that does not count.

A server may score an ending -inf (impossible); the results file then holds ``null`` in its
``logprob``/``per_token``/``per_char`` places (JSON has no infinity).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthprobe.backends.base import EndingScore
from synthprobe.metrics.choice import argmax_first, softmax
from synthprobe.metrics.extract import LETTERS, extract_letter, extract_number
from synthprobe.metrics.extract import resolve as resolve_letter
from synthprobe.prompts.protocols import clock_pm, is_clock

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


def item_fields(item: Any, n: int | None = None) -> dict[str, Any]:
    """The fields every record has whatever the protocol: where the item is and what it asks
    (``n``: the number of endings, by default the item's own)."""
    md = getattr(item, "metadata", None) or {}
    n = len(item.endings) if n is None else n
    depth = md.get("depth")
    return {
        "id": str(item.id),
        "line": getattr(item, "line", None),
        "category": getattr(item, "category", None),
        "template": md.get("template"),
        "depth": depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        "topic": md.get("topic"),
        "label": int(item.label),
        "n_endings": n,
        "option_values": _meta_list(md, "option_values", n),
        "option_sources": _meta_list(md, "option_sources", n),
        "answer_rank": md.get("answer_rank"),
    }


def item_record(item: Any, scores: Sequence[EndingScore], *, truncated: bool = False) -> dict[str, Any]:
    n = len(scores)
    base = item_fields(item, n)
    logprob = [s.logprob for s in scores]
    per_token = [s.per_token for s in scores]
    per_char = [s.per_char for s in scores]
    label = base["label"]
    p_acc, p_norm, p_char = argmax_first(logprob), argmax_first(per_token), argmax_first(per_char)
    values, sources = base["option_values"], base["option_sources"]
    return {
        **{k: base[k] for k in ("id", "line", "category", "template", "depth", "topic")},
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
        "answer_rank": base["answer_rank"],
        "chosen_source": sources[p_norm] if sources else None,
        "chosen_rank": value_rank(values, p_norm) if values else None,
        "truncated": truncated,
    }


def build_records(
    items: Sequence[Any], scores: Sequence[Sequence[EndingScore]], truncated: Sequence[bool] | None = None
) -> list[dict[str, Any]]:
    if truncated is None:
        truncated = [False] * len(items)
    return [item_record(it, sc, truncated=t) for it, sc, t in zip(items, scores, truncated)]


def _option_index(item: Any, value: Any) -> int | None:
    values = item.metadata.get("option_values") or []
    hits = [i for i, v in enumerate(values) if isinstance(v, (int, float)) and float(v) == float(value)]
    return hits[0] if len(hits) == 1 else None


def record_correct(rec: dict[str, Any]) -> bool:
    """Whether a record's answer is right under its protocol's own metric: ``correct`` for a
    generated answer, ``correct_acc_norm`` for a log-likelihood record (older files' generated
    records hold both)."""
    return bool(rec["correct"] if "correct" in rec else rec["correct_acc_norm"])


def generation_record(
    item: Any,
    protocol: str,
    text: str,
    *,
    finish: str | None = None,
    n_tokens: int | None = None,
    resolve: str = "none",
) -> dict[str, Any]:
    """The record of one generated answer (module docstring). ``resolve``: how an inconsistent
    letter answer is credited (:data:`synthprobe.metrics.extract.RESOLVE`; ``none``: never)."""
    md = item.metadata
    n = len(item.endings)
    clock = is_clock(item)
    label = int(item.label)
    values = md.get("option_values") if isinstance(md.get("option_values"), list) else None
    sources = md.get("option_sources") if isinstance(md.get("option_sources"), list) else None
    cut_off = finish == "length"
    resolved_by = None
    if protocol == "letters":
        ex = extract_letter(
            text,
            n_options=n,
            option_values=values,
            options=None if values else item.endings,
            clock=clock,
            clock_pm=clock_pm(item),
            cut_off=cut_off,
        )
        letter, resolved_by = resolve_letter(ex, resolve, n_options=n)
        pred = LETTERS.index(letter) if letter is not None else None
        correct = pred == label
    else:
        ex = extract_number(
            text,
            unit=str(md.get("unit") or ""),
            clock=clock,
            clock_pm=clock_pm(item),
            question=item.ctx,
            cut_off=cut_off,
        )
        pred = _option_index(item, ex.answer) if ex.counts else None
        gold = values[label] if values else None
        correct = ex.counts and gold is not None and float(ex.answer) == float(gold)
    if ex.outcome not in ("answered", "unparsed") and resolved_by is None:
        chosen_source = ex.outcome
    elif pred is not None and sources:
        chosen_source = sources[pred]
    elif ex.parsed:
        chosen_source = "none of the options"
    else:
        chosen_source = "unparsed"
    rec = item_fields(item)
    rec.update(
        {
            "protocol": protocol,
            "raw": text,
            "parsed": ex.answer,
            "rule": ex.rule,
            "unparsed_reason": ex.reason,
            "outcome": ex.outcome,
            "outcome_note": ex.note,
            "written_option": ex.written_option,
            "resolved_by": resolved_by,
            "finish": finish,
            "cut_off": cut_off,
            "n_generated_tokens": n_tokens,
            "pred": pred,
            "correct": bool(correct),
            "chosen_source": chosen_source,
            "chosen_rank": None,
        }
    )
    if pred is not None and values:
        rec["chosen_rank"] = value_rank(values, pred)
    return rec
