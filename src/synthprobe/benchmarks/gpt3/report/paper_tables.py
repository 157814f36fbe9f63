"""The GPT-3 synthetic tasks' paper-ready table (``synthprobe report --table``, rendered by
:mod:`synthprobe.report.tables`): every model's accuracy per task and setting, as numbers."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.gpt3.report.model import Gpt3Result
from synthprobe.report.format import ordered, percent
from synthprobe.report.stats import wilson
from synthprobe.report.tables import Table


def gpt3_table(results: Sequence[Gpt3Result]) -> Table:
    head = ["Model", "Params", "Task", "Code", "Setting", "K", "n", "correct", "accuracy", "CI low", "CI high"]
    rows = []
    for g in ordered(results):
        for row in g.rows:
            lo, hi = wilson(row.count) if row.count.n else (None, None)
            rows.append(
                [
                    g.model,
                    g.params,
                    row.task,
                    row.code,
                    row.setting,
                    row.k,
                    row.count.n,
                    row.count.correct,
                    percent(row.rate, 2) if row.count.n else None,
                    percent(lo, 2),
                    percent(hi, 2),
                ]
            )
    return head, rows


def tables(results: Sequence[Gpt3Result]) -> dict[str, Table]:
    """The benchmark's ``tables`` part (:data:`synthprobe.registry.PARTS`)."""
    return {"gpt3": gpt3_table(results)}
