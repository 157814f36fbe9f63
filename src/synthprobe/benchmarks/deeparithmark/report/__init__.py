"""The Deep Arithmark section of the report: read, table, figures."""

from __future__ import annotations


def sweep_counts(reader, entry, task: str) -> tuple[int, int, str, str]:
    """A sweep job's score (``synthprobe.report.sweep``): its primary metric's (acc_norm, or accuracy
    for generated answers) correct and total, the metric, and where they are."""
    from synthprobe.results import primary_metric

    block = entry.results.get(task)
    if block is None:
        raise reader.fail(f"{entry.at('results')}.{task}", f"missing; the sweep entry names task {task!r}")
    where = f"{block.where}.summary"
    summary = reader.get(block.data, "summary", block.where, dict)
    metrics = reader.get(summary, "metrics", where, dict)
    metric = primary_metric(summary)
    metric = metric if metric in metrics else "acc_norm"
    acc = reader.get(metrics, metric, f"{where}.metrics", dict)
    at = f"{where}.metrics.{metric}"
    return reader.get(acc, "correct", at, int), reader.get(acc, "total", at, int), metric, at
