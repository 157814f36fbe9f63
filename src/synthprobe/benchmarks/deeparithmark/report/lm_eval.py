"""Deep Arithmark's tasks in lm-evaluation-harness output folders (:mod:`synthprobe.report.lm_eval`):
the benchmark's ``lm_eval_reader`` part in the registry.

* written by lm-eval itself on the tasks of ``synthprobe export lm-eval``: ``deeparithmark`` (and
  ``deeparithmark_depth<N>``) samples become per-item records read from each sample's ``doc``
  (the release item, with its depth, template and named mistakes) and the log-likelihoods in
  ``filtered_resps``. lm-eval's files hold no token counts, so synthprobe's per-token
  ``acc_norm`` and soft accuracy cannot be recomputed: such a row is headed by ``acc`` (the
  summed log-likelihood, defined the same in both protocols), and its run settings say so.
  ``acc_char`` is lm-eval's ``acc_norm``.
* written by ``synthprobe export lm-eval-results``: the block's ``predictions`` come back from
  the samples named ``deeparithmark``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synthprobe import registry
from synthprobe.errors import InputError
from synthprobe.report.lm_eval import samples
from synthprobe.results import Reader

TASK = "deeparithmark"
#: the lm-eval tasks read, as an error names them
TASKS = "deeparithmark"
#: where an export's per-item list went (the key of the ``synthprobe.samples`` object), as an error names it
SAMPLES = "deeparithmark"
#: what a row read from lm-eval's own files is headed by
HEADLINE_NOTE = (
    "acc (lm-eval's files hold no token counts, so the per-token acc_norm and the soft "
    "accuracy cannot be recomputed; Deep and d2-d5 are acc, the summed log-likelihood)"
)
_DEPTH_TASK = re.compile(r"^deeparithmark(_depth[0-9]+)?$")


def restore(results: dict, key: str, records: list[dict], r: Reader, at: str) -> bool:
    """Put an export's per-item records back into the model entry's ``results``; False when
    ``key`` is not this benchmark's."""
    if key != SAMPLES:
        return False
    r.get(results, TASK, "synthprobe.entry.results", dict)["predictions"] = records
    return True


def _lls(r: Reader, obj: dict, n: int, path: Path, line: int) -> tuple[list[float], list[bool]]:
    resps = obj.get("filtered_resps")
    if not isinstance(resps, list) or len(resps) != n:
        raise InputError(
            f"expected {n} [log-likelihood, is-greedy] pairs, one per ending",
            path=path,
            line=line,
            field="filtered_resps",
        )
    lls, greedy = [], []
    for pair in resps:
        try:
            lls.append(float(pair[0]))
            greedy.append(str(pair[1]) == "True")
        except (TypeError, ValueError, IndexError):
            raise InputError(
                f"expected [log-likelihood, is-greedy], got {pair!r}", path=path, line=line, field="filtered_resps"
            ) from None
    return lls, greedy


def _deep_record(doc: dict, lls: list[float], greedy: list[bool]) -> dict[str, Any]:
    """A per-item record (:mod:`synthprobe.scoring.records` layout) from what lm-eval keeps:
    the headline pick is acc's (no token counts), acc_char is lm-eval's acc_norm."""
    from synthprobe.metrics.choice import argmax_first

    md = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    endings = doc["endings"]
    n = len(endings)
    label = int(doc["label"])
    per_char = [ll / len(e) for ll, e in zip(lls, endings)]
    p_acc, p_char = argmax_first(lls), argmax_first(per_char)
    values = (
        md.get("option_values") if isinstance(md.get("option_values"), list) and len(md["option_values"]) == n else None
    )
    sources = (
        md.get("option_sources")
        if isinstance(md.get("option_sources"), list) and len(md["option_sources"]) == n
        else None
    )
    depth = md.get("depth")
    chosen_rank = None
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        chosen_rank = sum(1 for v in values if v < values[p_acc])
    return {
        "id": str(doc.get("ind", "")),
        "line": None,
        "category": doc.get("activity_label"),
        "template": md.get("template"),
        "depth": depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        "topic": md.get("topic"),
        "label": label,
        "n_endings": n,
        "logprob": lls,
        "n_tokens": None,
        "n_chars": [len(e) for e in endings],
        "per_token": None,
        "per_char": per_char,
        "is_greedy": greedy,
        "pred_acc": p_acc,
        "pred_acc_norm": p_acc,
        "pred_acc_char": p_char,
        "correct_acc": p_acc == label,
        "correct_acc_norm": p_acc == label,
        "correct_acc_char": p_char == label,
        "soft": 0.0,
        "option_values": values,
        "option_sources": sources,
        "answer_rank": md.get("answer_rank"),
        "chosen_source": sources[p_acc] if sources else None,
        "chosen_rank": chosen_rank,
        "truncated": False,
    }


def _deep_block(folder: Path, r: Reader, tasks: list[str], iso: str) -> dict:
    summarise = registry.get(TASK).part("metrics")
    # the full task when it ran, else the depth tasks together
    use = ["deeparithmark"] if "deeparithmark" in tasks else sorted(tasks)
    records = []
    for task in use:
        path = folder / f"samples_{task}_{iso}.jsonl"
        for line, obj in samples(folder, task, iso, r):
            doc = obj.get("doc")
            if not (
                isinstance(doc, dict)
                and isinstance(doc.get("endings"), list)
                and doc["endings"]
                and all(isinstance(e, str) and e for e in doc["endings"])
                and str(doc.get("label", "")).isdigit()
                and int(doc["label"]) < len(doc["endings"])
            ):
                raise InputError("expected a Deep Arithmark item (endings, label)", path=path, line=line, field="doc")
            lls, greedy = _lls(r, obj, len(doc["endings"]), path, line)
            records.append(_deep_record(doc, lls, greedy))
    summary = summarise(records)
    summary["metrics"]["soft"] = None
    for field in ("by_depth", "by_template", "by_topic", "by_category"):
        for block in summary[field].values():
            block["soft"] = None
            block["acc_norm"] = block["acc"]
    summary["primary"] = "acc"
    summary["headline"] = HEADLINE_NOTE
    return {"summary": summary, "predictions": records, "source": "lm-eval"}


def read(folder: Path, files: list[tuple[Path, dict, str]]) -> tuple[dict, dict, dict] | None:
    """The block read from lm-eval's own results files of one model (``(path, results file, iso
    time)``, later runs after earlier; the last run of these tasks counts), with the settings and
    the ``datasets`` entry it adds; None when no file holds these tasks."""
    found = None
    for path, doc, iso in files:
        tasks = [t for t in doc["results"] if _DEPTH_TASK.match(t)]
        if tasks:
            deep = _deep_block(folder, Reader(path), tasks, iso)
            configs = doc.get("configs") or {}
            cfg = configs.get(tasks[0]) if isinstance(configs.get(tasks[0]), dict) else {}
            data = ((cfg.get("dataset_kwargs") or {}).get("data_files") or {}).get("test")
            found = deep, {TASK: {"path": data, "n_items": deep["summary"]["n"]}}
    if found is None:
        return None
    deep, datasets = found
    return deep, {"headline_metric": HEADLINE_NOTE}, datasets
