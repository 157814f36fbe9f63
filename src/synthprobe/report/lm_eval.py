"""lm-evaluation-harness output folders as the report reads them: converted into the one results
document (:mod:`synthprobe.results`), which the report's readers then read like any other.

A folder (or one ``results_<iso>.json`` in it) as ``lm_eval --output_path DIR --log_samples``
writes it: ``DIR/<model>/results_<iso>.json`` and ``samples_<task>_<iso>.jsonl``, one model per
folder holding results files. Two kinds are read:

* written by ``synthprobe export lm-eval-results`` (or ``score --output-format lm-eval``): the
  results file's ``synthprobe`` key holds the model entry of the results document without its
  per-item lists, and where each list went; the lists come back from the ``synthprobe`` key of
  each sample line. The document is the one that was exported, every number the same.
* written by lm-eval itself on the tasks of ``synthprobe export lm-eval``: ``deeparithmark`` (and
  ``deeparithmark_depth<N>``) samples become per-item records read from each sample's ``doc``
  (the release item, with its depth, template and named mistakes) and the log-likelihoods in
  ``filtered_resps``; ``synthprobe_<task>_gen`` and ``synthprobe_<task>`` samples become GPT-3
  rows (exact match, or "the gold is greedy"), with the paper's figures. lm-eval's files hold no
  token counts, so synthprobe's per-token ``acc_norm`` and soft accuracy cannot be recomputed:
  such a Deep Arithmark row is headed by ``acc`` (the summed log-likelihood, defined the same
  in both protocols), and its run settings say so. ``acc_char`` is lm-eval's ``acc_norm``.

Every field used is type-checked; an error names the file and the field (or line).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl
from synthprobe.results import Reader, Results, parse, read_json, results_document

#: what a Deep Arithmark row read from lm-eval's own files is headed by
HEADLINE_NOTE = ("acc (lm-eval's files hold no token counts, so the per-token acc_norm and the soft "
                 "accuracy cannot be recomputed; Deep and d2-d5 are acc, the summed log-likelihood)")
_DEPTH_TASK = re.compile(r"^deeparithmark(_depth[0-9]+)?$")
_RESULTS_NAME = re.compile(r"^results_(.+)\.json$")


def is_lm_eval(path: str | Path) -> bool:
    """A folder, or a file named ``results_<iso>.json`` (lm-eval's name for its results)."""
    path = Path(path)
    return path.is_dir() or (path.is_file() and _RESULTS_NAME.match(path.name) is not None
                             and _looks_like_lm_eval(path))


def _looks_like_lm_eval(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8-sig", errors="replace")[:4096]
    except OSError:
        return False
    return '"results"' in head and '"schema"' not in head[:200]


def _results_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(p for p in path.rglob("results_*.json") if p.is_file() and _RESULTS_NAME.match(p.name))
    if not found:
        raise InputError("holds no results_<time>.json file; expected a folder written by lm_eval "
                         "--output_path (or synthprobe export lm-eval-results)", path=path)
    return found


def _samples(folder: Path, task: str, iso: str, r: Reader) -> list[tuple[int, dict]]:
    path = folder / f"samples_{task}_{iso}.jsonl"
    if not path.is_file():
        raise r.fail(f"results.{task}", f"has no samples file {path.name} beside it; expected lm_eval to have "
                                        "run with --log_samples")
    rows = list(read_jsonl(path))
    for line, obj in rows:
        if not isinstance(obj.get("doc_id"), int):
            raise InputError("expected doc_id, a whole number", path=path, line=line, field="doc_id")
    return sorted(rows, key=lambda lo: lo[1]["doc_id"])


# -- files written by synthprobe ------------------------------------------------------------------


def _exports(folder: Path, files: list[tuple[Path, dict]]) -> list[tuple[Path, dict]]:
    """The first results file of each export in one folder (the one holding the model entry); the
    other files of an export (its other K) are named in its ``runs``."""
    firsts = [(p, d) for p, d in files if isinstance(d["synthprobe"].get("entry"), dict)]
    listed = {iso for _, d in firsts for iso in d["synthprobe"].get("runs") or []}
    for p, d in files:
        iso = _RESULTS_NAME.match(p.name).group(1)
        if iso not in listed:
            raise InputError("is a later run of a synthprobe export whose first results file is missing; "
                             "expected the whole export", path=p)
    return firsts


def _ours(folder: Path, first: tuple[Path, dict]) -> tuple[dict, dict]:
    """The model entry and source block the ``synthprobe`` keys of one export hold."""
    path, doc = first
    r = Reader(path)
    meta = doc["synthprobe"]
    entry = json.loads(json.dumps(meta["entry"]))
    moved = r.get(meta, "samples", "synthprobe", dict)
    for key, where in moved.items():
        at = f"synthprobe.samples.{key}"
        iso = r.get(where, "run", at, str)
        task = r.get(where, "task", at, str)
        records = []
        for line, obj in _samples(folder, task, iso, r):
            rec = obj.get("synthprobe")
            if not isinstance(rec, dict):
                raise InputError("missing; expected synthprobe's per-item record", line=line,
                                 path=folder / f"samples_{task}_{iso}.jsonl", field="synthprobe")
            records.append(rec)
        results = r.get(entry, "results", "synthprobe.entry", dict)
        if key == "deeparithmark":
            r.get(results, "deeparithmark", "synthprobe.entry.results", dict)["predictions"] = records
        elif key.startswith("gpt3.rows[") and key.endswith("]") and key[10:-1].isdigit():
            rows = r.get(r.get(results, "gpt3", "synthprobe.entry.results", dict), "rows",
                         "synthprobe.entry.results.gpt3", list)
            i = int(key[10:-1])
            if i >= len(rows):
                raise r.fail(at, f"names row {i}, but the entry holds {len(rows)} GPT-3 rows")
            rows[i]["items"] = records
        else:
            raise r.fail(at, "expected deeparithmark or gpt3.rows[<i>]")
    return entry, r.get(meta, "source", "synthprobe", dict)


# -- files written by lm-eval -------------------------------------------------------------------


def _lls(r: Reader, obj: dict, n: int, path: Path, line: int) -> tuple[list[float], list[bool]]:
    resps = obj.get("filtered_resps")
    if not isinstance(resps, list) or len(resps) != n:
        raise InputError(f"expected {n} [log-likelihood, is-greedy] pairs, one per ending", path=path, line=line,
                         field="filtered_resps")
    lls, greedy = [], []
    for pair in resps:
        try:
            lls.append(float(pair[0]))
            greedy.append(str(pair[1]) == "True")
        except (TypeError, ValueError, IndexError):
            raise InputError(f"expected [log-likelihood, is-greedy], got {pair!r}", path=path, line=line,
                             field="filtered_resps") from None
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
    values = md.get("option_values") if isinstance(md.get("option_values"), list) and len(md["option_values"]) == n else None
    sources = md.get("option_sources") if isinstance(md.get("option_sources"), list) and len(md["option_sources"]) == n else None
    depth = md.get("depth")
    chosen_rank = None
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        chosen_rank = sum(1 for v in values if v < values[p_acc])
    return {
        "id": str(doc.get("ind", "")), "line": None, "category": doc.get("activity_label"),
        "template": md.get("template"), "depth": depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
        "topic": md.get("topic"), "label": label, "n_endings": n, "logprob": lls, "n_tokens": None,
        "n_chars": [len(e) for e in endings], "per_token": None, "per_char": per_char, "is_greedy": greedy,
        "pred_acc": p_acc, "pred_acc_norm": p_acc, "pred_acc_char": p_char,
        "correct_acc": p_acc == label, "correct_acc_norm": p_acc == label, "correct_acc_char": p_char == label,
        "soft": 0.0, "option_values": values, "option_sources": sources, "answer_rank": md.get("answer_rank"),
        "chosen_source": sources[p_acc] if sources else None, "chosen_rank": chosen_rank, "truncated": False,
    }


def _deep_block(folder: Path, r: Reader, tasks: list[str], iso: str) -> dict:
    from synthprobe.benchmarks import get

    summarise = get("deeparithmark").part("metrics")
    # the full task when it ran, else the depth tasks together
    use = ["deeparithmark"] if "deeparithmark" in tasks else sorted(tasks)
    records = []
    for task in use:
        path = folder / f"samples_{task}_{iso}.jsonl"
        for line, obj in _samples(folder, task, iso, r):
            doc = obj.get("doc")
            if not (isinstance(doc, dict) and isinstance(doc.get("endings"), list) and doc["endings"]
                    and all(isinstance(e, str) and e for e in doc["endings"])
                    and str(doc.get("label", "")).isdigit() and int(doc["label"]) < len(doc["endings"])):
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


def _setting(k: int, task) -> str:
    """The row's shot setting, as ``synthprobe score gpt3`` names it."""
    return {0: "zero", 1: "one"}.get(k, "few" if k == task.k_few else f"{k}-shot")


def _gpt3_row(folder: Path, r: Reader, doc: dict, name: str, iso: str) -> dict | None:
    from synthprobe.metrics.stats import wilson_percent
    from synthprobe.tasks.gpt3.paper import SIZES, paper_row, where_it_lands
    from synthprobe.tasks.gpt3.registry import get_task

    gen = name.endswith("_gen")
    base = name[len("synthprobe_"):-len("_gen") if gen else None]
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
    for line, obj in _samples(folder, name, iso, r):
        value = obj.get(metric)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InputError(f"expected {metric}, a number", path=path, line=line, field=metric)
        d = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
        item = {"index": obj["doc_id"], "n_shots": k, "prompt_tokens": None, "gold": d.get("completion"),
                "correct": value == 1}
        resps = obj.get("resps")
        if gen and isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]:
            item["prediction"] = resps[0][0]
        items.append(item)
    n = len(items)
    correct = sum(1 for it in items if it["correct"])
    accuracy = 100.0 * correct / n if n else 0.0
    ci95 = wilson_percent(correct, n)
    setting = _setting(k, task)
    row: dict[str, Any] = {"task": task.name, "code": task.code, "family": task.family, "setting": setting, "k": k,
                           "n": n, "correct": correct, "accuracy": round(accuracy, 4), "ci95": ci95,
                           "shots": {"mean": k, "min": k, "max": k, "reduced": 0}, "lm_eval_task": name}
    paper = paper_row(task.code, setting if setting in ("zero", "one", "few") else "few")
    if paper is not None:
        row["paper"] = {size: cell.to_dict() for size, cell in zip(SIZES, paper)}
        row["lands"] = where_it_lands(accuracy, paper, tuple(ci95) if ci95 else None)
    row["items"] = items
    return row


def _theirs(folder: Path, files: list[tuple[Path, dict]]) -> tuple[dict, dict]:
    """One model entry from lm-eval's own results files in one folder (later runs after earlier)."""
    entry: dict[str, Any] = {}
    deep = None
    rows: list[dict] = []
    datasets: dict[str, Any] = {}
    check = None
    seed = None
    for path, doc in files:
        r = Reader(path)
        iso = _RESULTS_NAME.match(path.name).group(1)
        results = r.get(doc, "results", "", dict)
        configs = r.get(doc, "configs", "", dict, required=False) or {}
        r.get(doc, "n-shot", "", dict)
        config = r.get(doc, "config", "", dict, required=False) or {}
        model_args = config.get("model_args") if isinstance(config.get("model_args"), dict) else {}
        name = doc.get("model_name") if isinstance(doc.get("model_name"), str) else folder.name
        entry.setdefault("model", {
            "name": name, "spec": model_args.get("pretrained", name), "source": "lm-eval",
            "params": config.get("model_num_parameters") if isinstance(config.get("model_num_parameters"), int) else None,
            "dtype": model_args.get("dtype", config.get("model_dtype")), "device": config.get("device"),
            "transformers": doc.get("transformers_version"),
        })
        entry.setdefault("settings", {
            "batch_size": config.get("batch_size"), "limit": config.get("limit"),
            "transformers": doc.get("transformers_version"), "lm_eval": doc.get("lm_eval_version"),
            "written_by": f"lm-eval {doc.get('lm_eval_version')}",
        })
        deep_tasks = [t for t in results if _DEPTH_TASK.match(t)]
        if deep_tasks:
            deep = _deep_block(folder, r, deep_tasks, iso)
            entry["settings"]["headline_metric"] = HEADLINE_NOTE
            cfg = configs.get(deep_tasks[0]) if isinstance(configs.get(deep_tasks[0]), dict) else {}
            data = ((cfg.get("dataset_kwargs") or {}).get("data_files") or {}).get("test")
            datasets["deeparithmark"] = {"path": data, "n_items": deep["summary"]["n"]}
        for task in results:
            if task.startswith("synthprobe_"):
                row = _gpt3_row(folder, r, doc, task, iso)
                if row is None:
                    continue
                rows.append(row)
                check = "generate" if task.endswith("_gen") else "is-greedy"
                sampler = str(((configs.get(task) or {}).get("fewshot_config") or {}).get("sampler", ""))
                m = re.search(r"_seed([0-9]+)'", sampler)
                seed = int(m.group(1)) if m else seed
    if deep is None and not rows:
        raise InputError("holds no results of the tasks `synthprobe export lm-eval` writes (deeparithmark, "
                         "synthprobe_<task>_gen, synthprobe_<task>)", path=folder)
    entry["results"] = {}
    if deep is not None:
        entry["results"]["deeparithmark"] = deep
    if rows:
        entry["results"]["gpt3"] = {"settings": {"seed": seed, "check": check, "written_by": "lm-eval"}, "rows": rows}
    return entry, {"datasets": datasets}


def read_folder(path: str | Path) -> Results:
    """An lm-eval output folder (or one results file) as a results document: one model entry
    per folder holding results files, in path order."""
    path = Path(path)
    by_folder: dict[Path, list[tuple[Path, dict]]] = {}
    for f in _results_files(path):
        doc = read_json(f)
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
            raise InputError("expected lm-eval's results file (an object with results, configs, n-shot)", path=f)
        by_folder.setdefault(f.parent, []).append((f, doc))
    models, datasets, source = [], {}, {}
    for folder, files in by_folder.items():
        ours = [(p, d) for p, d in files if isinstance(d.get("synthprobe"), dict)]
        theirs = [(p, d) for p, d in files if not isinstance(d.get("synthprobe"), dict)]
        # each synthprobe export is one model entry; lm-eval's own runs of one model, one entry
        found = [_ours(folder, first) for first in _exports(folder, ours)]
        if theirs:
            found.append(_theirs(folder, theirs))
        for entry, src in found:
            models.append(entry)
            for key, value in (src.get("datasets") or {}).items():
                datasets.setdefault(key, value)
            source = source or src
    doc = results_document(synthprobe=source.get("synthprobe"), command=source.get("command"), datasets=datasets,
                           models=models, protocol=source.get("protocol"))
    return parse(doc, path)
