"""``--protocol letterprob``: ``letters``' question answered in one pass, from the first token's
distribution (MMLU's original protocol, HELM's joint multiple choice with log-probabilities).
Pure: from the engine's :class:`~synthprobe.backends.base.FirstToken` (as its ``to_dict``, the
form the score cache keeps) to records and the results block.

The answer
    The letters A-D are read as first tokens twice, bare (``"A"``) and after a space (``" A"``);
    the tokenisation whose four letters hold the larger probability mass is read, and the answer
    is its most likely letter (ties: the first). Every item gets an answer. The item's *letter
    mass* is the sum of the four probabilities read: a model that puts 5 % on letters is not
    answering, so the block gives the mass's distribution. A server that returns only its
    ``top_k`` tokens gives no probability for a letter outside them: it counts as 0 there, the
    mass is a lower bound and the item says how many letters were missing (an item with no
    letter at all among them has no answer and counts wrong).
Certification
    The item is *certified* when the most likely first token is the letter read (in the
    tokenisation read) and the greedy answer ends after it: the one extra decoding step ends the
    answer (end of sequence or a stop string) and the answer's text, stripped, is that letter.
    Then the ``letters`` protocol's greedy answer (same prompt, same stop) is that letter, by
    construction. Any other item falls back to its full ``letters`` answer (its budget and stop):
    its row of the same decoding loop decodes on, with no second pass over its prompt, and the
    answer is read back exactly as ``letters`` reads it; either way each item has a
    *letters-equivalent* answer, whose accuracy and agreement with the one-pass letter the block
    reports.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from synthprobe.metrics.extract import LETTERS, PROTOCOL_OUTCOMES
from synthprobe.metrics.stats import accuracy_block
from synthprobe.scoring.records import generation_record, item_fields, value_rank

#: Below this letter mass an item is counted as barely answering with a letter.
LOW_MASS = 0.5
#: How a generation that ends its answer finishes (:class:`~synthprobe.backends.base.Generation`).
ENDED = ("eos", "stop")


def _prob(lp: Any) -> float:
    return math.exp(lp) if isinstance(lp, (int, float)) and math.isfinite(lp) else 0.0


def read_letters(first: dict[str, Any], n_options: int) -> dict[str, Any]:
    """The one-pass answer of one item from its first-token record (``FirstToken.to_dict()``):
    the tokenisation read (``"A"`` or ``" A"``), the letters' probabilities in it, the mass
    of each tokenisation, the answer's index (None: no letter known) and the letters a ``top_k``
    answer left out."""
    cands = first.get("candidates") or {}
    groups = {
        "A": [cands.get(x) for x in LETTERS[:n_options]],
        " A": [cands.get(" " + x) for x in LETTERS[:n_options]],
    }
    probs = {k: [_prob(v) for v in vals] for k, vals in groups.items()}
    mass = {k: sum(v) for k, v in probs.items()}
    read = "A" if mass["A"] >= mass[" A"] else " A"
    known = [i for i, v in enumerate(groups[read]) if v is not None]
    pred = max(known, key=lambda i: (probs[read][i], -i)) if known else None
    missing = other_missing = 0
    if first.get("top_k") is not None:  # a server's top_k: a letter outside it has no probability
        missing = sum(1 for v in groups[read] if v is None)
        other_missing = sum(1 for v in groups[" A" if read == "A" else "A"] if v is None)
    return {
        "tokenisation": read,
        "probs": probs[read],
        "mass": mass[read],
        "mass_other": mass[" A" if read == "A" else "A"],
        "pred": pred,
        "letters_missing": missing,
        "other_missing": other_missing,
    }


def certified(first: dict[str, Any], reading: dict[str, Any]) -> bool:
    """Whether the greedy answer is the letter read and ends after it (module docstring)."""
    pred = reading["pred"]
    if pred is None:
        return False
    letter = LETTERS[pred]
    token = letter if reading["tokenisation"] == "A" else " " + letter
    top = first.get("top") or []
    return (
        bool(top)
        and top[0][0] == token
        and first.get("finish") in ENDED
        and str(first.get("text", "")).strip() == letter
    )


def letterprob_record(item: Any, first: dict[str, Any], *, resolve: str = "none") -> dict[str, Any]:
    """One item's record: the one-pass letter (``pred``, ``correct``) with what it was read from,
    whether it is certified, and the letters-equivalent answer (``letters``): the greedy answer of
    the same decoding loop (``first``'s ``text``, ``finish``, ``n_tokens``; the letter alone when
    certified, else the full ``letters`` answer its row decoded on to), read back by
    :func:`synthprobe.scoring.records.generation_record`."""
    n = len(item.endings)
    base = item_fields(item)
    reading = read_letters(first, n)
    pred = reading["pred"]
    ok = certified(first, reading)
    as_letters = generation_record(
        item,
        "letters",
        str(first.get("text", "")),
        finish=first.get("finish"),
        n_tokens=first.get("n_tokens"),
        resolve=resolve,
    )
    values, sources = base["option_values"], base["option_sources"]
    top = (first.get("top") or [[None, None]])[0]
    base.update(
        {
            "protocol": "letterprob",
            "pred": pred,
            "correct": pred is not None and pred == base["label"],
            "chosen_source": (sources[pred] if sources else None) if pred is not None else "no letter",
            "chosen_rank": value_rank(values, pred) if pred is not None and values else None,
            **reading,
            "top_token": top[0],
            "top_logprob": top[1],
            "top_k": first.get("top_k"),
            "certified": ok,
            "first_text": first.get("text"),
            "first_finish": first.get("finish"),
            "letters": {
                "fallback": not ok,
                "raw": as_letters["raw"],
                "finish": as_letters["finish"],
                "n_generated_tokens": as_letters["n_generated_tokens"],
                "parsed": as_letters["parsed"],
                "pred": as_letters["pred"],
                "correct": as_letters["correct"],
                "outcome": as_letters["outcome"],
                "rule": as_letters["rule"],
            },
            "agrees_with_letters": as_letters["pred"] == pred,
            # the letter the letters answer wrote, credited or not (an inconsistent "A. $6966")
            "same_letter_written": pred is not None and as_letters["parsed"] == LETTERS[pred],
        }
    )
    return base


def _quantile(xs: Sequence[float], q: float) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _agreement(rs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``agree``: the letters answer names the one-pass letter (an answer the letters rules do not
    credit, unparsed or inconsistent, never agrees); ``written``: it wrote that letter at all."""
    k = sum(1 for r in rs if r["agrees_with_letters"])
    w = sum(1 for r in rs if r.get("same_letter_written"))
    return {"n": len(rs), "agree": k, "share": k / len(rs) if rs else None, "written": w}


def letterprob_block(records: Sequence[dict[str, Any]], *, top_k: int | None) -> dict[str, Any]:
    """The results block ``letterprob`` of a run (``results.deeparithmark.letterprob``): how many
    items were certified and how many fell back to a ``letters`` answer, the letter mass's
    distribution, the tokenisation read, the letters-equivalent answers (their accuracy and
    outcomes) and their agreement with the one-pass letter (over all items, the certified ones
    and the fallbacks)."""
    n = len(records)
    cert = [r for r in records if r["certified"]]
    back = [r for r in records if not r["certified"]]
    return {
        "top_k": top_k,
        "certified": len(cert),
        "certified_share": _share(len(cert), n),
        "fallback": len(back),
        "tokenisation": {k: sum(1 for r in records if r["tokenisation"] == k) for k in ("A", " A")},
        "mass": _mass_summary(records),
        "letters_missing_items": sum(1 for r in records if r["letters_missing"]),
        "no_letter": sum(1 for r in records if r["pred"] is None),
        "top_is_letter": sum(1 for r in records if (r["top_token"] or "").strip() in LETTERS[: r["n_endings"]]),
        "as_letters": _as_letters(records),
        "agreement": {
            "all": _agreement(records),
            "certified": _agreement(cert),
            "fallback": _agreement(back),
        },
        "certified_accuracy": _share(sum(1 for r in cert if r["correct"]), len(cert)),
    }


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _mass_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The letter mass's quartiles, minimum and the items below one half (a lower bound where a
    server's top tokens left a letter out)."""
    masses = [r["mass"] for r in records]
    low = sum(1 for m in masses if m < LOW_MASS)
    return {
        "median": _quantile(masses, 0.5),
        "q25": _quantile(masses, 0.25),
        "q75": _quantile(masses, 0.75),
        "min": min(masses) if masses else None,
        "below_half": low,
        "below_half_share": _share(low, len(records)),
        "lower_bound": any(r["letters_missing"] for r in records),
    }


def _as_letters(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The letters-equivalent answers: their accuracy against the items' own chance, and
    their outcomes."""
    n = len(records)
    outcomes = Counter(r["letters"]["outcome"] for r in records)
    chance = sum(1.0 / r["n_endings"] for r in records) / n if n else float("nan")
    acc = accuracy_block(sum(1 for r in records if r["letters"]["correct"]), n, chance)
    return {
        "accuracy": {k: acc[k] for k in ("correct", "total", "acc", "ci95")},
        "outcomes": {k: outcomes.get(k, 0) for k in PROTOCOL_OUTCOMES["letters"]},
    }


def format_letterprob(block: dict[str, Any], n: int) -> list[str]:
    """The console lines of a ``letterprob`` run, under its accuracy line."""
    lp = block["letterprob"]
    t = block.get("timing") or {}
    mass = lp["mass"]
    agree = lp["agreement"]["all"]
    acc = lp["as_letters"]["accuracy"]
    out = [
        f"  certified {lp['certified']} of {n} ({100 * (lp['certified_share'] or 0):.1f} %: the greedy answer is the "
        f"letter read and ends there); {lp['fallback']} decoded on to a full letters answer "
        f"(budget {block.get('max_new_tokens')})",
        f"  letter mass: median {100 * (mass['median'] or 0):.1f} %, quartiles {100 * (mass['q25'] or 0):.1f}-"
        f"{100 * (mass['q75'] or 0):.1f} %, {mass['below_half']} of {n} below 50 %"
        + (" (lower bounds: some letters were outside the server's top tokens)" if mass["lower_bound"] else "")
        + "; read as "
        + ", ".join(f"{k!r} {v}" for k, v in lp["tokenisation"].items()),
        f"  as letters generation: accuracy {100 * (acc['acc'] or 0):.2f} % ({acc['correct']} of {acc['total']}); "
        f"agrees with the one-pass letter on {agree['agree']} of {agree['n']} items, "
        f"writes it on {agree['written']} (inconsistent answers included)"
        + (
            f" (certified {lp['agreement']['certified']['agree']} of {lp['agreement']['certified']['n']})"
            if lp["certified"]
            else ""
        ),
    ]
    if t.get("eval_s") is not None:
        out.append(
            f"  time: {t['eval_s']:.2f} s for the one decoding loop "
            f"({lp['certified']} rows stopped after the letter, {lp['fallback']} decoded on)"
        )
    return out
