"""Deep Arithmark items for the item viewer (:mod:`synthprobe.report.viewer`): the benchmark's
``viewer`` part in the registry (:func:`runs`).

What it reads (nothing new is stored in results files for it):

* ``results.deeparithmark.predictions`` (``synthprobe score deeparithmark --save-predictions``):
  per item its ``id``, ``depth``, ``template``, ``topic``, ``label``, the endings' summed
  ``logprob`` and ``per_token`` means, ``option_sources`` (the named mistake behind each ending),
  ``option_values``, the pick ``pred_acc_norm`` and ``correct_acc_norm`` (the primary metric;
  for a generated answer ``pred`` and ``correct``, with ``rule``, the rule that read it, and
  ``outcome``: answered, unparsed, inconsistent, echo or cut_off, shown by the viewer as such);
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
* ``results.steps.items`` (``synthprobe probe steps --save-items``) of the same model (same
  ``model.fingerprint``, else same ``model.spec``, and the same ``model.dtype``) on the same data
  file (same SHA-256): each
  item's first broken step (the first probed step whose teacher-forced chain probe is wrong by
  log-likelihood choice; ``"none"`` when every probed step is right).

An item's key is ``<first 12 hex digits of the data file's SHA-256>:<id>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.report.viewer import Answer, Run, generated_answer, run_name
from synthprobe.results import Results

#: what a record written before protocols were recorded was scored by
DEFAULT_PROTOCOL = "loglik"
TASK = "deeparithmark"
#: log-likelihoods are rounded for the page (four decimals: far below any difference shown)
DIGITS = 4


@dataclass
class DeepRun(Run):
    """One model's saved predictions on one data file."""

    dataset_sha: str = ""
    dataset_path: str = ""
    #: item id → first broken step ("1", "2", …, "none"), from a per-step probe of this model
    broken: dict[str, str] = field(default_factory=dict)
    #: the weights' dtype as recorded (a per-step probe joins only a run of the same dtype)
    dtype: str | None = None

    def answers(self, data_files: Sequence[Path], shared: dict) -> tuple[list[Answer], list[str]]:
        texts = shared.setdefault("deeparithmark texts", {})
        notes: list[str] = []
        if self.dataset_sha not in texts:
            path = find_data(self, data_files, shared.setdefault("deeparithmark hashes", {}))
            texts[self.dataset_sha] = _texts(path) if path is not None else None
            if path is None:
                notes.append(
                    f"Prompts and ending texts are not shown for {self.model}: the data file "
                    f"{self.dataset_path or '(not recorded)'} with SHA-256 {self.dataset_sha[:12] or '?'}… "
                    "was not found (give it to `synthprobe report --data FILE`)."
                )
        table = texts[self.dataset_sha]
        out: list[Answer] = []
        for k, rec in enumerate(self.records):
            key = f"{self.dataset_sha[:12]}:{rec['id']}"
            text = table.get(rec["id"]) if table is not None else None
            if table is not None and text is None:
                raise InputError(
                    f"item {rec['id']!r} is not in the data file the document names ({self.dataset_path})",
                    path=self.source,
                    field=f"{self.where}.predictions[{k}].id",
                )
            item = {
                "key": key,
                "id": rec["id"],
                "depth": rec.get("depth"),
                "template": rec.get("template"),
                "topic": rec.get("topic"),
                "label": rec["label"],
                "prompt": text["prompt"] if text else None,
                "endings": text["endings"] if text else None,
                "mistakes": rec.get("option_sources"),
                "values": rec.get("option_values"),
            }
            protocol = rec.get("protocol") or DEFAULT_PROTOCOL
            pick, ok = pick_of(rec)
            row: dict[str, Any] = {"p": -1 if pick is None else pick, "ok": int(ok), "pr": protocol}
            if rec.get("logprob") is not None:
                row["lp"] = _round(rec["logprob"])
            if rec.get("per_token") is not None:
                row["pt"] = _round(rec["per_token"])
            if "raw" in rec or "generated" in rec:  # a generated answer (--protocol letters|free)
                row.update(generated_answer(rec))
            if self.broken:
                row["fb"] = self.broken.get(rec["id"], "not probed")
            out.append((key, item, row))
        return out, notes


def pick_of(rec: dict) -> tuple[int | None, bool]:
    """A record's pick (an ending index; None: no option picked) and whether it is right: ``pred``
    and ``correct`` for a generated answer, ``pred_acc_norm`` and ``correct_acc_norm`` for a
    log-likelihood record (and for an older file's generated records, which kept those)."""
    generated = (rec.get("protocol") or DEFAULT_PROTOCOL) != DEFAULT_PROTOCOL
    key = "pred" if generated and "pred" in rec else "pred_acc_norm"
    pick = rec.get(key)
    right = rec.get("correct" if generated and "correct" in rec else "correct_acc_norm")
    return pick, bool(right if isinstance(right, bool) else pick == rec["label"])


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
        n = len(
            r.get(rec, "logprob", here, list, required=rec.get("protocol", DEFAULT_PROTOCOL) == DEFAULT_PROTOCOL)
            or r.get(rec, "option_sources", here, list, required=False)
            or []
        )
        key = "pred" if rec.get("protocol", DEFAULT_PROTOCOL) != DEFAULT_PROTOCOL and "pred" in rec else "pred_acc_norm"
        pick = r.get(rec, key, here, int, required=False)
        if pick is not None and not -1 <= pick < max(n, 1):
            raise r.fail(f"{here}.{key}", f"expected an ending index below {n}, got {pick}")
        for key in ("logprob", "per_token", "option_sources", "option_values"):
            v = rec.get(key)
            if v is not None and (not isinstance(v, list) or len(v) != n):
                raise r.fail(f"{here}.{key}", f"expected a list of {n} entries (one per ending)")
    return preds


def _first_broken(items: list[dict]) -> dict[str, str]:
    """Item id → the first probed step whose chain probe is wrong by choice (``none``: no such step)."""
    from synthprobe.benchmarks.deeparithmark.step_probe.metrics import first_broken_step

    by_item: dict[str, list[dict]] = {}
    for rec in items:
        by_item.setdefault(str(rec["item"]), []).append(rec)
    return {item: first_broken_step(recs, "choice") for item, recs in by_item.items()}


def runs_of(doc: Results) -> tuple[list[DeepRun], list[tuple[dict, str, dict[str, str]]]]:
    """The Deep Arithmark runs with saved predictions in one results file, and its per-step
    probes' first broken steps as (model object, data SHA-256, item → step)."""
    r = doc.reader
    runs: list[DeepRun] = []
    steps: list[tuple[dict, str, dict[str, str]]] = []
    top = doc.datasets.get(TASK) if isinstance(doc.datasets.get(TASK), dict) else {}
    for e in doc.models:
        block = e.results.get(TASK)
        if block is not None:
            recs = _records(r, block.data, block.where)
            if recs is not None:
                ds = block.data.get("dataset") if isinstance(block.data.get("dataset"), dict) else top
                runs.append(
                    DeepRun(
                        benchmark=TASK,
                        model=run_name(e),
                        source=str(doc.path),
                        spec=str(e.model.get("spec") or ""),
                        fingerprint=e.model.get("fingerprint"),
                        where=block.where,
                        records=recs,
                        dataset_sha=str(ds.get("sha256") or top.get("sha256") or ""),
                        dataset_path=str(ds.get("path") or top.get("path") or ""),
                        dtype=e.model.get("dtype"),
                    )
                )
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


def _same_model(a: DeepRun, model: dict) -> bool:
    """The same weights (fingerprint, else spec) run in the same dtype, where both are recorded."""
    if a.dtype and model.get("dtype") and a.dtype != model["dtype"]:
        return False
    if a.fingerprint and model.get("fingerprint"):
        return a.fingerprint == model["fingerprint"]
    return bool(a.spec) and a.spec == model.get("spec")


def runs(docs: Sequence[Results]) -> list[DeepRun]:
    """The benchmark's ``viewer`` part: every run with saved predictions across ``docs``, with the
    first broken steps of a per-step probe of the same model on the same data attached."""
    found: list[DeepRun] = []
    steps: list[tuple[dict, str, dict[str, str]]] = []
    for doc in docs:
        more, st = runs_of(doc)
        found += more
        steps += st
    for run in found:
        for model, sha, broken in steps:
            if sha == run.dataset_sha and _same_model(run, model):
                run.broken = broken
    return found


# -- the data files ------------------------------------------------------------------------------


def _candidates(run: DeepRun, data_files: Sequence[Path]) -> list[Path]:
    out = list(data_files)
    if run.dataset_path:
        p = Path(run.dataset_path)
        out.append(p)
        if not p.is_absolute():
            here = Path(run.source).resolve().parent
            out += [here / p, here.parent / p]
    return out


def find_data(run: DeepRun, data_files: Sequence[Path], hashes: dict[Path, str | None]) -> Path | None:
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

    return {
        it.id: {"prompt": it.ctx, "endings": list(it.endings), "metadata": it.metadata} for it in load_arithmark3(path)
    }


def _round(xs: Sequence[Any] | None) -> list[float] | None:
    if xs is None:
        return None
    return [round(float(x), DIGITS) if isinstance(x, (int, float)) and not isinstance(x, bool) else None for x in xs]


__all__ = ["DEFAULT_PROTOCOL", "DeepRun", "find_data", "runs", "runs_of"]
