"""Results documents of generated answers (letters, free) for the report's tests, built by hand
to the results-file layout the scorer writes (records with ``outcome``/``rule``/``pred``/
``correct``; summaries under ``primary`` = accuracy; an ``extraction`` block), from the committed
log-likelihood benchmark's items; and the older layout (generated counts kept as acc_norm)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from synthprobe.metrics.stats import binom_p, wilson_ci

ROOT = Path(__file__).resolve().parents[2]
DA_BENCH = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"

LABELS = {
    "letters": "accuracy: the letter read back names the correct option, over all items "
    "(unparsed and inconsistent answers count wrong)",
    "free": "accuracy: the value read back equals the answer, over all items "
    "(unparsed, echoed and cut-off answers count wrong)",
}
#: item index % 10 -> the outcome given to it (the rest are answered)
OUTCOME_AT = {
    "letters": {0: "unparsed", 1: "inconsistent", 2: "cut_off"},
    "free": {0: "unparsed", 1: "echo", 2: "cut_off", 3: "off-list"},
}


def bench_doc() -> dict:
    return json.loads(DA_BENCH.read_text(encoding="utf-8"))


def _acc(correct: int, total: int, chance: float | None) -> dict:
    return {
        "correct": correct,
        "total": total,
        "acc": correct / total if total else None,
        "ci95": list(wilson_ci(correct, total)) if total else None,
        "chance": chance,
        "p_vs_chance": binom_p(correct, total, chance) if chance is not None and total else None,
    }


def _group(recs: list[dict], chance: float | None) -> dict:
    k, n = sum(r["correct"] for r in recs), len(recs)
    return {
        "n": n,
        "correct": k,
        "accuracy": k / n,
        "ci95": list(wilson_ci(k, n)),
        "p_vs_chance": binom_p(k, n, chance) if chance is not None else None,
    }


def generated_entry(loglik: dict, protocol: str, *, name: str | None = None) -> dict:
    """A letters or free entry over the loglik entry's items: the loglik pick as the answer, but
    every tenth item unparsed, inconsistent (letters) or an echo (free), cut off, and (free) a
    value that matches no option."""
    block = loglik["results"]["deeparithmark"]
    recs = []
    for i, p in enumerate(block["predictions"]):
        outcome = OUTCOME_AT[protocol].get(i % 10, "answered")
        pick = p["pred_acc_norm"]
        rec = {
            k: p[k]
            for k in (
                "id",
                "line",
                "category",
                "template",
                "depth",
                "topic",
                "label",
                "n_endings",
                "option_values",
                "option_sources",
                "answer_rank",
            )
        }
        letter = "ABCD"[pick]
        value = p["option_values"][pick]
        rec |= {
            "protocol": protocol,
            "raw": f"ANSWER: {letter if protocol == 'letters' else value}",
            "parsed": letter if protocol == "letters" else value,
            "rule": "strict",
            "unparsed_reason": None,
            "outcome": "answered",
            "outcome_note": None,
            "written_option": None,
            "resolved_by": None,
            "pred": pick,
            "correct": pick == p["label"],
        }
        if outcome == "unparsed":
            rec |= {
                "raw": "I am not sure.",
                "parsed": None,
                "rule": "unparsed",
                "unparsed_reason": "no number found",
                "outcome": "unparsed",
                "pred": None,
                "correct": False,
            }
        elif outcome == "inconsistent":
            other = (pick + 1) % 4
            rec |= {
                "raw": f"ANSWER: {letter}. {p['option_values'][other]}",
                "outcome": "inconsistent",
                "outcome_note": "the letter and the value written with it name different options",
                "written_option": other,
                "pred": None,
                "correct": False,
            }
        elif outcome == "echo":
            rec |= {
                "raw": "There are 12 apples.",
                "parsed": 12,
                "rule": "last",
                "outcome": "echo",
                "outcome_note": "the number only repeats one of the question",
                "pred": None,
                "correct": False,
            }
        elif outcome == "cut_off":
            rec |= {
                "raw": "Let us work it out step by step: first",
                "parsed": None,
                "rule": "unparsed",
                "unparsed_reason": "cut off",
                "outcome": "cut_off",
                "outcome_note": "cut off by the token budget before it stated an answer",
                "pred": None,
                "correct": False,
            }
        elif outcome == "off-list":
            rec |= {"raw": "ANSWER: 999999", "parsed": 999999, "pred": None, "correct": False}
        recs.append(rec)
    summary_ll = block["summary"]
    chance = None if protocol == "free" else summary_ll["chance"]
    k = sum(r["correct"] for r in recs)
    by_depth: dict[str, list[dict]] = {}
    by_template: dict[str, list[dict]] = {}
    for r in recs:
        by_depth.setdefault(str(r["depth"]), []).append(r)
        by_template.setdefault(r["template"], []).append(r)
    counts = {
        o: sum(r["outcome"] == o for r in recs) for o in ("answered", "unparsed", "inconsistent", "echo", "cut_off")
    }
    rules = {rule: sum(r["rule"] == rule for r in recs) for rule in ("strict", "lax", "last", "value", "unparsed")}
    answered = [r for r in recs if r["outcome"] == "answered"]
    n = len(recs)
    summary = {
        "n": n,
        "chance": summary_ll["chance"],
        "primary": "accuracy",
        "primary_label": LABELS[protocol],
        "metrics": {"accuracy": _acc(k, n, chance)},
        "by_depth": {d: _group(rs, chance) for d, rs in by_depth.items()},
        "by_template": {t: _group(rs, chance) for t, rs in by_template.items()},
    }
    extraction = {
        "rules": rules,
        "rule_shares": {key: v / n for key, v in rules.items()},
        "unparsed": counts["unparsed"],
        "unparsed_share": counts["unparsed"] / n,
        "outcomes": counts,
        "outcome_shares": {key: v / n for key, v in counts.items()},
        "answered_accuracy": _acc(sum(r["correct"] for r in answered), len(answered), None),
        "resolve": "none",
    }
    entry = {
        "model": copy.deepcopy(loglik["model"]),
        "settings": copy.deepcopy(loglik["settings"]),
        "protocol": {"name": protocol, "cot": False},
        "results": {
            "deeparithmark": {
                "dataset": block["dataset"],
                "protocol": protocol,
                "summary": summary,
                "extraction": extraction,
                "predictions": recs,
            }
        },
    }
    if name is not None:
        entry["model"]["name"] = name
    return entry


def old_layout(entry: dict) -> dict:
    """The same generated entry as files written before ``primary``: counts under acc_norm,
    records with pred_acc_norm/correct_acc_norm, no outcomes (only the unparsed count)."""
    old = copy.deepcopy(entry)
    block = old["results"]["deeparithmark"]
    s = block["summary"]
    del s["primary"], s["primary_label"]
    acc = s["metrics"].pop("accuracy")
    # what the older scorer wrote: acc_norm (and its duplicates) for a generated answer, a p-value for free too
    s["metrics"] = {"acc_norm": acc | {"p_vs_chance": 0.5}, "acc": acc, "acc_char": acc, "soft": 0.25}
    for g in (*s["by_depth"].values(), *s["by_template"].values()):
        g["acc_norm"] = g.pop("accuracy")
    for r in block["predictions"]:
        for key in ("outcome", "outcome_note", "written_option", "resolved_by"):
            r.pop(key)
        pick = r.pop("pred")
        r["pred_acc_norm"] = -1 if pick is None else pick
        r["correct_acc_norm"] = r.pop("correct")
    ext = block["extraction"]
    block["extraction"] = {k: ext[k] for k in ("rules", "unparsed", "unparsed_share")}
    return old


def write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
