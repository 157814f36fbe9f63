"""The report parts of the ``larger`` benchmark: its section (the protocol of
:mod:`synthprobe.report.sections`), its paper-ready table and its items for the item viewer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from synthprobe.io.read import sha256_file
from synthprobe.report.viewer import Answer, Run
from synthprobe.results import Results
from synthprobe.templating import escape
from synthprobe_larger import load

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
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{s['correct']}</td><td>{s['total']}</td>"
        f"<td>{100 * s['correct'] / s['total']:.1f} %</td></tr>"
        for name, s in items
    )
    return (
        f"<p>Which of two numbers is larger; chance is 50 %.</p><table><thead><tr><th>Model</th>"
        f"<th>correct</th><th>items</th><th>accuracy</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def markdown_body(items: list[tuple[str, dict]]) -> str:
    lines = ["| Model | correct | items |", "|---|---:|---:|"]
    lines += [f"| {name} | {s['correct']} | {s['total']} |" for name, s in items]
    return "\n".join(lines) + "\n"


def tables(items: list[tuple[str, dict]]) -> dict:
    """Its paper-ready table (``synthprobe report --table``): one row per model, as numbers."""
    head = ["Model", "correct", "items", "accuracy"]
    return {
        KEY: (head, [[name, s["correct"], s["total"], round(100 * s["correct"] / s["total"], 2)] for name, s in items])
    }


@dataclass
class LargerRun(Run):
    """One model's scored records; the questions come from the data file the block pins."""

    data: str = ""
    sha256: str = ""

    def answers(self, data_files: Sequence[Path], shared: dict) -> tuple[list[Answer], list[str]]:
        recorded = Path(self.data)
        candidates = [*data_files, recorded, Path(self.source).resolve().parent / recorded]
        path = next((p for p in candidates if p.is_file() and sha256_file(p) == self.sha256), None)
        questions = {it["id"]: it for it in load(path)} if path is not None else {}
        notes = (
            []
            if path is not None
            else [
                f"The questions of {self.model} are not shown: {self.data} with "
                f"SHA-256 {self.sha256[:12]}… was not found."
            ]
        )
        out: list[Answer] = []
        for rec in self.records:
            it = questions.get(rec["id"], {})
            item = {
                "key": f"{KEY}:{self.sha256[:12]}:{rec['id']}",
                "id": rec["id"],
                "depth": None,
                "template": None,
                "topic": None,
                "label": it.get("label", 0),
                "prompt": it.get("question"),
                "endings": it.get("choices"),
                "mistakes": None,
                "values": None,
            }
            out.append(
                (
                    item["key"],
                    item,
                    {"p": rec["pick"], "ok": int(rec["correct"]), "pr": "loglik", "lp": rec["logprobs"]},
                )
            )
        return out, notes


def viewer(docs: Sequence[Results]) -> list[LargerRun]:
    """Its runs for the item viewer (items.html): every model's records."""
    runs = []
    for doc in docs:
        for entry, block in doc.blocks(KEY):
            records = doc.reader.get(block.data, "records", block.where, list)
            dataset = doc.reader.get(block.data, "dataset", block.where, dict)
            runs.append(
                LargerRun(
                    benchmark=KEY,
                    model=str(entry.model.get("name", "model")),
                    source=str(doc.path),
                    spec=str(entry.model.get("spec") or ""),
                    fingerprint=entry.model.get("fingerprint"),
                    where=block.where,
                    records=records,
                    data=str(dataset.get("path", "")),
                    sha256=str(dataset.get("sha256", "")),
                )
            )
    return runs
