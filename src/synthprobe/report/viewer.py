"""The report's item-level viewer, ``items.html``: every scored item of every model, in one page.

Nothing new is stored in results files for it. Each benchmark brings its own saved items through
its ``viewer`` part in the registry (:mod:`synthprobe.registry`): ``viewer(docs)`` turns the
read results documents into :class:`Run` objects, one per model entry with saved items, and a
run's :meth:`Run.answers` gives its items and that model's answers in the page's layout below
(prompts read from data files at report time, where the benchmark does that). This module asks
the registry for the benchmarks whose blocks the documents hold, joins their runs into one page
and names no benchmark: Deep Arithmark's runs are :mod:`synthprobe.benchmarks.deeparithmark.report.items`,
the GPT-3 synthetic tasks' :mod:`synthprobe.benchmarks.gpt3.report.items`.

The page is ``resources/templates/report_items.html`` with a small script of our own
(``report_items.js``); the data sits in the page as JSON inside ``<script
type="application/json">``, escaped by :func:`synthprobe.templating.script_json`, so the page
works from ``file://`` with nothing fetched. Layout of that JSON (``version`` 1)::

    {"version": 1, "title", "notes": [str],
     "models": [{"name", "source", "spec", "n", "correct"}],
     "items":  [{"key", "id", "depth", "template", "topic", "label",
                 "prompt"|null, "endings"|null, "mistakes"|null, "values"|null}],
     "runs":   [[{"i": item index, "p": pick (-1: none parsed), "ok": 0|1, "pr": protocol,
                 "lp"?: [summed log-likelihoods], "pt"?: [per-token means],
                 "gen"?: generated text, "parsed"?: parsed answer, "rule"?: the rule that read it,
                 "oc"?: outcome (answered, unparsed, inconsistent, echo, cut_off), "ocn"?: its note,
                 "fb"?: first broken step, "tw"?: {"of", "k", "src"}}]]}

An answer may name the item it is a variant of (``"tw": {"of": that item's key, "k": the kind
of variant, "src": the named mistake picked}``: a perturbation twin and its original, the same
model's answer to both in the same column); the page then also shows such pairs side by side
(``report_items_pairs.js``, included only when some answer has ``tw``, so other pages are
unchanged).

An item's ``key`` is unique across the page (a benchmark prefixes its own: the data file's
SHA-256, ``gpt3:…``); an item scored by several models is one item. ``runs[m]`` holds model
``m``'s answers in file order; runs of several benchmarks that carry one model name (named
apart per benchmark, as the leaderboards are) are one model, one column of picks.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe import registry
from synthprobe.results import Results
from synthprobe.templating import Markup, render, script_json

VIEWER_VERSION = 1
PAGE = "items.html"

#: one item and one model's answer to it: (item key, item, answer without its ``"i"``)
Answer = tuple[str, dict[str, Any], dict[str, Any]]


def generated_answer(rec: dict[str, Any]) -> dict[str, Any]:
    """The viewer's fields of one generated answer (``--protocol letters|free``, SAT under
    ``--sat-protocol letters``) from its scored record: the text (``gen``), what was read from it
    (``parsed``; ``"unparsed: <reason>"`` when nothing was), the rule that read it, its outcome and
    the outcome's note, each where the record has it."""
    row: dict[str, Any] = {"gen": rec.get("raw", rec.get("generated"))}
    row["parsed"] = (
        rec.get("parsed")
        if rec.get("rule") != "unparsed"
        else f"unparsed: {rec.get('unparsed_reason') or 'nothing read'}"
    )
    if isinstance(rec.get("rule"), str):
        row["rule"] = rec["rule"]
    if isinstance(rec.get("outcome"), str):
        row["oc"] = rec["outcome"]
    if isinstance(rec.get("outcome_note"), str) and rec["outcome_note"]:
        row["ocn"] = rec["outcome_note"]
    return row


@dataclass
class Run:
    """One model's saved items of one benchmark in one results file (``model`` is the name shown;
    the report makes it unique across the benchmark's runs as it does for the leaderboard rows).
    A benchmark's ``viewer`` part returns these, subclassed with what :meth:`answers` needs."""

    benchmark: str
    model: str
    source: str
    spec: str
    fingerprint: str | None
    where: str
    #: the per-item records the results file saved for this run, as the benchmark read them
    records: list[dict] = field(default_factory=list)
    #: what the page should say about this run (prompts that could not be found or rebuilt)
    notes: list[str] = field(default_factory=list)

    def answers(self, data_files: Sequence[Path], shared: dict) -> tuple[list[Answer], list[str]]:
        """The run's items and answers in file order, and more notes for the page. ``data_files``:
        the files given to ``synthprobe report --data``; ``shared``: one dict for every run of the
        page, where runs keep what they share (a data file read once)."""
        raise NotImplementedError


def run_name(e) -> str:
    """A run's model as the tables show it: the name, and the protocol / chat template that set this
    entry apart from the same model's other entries (:func:`synthprobe.results.variant_label`), so
    one model scored under two protocols gives two columns of picks, never one."""
    from synthprobe.results import variant_label

    name = str(e.model.get("name") or e.model.get("spec") or "model")
    label = variant_label(e.data)
    return f"{name} [{label}]" if label else name


def _owner(block: str) -> registry.Benchmark | None:
    """The benchmark a model entry's block belongs to: the benchmark of that name, else the
    built-in benchmark whose ``layout`` part owns the block (a probe's block: ``twins``)."""
    bench = registry.find(block)
    if bench is not None:
        return bench
    for name in registry.BUILTIN:
        b = registry.find(name)
        if b is not None and b.has("layout") and block in getattr(b.part("layout"), "BLOCKS", {}):
            return b
    return None


def collect(docs: Sequence[Results]) -> list[Run]:
    """Every run with saved items across ``docs``: for each benchmark of the registry whose block
    (or a block it owns) the documents hold, in block-name order, that has a ``viewer`` part, its
    runs (once per benchmark)."""
    runs: list[Run] = []
    done: set[str] = set()
    for name in sorted({name for doc in docs for e in doc.models for name in e.results}):
        bench = _owner(name)
        if bench is not None and bench.name not in done and bench.has("viewer"):
            done.add(bench.name)
            runs += bench.part("viewer")(docs)
    return runs


def viewer_data(runs: Sequence[Run], *, data_files: Sequence[Path] = (), title: str = "") -> dict[str, Any]:
    """The page's JSON (layout in the module docstring)."""
    shared: dict = {}
    notes: list[str] = []
    found: list[list[Answer]] = []
    for run in runs:
        answers, said = run.answers(data_files, shared)
        notes += run.notes + said
        found.append(answers)
    items: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    out_runs: list[list[dict[str, Any]]] = []
    models: list[dict[str, Any]] = []
    by_name: dict[str, int] = {}
    for run, answers in zip(runs, found):
        rows = []
        correct = 0
        for key, item, answer in answers:
            if key not in index:
                index[key] = len(items)
                items.append(item)
            rows.append({"i": index[key], **answer})
            correct += answer["ok"]
        if run.model in by_name:  # one model's runs of several benchmarks: one column of picks
            m = by_name[run.model]
            out_runs[m] += rows
            models[m]["n"] += len(rows)
            models[m]["correct"] += correct
            if Path(run.source).name not in models[m]["source"].split(", "):
                models[m]["source"] += ", " + Path(run.source).name
            continue
        by_name[run.model] = len(models)
        out_runs.append(rows)
        models.append(
            {"name": run.model, "source": Path(run.source).name, "spec": run.spec, "n": len(rows), "correct": correct}
        )
    for note in notes:
        print(f"synthprobe report: {note}", file=sys.stderr)
    return {
        "version": VIEWER_VERSION,
        "title": title,
        "notes": notes,
        "models": models,
        "items": items,
        "runs": out_runs,
    }


def render_page(runs: Sequence[Run], *, title: str, css: str, data_files: Sequence[Path] = ()) -> str:
    """``items.html``: the viewer page, its data embedded."""
    return render_data(viewer_data(runs, data_files=data_files, title=title), css=css)


def render_data(data: dict[str, Any], *, css: str) -> str:
    """``items.html`` from :func:`viewer_data`'s JSON."""
    return render(
        "report_items.html",
        title=f"{data['title']}: items",
        css=Markup(css),
        data=script_json(data),
        n_models=len(data["models"]),
        n_items=len(data["items"]),
        pairs=any("tw" in row for rows in data["runs"] for row in rows),
    )


def counts(data: dict[str, Any]) -> tuple[int, int]:
    """``(models, answers)`` the page shows: one column per model, every benchmark's answers."""
    return len(data["models"]), sum(m["n"] for m in data["models"])


__all__ = ["Answer", "PAGE", "Run", "collect", "counts", "render_data", "render_page", "run_name", "viewer_data"]
