"""The Deep Arithmark blocks of the results document, and the printed score table.

The file is the one results document of :mod:`synthprobe.results` (``schema =
"synthprobe/results"``, ``schema_version = 2``; files of the earlier Deep Arithmark-only
layout, ``"synthprobe/deeparithmark-results"`` version 1, read the same). All rates are
fractions in [0, 1] except inside ``row``, which holds the table's percentages::

    {
      "schema": "synthprobe/results", "schema_version": 2,
      "synthprobe": "0.1.0",
      "protocol": {tokenisation, bos, truncation, score, acc, acc_norm, acc_char, soft, ties},
      "datasets": {
        "deeparithmark": {"path", "sha256", "n_items", "n_items_in_file", "limit"},
        "arithmark3":    {... same, plus "published_sha256", "matches_published"}   # --compare only
      },
      "models": [                                   # one entry per --model, in order
        {
          "model": {"spec", "name", "source" (gguf|folder|hub), "params", "fingerprint",
                    "dtype", "device", "bos", "attn_implementation", "max_positions",
                    "tokenizer_class", "special_tokens" (pad/eos/bos [token, "id"], eot_token_id),
                    "torch", "transformers"},
          "settings": {"batch_size", "max_context", "scorer", "trust_remote_code", "limit",
                       "torch", "transformers", "synthprobe", "torch_threads", "python", "platform"},
          "load_s": seconds to load the model,
          "results": {
            "deeparithmark": {
              "dataset": {"path", "sha256", "n_items"},
              "scorer_used": "onepass" | "reference", "fallback_reason": str | null,
              "batch_size_used": the batch size that ran (smaller after an out-of-memory retry),
              "cached_items": items taken from the per-item score cache instead of the model,
              "timing": {"tokenize_s", "eval_s", "items_per_s", "request_tokens",
                         "forward_tokens", "request_tokens_per_s"},   # over the items scored
                                                                       # in this run; rates null
                                                                       # when all were cached
              "truncated": items whose context was left-truncated,
              "summary": synthprobe.benchmarks.deeparithmark.scoring.metrics.summarise(records)  # metrics, by_depth,
                         # by_template, by_topic, by_category, template_homogeneity,
                         # rank_preference, mistake_profile, and with --partial-inputs:
                         "partial_inputs": {...}     # below
              "predictions": [per-item records]      # only with --save-predictions; see
                                                      # synthprobe.scoring.records; with
                                                      # --partial-inputs each has "partial_picks"
                                                      # {baseline: acc_norm pick} and
                                                      # "other_context_from" (the donor's id)
            },
            "arithmark3": {... same layout ...}       # --compare only
          },
          "row": {"model", "params", "params_label", "metric", "n", "deep", "soft", "d2", "d3", "d4", "d5",
                  "arithmark3", "delta", "p_vs_chance",   # percentages / points; null if absent
                  "unparsed", "inconsistent", "echo", "cut_off", "resolve"},  # generated runs only
          "usage": {"requests", "prompt_tokens", "completion_tokens", "total_tokens",
                    "max_tokens_total", "lowest_concurrency"}  # server-backed engines only: the
                    # tokens the server reported (its usage) for the requests of this run
        }
      ]
    }

``partial_inputs`` (``--partial-inputs``, loglik only, Deep Arithmark only; the baselines and the
derangement: :mod:`synthprobe.benchmarks.deeparithmark.scoring.partial`). A rate block is the summary's
group layout ``{n, correct, accuracy, ci95 [Wilson], p_vs_chance}`` (accuracy: acc_norm's pick)::

    {"metric": "acc_norm", "version", "seed", "filler": "The answer is",
     "designs": {baseline: one line}, "agreement_note", "reliance_note",
     "n": items, "cross_template": items whose other-context donor is of another template,
     "full": rate block of the full-context run (= metrics.acc_norm),
     "baselines": {"endings" | "filler" | "other-context":
                   rate block + "agree" (items whose pick is the full-context pick),
                   "agreement" (agree / n)},
     "best_partial": the most accurate baseline (ties: the first above),
     "reliance": full accuracy - best_partial's accuracy (a fraction, may be negative),
     "by_depth": {depth: {"full", "baselines", "best_partial", "reliance"}},  # as above, per tier
     "runs": {baseline: {"scorer_used", "batch_size_used", "cached_items", "truncated", "timing"}}}

``request_tokens`` counts the protocol's tokens (``ctx + ending`` per ending, after
truncation), so ``request_tokens_per_s`` compares scorers fairly; ``forward_tokens`` is what
the chosen scorer actually fed through the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthprobe.benchmarks.deeparithmark.card import DEPTHS, card_cells, card_has_answers, card_has_compare, card_header
from synthprobe.benchmarks.deeparithmark.scoring.protocols import protocol_effect as _protocol_effect
from synthprobe.metrics.extract import PROTOCOL_OUTCOMES
from synthprobe.report.format import percent
from synthprobe.results import fmt_p, group_rate, primary_metric, variant_label

ARITHMARK3_SHA256 = "bf8ab1a5193d52cdf0e05ff0b3ca226bdfcf416cb6e75562dcbe72e7e4559435"

PROTOCOL = {
    "tokenisation": "ctx and each ending tokenised separately, add_special_tokens=False, concatenated",
    "bos": "none unless --bos (then prepended to the context, truncated with it)",
    "truncation": "context left-truncated to max_context - len(ending) tokens per ending",
    "score": "sum of the ending tokens' log-probabilities, fp32 log-softmax",
    "acc": "argmax of the summed log-probability",
    "acc_norm": "argmax of the per-token mean log-probability (ArithMark 3.0's primary metric)",
    "acc_char": "argmax of log-probability per character of the ending (lm-eval's acc_norm)",
    "soft": "mean over items of softmax(per-token means)[label]",
    "ties": "lowest index",
}


def params_label(n: int | None) -> str:
    """The parameter count kept in the file's ``row`` (``?`` when unknown)."""
    if not n:
        return "?"
    if n >= 1e9:
        return f"{n / 1e9:.2f} B"
    if n >= 1e6:
        return f"{n / 1e6:.0f} M"
    return f"{n / 1e3:.0f} K"


def table_row(entry: dict[str, Any]) -> dict[str, Any]:
    """The card's row of one entry, under its protocol's own metric: acc_norm (with soft) for
    log-likelihood, accuracy for generated answers, with the shares of answers that do not count
    (unparsed, inconsistent, echo, cut off) beside it and no soft."""
    deep = entry["results"]["deeparithmark"]["summary"]
    metric = primary_metric(deep)
    label = variant_label(entry)
    row: dict[str, Any] = {
        "model": entry["model"]["name"] + (f" [{label}]" if label else ""),
        "params": entry["model"]["params"],
        "params_label": params_label(entry["model"]["params"]),
        "metric": metric,
        "n": deep["n"],
        "deep": percent(deep["metrics"][metric]["acc"], 2),
        "soft": percent(deep["metrics"]["soft"], 2) if "soft" in deep["metrics"] else None,
    }
    for d in DEPTHS:
        block = deep["by_depth"].get(str(d))
        row[f"d{d}"] = percent(group_rate(block, deep), 2) if block else None
    am3 = entry["results"].get("arithmark3")
    row["arithmark3"] = percent(am3["summary"]["metrics"]["acc_norm"]["acc"], 2) if am3 else None
    row["delta"] = (
        round(row["deep"] - row["arithmark3"], 2) if row["arithmark3"] is not None and row["deep"] is not None else None
    )
    row["p_vs_chance"] = deep["metrics"][metric]["p_vs_chance"]
    ext = entry["results"]["deeparithmark"].get("extraction")
    if ext is not None:
        row["unparsed"] = percent(ext["unparsed_share"], 2)
        if ext.get("resolve", "none") != "none":
            row["resolve"] = ext["resolve"]
        shares = ext.get("outcome_shares") or {}
        own = PROTOCOL_OUTCOMES.get(entry["results"]["deeparithmark"].get("protocol"), ())
        for key in ("inconsistent", "echo", "cut_off"):
            row[key] = percent(shares.get(key), 2) if key in own else None
    return row


def protocol_effect(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`synthprobe.benchmarks.deeparithmark.scoring.protocols.protocol_effect` with rows named
    by :func:`variant_label`."""
    return _protocol_effect(entries, label=variant_label)


def format_protocol_effect(effect: Sequence[dict[str, Any]]) -> str:
    """The paired differences as text: one block per (model, protocol pair)."""
    lines: list[str] = []
    for block in effect:
        lines.append(
            f"protocol effect · {block['model']}: {block['other']} ({block.get('metric', 'accuracy')}) "
            f"against {block['reference']} ({block.get('reference_metric', 'acc_norm')}) "
            "(same items; exact McNemar)"
        )
        for r in block["rows"]:
            lines.append(
                f"  depth {str(r['depth']):<4} n={r['n']:<5} {r['reference_accuracy']:6.2f} % -> "
                f"{r['accuracy']:6.2f} %  delta {r['delta']:+6.2f} pts  b={r['b']} c={r['c']}  "
                f"p {fmt_p(r['p_mcnemar'])}"
            )
        agree = block.get("agreement")
        if agree:
            cert = agree["certified"]
            lines.append(
                f"  same letter in both on {agree['agree']} of {agree['n']} items"
                + (f" ({100 * agree['share']:.1f} %)" if agree["share"] is not None else "")
                + f"; the letters answer wrote it on {agree.get('written', agree['agree'])}"
                + f"; on the {cert['n']} certified items {cert['agree']}"
            )
    return "\n".join(lines)


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """The card's table as aligned text (cells from :func:`synthprobe.benchmarks.deeparithmark.card.card_cells`, as the
    report's leaderboard and the README show them): Model, Params, n (the items scored), Deep,
    soft, d2-d5, ArithMark-3, Δ, p vs chance; with generated answers among the rows, also the
    metric each row's Deep is and the shares of answers that do not count."""
    compare = card_has_compare(rows)
    answers = card_has_answers(rows)
    head = card_header(DEPTHS, compare=compare, n=True, answers=answers)
    body = [
        card_cells(
            {**r, "n": f"{r['n']:,}" if isinstance(r.get("n"), int) else None},
            DEPTHS,
            compare=compare,
            n=True,
            answers=answers,
        )
        for r in rows
    ]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    left = {0, 3} if answers else {0}  # the model and the metric

    def fmt(cells):
        return "  ".join(
            str(c).ljust(w) if i in left else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
        )

    lines = [fmt(head), "  ".join("-" * w for w in widths)]
    lines.extend(fmt(b) for b in body)
    if answers:
        what = (
            "accuracy (generated answers, over all items)"
            if all(r.get("metric") == "accuracy" for r in rows)
            else "each row's metric: acc_norm (log-likelihood) or accuracy (generated answers, over all items)"
        )
        resolved = [r for r in rows if r.get("resolve")]
        lines.append(
            f"Deep is {what}; the last four columns are the shares of items whose answer did not count"
            + (
                ", except inconsistent answers where a --resolve rule credited them ("
                + ", ".join(sorted({str(r["resolve"]) for r in resolved}))
                + ")"
                if resolved
                else ""
            )
        )
    return "\n".join(lines)


#: One line on how a generated answer is read, per protocol, printed under each generated run.
RULES_LINE = {
    "letters": (
        "rules: strict = an 'ANSWER: X' line; lax = a text that is only the letter, opens with 'X.', or says "
        "'the answer is X'; last = the one letter mentioned; value = an option's value in place of its "
        "letter (docs/chat-and-protocols.md)"
    ),
    "free": (
        "rules: strict = an 'ANSWER: N' line; lax = a text that is only the number, 'the answer is N', or the "
        "weaker 'is N', 'was N', '= N'; last = the last number (the one with the item's unit first); a number "
        "copied with its words from the question is an echo (docs/chat-and-protocols.md)"
    ),
}


def _share(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.1f} %)" if n else str(k)


def run_settings_line(entry: dict[str, Any]) -> str:
    """The settings one model ran with, in one line: each model of a run may have its own
    (``--model NAME=SPEC,KEY=VALUE``), so each model's breakdown says them."""
    model, settings = entry.get("model", {}), entry.get("settings", {})
    bos = {True: "on", False: "off"}.get(model.get("bos"), "?")
    chat = (entry.get("chat") or {}).get("chat_template_name") or "none"
    return (
        f"ran with: dtype {model.get('dtype', '?')}, device {model.get('device', '?')}, BOS {bos}, "
        f"max context {settings.get('max_context', '?')}, chat template {chat}"
    )


def format_breakdown(entry: dict[str, Any], key: str = "deeparithmark") -> str:
    """Per-depth and per-template lines for one model (printed under the table), under the
    protocol's own metric; a generated run adds how its answers were read and what they count as."""
    block = entry["results"][key]
    s = block["summary"]
    metric = primary_metric(s)
    m = s["metrics"]
    if metric == "acc_norm":
        out = [
            f"{entry['model']['name']} — {key}: acc {100 * m['acc']['acc']:.2f} %, "
            f"acc_norm {100 * m['acc_norm']['acc']:.2f} %, "
            f"acc_char {100 * m['acc_char']['acc']:.2f} %, soft {100 * m['soft']:.2f} %"
        ]
        if m["acc"]["correct"] == m["acc_norm"]["correct"] == m["acc_char"]["correct"]:
            out.append(
                "  (acc, acc_norm and acc_char agree: an item's four endings differ only in the number and "
                "most have one length, so dividing by their tokens or characters seldom changes the pick)"
            )
    else:
        label = variant_label(entry)
        out = [
            f"{entry['model']['name']}{f' [{label}]' if label else ''} — {key}: {s.get('primary_label') or metric}",
            f"  accuracy {100 * m[metric]['acc']:.2f} % ({m[metric]['correct']} of {m[metric]['total']})",
        ]
    out.insert(1, "  " + run_settings_line(entry))
    ext = block.get("extraction")
    if ext is not None:
        n = s["n"]
        outcomes = ext.get("outcomes")
        if outcomes:
            good = ext["answered_accuracy"]
            out[-1] += (
                f"; over the {good['total']} answered {'item' if good['total'] == 1 else 'items'} "
                f"{100 * good['acc']:.2f} %"
                if good["total"]
                else "; no item was answered"
            )
            own = PROTOCOL_OUTCOMES.get(block.get("protocol"), tuple(outcomes))
            out.append(
                "  answers: "
                + ", ".join(f"{k.replace('_', ' ')} {_share(outcomes.get(k, 0), n)}" for k in own)
                + (
                    f"; the {ext['resolved']} inconsistent resolved by --resolve {ext['resolve']}, "
                    f"{ext.get('resolved_right', 0)} of them right"
                    if ext.get("resolve", "none") != "none"
                    else ""
                )
            )
        else:
            out.append(f"  unparsed {ext['unparsed']} of {n} ({100 * ext['unparsed_share']:.1f} %, counted wrong)")
        out.append(
            "  read by "
            + ", ".join(f"{k} {_share(v, n)}" for k, v in ext["rules"].items())
            + f"; {ext.get('finished_by_budget', 0)} ran into the {block.get('max_new_tokens')}-token budget"
        )
        out.append("  " + RULES_LINE.get(block.get("protocol"), RULES_LINE["letters"]))
    if block.get("letterprob") is not None:
        from synthprobe.benchmarks.deeparithmark.scoring.letterprob import format_letterprob

        out.extend(format_letterprob(block, s["n"]))
    for title, field in (("depth", "by_depth"), ("template", "by_template")):
        for g, b in s[field].items():
            out.append(
                f"  {title} {g:<28} n={b['n']:<4} {metric} {100 * group_rate(b, s):6.2f} %  "
                f"CI [{100 * b['ci95'][0]:.1f}, {100 * b['ci95'][1]:.1f}]  p vs chance {fmt_p(b['p_vs_chance'])}"
            )
    h = s.get("template_homogeneity") or {}
    if h.get("chi2") is not None:
        out.append(f"  templates: chi2 = {h['chi2']:.1f}, df = {h['df']}, p = {fmt_p(h['p'])}")
    rp = s.get("rank_preference")
    if rp:
        out.append(
            f"  picks the smallest option {100 * rp['pick_smallest']:.1f} %, "
            f"the largest {100 * rp['pick_largest']:.1f} %"
        )
    return "\n".join(out)


def comparisons(entries: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    """The paired comparison of every pair of a run's models (:func:`synthprobe.metrics.compare.compare_models`)
    on each data set, per depth, under the runs' own metric (acc_norm, or accuracy for generated
    answers; pairs are only formed under one protocol); needs the entries' predictions."""
    from synthprobe.metrics.compare import compare_models
    from synthprobe.results import primary_metric
    from synthprobe.scoring.records import record_correct

    out: dict[str, Any] = {}
    for key in keys:
        outcomes: dict[str, dict[str, bool]] = {}
        variant: dict[str, str] = {}
        prints: dict[str, str | None] = {}
        depth: dict[str, Any] = {}
        for e in entries:
            recs = e["results"][key]["predictions"]
            v = variant_label(e)
            label = f"{e['model']['name']} [{v}]" if v else e["model"]["name"]
            variant[label] = v
            prints[label] = e["model"].get("fingerprint")
            outcomes[label] = {r["id"]: record_correct(r) for r in recs}
            depth.update({r["id"]: r.get("depth") for r in recs})
        group = depth if all(v is not None for v in depth.values()) else None
        # models against each other under the same protocol and template (the protocol effect
        # compares one model's protocols)
        metrics = {primary_metric(e["results"][key]["summary"]) for e in entries}
        metric = metrics.pop() if len(metrics) == 1 else "each model's own (acc_norm or accuracy)"
        out[key] = compare_models(
            outcomes,
            group,
            metric=metric,
            group_by="depth" if group else None,
            keep=lambda a, b: variant[a] == variant[b],  # noqa: B023
            fingerprints=prints,
        )
    return out
