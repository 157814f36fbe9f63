"""The GPT-3 synthetic-tasks section of the report: read, table, figures."""

from __future__ import annotations


def sweep_counts(reader, entry, task: str) -> tuple[int, int, str, str]:
    """A sweep job's score (``synthprobe.report.sweep``): the one row of its task, correct of n, and where."""
    block = entry.results.get("gpt3")
    if block is None:
        raise reader.fail(f"{entry.at('results')}.gpt3", f"missing; the sweep entry names task {task!r}")
    rows = reader.get(block.data, "rows", block.where, list)
    if len(rows) != 1 or not isinstance(rows[0], dict):
        raise reader.fail(f"{block.where}.rows", "expected the one row of the sweep job's task")
    at = f"{block.where}.rows[0]"
    return reader.get(rows[0], "correct", at, int), reader.get(rows[0], "n", at, int), "accuracy", at
