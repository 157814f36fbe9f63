"""Paper-ready tables (``synthprobe report --table csv|latex|markdown``): the leaderboard, accuracy
per depth and the GPT-3 table, as numbers (percentages with two decimals, 95 % Wilson bounds,
p-values) rather than the page's formatted cells. Written into the report folder as
``tables/<name>.<ext>`` by :func:`synthprobe.report.build.build_report`.

CSV through the standard library, LaTeX (booktabs, every cell escaped) and Markdown through
pandas (``DataFrame.to_latex`` / ``to_markdown``)."""

from __future__ import annotations

import csv
import io
from typing import Any, Sequence

from synthprobe.report.deeparithmark import table as lb
from synthprobe.report.format import ordered, test_set_letters
from synthprobe.report.model import Gpt3Result, ModelResult
from synthprobe.report.stats import adjusted, wilson

FORMATS = {"csv": "csv", "latex": "tex", "markdown": "md"}

Table = tuple[list[str], list[list[Any]]]


def _pct(x: float | None) -> float | None:
    return None if x is None or x != x else round(100 * x, 2)


def leaderboard(results: Sequence[ModelResult]) -> Table:
    ds = lb.depths(results)
    letters = test_set_letters(results)
    compare = lb.has_compare(results)
    head = (["Model", "Params", "n"] + (["items"] if letters else []) + ["Deep", "Deep CI low", "Deep CI high", "soft"]
            + [f"d{d}" for d in ds] + (["ArithMark-3", "Delta"] if compare else []) + ["p vs chance"])
    rows = []
    for r in ordered(results):
        lo, hi = wilson(r.overall)
        rows.append([r.model, r.params, r.overall.n] + ([letters[r.test_set]] if letters else [])
                    + [_pct(r.acc_norm), _pct(lo), _pct(hi), _pct(r.soft)]
                    + [_pct(r.by_depth[d].rate) if d in r.by_depth else None for d in ds]
                    + ([_pct(r.arithmark3), None if r.delta is None else round(100 * r.delta, 2)] if compare else [])
                    + [r.p_value])
    return head, rows


def per_depth(results: Sequence[ModelResult]) -> Table:
    head = ["Model", "depth", "n", "correct", "acc_norm", "CI low", "CI high", "p vs chance", "Holm p"]
    rows = []
    for r in ordered(results):
        tests = adjusted(r.by_depth, r.chance)
        for d, c in r.by_depth.items():
            lo, hi = wilson(c) if c.n else (None, None)
            rows.append([r.model, d, c.n, c.correct, _pct(c.rate) if c.n else None, _pct(lo), _pct(hi),
                         tests[d][0], tests[d][1]])
    return head, rows


def gpt3_table(results: Sequence[Gpt3Result]) -> Table:
    head = ["Model", "Params", "Task", "Code", "Setting", "K", "n", "correct", "accuracy", "CI low", "CI high"]
    rows = []
    for g in ordered(results):
        for row in g.rows:
            lo, hi = wilson(row.count) if row.count.n else (None, None)
            rows.append([g.model, g.params, row.task, row.code, row.setting, row.k, row.count.n, row.count.correct,
                         _pct(row.rate) if row.count.n else None, _pct(lo), _pct(hi)])
    return head, rows


def tables(results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result]) -> dict[str, Table]:
    """name → table, for the benchmarks present."""
    out: dict[str, Table] = {}
    if results:
        out["leaderboard"] = leaderboard(results)
        out["per_depth"] = per_depth(results)
    if gpt3:
        out["gpt3"] = gpt3_table(gpt3)
    return out


def render(table: Table, fmt: str) -> bytes:
    """One table as CSV, LaTeX (a booktabs ``tabular``) or Markdown."""
    head, rows = table
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(head)
        w.writerows([["" if v is None else (f"{v:.4g}" if isinstance(v, float) and _is_p(head[i]) else v)
                      for i, v in enumerate(row)] for row in rows])
        return buf.getvalue().encode("utf-8")
    import pandas as pd

    dash = "--" if fmt == "latex" else "—"
    frame = pd.DataFrame([[_cell(head[i], v, dash) for i, v in enumerate(row)] for row in rows], columns=head)
    if fmt == "latex":
        align = "".join("l" if c in _TEXT_COLUMNS else "r" for c in head)
        return frame.to_latex(index=False, escape=True, na_rep="--", column_format=align).encode("utf-8")
    if fmt == "markdown":
        return (frame.to_markdown(index=False, disable_numparse=True) + "\n").encode("utf-8")
    raise ValueError(f"unknown table format {fmt!r}")


_TEXT_COLUMNS = {"Model", "Task", "Code", "Setting", "items"}


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


def files(results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result], formats: Sequence[str]) -> dict[str, bytes]:
    """``tables/<name>.<ext>`` → bytes for every table and every requested format."""
    out = {}
    for name, table in tables(results, gpt3).items():
        for fmt in formats:
            out[f"tables/{name}.{FORMATS[fmt]}"] = render(table, fmt)
    return out
