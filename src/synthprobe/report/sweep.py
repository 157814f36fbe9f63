"""The report's "Sweep" section: for a results file written by ``synthprobe sweep``, each model's
score per seed, its mean and sd across seeds, and whether the models' rank order holds from
seed to seed (:func:`synthprobe.metrics.sweep.seed_spread`, recomputed from the scores in the
file, so it always matches the rows shown).

A job's score is read by its benchmark (task ``NAME`` or ``NAME:SUB``): the benchmark's report
part's ``sweep_counts(reader, entry, task) -> (correct, total, metric, where)`` (acc_norm on Deep
Arithmark, accuracy on a GPT-3 task), or, for a benchmark without one (swept by the generic
sweep part), its block's ``summary`` ``correct`` / ``total``.

A sweep entry carries ``"sweep": {"label", "task", "seed", "seed_label", ...}`` beside the usual
``model`` / ``settings`` / ``results``; files without it have no sweep section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthprobe import registry
from synthprobe.report.format import fmt_pct
from synthprobe.results import DASH, Results
from synthprobe.templating import escape

KEY = "sweep"
TITLE = "Sweep: spread across seeds"


@dataclass(frozen=True)
class SweepTable:
    """One task of one sweep file: label → seed label → score (a fraction), and its spread."""

    task: str
    source: str
    scores: dict[str, dict[str, float]]
    summary: dict[str, Any]
    #: what the scores are (``acc_norm``, ``accuracy``)
    metric: str = "accuracy"


def parse(results: Results) -> list[SweepTable]:
    """The sweep tables of one read results file (none for a file not written by a sweep)."""
    from synthprobe.metrics.sweep import seed_spread

    r = results.reader
    tables: dict[str, dict[str, dict[str, float]]] = {}
    metrics: dict[str, str] = {}
    for e in results.models:
        if "sweep" not in e.data:
            continue
        where = e.at("sweep")
        sw = r.get(e.data, "sweep", e.where, dict)
        label = r.get(sw, "label", where, str)
        seed = r.get(sw, "seed_label", where, str)
        task = r.get(sw, "task", where, str)
        correct, total, metric = _counts(results, e, task)
        metrics[task] = metric
        per_seed = tables.setdefault(task, {}).setdefault(label, {})
        if seed in per_seed:
            raise r.fail(f"{where}.seed_label", f"model {label!r} has seed {seed} twice in this file")
        per_seed[seed] = correct / total
    return [
        SweepTable(task, str(results.path), scores, seed_spread(scores), metrics[task])
        for task, scores in tables.items()
    ]


def _counts(results: Results, e, task: str) -> tuple[int, int, str]:
    """``(correct, total, metric)`` of one sweep entry's job, read by its benchmark (see the
    module docstring); a malformed block is one located error."""
    r = results.reader
    name = task.partition(":")[0]
    bench = registry.find(name)
    read = getattr(bench.part("report"), "sweep_counts", None) if bench is not None and bench.has("report") else None
    if read is not None:
        correct, total, metric, where = read(r, e, task)
    else:
        block = e.results.get(name)
        if block is None:
            raise r.fail(f"{e.at('results')}.{name}", f"missing; the sweep entry names task {task!r}")
        where = f"{block.where}.summary"
        summary = r.get(block.data, "summary", block.where, dict)
        correct, total, metric = r.get(summary, "correct", where, int), r.get(summary, "total", where, int), "accuracy"
    if not 0 <= correct <= total or total == 0:
        raise r.fail(f"{where}.correct", f"expected 0 <= correct <= total and total > 0, got {correct}/{total}")
    return correct, total, metric


def _spread_rows(t: SweepTable) -> tuple[list[str], list[list[str]]]:
    n_seeds = len(t.summary["seeds_compared"])
    head = ["Model", "Seeds", "Mean %", "SD (points)", "Min %", "Max %", "Rank by mean", "Seeds at that rank"]
    rows = []
    for label, m in t.summary["models"].items():
        rank = m.get("rank_by_mean")
        rows.append(
            [
                label,
                str(m["n_seeds"]),
                fmt_pct(m["mean"]),
                fmt_pct(m["sd"]),
                fmt_pct(m["min"]),
                fmt_pct(m["max"]),
                DASH if rank is None else f"{rank:g}",
                f"{m.get('seeds_at_rank_by_mean', 0)}/{n_seeds}",
            ]
        )
    return head, rows


def _seed_rows(t: SweepTable) -> tuple[list[str], list[list[str]]]:
    seeds = list(dict.fromkeys(s for per in t.scores.values() for s in per))
    head = ["Model"] + [f"seed {s}" for s in seeds]
    return head, [[label] + [fmt_pct(per[s]) if s in per else DASH for s in seeds] for label, per in t.scores.items()]


def concordance_text(t: SweepTable) -> str:
    s = t.summary
    n = len(s["seeds_compared"])
    if s["kendalls_w"] is None:
        w = "Kendall's W needs at least two models and two seeds (and not every score tied)"
    else:
        w = (
            f"Kendall's W = {s['kendalls_w']:.3f} (1 = every seed ranks the models the same way, "
            f"0 = no agreement; Friedman p = {s['friedman_p']:.3g})"
        )
    return (
        f"{w}; {s['seeds_matching_mean_ranking']} of {n} seeds rank the models exactly as their means "
        f"do. Scores in percent ({t.metric}); SD is the "
        "sample standard deviation across seeds."
    )


def section(tables: Sequence[SweepTable]) -> str:
    from synthprobe.report.html import table

    parts = [
        "<p>Each model scored on the same task built from several seeds (private variants of the "
        "benchmark): the spread across seeds is how much a single variant's score can be trusted, "
        "and the rank agreement says whether the models' order holds.</p>"
    ]
    for t in tables:
        if len(tables) > 1 or t.task != registry.DEFAULT:
            parts.append(f"<h3>{escape(t.task)} · <code>{escape(t.source)}</code></h3>")
        head, rows = _spread_rows(t)
        parts.append(table(head, rows))
        parts.append(f'<p class="note">{escape(concordance_text(t))}</p>')
        head, rows = _seed_rows(t)
        parts.append('<div class="scroll">' + table(head, rows) + "</div>")
    return "".join(parts)


def markdown_body(tables: Sequence[SweepTable]) -> str:
    def md(head: list[str], rows: list[list[str]]) -> list[str]:
        return ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"] + [
            "| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows
        ]

    lines: list[str] = []
    for t in tables:
        if len(tables) > 1 or t.task != registry.DEFAULT:
            lines += [f"### {t.task} ({t.source})", ""]
        lines += md(*_spread_rows(t)) + ["", concordance_text(t), ""] + md(*_seed_rows(t)) + [""]
    return "\n".join(lines)
