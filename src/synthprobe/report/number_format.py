"""The number-format section of the report page (``synthprobe probe number-format`` results):
per model, accuracy per format with the paired difference from plain digits and the exact
McNemar p-value, by depth (Deep Arithmark) and by task (GPT-3 arithmetic).

Reads the ``number_format`` block (:mod:`synthprobe.probes.number_format`, ``version`` 1) of
any results document; every value shown is type-checked, and a wrong one is an
:class:`~synthprobe.errors.InputError` naming the file and the field."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthprobe import registry
from synthprobe.report.format import fmt_pct
from synthprobe.results import Results, at, fmt_p
from synthprobe.templating import render as render_template

KEY = "number-format"
TITLE = "Number-format sensitivity"

#: Row keys the section reads, with their types (None allowed where the value may be null).
_ROW_KEYS = {
    "format": (str,),
    "n": (int,),
    "changed": (int,),
    "accuracy": (int, float),
    "delta": (int, float, type(None)),
    "b": (int, type(None)),
    "c": (int, type(None)),
    "p_mcnemar": (int, float, type(None)),
}


@dataclass(frozen=True)
class FormatTable:
    """One part (Deep Arithmark or GPT-3) of one model's number-format block."""

    title: str
    key: str  # "depth" or "task"
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class NumberFormatResult:
    model: str
    source: str
    formats: list[str]
    tables: list[FormatTable]


def _rows(results: Results, block: dict, where: str, key: str) -> list[dict[str, Any]]:
    r = results.reader
    rows = r.get(block, "rows", where, list, what="a list of per-format rows")
    out = []
    for i, row in enumerate(rows):
        rw = f"{at(where, 'rows')}[{i}]"
        if not isinstance(row, dict):
            raise r.fail(rw, f"expected an object, got {type(row).__name__}")
        for name, types in _ROW_KEYS.items():
            if name not in row or isinstance(row[name], bool) or not isinstance(row[name], types):
                raise r.fail(at(rw, name), f"missing or of the wrong type: {row.get(name)!r}")
        label = row.get("code" if key == "task" else "depth")
        if not isinstance(label, (str, int)) or isinstance(label, bool):
            raise r.fail(at(rw, "code" if key == "task" else "depth"), f"expected a label, got {label!r}")
        out.append({**row, "label": str(label)})
    return out


def _probed() -> list:
    """(benchmark, its ``layout`` part) for each built-in benchmark whose part of a number-format
    block the layout describes (``number_format_table(reader, part, where) -> (title, group key)``),
    in registry order."""
    found = [(name, registry.find(name)) for name in registry.BUILTIN]
    return [
        (name, b.part("layout"))
        for name, b in found
        if b is not None and b.has("layout") and hasattr(b.part("layout"), "number_format_table")
    ]


def parse(results: Results) -> list[NumberFormatResult]:
    """Every model's number-format block in one read results file (the envelope is checked by
    :func:`synthprobe.results.read_results`, the block's version too)."""
    r = results.reader
    out = []
    for entry, block in results.blocks("number_format"):
        name = r.get(entry.model, "name", entry.at("model"), str)
        formats = r.get(block.data, "formats", block.where, list)
        tables = []
        for bench, layout in _probed():
            part = r.get(block.data, bench, block.where, dict, required=False)
            if part is not None:
                w = at(block.where, bench)
                title, key = layout.number_format_table(r, part, w)
                tables.append(FormatTable(title, key, _rows(results, part, w, key)))
        out.append(NumberFormatResult(name, str(results.path), [str(f) for f in formats], tables))
    return out


def _delta(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1f}".replace("-", "−")


def summary(results: Sequence[NumberFormatResult]) -> str:
    return f"number formats: {len(results)} model{'s' if len(results) != 1 else ''}"


def section(results: Sequence[NumberFormatResult]) -> str:
    """The section's HTML (Jinja2 template ``number_format.html``)."""
    models = []
    for res in results:
        tables = []
        for t in res.tables:
            body = [
                [
                    row["label"],
                    row["format"],
                    f"{row['n']:,}",
                    f"{row['changed']:,}",
                    fmt_pct(row["accuracy"], 1, " %", in_percent=True),
                    _delta(row["delta"]),
                    "—" if row["b"] is None else f"{row['b']} / {row['c']}",
                    fmt_p(row["p_mcnemar"]),
                ]
                for row in t.rows
            ]
            tables.append(
                {
                    "title": t.title,
                    "head": [t.key, "format", "n", "changed", "accuracy", "Δ vs plain (points)", "b / c", "McNemar p"],
                    "body": body,
                }
            )
        models.append({"name": res.model, "source": res.source, "tables": tables})
    return render_template("number_format.html", models=models)
