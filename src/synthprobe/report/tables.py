"""Paper-ready tables (``synthprobe report --table csv|latex|markdown``) as numbers (percentages
with two decimals, 95 % Wilson bounds, p-values) rather than the page's formatted cells. Written
into the report folder as ``tables/<name>.<ext>`` by :func:`synthprobe.report.build.build_report`.

Each benchmark owns its tables: its ``tables`` part in the registry (:mod:`synthprobe.registry`),
``tables(items) -> {name: (head, rows)}`` from the benchmark's report items (a built-in
leaderboard's rows, or what a registered benchmark's report section parsed), a header of column
names and rows of plain values (``None`` for an empty cell). A report section with a ``tables``
function of the same form adds its own (the paired comparison: ``paired_comparison``). This
module only renders them.

CSV through the standard library, LaTeX (booktabs, every cell escaped) and Markdown through
pandas (``DataFrame.to_latex`` / ``to_markdown``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from synthprobe import registry
from synthprobe.errors import InputError

FORMATS = {"csv": "csv", "latex": "tex", "markdown": "md"}

Table = tuple[list[str], list[list[Any]]]


def tables(items: Mapping[str, Sequence]) -> dict[str, Table]:
    """name → table, from each benchmark among ``items`` (benchmark name → its report items, in
    order) that has items and a ``tables`` part; two benchmarks naming one table is an error."""
    out: dict[str, Table] = {}
    for name, its in items.items():
        make = _maker(name) if its else None
        if make is None:
            continue
        for key, table in make(its).items():
            if key in out:
                raise InputError(
                    f"benchmark {name!r} names a paper-ready table {key!r} that another benchmark "
                    "has already named; expected names of its own"
                )
            out[key] = table
    return out


def _maker(name: str):
    """The ``tables`` function of benchmark ``name``, or of the report section keyed ``name``
    (:mod:`synthprobe.report.sections`: the paired comparison's); None when neither has one."""
    bench = registry.find(name)
    if bench is not None:
        return bench.part("tables") if bench.has("tables") else None
    from synthprobe.report import sections as extras

    section = next((mod for mod in extras.modules() if mod.KEY == name), None)
    return getattr(section, "tables", None)


def render(table: Table, fmt: str) -> bytes:
    """One table as CSV, LaTeX (a booktabs ``tabular``) or Markdown."""
    head, rows = table
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(head)
        w.writerows(
            [
                [
                    "" if v is None else (f"{v:.4g}" if isinstance(v, float) and _is_p(head[i]) else v)
                    for i, v in enumerate(row)
                ]
                for row in rows
            ]
        )
        return buf.getvalue().encode("utf-8")
    import pandas as pd

    dash = "--" if fmt == "latex" else "—"
    frame = pd.DataFrame([[_cell(head[i], v, dash) for i, v in enumerate(row)] for row in rows], columns=head)
    if fmt == "latex":
        align = "".join("l" if _is_text(rows, i) else "r" for i in range(len(head)))
        return frame.to_latex(index=False, escape=True, na_rep="--", column_format=align).encode("utf-8")
    if fmt == "markdown":
        return (frame.to_markdown(index=False, disable_numparse=True) + "\n").encode("utf-8")
    raise ValueError(f"unknown table format {fmt!r}")


def _is_text(rows: list[list[Any]], i: int) -> bool:
    """Whether column ``i`` holds text (left-aligned): some value, and every value a string or
    empty; in a table without rows, the first column (the model)."""
    if not rows:
        return i == 0
    values = [row[i] for row in rows if row[i] is not None]
    return bool(values) and all(isinstance(v, str) for v in values)


def _is_p(column: str) -> bool:
    return column.endswith(" p") or column.startswith("p ")


def _cell(column: str, v: Any, dash: str) -> str:
    """A cell as text for LaTeX / Markdown: percentages with two decimals, p-values with two
    significant digits, counts and names as they are."""
    if v is None:
        return dash
    if isinstance(v, float):
        return f"{v:.2g}" if _is_p(column) else f"{v:.2f}"
    if column == "Params" and isinstance(v, int):
        from synthprobe.results import fmt_params

        return fmt_params(v)
    return str(v)


def files(items: Mapping[str, Sequence], formats: Sequence[str]) -> dict[str, bytes]:
    """``tables/<name>.<ext>`` → bytes for every table of :func:`tables` and every requested format."""
    out = {}
    for name, table in tables(items).items():
        for fmt in formats:
            out[f"tables/{name}.{FORMATS[fmt]}"] = render(table, fmt)
    return out
