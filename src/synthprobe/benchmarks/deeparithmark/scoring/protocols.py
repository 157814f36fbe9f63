"""The protocol effect: one model asked two ways (``--protocol loglik,letters,free``), compared
item by item. Pure: reads results entries (dicts) with their per-item predictions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from synthprobe.metrics.extract import LETTERS
from synthprobe.metrics.stats import paired_difference

#: Each protocol's metric in one line: the headline every output gives it (the scorer writes it
#: as ``summary.primary_label``; the report uses it for files that do not).
PRIMARY_LABEL = {
    "loglik": "acc_norm: the ending with the highest mean log-likelihood per token",
    "letters": (
        "accuracy: the letter read back names the correct option, over all items "
        "(unparsed and inconsistent answers count wrong)"
    ),
    "letterprob": (
        "accuracy: the most likely letter as the answer's first token names the correct option, over "
        "all items (one pass; every item has a letter)"
    ),
    "free": (
        "accuracy: the value read back equals the answer, over all items "
        "(unparsed, echoed and cut-off answers count wrong)"
    ),
}


def _item_correct(block: dict[str, Any]) -> dict[str, tuple[Any, bool]] | None:
    preds = block.get("predictions")
    if not preds:
        return None
    return {
        str(r["id"]): (r.get("depth"), bool(r["correct_acc_norm"] if "correct" not in r else r["correct"]))
        for r in preds
    }


def _protocol(entry: dict[str, Any]) -> str:
    proto = entry.get("protocol") if isinstance(entry.get("protocol"), dict) else {}
    return str(proto.get("name", "loglik"))


def _named(entry: dict[str, Any], label: Callable[[dict[str, Any]], str]) -> str:
    """The side's label, always opening with its protocol (a log-likelihood run under a chat
    template is labelled by its template alone)."""
    text = label(entry)
    return text if text.startswith(_protocol(entry)) else f"{_protocol(entry)} {text}".strip()


def _metric(entry: dict[str, Any]) -> str:
    """The metric a side is counted under: its summary's primary one (acc_norm, or accuracy)."""
    summary = entry["results"]["deeparithmark"].get("summary") or {}
    return str(summary.get("primary") or ("acc_norm" if _protocol(entry) == "loglik" else "accuracy"))


def letter_agreement(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """Per item, whether a ``letters`` run and a ``letterprob`` run of one model (either order)
    answer the same letter (a letters answer its rules do not credit never agrees; ``written``: the
    letters answer wrote the letter, credited or not); None for any other pair.
    ``certified``: the same over the items letterprob certified."""
    sides = {_protocol(a): a, _protocol(b): b}
    if set(sides) != {"letters", "letterprob"}:
        return None
    recs = {str(r["id"]): r for r in sides["letters"]["results"]["deeparithmark"].get("predictions") or []}
    gen = {i: r.get("pred") for i, r in recs.items()}
    one = sides["letterprob"]["results"]["deeparithmark"].get("predictions") or []
    pairs = [(r, gen[str(r["id"])]) for r in one if str(r["id"]) in gen]
    k = sum(1 for r, p in pairs if p is not None and p == r.get("pred"))
    # the letter written, credited or not (an inconsistent "A. $6966" wrote A)
    written = sum(
        1 for r, _ in pairs if isinstance(r.get("pred"), int) and recs[str(r["id"])].get("parsed") == LETTERS[r["pred"]]
    )
    cert = [(r, p) for r, p in pairs if r.get("certified")]
    kc = sum(1 for r, p in cert if p is not None and p == r.get("pred"))
    return {
        "n": len(pairs),
        "agree": k,
        "share": k / len(pairs) if pairs else None,
        "written": written,
        "certified": {"n": len(cert), "agree": kc, "share": kc / len(cert) if cert else None},
    }


def protocol_effect(
    entries: Sequence[dict[str, Any]], *, label: Callable[[dict[str, Any]], str]
) -> list[dict[str, Any]]:
    """For every model scored under several protocols in one file (``--protocol loglik,letters,
    free --save-predictions``): each other protocol against the first one, on the same items,
    overall and per depth: accuracies, the difference in points and the exact McNemar test
    (:func:`synthprobe.metrics.stats.paired_difference`). The log-likelihood side counts its
    primary metric (acc_norm); a generated answer counts when it is right (unparsed = wrong). Each
    block names both sides by their protocol and each side's metric (``reference_metric``,
    ``metric``).
    ``label(entry)`` names each side (:func:`synthprobe.results.variant_label`)."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for e in entries:
        chat = e.get("chat") or {}
        # one model is its weights under its name: two names for the same weights (--model a=X
        # --model b=X) are two models, each with its own protocols
        key = (
            e["model"].get("fingerprint"),
            e["model"]["name"],
            chat.get("chat_template_sha256"),
            chat.get("system_prompt_sha256"),
        )
        groups.setdefault(key, []).append(e)
    out: list[dict[str, Any]] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        ref = group[0]
        ref_items = _item_correct(ref["results"]["deeparithmark"])
        if ref_items is None:
            continue
        for other in group[1:]:
            got = _item_correct(other["results"]["deeparithmark"])
            if got is None:
                continue
            ids = [i for i in ref_items if i in got]
            rows = [{"depth": "all", **paired_difference([ref_items[i][1] for i in ids], [got[i][1] for i in ids])}]
            for d in sorted({ref_items[i][0] for i in ids if ref_items[i][0] is not None}):
                sub = [i for i in ids if ref_items[i][0] == d]
                rows.append({"depth": d, **paired_difference([ref_items[i][1] for i in sub], [got[i][1] for i in sub])})
            block = {
                "model": ref["model"]["name"],
                "reference": _named(ref, label),
                "other": _named(other, label),
                "reference_metric": _metric(ref),
                "metric": _metric(other),
                "rows": rows,
            }
            agree = letter_agreement(ref, other)
            if agree is not None:  # letters against letterprob: do the two answers name one letter?
                block["agreement"] = agree
            out.append(block)
    return out
