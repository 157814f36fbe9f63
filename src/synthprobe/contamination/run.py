"""``synthprobe contamination``: scan a corpus once for every task's items, on one machine or
on Ray Data, and write the ``contamination`` section of the one results document.

The section (``version`` :data:`SECTION_VERSION`)::

    "contamination": {
      "version": 1,
      "settings": {"ngram_sizes": [13, 8], "normalisation", "tokens", "hash", "template_rule",
                   "arithmetic_forms", "text_field", "max_record_bytes", "shard_bytes"},
      "corpus": {"files": [{"path", "format", "bytes"}], "bytes", "records", "skipped": [...]},
      "run": {"engine": "local" | "ray", "seconds", "mb_per_s"},
      "tasks": [{
        "task", "benchmark", "code", "path", "sha256", "n",
        "checked": {"ngram13", "ngram8", "arithmetic"},      # items that test can flag
        "ngrams": {"13": {"kept", "template"}, "8": {...}},
        "contaminated": {"ngram13" | "ngram8" | "arithmetic" | "any":
                         {"k", "share", "ci95"}},          # share of all n items, exact 95 % CI;
                                                           # null: the test (for "any": every test)
                                                           # can flag no item of this task
        "items": [{"index", "id", "ngram13", "ngram8", "arithmetic"}],   # flagged items only;
                  # each test: null or the first match {"file", "line"} (text, JSONL; 1-based)
                  # or {"file", "row"} (Parquet, Arrow; 0-based), "form" for arithmetic
        "rescored": [{"scores", "model", "setting", "metric", "full", "clean", "flagged_scored"}]
      }]
    }

``full`` / ``clean``: ``{"n", "correct", "accuracy", "ci95"}`` (fractions, exact binomial
interval) over the scored items, and over those not flagged by any test.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from synthprobe.contamination import corpus as cp
from synthprobe.contamination import ngrams as ng
from synthprobe.contamination.tasks import TaskItems, load_tasks
from synthprobe.errors import InputError

SECTION_VERSION = 1
TESTS = ("ngram13", "ngram8", "arithmetic")


@dataclass
class Config:
    corpus: list[str]
    tasks: list[str]
    output: Path
    text_field: str = "text"
    ray: bool = False
    ray_address: str | None = None
    scores: list[Path] = field(default_factory=list)
    shard_bytes: int = cp.DEFAULT_SHARD_BYTES
    max_record_bytes: int = cp.DEFAULT_MAX_RECORD_BYTES
    overwrite: bool = False
    progress: bool | None = None
    command: str | None = None


def settings(config: Config) -> dict:
    return {
        "ngram_sizes": list(ng.NGRAM_SIZES),
        "normalisation": "Unicode NFKC, then casefold",
        "tokens": "maximal runs of Unicode letters and digits; everything else separates",
        "hash": "token: 64-bit BLAKE2b; n-gram: polynomial of token hashes mod 2^64; every hit checked token by token",
        "template_rule": "an n-gram in the prompts of two items with different prompts is template text, dropped",
        "arithmetic_forms": ["A + B =", "A plus B", "A - B =", "A minus B", "A * B = (also × and x)", "A times B"],
        "text_field": config.text_field,
        "max_record_bytes": config.max_record_bytes,
        "shard_bytes": config.shard_bytes,
    }


# -- the scan ------------------------------------------------------------------------------------


def scan_local(
    shards: Sequence[cp.Shard],
    index: ng.Index,
    *,
    text_field: str,
    max_record_bytes: int,
    progress: bool | None = None,
    total_bytes: int = 0,
) -> list[dict]:
    from tqdm.auto import tqdm

    out = []
    with tqdm(
        total=len(shards), desc="contamination scan", unit="shard", disable=None if progress is None else not progress
    ) as bar:
        for sh in shards:
            out.append(cp.scan_shard(sh, index, text_field=text_field, max_record_bytes=max_record_bytes))
            bar.update(1)
    return out


def _ray_batch(batch: dict, index: ng.Index, text_field: str, max_record_bytes: int) -> dict:
    """One Ray Data batch of shards → their scan results (JSON text, one per shard)."""
    results = []
    for raw in batch["shard"]:
        sh = cp.Shard(**json.loads(str(raw)))
        results.append(json.dumps(cp.scan_shard(sh, index, text_field=text_field, max_record_bytes=max_record_bytes)))
    return {"k": batch["k"], "result": results}


def scan_ray(
    shards: Sequence[cp.Shard], index: ng.Index, *, text_field: str, max_record_bytes: int, address: str | None = None
) -> list[dict]:
    """The same shards scanned by Ray Data ``map_batches`` tasks across the cluster at
    ``address`` (a local Ray started for the run when None); results in shard order.

    The dataset is the list of shards (byte ranges, row groups, Arrow files), not
    ``ray.data.read_text`` / ``read_json`` / ``read_parquet`` rows: those lose the line and row
    numbers a match is reported at and cut text n-grams at line ends, so their results could
    not equal the single-machine scan. Every worker reads its shard from the shared path."""
    try:
        import ray
    except ImportError:
        raise InputError(
            "needs Ray Data: pip install 'synthprobe[ray]' (ray[client,data]==2.60.0)", field="--ray"
        ) from None
    started = False
    if not ray.is_initialized():
        if address:
            from synthprobe.ray_cluster import connect_ray

            connect_ray(address, log_to_driver=False, configure_logging=False)
        else:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
        started = True
    try:
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        rows = [{"k": k, "shard": json.dumps(asdict(sh))} for k, sh in enumerate(shards)]
        ds = ray.data.from_items(rows, override_num_blocks=max(1, len(rows)))
        out = ds.map_batches(
            _ray_batch,
            batch_size=1,
            batch_format="numpy",
            fn_kwargs={"index": index, "text_field": text_field, "max_record_bytes": max_record_bytes},
        )
        done = {int(r["k"]): json.loads(str(r["result"])) for r in out.take_all()}
    finally:
        if started:
            ray.shutdown()
    return [done[k] for k in range(len(shards))]


# -- merging shard results into file locations ---------------------------------------------------


def _where(f: cp.CorpusFile, n: int) -> dict:
    return {"file": f.path, "line": n} if f.format in ("text", "jsonl") else {"file": f.path, "row": n}


def merge(files: list[cp.CorpusFile], shards: Sequence[cp.Shard], results: Sequence[dict]):
    """First match per (task, item) per test, located in its file; records; skipped records."""
    first: dict[str, dict[tuple[int, int], dict]] = {t: {} for t in TESTS}
    lines_before: dict[int, int] = {}
    records = 0
    skipped = []
    for sh, res in zip(shards, results):
        f = files[sh.file]
        base = lines_before.get(sh.file, 0)
        if f.format in ("text", "jsonl"):
            to_file = lambda rel: base + rel + 1  # noqa: B023, E731
        elif f.format == "parquet":
            to_file = lambda rel: sh.row0 + rel  # noqa: B023, E731
        else:
            to_file = lambda rel: rel  # noqa: E731
        if "error" in res:
            e = res["error"]
            raise InputError(
                e["message"], path=f.path, line=None if e["rel"] is None else to_file(e["rel"]), field=e["field"]
            )
        for test, hits in res["hits"].items():
            for t, i, rel, shown in hits:
                loc = _where(f, to_file(rel))
                if shown:
                    loc["form"] = shown
                first[test].setdefault((t, i), loc)
        for s in res["skipped"]:
            skipped.append({**_where(f, to_file(s["rel"])), "bytes": s["bytes"], "why": s["why"]})
        records += res["records"]
        lines_before[sh.file] = base + res["lines"]
    return first, records, skipped


# -- the summary ---------------------------------------------------------------------------------


def proportion(k: int, n: int) -> dict:
    from synthprobe.metrics.stats import exact_ci

    if n == 0:
        return {"k": 0, "share": None, "ci95": None}
    lo, hi = exact_ci(k, n)
    return {"k": k, "share": round(k / n, 6), "ci95": [round(lo, 6), round(hi, 6)]}


def accuracy(correct: int, n: int) -> dict:
    p = proportion(correct, n)
    return {"n": n, "correct": correct, "accuracy": p["share"], "ci95": p["ci95"]}


def task_section(t: int, task: TaskItems, stats: ng.TaskStats, first: dict) -> dict:
    n = len(task.texts)
    flagged: dict[str, set[int]] = {test: {i for (tt, i) in first[test] if tt == t} for test in TESTS}
    anyf = set().union(*flagged.values())
    items = [{"index": i, "id": task.ids[i], **{test: first[test].get((t, i)) for test in TESTS}} for i in sorted(anyf)]
    checked = {**{f"ngram{s}": stats.checkable[s] for s in ng.NGRAM_SIZES}, "arithmetic": stats.arithmetic}
    return {
        "task": task.name,
        "benchmark": task.benchmark,
        "code": task.code,
        "path": str(task.path),
        "sha256": task.sha256,
        "n": n,
        "checked": checked,
        "ngrams": {str(s): {"kept": stats.ngrams[s], "template": stats.template_ngrams[s]} for s in ng.NGRAM_SIZES},
        # a test that can flag none of the task's items (no n-gram that long, no A op B problem): null
        "contaminated": {
            **{test: proportion(len(flagged[test]), n) if checked[test] else None for test in TESTS},
            "any": proportion(len(anyf), n) if any(checked.values()) else None,
        },
        "items": items,
        "rescored": [],
    }


# -- clean-subset rescoring ----------------------------------------------------------------------


def _rescore_deep(task: TaskItems, flagged: set[int], path: Path, res) -> list[dict]:
    sha = res.dataset_sha256("deeparithmark")
    if sha is not None and sha != task.sha256:
        return []
    pos = {item_id: i for i, item_id in enumerate(task.ids)}
    out = []
    for entry, block in res.blocks("deeparithmark"):
        r = res.reader
        preds = r.get(block.data, "predictions", block.where, list, required=False)
        if preds is None:
            raise r.fail(
                f"{block.where}.predictions",
                "missing; rescoring needs the per-item records: score with --save-predictions",
            )
        summary = r.get(block.data, "summary", block.where, dict, required=False) or {}
        metric = summary.get("primary") if isinstance(summary.get("primary"), str) else "acc_norm"
        full = [0, 0]
        clean = [0, 0]
        for k, p in enumerate(preds):
            where = f"{block.where}.predictions[{k}]"
            if not isinstance(p, dict):
                raise r.fail(where, "expected an object")
            pid = r.get(p, "id", where, str)
            if pid not in pos:
                raise r.fail(
                    f"{where}.id",
                    f"item {pid!r} is not in the task file {task.path}; these scores are for another file",
                )
            i = pos[pid]
            label = r.get(p, "label", where, int)
            if str(label) != task.golds[i]:
                raise r.fail(
                    f"{where}.label",
                    f"is {label}, the task file {task.path} says {task.golds[i]}: these scores are for another file",
                )
            ok = bool(r.get(p, f"correct_{metric}", where, bool))
            full[0] += ok
            full[1] += 1
            if i not in flagged:
                clean[0] += ok
                clean[1] += 1
        out.append(_rescored(path, entry, None, metric, full, clean))
    return out


def _rescored(path: Path, entry, setting, metric: str, full, clean) -> dict:
    model = entry.model.get("name") or entry.model.get("spec") or "model"
    return {
        "scores": str(path),
        "model": str(model),
        "setting": setting,
        "metric": metric,
        "full": accuracy(*full),
        "clean": accuracy(*clean),
        "flagged_scored": full[1] - clean[1],
    }


def _rescore_gpt3(task: TaskItems, flagged: set[int], path: Path, res) -> list[dict]:
    out = []
    r = res.reader
    for entry, block in res.blocks("gpt3"):
        settings = block.data.get("settings") if isinstance(block.data.get("settings"), dict) else entry.settings
        files = settings.get("task_files") if isinstance(settings, dict) else None
        shas = {f.get("task"): f.get("sha256") for f in files if isinstance(f, dict)} if isinstance(files, list) else {}
        if task.name in shas and shas[task.name] != task.sha256:
            continue
        for k, row in enumerate(block.data["rows"]):
            where = f"{block.where}.rows[{k}]"
            if not isinstance(row, dict) or row.get("task") != task.name:
                continue
            items = r.get(row, "items", where, list)
            full = [0, 0]
            clean = [0, 0]
            for j, it in enumerate(items):
                iw = f"{where}.items[{j}]"
                if not isinstance(it, dict):
                    raise r.fail(iw, "expected an object")
                index = r.get(it, "index", iw, int)
                if "correct" not in it:
                    raise r.fail(
                        f"{iw}.correct", "missing; rescoring needs the per-item records: score with --save-predictions"
                    )
                if not 0 <= index < len(task.texts):
                    raise r.fail(
                        f"{iw}.index",
                        f"is {index}; the task file {task.path} holds "
                        f"{len(task.texts)} items: these scores are for another file",
                    )
                gold = it.get("gold")
                if isinstance(gold, str) and gold != task.golds[index]:
                    raise r.fail(
                        f"{iw}.gold",
                        f"is {gold!r}, the task file {task.path} says "
                        f"{task.golds[index]!r}: these scores are for another file",
                    )
                ok = bool(r.get(it, "correct", iw, bool))
                full[0] += ok
                full[1] += 1
                if index not in flagged:
                    clean[0] += ok
                    clean[1] += 1
            out.append(_rescored(path, entry, row.get("setting"), "exact match", full, clean))
    return out


def rescore(tasks: list[TaskItems], sections: list[dict], scores: Sequence[Path]) -> None:
    """Fill each task section's ``rescored`` from the scores files; a file that scores none of
    the tasks is an error."""
    from synthprobe.results import read_results

    for path in scores:
        res = read_results(path)
        used = False
        for task, sec in zip(tasks, sections):
            flagged = {item["index"] for item in sec["items"]}
            if task.benchmark == "deeparithmark":
                rows = _rescore_deep(task, flagged, path, res)
            else:
                rows = _rescore_gpt3(task, flagged, path, res)
            sec["rescored"] += rows
            used = used or bool(rows)
        if not used:
            raise InputError(
                "holds no scores for the checked tasks (or scores another file of them); pass the "
                "results of `synthprobe score deeparithmark|gpt3 --save-predictions` on the same "
                "task file",
                path=path,
                field="--scores",
            )


# -- the command ---------------------------------------------------------------------------------


def validate(config: Config):
    """Everything that can be checked before the scan; raises InputError."""
    from synthprobe.io.write import check_outputs
    from synthprobe.results import read_results

    files = cp.discover(config.corpus)
    tasks = load_tasks(config.tasks)
    for p in config.scores:
        read_results(p)
    inputs = (
        [(f.path, "--corpus") for f in files]
        + [(t.path, "--task") for t in tasks]
        + [(p, "--scores") for p in config.scores]
    )
    check_outputs([(config.output, "--output")], inputs, overwrite=config.overwrite)
    cp.check_columns(files, config.text_field)
    return files, tasks


def run(config: Config) -> dict:
    """Scan, summarise, rescore; returns the results document (written by :func:`write`)."""
    from synthprobe.results import results_document

    files, tasks = validate(config)
    index, stats = ng.build_index([t.texts for t in tasks])
    shard_list = cp.shards(files, config.shard_bytes)
    total = sum(f.bytes for f in files)
    t0 = time.perf_counter()
    if config.ray:
        results = scan_ray(
            shard_list,
            index,
            text_field=config.text_field,
            max_record_bytes=config.max_record_bytes,
            address=config.ray_address,
        )
    else:
        results = scan_local(
            shard_list,
            index,
            text_field=config.text_field,
            max_record_bytes=config.max_record_bytes,
            progress=config.progress,
        )
    seconds = time.perf_counter() - t0
    first, records, skipped = merge(files, shard_list, results)
    sections = [task_section(t, task, stats[t], first) for t, task in enumerate(tasks)]
    rescore(tasks, sections, config.scores)
    for s in skipped:
        print(
            f"synthprobe: warning: {s['file']}:{s.get('line', s.get('row'))}: {s['why']}; not scanned", file=sys.stderr
        )
    section = {
        "version": SECTION_VERSION,
        "settings": settings(config),
        "corpus": {
            "files": [{"path": f.path, "format": f.format, "bytes": f.bytes} for f in files],
            "bytes": total,
            "records": records,
            "skipped": skipped,
        },
        "run": {
            "engine": "ray" if config.ray else "local",
            "shards": len(shard_list),
            "seconds": round(seconds, 3),
            "mb_per_s": round(total / 1e6 / seconds, 3) if seconds > 0 else None,
        },
        "tasks": sections,
    }
    return results_document(command=config.command or None, models=[], contamination=section)


def write(config: Config, doc: dict) -> None:
    from synthprobe.io.write import atomic_write_text
    from synthprobe.results import dumps_results

    atomic_write_text(config.output, dumps_results(doc))


def summary_lines(doc: dict) -> list[str]:
    """What the command prints: per task, the contaminated shares and any rescoring."""
    from synthprobe.report.contamination import share_text
    from synthprobe.report.format import fmt_pct

    sec = doc["contamination"]
    run_ = sec["run"]
    out = [
        f"corpus: {len(sec['corpus']['files'])} file(s), {sec['corpus']['bytes'] / 1e6:.1f} MB, "
        f"{sec['corpus']['records']:,} lines/records; {run_['engine']} scan {run_['seconds']:.1f} s"
        + (f" ({run_['mb_per_s']:.2f} MB/s)" if run_["mb_per_s"] else "")
    ]
    for t in sec["tasks"]:
        c, n = t["contaminated"], t["n"]
        out.append(
            f"{t['task']} ({n} items): 13-gram {share_text(c['ngram13'], n)}; 8-gram {share_text(c['ngram8'], n)}; "
            f"arithmetic {share_text(c['arithmetic'], n)}; any {share_text(c['any'], n)}"
        )
        for r in t["rescored"]:
            f, cl = r["full"], r["clean"]
            full, clean = fmt_pct(f["accuracy"], 2, " %"), fmt_pct(cl["accuracy"], 2, " %")
            out.append(
                f"  {r['model']}{' ' + r['setting'] if r['setting'] else ''}: {r['metric']} "
                f"full {full} (n={f['n']}), clean {clean} (n={cl['n']})"
            )
    return out
