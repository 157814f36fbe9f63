"""lm-evaluation-harness output folders as the report reads them: converted into the one results
document (:mod:`synthprobe.results`), which the report's readers then read like any other.

A folder (or one ``results_<iso>.json`` in it) as ``lm_eval --output_path DIR --log_samples``
writes it: ``DIR/<model>/results_<iso>.json`` and ``samples_<task>_<iso>.jsonl``, one model per
folder holding results files. Two kinds are read:

* written by ``synthprobe export lm-eval-results`` (or ``score --output-format lm-eval``): the
  results file's ``synthprobe`` key holds the model entry of the results document without its
  per-item lists, and where each list went; the lists come back from the ``synthprobe`` key of
  each sample line. The document is the one that was exported, every number the same.
* written by lm-eval itself on the tasks of ``synthprobe export lm-eval``: each benchmark reads
  its own tasks into its results block.

What is a benchmark's is its ``lm_eval_reader`` part in the registry (:mod:`synthprobe.registry`),
a module with ``TASKS`` and ``SAMPLES`` (its lm-eval task names and its keys of the
``synthprobe.samples`` object, as an error names them), ``restore(results, key, records, reader,
at) -> bool`` (put an export's per-item list back into the entry's ``results``; False when the key
is not its own) and ``read(folder, files) -> (block, settings, datasets) | None`` (its block from
lm-eval's own results files of one model, ``(path, results file, iso time)`` in path order, with
what it adds to the entry's settings and the document's ``datasets``). This module names no
benchmark: Deep Arithmark's part is :mod:`synthprobe.benchmarks.deeparithmark.report.lm_eval`, the GPT-3
synthetic tasks' :mod:`synthprobe.benchmarks.gpt3.report.lm_eval`.

Every field used is type-checked; an error names the file and the field (or line).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

from synthprobe import registry
from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl
from synthprobe.results import Reader, Results, parse, read_json, results_document

_RESULTS_NAME = re.compile(r"^results_(.+)\.json$")


def is_lm_eval(path: str | Path) -> bool:
    """A folder, or a file named ``results_<iso>.json`` (lm-eval's name for its results)."""
    path = Path(path)
    return path.is_dir() or (
        path.is_file() and _RESULTS_NAME.match(path.name) is not None and _looks_like_lm_eval(path)
    )


def _looks_like_lm_eval(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8-sig", errors="replace")[:4096]
    except OSError:
        return False
    return '"results"' in head and '"schema"' not in head[:200]


def is_lm_eval_results(path: str | Path) -> bool:
    """Whether the file ``path``, whatever its name, holds lm-eval's results (an object with
    ``results`` and ``n-shot``, ``configs`` or ``lm_eval_version``)."""
    try:
        doc = read_json(path)
    except InputError:
        return False
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("results"), dict)
        and "schema" not in doc
        and any(k in doc for k in ("n-shot", "configs", "lm_eval_version"))
    )


def _synthprobe_results(folder: Path) -> list[Path]:
    """The JSON files directly in ``folder`` that open as synthprobe results documents (a
    ``synthprobe/`` schema, or an older layout's ``benchmark``; no benchmark is named here)."""
    return [
        p
        for p in sorted(folder.glob("*.json"))
        if p.is_file()
        and re.search(
            r'"schema"\s*:\s*"synthprobe/|"benchmark"\s*:\s*"', p.read_text(encoding="utf-8", errors="replace")[:4096]
        )
    ]


def _results_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = sorted(p for p in path.rglob("results_*.json") if p.is_file() and _RESULTS_NAME.match(p.name))
    if not found and _synthprobe_results(path):
        raise InputError(
            "is a folder of synthprobe results files, and a folder is read as lm-eval's output; "
            f"pass the files themselves (e.g. {path / '*.json'})",
            path=path,
        )
    if not found:
        raise InputError(
            "holds no results_<time>.json file; expected a folder written by lm_eval "
            "--output_path (or synthprobe export lm-eval-results)",
            path=path,
        )
    return found


def readers() -> list[tuple[str, ModuleType]]:
    """(name, ``lm_eval_reader`` part) of every benchmark of the registry that has one, in
    :func:`synthprobe.registry.names` order."""
    found = (registry.get(name) for name in registry.names())
    return [(bench.name, bench.part("lm_eval_reader")) for bench in found if bench.has("lm_eval_reader")]


def samples(folder: Path, task: str, iso: str, r: Reader) -> list[tuple[int, dict]]:
    """The lines of ``samples_<task>_<iso>.jsonl`` beside a results file, by ``doc_id``."""
    path = folder / f"samples_{task}_{iso}.jsonl"
    if not path.is_file():
        raise r.fail(
            f"results.{task}",
            f"has no samples file {path.name} beside it; expected lm_eval to have run with --log_samples",
        )
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
    for p, _d in files:
        iso = _RESULTS_NAME.match(p.name).group(1)
        if iso not in listed:
            raise InputError(
                "is a later run of a synthprobe export whose first results file is missing; expected the whole export",
                path=p,
            )
    return firsts


def _ours(folder: Path, first: tuple[Path, dict]) -> tuple[dict, dict]:
    """The model entry and source block the ``synthprobe`` keys of one export hold."""
    path, doc = first
    r = Reader(path)
    meta = doc["synthprobe"]
    entry = json.loads(json.dumps(meta["entry"]))
    moved = r.get(meta, "samples", "synthprobe", dict)
    parts = readers()
    for key, where in moved.items():
        at = f"synthprobe.samples.{key}"
        iso = r.get(where, "run", at, str)
        task = r.get(where, "task", at, str)
        records = []
        for line, obj in samples(folder, task, iso, r):
            rec = obj.get("synthprobe")
            if not isinstance(rec, dict):
                raise InputError(
                    "missing; expected synthprobe's per-item record",
                    line=line,
                    path=folder / f"samples_{task}_{iso}.jsonl",
                    field="synthprobe",
                )
            records.append(rec)
        results = r.get(entry, "results", "synthprobe.entry", dict)
        if not any(part.restore(results, key, records, r, at) for _, part in parts):
            raise r.fail(at, f"expected {' or '.join(part.SAMPLES for _, part in parts)}")
    return entry, r.get(meta, "source", "synthprobe", dict)


# -- files written by lm-eval -------------------------------------------------------------------


def _theirs(folder: Path, files: list[tuple[Path, dict]]) -> tuple[dict, dict]:
    """One model entry from lm-eval's own results files in one folder (later runs after earlier):
    the model and settings of the first, then each benchmark's block (:func:`readers`)."""
    entry: dict[str, Any] = {}
    runs: list[tuple[Path, dict, str]] = []
    for path, doc in files:
        r = Reader(path)
        r.get(doc, "results", "", dict)
        r.get(doc, "configs", "", dict, required=False)
        r.get(doc, "n-shot", "", dict)
        config = r.get(doc, "config", "", dict, required=False) or {}
        model_args = config.get("model_args") if isinstance(config.get("model_args"), dict) else {}
        name = doc.get("model_name") if isinstance(doc.get("model_name"), str) else folder.name
        entry.setdefault(
            "model",
            {
                "name": name,
                "spec": model_args.get("pretrained", name),
                "source": "lm-eval",
                "params": config.get("model_num_parameters")
                if isinstance(config.get("model_num_parameters"), int)
                else None,
                "dtype": model_args.get("dtype", config.get("model_dtype")),
                "device": config.get("device"),
                "transformers": doc.get("transformers_version"),
            },
        )
        entry.setdefault(
            "settings",
            {
                "batch_size": config.get("batch_size"),
                "limit": config.get("limit"),
                "transformers": doc.get("transformers_version"),
                "lm_eval": doc.get("lm_eval_version"),
                "written_by": f"lm-eval {doc.get('lm_eval_version')}",
            },
        )
        runs.append((path, doc, _RESULTS_NAME.match(path.name).group(1)))
    parts = readers()
    entry["results"] = {}
    datasets: dict[str, Any] = {}
    for name, part in parts:
        found = part.read(folder, runs)
        if found is not None:
            block, settings, more = found
            entry["results"][name] = block
            entry["settings"].update(settings)
            datasets.update(more)
    if not entry["results"]:
        raise InputError(
            "holds no results of the tasks `synthprobe export lm-eval` writes "
            f"({', '.join(part.TASKS for _, part in parts)})",
            path=folder,
        )
    return entry, {"datasets": datasets}


def read_folder(path: str | Path) -> Results:
    """An lm-eval output folder (or one results file) as a results document: one model entry
    per folder holding results files, in path order."""
    path = Path(path)
    if path.is_file():  # one results file: read with the files beside it, or refused with where to look
        try:
            return _read(path)
        except InputError as exc:
            raise InputError(
                f"{exc}; this is an lm-eval results file, read with the files lm-eval wrote beside "
                "it: pass its folder (the one lm_eval --output_path wrote)"
            ) from None
    return _read(path)


def _read(path: Path) -> Results:
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
    doc = results_document(
        synthprobe=source.get("synthprobe"),
        command=source.get("command"),
        datasets=datasets,
        models=models,
        protocol=source.get("protocol"),
    )
    return parse(doc, path)
