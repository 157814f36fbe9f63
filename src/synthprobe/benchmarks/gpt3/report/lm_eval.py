"""The GPT-3 synthetic tasks in lm-evaluation-harness output folders (:mod:`synthprobe.report.lm_eval`):
the benchmark's ``lm_eval_reader`` part in the registry.

* written by lm-eval itself on the tasks of ``synthprobe export lm-eval``: ``synthprobe_<task>_gen``
  and ``synthprobe_<task>`` samples become rows (exact match, or "the gold is greedy"), with the
  paper's figures;
* written by ``synthprobe export lm-eval-results``: each row's ``items`` come back from the
  samples named ``gpt3.rows[<i>]``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.report.lm_eval import samples
from synthprobe.results import Reader

TASK = "gpt3"
#: the lm-eval tasks read, as an error names them
TASKS = "synthprobe_<task>_gen, synthprobe_<task>"
#: where an export's per-item lists went (keys of the ``synthprobe.samples`` object), as an error names them
SAMPLES = "gpt3.rows[<i>]"


def restore(results: dict, key: str, records: list[dict], r: Reader, at: str) -> bool:
    """Put one row's per-item records back into the model entry's ``results``; False when ``key``
    is not this benchmark's."""
    if not (key.startswith("gpt3.rows[") and key.endswith("]") and key[10:-1].isdigit()):
        return False
    rows = r.get(r.get(results, TASK, "synthprobe.entry.results", dict), "rows", "synthprobe.entry.results.gpt3", list)
    i = int(key[10:-1])
    if i >= len(rows):
        raise r.fail(at, f"names row {i}, but the entry holds {len(rows)} GPT-3 rows")
    rows[i]["items"] = records
    return True


def _setting(k: int, task) -> str:
    """The row's shot setting, as ``synthprobe score gpt3`` names it."""
    return {0: "zero", 1: "one"}.get(k, "few" if k == task.k_few else f"{k}-shot")


def _gpt3_row(folder: Path, r: Reader, doc: dict, name: str, iso: str) -> dict | None:
    from synthprobe.benchmarks.gpt3.paper import SIZES, paper_row, where_it_lands
    from synthprobe.benchmarks.gpt3.registry import get_task
    from synthprobe.metrics.stats import wilson_percent

    gen = name.endswith("_gen")
    base = name[len("synthprobe_") : -len("_gen") if gen else None]
    try:
        task = get_task(base)
    except InputError:
        return None
    if task.kind == "choice":
        return None
    k = r.get(doc["n-shot"], name, "n-shot", int)
    metric = "exact_match" if gen else "acc"
    items = []
    path = folder / f"samples_{name}_{iso}.jsonl"
    for line, obj in samples(folder, name, iso, r):
        value = obj.get(metric)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InputError(f"expected {metric}, a number", path=path, line=line, field=metric)
        d = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
        item = {
            "index": obj["doc_id"],
            "n_shots": k,
            "prompt_tokens": None,
            "gold": d.get("completion"),
            "correct": value == 1,
        }
        resps = obj.get("resps")
        if gen and isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]:
            item["prediction"] = resps[0][0]
        items.append(item)
    n = len(items)
    correct = sum(1 for it in items if it["correct"])
    accuracy = 100.0 * correct / n if n else 0.0
    ci95 = wilson_percent(correct, n)
    setting = _setting(k, task)
    row: dict[str, Any] = {
        "task": task.name,
        "code": task.code,
        "family": task.family,
        "setting": setting,
        "k": k,
        "n": n,
        "correct": correct,
        "accuracy": round(accuracy, 4),
        "ci95": ci95,
        "shots": {"mean": k, "min": k, "max": k, "reduced": 0},
        "lm_eval_task": name,
    }
    paper = paper_row(task.code, setting if setting in ("zero", "one", "few") else "few")
    if paper is not None:
        row["paper"] = {size: cell.to_dict() for size, cell in zip(SIZES, paper)}
        row["lands"] = where_it_lands(accuracy, paper, tuple(ci95) if ci95 else None)
    row["items"] = items
    return row


def read(folder: Path, files: list[tuple[Path, dict, str]]) -> tuple[dict, dict, dict] | None:
    """The block read from lm-eval's own results files of one model (``(path, results file, iso
    time)``, later runs after earlier: one row per task run), with the settings and ``datasets``
    entries it adds (none); None when no file holds these tasks."""
    rows: list[dict] = []
    check = None
    seed = None
    for path, doc, iso in files:
        r = Reader(path)
        configs = doc.get("configs") or {}
        for task in doc["results"]:
            if task.startswith("synthprobe_"):
                row = _gpt3_row(folder, r, doc, task, iso)
                if row is None:
                    continue
                rows.append(row)
                check = "generate" if task.endswith("_gen") else "is-greedy"
                sampler = str(((configs.get(task) or {}).get("fewshot_config") or {}).get("sampler", ""))
                m = re.search(r"_seed([0-9]+)'", sampler)
                seed = int(m.group(1)) if m else seed
    if not rows:
        return None
    return {"settings": {"seed": seed, "check": check, "written_by": "lm-eval"}, "rows": rows}, {}, {}
