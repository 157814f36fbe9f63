"""Pure functions from per-item records (:mod:`synthprobe.scoring.records`) to the reported numbers.

``summarise(records)`` returns::

    n, chance, primary ("acc_norm"; "accuracy" for generated answers), primary_label (the
    metric named in one line, as every output shows it)
    metrics:   acc / acc_norm / acc_char -> {correct, total, acc, ci95 [Wilson], chance, p_vs_chance}
               soft -> mean over items of softmax(per-token scores)[label]
    by_depth, by_template, by_topic, by_category:
               {key: {n, correct, acc_norm, acc, acc_char, soft, ci95, p_vs_chance}}  (acc_norm based)

Generated answers (``--protocol letters|free``) have one metric, ``accuracy``: the answers read
back and right, over all items (unparsed, inconsistent, echoed and cut-off answers count
wrong). Their ``metrics`` is ``{"accuracy": {...}}`` and each group block
``{n, correct, accuracy, ci95, p_vs_chance}``: no log-likelihood metric appears.
    template_homogeneity: chi-square of acc_norm across templates {chi2, df, p, groups}
    rank_preference: how often the acc_norm choice is the smallest / largest option value
    mistake_profile: per template, how often each named option source was chosen

Groups whose key is missing in an item (e.g. no ``metadata.depth`` in an ArithMark 3.0 file)
are left out of that breakdown. ``chance`` is ``1 / n_endings`` (the mean of it when items
differ in their number of endings).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from synthprobe.benchmarks.deeparithmark.scoring.protocols import PRIMARY_LABEL
from synthprobe.metrics.stats import accuracy_block, chi2_homogeneity
from synthprobe.scoring.records import record_correct

METRICS = ("acc", "acc_norm", "acc_char")
PRIMARY = "acc_norm"
#: The metric of generated answers (``letters``, ``free``).
GENERATED = "accuracy"


def _generated(records: Sequence[dict]) -> str | None:
    """The protocol of generated records (letters / free), None for log-likelihood ones."""
    protocols = {r.get("protocol", "loglik") for r in records}
    gen = protocols - {"loglik"}
    return next(iter(gen)) if gen else None


def chance_level(records: Sequence[dict]) -> float:
    if not records:
        return float("nan")
    return sum(1.0 / r["n_endings"] for r in records) / len(records)


def group_block(records: Sequence[dict], chance: float) -> dict[str, Any]:
    n = len(records)
    k = sum(record_correct(r) for r in records)
    block = accuracy_block(k, n, chance)
    if _generated(records):
        return {
            "n": n,
            "correct": k,
            GENERATED: block["acc"],
            "ci95": block["ci95"],
            "p_vs_chance": block["p_vs_chance"],
        }
    return {
        "n": n,
        "correct": k,
        "acc_norm": block["acc"],
        "acc": sum(r["correct_acc"] for r in records) / n if n else float("nan"),
        "acc_char": sum(r["correct_acc_char"] for r in records) / n if n else float("nan"),
        "soft": sum(r["soft"] for r in records) / n if n else float("nan"),
        "ci95": block["ci95"],
        "p_vs_chance": block["p_vs_chance"],
    }


def _sort_key(key: Any) -> tuple:
    return (0, key, "") if isinstance(key, (int, float)) else (1, 0, str(key))


def breakdown(records: Sequence[dict], field: str) -> dict[str, dict[str, Any]]:
    """acc_norm (and friends) per value of ``field``; items without the field are skipped."""
    groups: dict[Any, list[dict]] = defaultdict(list)
    for r in records:
        if r.get(field) is not None:
            groups[r[field]].append(r)
    return {str(key): group_block(groups[key], chance_level(groups[key])) for key in sorted(groups, key=_sort_key)}


def template_homogeneity(records: Sequence[dict]) -> dict[str, Any]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r.get("template") is not None:
            groups[r["template"]].append(r)
    return chi2_homogeneity([(t, sum(record_correct(x) for x in rs), len(rs)) for t, rs in sorted(groups.items())])


def rank_preference(records: Iterable[dict]) -> dict[str, Any] | None:
    """Distribution of the chosen option's numeric rank (0 = smallest) for the primary metric's
    choice (acc_norm's, or a generated answer's pick)."""
    rs = [r for r in records if r.get("chosen_rank") is not None]
    if not rs:
        return None
    n_opts = max(r["n_endings"] for r in rs)
    chosen = Counter(r["chosen_rank"] for r in rs)
    answer = Counter(r["answer_rank"] for r in rs if isinstance(r.get("answer_rank"), int))
    n = len(rs)
    return {
        "by": GENERATED if _generated(rs) else PRIMARY,
        "n": n,
        "chosen_rank_counts": [chosen.get(i, 0) for i in range(n_opts)],
        "answer_rank_counts": [answer.get(i, 0) for i in range(n_opts)] if answer else None,
        "pick_smallest": sum(1 for r in rs if r["chosen_rank"] == 0) / n,
        "pick_largest": sum(1 for r in rs if r["chosen_rank"] == r["n_endings"] - 1) / n,
    }


def mistake_profile(records: Iterable[dict]) -> dict[str, dict[str, Any]] | None:
    """Per template: how often each named option source was offered and chosen (by the primary
    metric's choice; a generated answer that does not count is chosen as its outcome)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r.get("option_sources") and r.get("chosen_source") is not None:
            groups[r.get("template") or "(none)"].append(r)
    if not groups:
        return None
    out: dict[str, dict[str, Any]] = {}
    for template in sorted(groups):
        rs = groups[template]
        offered = Counter(s for r in rs for s in r["option_sources"])
        chosen = Counter(r["chosen_source"] for r in rs)
        out[template] = {
            "n": len(rs),
            "sources": {
                s: {"offered": offered[s], "chosen": chosen.get(s, 0), "rate": chosen.get(s, 0) / offered[s]}
                for s in sorted(offered, key=lambda s: (-chosen.get(s, 0), s))
            },
        }
    return out


def summarise(records: Sequence[dict]) -> dict[str, Any]:
    n = len(records)
    chance = chance_level(records)
    metrics: dict[str, Any] = {}
    generated = _generated(records)
    if generated:
        metrics[GENERATED] = accuracy_block(sum(record_correct(r) for r in records), n, chance)
    else:
        for m in METRICS:
            metrics[m] = accuracy_block(sum(r[f"correct_{m}"] for r in records), n, chance)
        metrics["soft"] = sum(r["soft"] for r in records) / n if n else float("nan")
    return {
        "n": n,
        "chance": chance,
        "primary": GENERATED if generated else PRIMARY,
        "primary_label": PRIMARY_LABEL[generated or "loglik"],
        "metrics": metrics,
        "truncated": sum(1 for r in records if r.get("truncated")),
        "by_depth": breakdown(records, "depth"),
        "by_template": breakdown(records, "template"),
        "by_topic": breakdown(records, "topic"),
        "by_category": breakdown(records, "category"),
        "template_homogeneity": template_homogeneity(records),
        "rank_preference": rank_preference(records),
        "mistake_profile": mistake_profile(records),
    }


#: The metric line of a letters run whose inconsistent answers a --resolve rule credits.
RESOLVED_LABEL = {
    "letter-first": (
        "accuracy: the letter read back names the correct option, over all items (unparsed answers "
        "count wrong; an inconsistent answer is credited by its letter: --resolve letter-first)"
    ),
    "value-first": (
        "accuracy: the letter read back names the correct option, over all items (unparsed answers "
        "count wrong; an inconsistent answer is credited by the option its value names: --resolve "
        "value-first)"
    ),
}


def extraction_block(records: list[dict[str, Any]], *, resolve: str = "none") -> dict[str, Any]:
    """How the generated answers were read (``results.deeparithmark.extraction``): the count and
    share read by each rule, the outcomes (answered, unparsed, inconsistent, echo, cut off)
    overall and per depth, the accuracy over the answered items alone, and the ``--resolve``
    rule in force."""
    from collections import Counter

    from synthprobe.metrics.extract import OUTCOMES
    from synthprobe.metrics.stats import accuracy_block

    n = len(records)
    rules = Counter(r["rule"] for r in records)
    outcomes = Counter(r["outcome"] for r in records)
    by_depth: dict[str, dict[str, Any]] = {}
    unparsed_by_depth: dict[str, dict[str, Any]] = {}
    for r in records:
        d = by_depth.setdefault(str(r["depth"]), {"n": 0, **{k: 0 for k in OUTCOMES}})
        d["n"] += 1
        d[r["outcome"]] += 1
        u = unparsed_by_depth.setdefault(str(r["depth"]), {"n": 0, "unparsed": 0})
        u["n"] += 1
        u["unparsed"] += r["rule"] == "unparsed"
    for u in unparsed_by_depth.values():
        u["share"] = u["unparsed"] / u["n"]
    answered = [r for r in records if r["outcome"] == "answered"]
    good = accuracy_block(sum(r["correct"] for r in answered), len(answered), 0.25)  # chance unused here
    if not answered:  # no interval either: JSON holds no NaN
        good["acc"], good["ci95"] = None, None
    return {
        "rules": {k: rules.get(k, 0) for k in ("strict", "lax", "last", "value", "unparsed")},
        "rule_shares": {k: rules.get(k, 0) / n if n else None for k in ("strict", "lax", "last", "value", "unparsed")},
        "unparsed": rules.get("unparsed", 0),
        "unparsed_share": rules.get("unparsed", 0) / n if n else None,
        "unparsed_by_depth": unparsed_by_depth,
        "outcomes": {k: outcomes.get(k, 0) for k in OUTCOMES},
        "outcome_shares": {k: outcomes.get(k, 0) / n if n else None for k in OUTCOMES},
        "outcomes_by_depth": by_depth,
        "answered_accuracy": {k: good[k] for k in ("correct", "total", "acc", "ci95")},
        "resolve": resolve,
        "resolved": sum(1 for r in records if r.get("resolved_by")),
        "resolved_right": sum(1 for r in records if r.get("resolved_by") and r["correct"]),
        "finished_by_budget": sum(1 for r in records if r.get("finish") == "length"),
    }


def no_chance_test(summary: dict[str, Any]) -> None:
    """``free`` offers no options to guess among, so a test against 1/4 would say nothing: its
    p-values are null (the summary's ``chance`` stays the letters' 1/4 for the layout)."""
    for block in summary["metrics"].values():
        if isinstance(block, dict) and "p_vs_chance" in block:
            block["p_vs_chance"] = None
    for field_ in ("by_depth", "by_template", "by_topic", "by_category"):
        for block in summary[field_].values():
            block["p_vs_chance"] = None
    summary["chance_note"] = "free: the model writes the value, there is no chance level to test against"
