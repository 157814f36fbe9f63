"""The Deep Arithmark section of the report: read, table, figures."""

from __future__ import annotations


def sweep_counts(reader, entry, task: str) -> tuple[int, int, str, str]:
    """A sweep job's score (``synthprobe.report.sweep``): acc_norm's correct and total, and where they are."""
    block = entry.results.get(task)
    if block is None:
        raise reader.fail(f"{entry.at('results')}.{task}", f"missing; the sweep entry names task {task!r}")
    where = f"{block.where}.summary"
    summary = reader.get(block.data, "summary", block.where, dict)
    metrics = reader.get(summary, "metrics", where, dict)
    acc = reader.get(metrics, "acc_norm", f"{where}.metrics", dict)
    at = f"{where}.metrics.acc_norm"
    return reader.get(acc, "correct", at, int), reader.get(acc, "total", at, int), "acc_norm", at
