"""The report section of the ``larger`` benchmark (the protocol of :mod:`synthprobe.report.extras`)."""

from __future__ import annotations

from synthprobe.results import Results
from synthprobe.templating import escape

KEY = "larger"
TITLE = "Which is larger"


def parse(results: Results) -> list[tuple[str, dict]]:
    out = []
    for entry, block in results.blocks(KEY):
        summary = results.reader.get(block.data, "summary", block.where, dict)
        for key in ("correct", "total"):
            results.reader.get(summary, key, f"{block.where}.summary", int)
        out.append((str(entry.model.get("name", "model")), summary))
    return out


def section(items: list[tuple[str, dict]]) -> str:
    rows = "".join(f"<tr><td>{escape(name)}</td><td>{s['correct']}</td><td>{s['total']}</td>"
                   f"<td>{100 * s['correct'] / s['total']:.1f} %</td></tr>" for name, s in items)
    return (f"<p>Which of two numbers is larger; chance is 50 %.</p><table><thead><tr><th>Model</th>"
            f"<th>correct</th><th>items</th><th>accuracy</th></tr></thead><tbody>{rows}</tbody></table>")


def markdown_body(items: list[tuple[str, dict]]) -> str:
    lines = ["| Model | correct | items |", "|---|---:|---:|"]
    lines += [f"| {name} | {s['correct']} | {s['total']} |" for name, s in items]
    return "\n".join(lines) + "\n"
