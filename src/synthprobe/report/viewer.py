"""The report's item-level viewer, ``items.html``: every scored item of every model, in one page.

What it reads (nothing new is stored in results files for it):

* ``results.deeparithmark.predictions`` (``synthprobe score deeparithmark --save-predictions``):
  per item its ``id``, ``depth``, ``template``, ``topic``, ``label``, the endings' summed
  ``logprob`` and ``per_token`` means, ``option_sources`` (the named mistake behind each ending),
  ``option_values``, the pick ``pred_acc_norm`` and ``correct_acc_norm`` (the primary metric);
  ``protocol`` (``"loglik"`` when absent: every record written so far scores endings by
  log-likelihood); for a generative protocol ``generated`` (the text) and ``parsed`` (what was
  read from it, null when nothing was) are shown instead of log-likelihoods.
* The prompt and the endings' texts are *not* copied into results files: the document already
  names the data file and pins its SHA-256 (``datasets.deeparithmark`` / the block's
  ``dataset``), so the report reads the data file at report time, checks the SHA-256, and embeds
  the texts in ``items.html``. The file is looked for among the ``--data`` files given to
  ``synthprobe report``, at the recorded path, and at that path taken from the results file's
  folder and its parent. A data file that is missing or whose SHA-256 differs is not used: the
  viewer then shows every score but no prompt, and says why.
* ``results.gpt3.rows[*].items`` (``synthprobe score gpt3 --save-predictions``): read by
  :mod:`synthprobe.report.gpt3.items`, prompts rebuilt from the run's settings.
* ``results.steps.items`` (``synthprobe probe steps --save-items``) of the same model (same
  ``model.fingerprint``, else same ``model.spec``, and the same ``model.dtype``) on the same data
  file (same SHA-256): each
  item's first broken step (the first probed step whose teacher-forced chain probe is wrong by
  log-likelihood choice; ``"none"`` when every probed step is right).

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
                 "gen"?: generated text, "parsed"?: parsed answer, "fb"?: first broken step}]]}

GPT-3 items have ``"gold"`` (generation tasks), ``depth`` null, ``template`` "<code> <setting>",
``topic`` the family, and keys ``gpt3:<seed>:<format>:<numbers>:<task>:<k>:<index>:<shots>``.

``runs[m]`` holds model ``m``'s scored items in file order.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from synthprobe.errors import InputError
from synthprobe.results import Results
from synthprobe.templating import Markup, render, script_json

#: what a record written before protocols were recorded was scored by
DEFAULT_PROTOCOL = "loglik"
VIEWER_VERSION = 1
PAGE = "items.html"
TASK = "deeparithmark"
#: log-likelihoods are rounded for the page (four decimals: far below any difference shown)
DIGITS = 4


@dataclass
class Run:
    """One model's saved predictions on one data file (``model`` is the name shown; the report
    makes it unique across runs as it does for the leaderboard rows)."""

    model: str
    source: str
    spec: str
    fingerprint: str | None
    dataset_sha: str
    dataset_path: str
    records: list[dict]
    where: str
    #: item id → first broken step ("1", "2", …, "none"), from a per-step probe of this model
    broken: dict[str, str] = field(default_factory=dict)
    #: GPT-3 synthetic-task items, ready for the page (:mod:`synthprobe.report.gpt3.items`):
    #: (item key, item, row); None for Deep Arithmark runs
    pairs: list | None = None
    #: what the page should say about this run (prompts that could not be rebuilt)
    notes: list[str] = field(default_factory=list)
    #: the weights' dtype as recorded (a per-step probe joins only a run of the same dtype)
    dtype: str | None = None


def _records(r, block: dict, where: str) -> list[dict] | None:
    preds = r.get(block, "predictions", where, list, required=False)
    if preds is None:
        return None
    for i, rec in enumerate(preds):
        here = f"{where}.predictions[{i}]"
        if not isinstance(rec, dict):
            raise r.fail(here, f"expected an object, got {type(rec).__name__}")
        r.get(rec, "id", here, str)
        r.get(rec, "label", here, int)
        n = len(r.get(rec, "logprob", here, list, required=rec.get("protocol", DEFAULT_PROTOCOL) == DEFAULT_PROTOCOL)
                or r.get(rec, "option_sources", here, list, required=False) or [])
        pick = r.get(rec, "pred_acc_norm", here, int, required=False)
        if pick is not None and not -1 <= pick < max(n, 1):
            raise r.fail(f"{here}.pred_acc_norm", f"expected an ending index below {n}, got {pick}")
        for key in ("logprob", "per_token", "option_sources", "option_values"):
            v = rec.get(key)
            if v is not None and (not isinstance(v, list) or len(v) != n):
                raise r.fail(f"{here}.{key}", f"expected a list of {n} entries (one per ending)")
    return preds


def _first_broken(items: list[dict]) -> dict[str, str]:
    """Item id → the first probed step whose chain probe is wrong by choice (``none``: no such step)."""
    from synthprobe.metrics.steps import first_broken_step

    by_item: dict[str, list[dict]] = {}
    for rec in items:
        by_item.setdefault(str(rec["item"]), []).append(rec)
    return {item: first_broken_step(recs, "choice") for item, recs in by_item.items()}


def _run_name(e) -> str:
    """A run's model as the tables show it: the name, and the protocol / chat template that set this
    entry apart from the same model's other entries (:func:`synthprobe.results.variant_label`), so
    one model scored under two protocols gives two columns of picks, never one."""
    from synthprobe.results import variant_label

    name = str(e.model.get("name") or e.model.get("spec") or "model")
    label = variant_label(e.data)
    return f"{name} [{label}]" if label else name


def gpt3_runs(doc: Results, pools: dict) -> list[Run]:
    """The GPT-3 synthetic-task runs with saved items in one results file."""
    from synthprobe.report.gpt3.items import pairs_of

    return [Run(model=_run_name(e), source=str(doc.path),
                spec=str(e.model.get("spec") or ""), fingerprint=e.model.get("fingerprint"), dataset_sha="",
                dataset_path="", records=[], where=e.where, pairs=pairs, notes=notes)
            for e, pairs, notes in pairs_of(doc, pools)]


def runs_of(doc: Results) -> tuple[list[Run], list[tuple[dict, str, dict[str, str]]]]:
    """The Deep Arithmark runs with saved predictions in one results file, and its per-step
    probes' first broken steps as (model object, data SHA-256, item → step)."""
    r = doc.reader
    runs: list[Run] = []
    steps: list[tuple[dict, str, dict[str, str]]] = []
    top = doc.datasets.get(TASK) if isinstance(doc.datasets.get(TASK), dict) else {}
    for e in doc.models:
        block = e.results.get(TASK)
        if block is not None:
            recs = _records(r, block.data, block.where)
            if recs is not None:
                ds = block.data.get("dataset") if isinstance(block.data.get("dataset"), dict) else top
                runs.append(Run(model=_run_name(e), source=str(doc.path),
                                spec=str(e.model.get("spec") or ""), fingerprint=e.model.get("fingerprint"),
                                dataset_sha=str(ds.get("sha256") or top.get("sha256") or ""),
                                dataset_path=str(ds.get("path") or top.get("path") or ""),
                                records=recs, where=block.where, dtype=e.model.get("dtype")))
        st = e.results.get("steps")
        if st is not None and isinstance(st.data.get("items"), list):
            ds = st.data.get("dataset") if isinstance(st.data.get("dataset"), dict) else {}
            items = r.get(st.data, "items", st.where, list)
            for i, rec in enumerate(items):
                here = f"{st.where}.items[{i}]"
                if not isinstance(rec, dict):
                    raise r.fail(here, f"expected an object, got {type(rec).__name__}")
                r.get(rec, "item", here, (str, int))
                r.get(rec, "step", here, int)
                chain = r.get(rec, "chain", here, dict)
                r.get(chain, "choice", f"{here}.chain", bool)
            steps.append((e.model, str(ds.get("sha256") or ""), _first_broken(items)))
    return runs, steps


def _same_model(a: Run, model: dict) -> bool:
    """The same weights (fingerprint, else spec) run in the same dtype, where both are recorded."""
    if a.dtype and model.get("dtype") and a.dtype != model["dtype"]:
        return False
    if a.fingerprint and model.get("fingerprint"):
        return a.fingerprint == model["fingerprint"]
    return bool(a.spec) and a.spec == model.get("spec")


def collect(docs: Sequence[Results]) -> list[Run]:
    """Every run with saved predictions across ``docs``, with first broken steps attached."""
    runs: list[Run] = []
    steps: list[tuple[dict, str, dict[str, str]]] = []
    pools: dict = {}
    for doc in docs:
        found, st = runs_of(doc)
        runs += found + gpt3_runs(doc, pools)
        steps += st
    for run in runs:
        for model, sha, broken in steps:
            if sha == run.dataset_sha and _same_model(run, model):
                run.broken = broken
    return runs


# -- the data files ------------------------------------------------------------------------------

def _candidates(run: Run, data_files: Sequence[Path]) -> list[Path]:
    out = list(data_files)
    if run.dataset_path:
        p = Path(run.dataset_path)
        out.append(p)
        if not p.is_absolute():
            here = Path(run.source).resolve().parent
            out += [here / p, here.parent / p]
    return out


def find_data(run: Run, data_files: Sequence[Path], hashes: dict[Path, str | None]) -> Path | None:
    """The first candidate data file whose SHA-256 is the one the results document pins."""
    from synthprobe.io.read import sha256_file

    for p in _candidates(run, data_files):
        key = p.resolve() if p.exists() else p
        if key not in hashes:
            hashes[key] = sha256_file(p) if p.is_file() else None
        if run.dataset_sha and hashes[key] == run.dataset_sha:
            return p
    return None


def _texts(path: Path) -> dict[str, dict[str, Any]]:
    from synthprobe.formats.arithmark3 import load_arithmark3

    return {it.id: {"prompt": it.ctx, "endings": list(it.endings), "metadata": it.metadata}
            for it in load_arithmark3(path)}


def _round(xs: Sequence[Any] | None) -> list[float] | None:
    if xs is None:
        return None
    return [round(float(x), DIGITS) if isinstance(x, (int, float)) and not isinstance(x, bool) else None for x in xs]


def viewer_data(runs: Sequence[Run], *, data_files: Sequence[Path] = (), title: str = "") -> dict[str, Any]:
    """The page's JSON (layout in the module docstring)."""
    hashes: dict[Path, str | None] = {}
    texts: dict[str, dict[str, dict[str, Any]] | None] = {}
    notes: list[str] = []
    for run in runs:
        notes += run.notes
        if run.pairs is not None or run.dataset_sha in texts:
            continue
        path = find_data(run, data_files, hashes)
        texts[run.dataset_sha] = _texts(path) if path is not None else None
        if path is None:
            notes.append(f"Prompts and ending texts are not shown for {run.model}: the data file "
                         f"{run.dataset_path or '(not recorded)'} with SHA-256 {run.dataset_sha[:12] or '?'}… "
                         "was not found (give it to `synthprobe report --data FILE`).")
    items: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    out_runs: list[list[dict[str, Any]]] = []
    models: list[dict[str, Any]] = []
    by_name: dict[str, int] = {}
    for run in runs:
        table = texts.get(run.dataset_sha)
        rows = []
        correct = 0
        for key, item, row in run.pairs or ():
            if key not in index:
                index[key] = len(items)
                items.append(item)
            rows.append({"i": index[key], **row})
            correct += row["ok"]
        for k, rec in enumerate(run.records):
            key = f"{run.dataset_sha[:12]}:{rec['id']}"
            if key not in index:
                text = table.get(rec["id"]) if table is not None else None
                if table is not None and text is None:
                    raise InputError(f"item {rec['id']!r} is not in the data file the document names "
                                     f"({run.dataset_path})", path=run.source, field=f"{run.where}.predictions[{k}].id")
                index[key] = len(items)
                items.append({"key": key, "id": rec["id"], "depth": rec.get("depth"), "template": rec.get("template"),
                              "topic": rec.get("topic"), "label": rec["label"],
                              "prompt": text["prompt"] if text else None,
                              "endings": text["endings"] if text else None,
                              "mistakes": rec.get("option_sources"), "values": rec.get("option_values")})
            protocol = rec.get("protocol") or DEFAULT_PROTOCOL
            pick = rec.get("pred_acc_norm")
            ok = bool(rec.get("correct_acc_norm", pick == rec["label"]))
            correct += ok
            row: dict[str, Any] = {"i": index[key], "p": -1 if pick is None else pick, "ok": int(ok), "pr": protocol}
            if rec.get("logprob") is not None:
                row["lp"] = _round(rec["logprob"])
            if rec.get("per_token") is not None:
                row["pt"] = _round(rec["per_token"])
            if "raw" in rec or "generated" in rec:  # a generated answer (--protocol letters|free)
                row["gen"] = rec.get("raw", rec.get("generated"))
                row["parsed"] = rec.get("parsed") if rec.get("rule") != "unparsed" else (
                    f"unparsed: {rec.get('unparsed_reason') or 'nothing read'}")
            if run.broken:
                row["fb"] = run.broken.get(rec["id"], "not probed")
            rows.append(row)
        if run.model in by_name:     # one model's Deep Arithmark and GPT-3 runs: one column of picks
            m = by_name[run.model]
            out_runs[m] += rows
            models[m]["n"] += len(rows)
            models[m]["correct"] += correct
            if Path(run.source).name not in models[m]["source"].split(", "):
                models[m]["source"] += ", " + Path(run.source).name
            continue
        by_name[run.model] = len(models)
        out_runs.append(rows)
        models.append({"name": run.model, "source": Path(run.source).name, "spec": run.spec,
                       "n": len(rows), "correct": correct})
    for note in notes:
        print(f"synthprobe report: {note}", file=sys.stderr)
    return {"version": VIEWER_VERSION, "title": title, "notes": notes, "models": models, "items": items,
            "runs": out_runs}


def render_page(runs: Sequence[Run], *, title: str, css: str, data_files: Sequence[Path] = ()) -> str:
    """``items.html``: the viewer page, its data embedded."""
    data = viewer_data(runs, data_files=data_files, title=title)
    return render("report_items.html", title=f"{title}: items", css=Markup(css), data=script_json(data),
                  n_models=len(data["models"]), n_items=len(data["items"]))


__all__ = ["DEFAULT_PROTOCOL", "PAGE", "Run", "collect", "find_data", "render_page", "runs_of", "viewer_data"]
