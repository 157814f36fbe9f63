"""The contamination section of the report: the ``contamination`` section of results documents
written by ``synthprobe contamination``, read with located errors and rendered with the Jinja2
template ``report_contamination.html``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthprobe.report.format import DASH, fmt_pct_ci
from synthprobe.results import Results
from synthprobe.templating import render

KEY = "contamination"
TITLE = "Contamination"
TESTS = ("ngram13", "ngram8", "arithmetic", "any")
TEST_NAMES = {"ngram13": "13-gram", "ngram8": "8-gram", "arithmetic": "arithmetic"}
MAX_EXAMPLES = 10


@dataclass
class ContaminationRun:
    """One file's contamination section, as the page shows it."""

    source: str
    section: dict


def parse(results: Results) -> list[ContaminationRun]:
    """The file's contamination section (none or one), its fields checked."""
    sec = results.contamination
    if sec is None:
        return []
    r = results.reader
    corpus = r.get(sec, "corpus", "contamination", dict)
    r.get(corpus, "files", "contamination.corpus", list)
    r.get(corpus, "bytes", "contamination.corpus", int)
    r.get(sec, "run", "contamination", dict)
    for k, t in enumerate(r.get(sec, "tasks", "contamination", list)):
        where = f"contamination.tasks[{k}]"
        if not isinstance(t, dict):
            raise r.fail(where, "expected an object")
        r.get(t, "task", where, str)
        r.get(t, "n", where, int)
        c = r.get(t, "contaminated", where, dict)
        for test in TESTS:
            block = r.get(c, test, f"{where}.contaminated", dict, required=False)
            if block is not None:
                r.get(block, "k", f"{where}.contaminated.{test}", int)
        for j, res in enumerate(r.get(t, "rescored", where, list)):
            for key in ("full", "clean"):
                b = r.get(res, key, f"{where}.rescored[{j}]", dict)
                r.get(b, "n", f"{where}.rescored[{j}].{key}", int)
                r.get(b, "correct", f"{where}.rescored[{j}].{key}", int)
        r.get(t, "items", where, list)
    return [ContaminationRun(str(results.path), sec)]


def share_text(block: dict | None, n: int) -> str:
    """``3/200 = 1.50 % [0.31, 4.32]``: a test's contaminated items, their share and its 95 % CI."""
    if block is None or block.get("share") is None:
        return DASH
    return f"{block['k']}/{n} = {fmt_pct_ci(block['share'], block['ci95'])}"


def _acc(b: dict) -> str:
    if b.get("accuracy") is None:
        return DASH
    return f"{fmt_pct_ci(b['accuracy'], b['ci95'])} ({b['correct']}/{b['n']})"


def _where(loc: dict) -> str:
    at = f"line {loc['line']}" if "line" in loc else f"row {loc.get('row')}"
    form = f" ({loc['form']})" if loc.get("form") else ""
    return f"{loc.get('file')} {at}{form}"


def _view(run: ContaminationRun) -> dict[str, Any]:
    sec = run.section
    corpus, engine = sec["corpus"], sec["run"]
    tasks, rescored, examples = [], [], []
    for t in sec["tasks"]:
        n = t["n"]
        tasks.append(
            {
                "name": t["task"] + (f" ({t['code']})" if t.get("code") else ""),
                "n": f"{n:,}",
                "cells": [share_text(t["contaminated"].get(test), n) for test in TESTS],
            }
        )
        for r in t["rescored"]:
            rescored.append(
                {
                    "task": t["task"],
                    "model": r.get("model", ""),
                    "setting": r.get("setting") or DASH,
                    "metric": r.get("metric", ""),
                    "full": _acc(r["full"]),
                    "clean": _acc(r["clean"]),
                    "flagged": r["full"]["n"] - r["clean"]["n"],
                }
            )
        for item in t["items"]:
            if len(examples) >= MAX_EXAMPLES or not isinstance(item, dict):
                break
            hits = [
                f"{TEST_NAMES[test]} → {_where(item[test])}" for test in TEST_NAMES if isinstance(item.get(test), dict)
            ]
            examples.append(f"{t['task']} item {item.get('id')}: " + "; ".join(hits))
    formats = sorted({f.get("format", "?") for f in corpus["files"] if isinstance(f, dict)})
    return {
        "source": run.source,
        "files": len(corpus["files"]),
        "formats": ", ".join(formats),
        "mb": f"{corpus['bytes'] / 1e6:,.1f}",
        "records": f"{corpus.get('records', 0):,}",
        "skipped": len(corpus.get("skipped") or []),
        "engine": engine.get("engine", "local"),
        "mb_per_s": engine.get("mb_per_s"),
        "tasks": tasks,
        "rescored": rescored,
        "examples": examples,
    }


def summary(runs: Sequence[ContaminationRun]) -> str:
    n_tasks = sum(len(c.section["tasks"]) for c in runs)
    return f"contamination: {n_tasks} task{'s' if n_tasks != 1 else ''} checked"


def section(runs: Sequence[ContaminationRun]) -> str:
    return render("report_contamination.html", runs=[_view(r) for r in runs])


def markdown_body(runs: Sequence[ContaminationRun]) -> str:
    """leaderboard.md's contamination table: contaminated share per task and test."""
    lines = ["| Source | Task | Items | 13-gram | 8-gram | arithmetic | any |", "|---|---|---|---|---|---|---|"]
    for run in runs:
        for t in run.section["tasks"]:
            cells = [share_text(t["contaminated"].get(test), t["n"]) for test in TESTS]
            lines.append(f"| {run.source} | {t['task']} | {t['n']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
