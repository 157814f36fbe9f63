"""A results document as lm-evaluation-harness output files (``lm_eval --output_path DIR
--log_samples``, the layout of lm-eval 0.4.13): per model ``DIR/<model>/results_<iso>.json`` and
one ``samples_<task>_<iso>.jsonl`` per task.

Task names are those of ``synthprobe export lm-eval``: ``deeparithmark`` (the release items
scored), ``synthprobe_<task>_gen`` (a GPT-3 generation task, ``--check generate``) and
``synthprobe_<task>`` (``--check is-greedy``). Each benchmark's results block becomes its tasks
through the benchmark's ``lm_eval`` part (:func:`lm_eval_files` asks the registry, and names no
benchmark): its ``result_tasks`` returns an :class:`EntryTasks`. Every key lm-eval writes is written, with the
value type lm-eval gives it; values lm-eval takes from its own run (the tokenizer's special
tokens, ``git_hash``) and that a results document does not record are ``null``.

Metrics under lm-eval's names are computed as lm-eval computes them, from the log-likelihoods
and generations synthprobe recorded: ``acc`` (argmax of the summed log-likelihood), ``acc_norm``
(lm-eval's: divided by the ending's length in characters; synthprobe's per-token ``acc_norm`` has
no lm-eval name), ``exact_match`` (stripped generation against the stripped gold); the standard
error is lm-eval's, the sample standard deviation over the square root of n. ``doc_hash``,
``prompt_hash``, ``target_hash`` and ``task_hashes`` are computed as lm-eval computes them.

What lm-eval has no name for sits under keys named ``synthprobe``: in each sample line the
per-item record (per-token scores, soft accuracy, the named mistake picked, ...), in the results
file the run's model entry without its per-item lists (summaries per depth, per template, the
mistake profile, ArithMark 3.0, number-format and per-step blocks, GPT-3 rows lm-eval has no task
for such as SAT) and where each list went. :func:`synthprobe.report.lm_eval.read_folder` puts the
document back together from these files, so results → lm-eval files → report loses nothing.

lm-eval runs one number of few-shot demonstrations per run; GPT-3 rows scored with several are
written as one run (one results file and its samples) per K, the first holding Deep Arithmark,
their time stamps one microsecond apart.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from synthprobe.export.parts import routed
from synthprobe.io.write import check_out_dir, write_tree
from synthprobe.results import SCHEMA, SCHEMA_VERSION, Entry, Results
from synthprobe.version import __version__

#: the lm-eval release whose output layout these files follow
LM_EVAL_VERSION = "0.4.13"
#: the layout version of the ``synthprobe`` key of a results file written here
FILES_VERSION = 1

#: lm-eval's TaskConfig fields in the order its ``to_dict`` dumps them (``tag`` is not dumped)
_TASK_FIELDS = (
    "task",
    "task_alias",
    "custom_dataset",
    "dataset_path",
    "dataset_name",
    "dataset_kwargs",
    "training_split",
    "validation_split",
    "test_split",
    "fewshot_split",
    "process_docs",
    "doc_to_text",
    "doc_to_target",
    "doc_to_image",
    "doc_to_audio",
    "unsafe_code",
    "doc_to_choice",
    "process_results",
    "use_prompt",
    "description",
    "target_delimiter",
    "fewshot_delimiter",
    "fewshot_config",
    "num_fewshot",
    "metric_list",
    "output_type",
    "generation_kwargs",
    "repeats",
    "filter_list",
    "should_decontaminate",
    "doc_to_decontamination_query",
    "gen_prefix",
    "metadata",
)
_TASK_DEFAULTS = {
    "unsafe_code": False,
    "description": "",
    "target_delimiter": " ",
    "fewshot_delimiter": "\n\n",
    "output_type": "generate_until",
    "repeats": 1,
    "should_decontaminate": False,
}
#: lm-eval's FewshotConfig fields, dumped with their nulls
_FEWSHOT_FIELDS = (
    "sampler",
    "split",
    "process_docs",
    "fewshot_indices",
    "samples",
    "doc_to_text",
    "doc_to_choice",
    "doc_to_target",
    "gen_prefix",
    "fewshot_delimiter",
    "target_delimiter",
)


def hash_string(text: str) -> str:
    """lm-eval's ``hash_string``: the SHA-256 hex digest of the UTF-8 text."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def doc_hash(doc: Any) -> str:
    """lm-eval's ``doc_hash``: the hash of the document dumped with indent 2, non-ASCII kept."""
    return hash_string(json.dumps(doc, indent=2, ensure_ascii=False))


def sanitize_model_name(name: str) -> str:
    """lm-eval's folder name for a model name (``sanitize_model_name``)."""
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def date_id(when: datetime) -> str:
    """lm-eval's file time stamp: ``datetime.isoformat()`` with ``:`` made ``-``."""
    return when.replace(tzinfo=None).isoformat().replace(":", "-")


def mean_stderr(values: Sequence[float]) -> float | str:
    """lm-eval's ``mean_stderr``: sample standard deviation / sqrt(n); ``"N/A"`` below two values."""
    n = len(values)
    if n < 2:
        return "N/A"
    mu = sum(values) / n
    return math.sqrt(sum((x - mu) ** 2 for x in values) / (n - 1)) / math.sqrt(n)


class _YamlLoader(yaml.SafeLoader):
    """Reads our exported YAMLs, ``!function`` references as their dotted names."""


_YamlLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def task_yaml(blob: bytes) -> dict:
    """An exported task YAML read back, ``!function`` references as their dotted names."""
    return yaml.load(blob.decode("utf-8"), Loader=_YamlLoader)


def task_config(body: dict, *, sampler: str, metadata_extra: dict, config_source: str) -> dict:
    """A task YAML body as lm-eval's ``configs[task]``: its defaults filled in, its field order,
    nulls and ``tag`` dropped, ``fewshot_config`` expanded, model arguments in ``metadata``."""
    cfg = {**_TASK_DEFAULTS, **{k: v for k, v in body.items() if k != "tag"}}
    given = dict(cfg.get("fewshot_config") or {})
    few = {k: None for k in _FEWSHOT_FIELDS}
    few.update(
        {
            "sampler": "default",
            "split": cfg.get("fewshot_split"),
            "doc_to_text": cfg.get("doc_to_text"),
            "doc_to_choice": cfg.get("doc_to_choice"),
            "doc_to_target": cfg.get("doc_to_target"),
            "fewshot_delimiter": cfg["fewshot_delimiter"],
            "target_delimiter": cfg["target_delimiter"],
        }
    )
    few.update({k: v for k, v in given.items() if k in few})
    few["sampler"] = sampler
    cfg["fewshot_config"] = few
    cfg["metadata"] = {**(cfg.get("metadata") or {}), **metadata_extra, "config_source": config_source}
    return {k: cfg[k] for k in _TASK_FIELDS if cfg.get(k) is not None}


@dataclass
class TaskRun:
    """One lm-eval task of one run: its config, per-sample lines and aggregated metrics; where in
    the entry it came from (``key``: its name in the results file's ``synthprobe.samples`` map,
    which :func:`synthprobe.report.lm_eval.read_folder` reads back; ``where``: for errors) and the
    per-item list its samples replace (``drop``: the path of that list under the entry's
    ``results``, left out of the entry kept under ``synthprobe``)."""

    name: str
    config: dict
    k: int
    original: int
    samples: list[dict]
    filter: str
    metrics: tuple[str, ...]
    key: str = ""
    where: str = ""
    drop: tuple = ()


@dataclass
class EntryTasks:
    """What one benchmark's results block of one model entry gives lm-eval's files (the return
    of an ``lm_eval`` part's ``result_tasks``)."""

    #: its tasks, each in the run of its number of demonstrations
    tasks: list[TaskRun]
    #: lm-eval ``config`` values it sets for the run of K demonstrations, by K: ``seed`` (the
    #: random, numpy, torch and few-shot seeds) and ``limit``; the first benchmark in registry
    #: order that sets one wins (default: seed 0, the entry's ``settings.limit``)
    config: Callable[[int], dict] = lambda k: {}
    #: seconds of evaluation it adds to the entry's ``load_s`` when the entry records no total
    seconds: float = 0.0


@dataclass
class Run:
    """What one lm-eval invocation would have written for one model: the tasks of one K."""

    k: int
    tasks: list[TaskRun] = field(default_factory=list)


# -- helpers for the benchmarks' lm_eval parts ---------------------------------------------


def mc_sample(
    doc_id: int,
    doc: dict,
    ctx: str,
    endings: Sequence[str],
    label: int,
    record: dict,
    *,
    logprob: Sequence[float] | None = None,
    is_greedy: Sequence[bool] | None = None,
) -> dict:
    """A multiple-choice sample line as lm-eval writes it (its ``acc`` and per-character ``acc_norm``),
    from synthprobe's per-item record (kept whole under ``synthprobe``) and the log-likelihood and
    greedy flag of each ending (by default the record's ``logprob`` and ``is_greedy``)."""
    from synthprobe.metrics.choice import argmax_first  # numpy's argmax too: the first maximum

    lls = [float(x) for x in (record["logprob"] if logprob is None else logprob)]
    greedy = [bool(x) for x in (record["is_greedy"] if is_greedy is None else is_greedy)]
    acc = 1.0 if argmax_first(lls) == label else 0.0
    acc_norm = 1.0 if argmax_first([ll / len(e) for ll, e in zip(lls, endings)]) == label else 0.0
    target = str(label)
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": target,
        "arguments": {f"gen_args_{i}": {"arg_0": ctx, "arg_1": e} for i, e in enumerate(endings)},
        "resps": [[[str(ll), str(g)]] for ll, g in zip(lls, greedy)],
        "filtered_resps": [[str(ll), str(g)] for ll, g in zip(lls, greedy)],
        "filter": "none",
        "metrics": ["acc", "acc_norm"],
        "doc_hash": doc_hash(doc),
        "prompt_hash": hash_string(ctx),
        "target_hash": hash_string(target),
        "acc": acc,
        "acc_norm": acc_norm,
        "synthprobe": record,
    }


# -- the files ----------------------------------------------------------------------------------


def model_args(entry: Entry) -> dict:
    """lm-eval's ``model_args`` of the entry's model (also kept in each task config's metadata)."""
    m = entry.model
    return {"pretrained": str(m.get("spec") or m.get("name")), "dtype": str(m.get("dtype"))}


def _env_info(entry: Entry) -> str:
    s, m = entry.settings, entry.model
    lines = [f"synthprobe version: {s.get('synthprobe') or __version__}"]
    for label, value in (
        ("PyTorch version", s.get("torch") or m.get("torch")),
        ("Transformers version", s.get("transformers") or m.get("transformers")),
        ("Python version", s.get("python")),
        ("OS", s.get("platform")),
        ("Torch threads", s.get("torch_threads") or s.get("threads")),
    ):
        if value is not None:
            lines.append(f"{label}: {value}")
    return "\n".join(lines)


def _seconds(entry: Entry, given: list[EntryTasks]) -> float:
    sec = entry.data.get("seconds")
    if isinstance(sec, dict) and isinstance(sec.get("total"), (int, float)):
        return float(sec["total"])
    total = float(entry.data.get("load_s") or 0.0)
    for block in given:
        total += block.seconds
    return total


def _aggregate(t: TaskRun) -> dict:
    out: dict[str, Any] = {"name": t.name, "alias": t.name, "sample_len": len(t.samples)}
    for m in t.metrics:
        values = [float(s[m]) for s in t.samples]
        out[f"{m},{t.filter}"] = sum(values) / len(values) if values else 0.0
        out[f"{m}_stderr,{t.filter}"] = mean_stderr(values)
    return out


def _results_file(
    entry: Entry, given: list[EntryTasks], run: Run, when: datetime, label: str, synthprobe: dict
) -> dict:
    m, s = entry.model, entry.settings
    config: dict[str, Any] = {}
    for block in given:
        for key, value in block.config(run.k).items():
            config.setdefault(key, value)
    seed = config.get("seed") or 0
    limit = config.get("limit", s.get("limit"))
    special = m.get("special_tokens") if isinstance(m.get("special_tokens"), dict) else {}
    task_hashes = {
        t.name: hash_string("".join(x["doc_hash"] + x["prompt_hash"] + x["target_hash"] for x in t.samples))
        for t in run.tasks
    }
    return {
        "results": {t.name: _aggregate(t) for t in run.tasks},
        "group_subtasks": {},
        "configs": {t.name: t.config for t in run.tasks},
        "versions": {t.name: t.config.get("metadata", {}).get("version", 1.0) for t in run.tasks},
        "n-shot": {t.name: t.k for t in run.tasks},
        "higher_is_better": {t.name: {mm: True for mm in t.metrics} for t in run.tasks},
        "n-samples": {t.name: {"original": t.original, "effective": len(t.samples)} for t in run.tasks},
        "config": {
            "model": "synthprobe",
            "model_args": model_args(entry),
            "model_num_parameters": m.get("params") or 0,
            "model_dtype": f"torch.{m.get('dtype')}",
            "model_revision": "main",
            "model_sha": str(m.get("fingerprint") or ""),
            "batch_size": str(s.get("batch_size")),
            "batch_sizes": [],
            "device": str(m.get("device")),
            "use_cache": None,
            "limit": float(limit) if isinstance(limit, int) else None,
            "bootstrap_iters": 0,
            "gen_kwargs": {},
            "random_seed": seed,
            "numpy_seed": seed,
            "torch_seed": seed,
            "fewshot_seed": seed,
        },
        "git_hash": None,
        "date": when.timestamp(),
        "pretty_env_info": _env_info(entry),
        "transformers_version": str(s.get("transformers") or m.get("transformers")),
        "lm_eval_version": LM_EVAL_VERSION,
        "upper_git_hash": None,
        "tokenizer_pad_token": special.get("pad"),
        "tokenizer_eos_token": special.get("eos"),
        "tokenizer_bos_token": special.get("bos"),
        "eot_token_id": special.get("eot_token_id"),
        "max_length": m.get("max_positions") or s.get("max_context"),
        "task_hashes": task_hashes,
        "model_source": "synthprobe",
        "model_name": label,
        "model_name_sanitized": sanitize_model_name(label),
        "system_instruction": None,
        "system_instruction_sha": None,
        "fewshot_as_multiturn": None,
        "chat_template": None,
        "chat_template_sha": None,
        "total_evaluation_time_seconds": str(_seconds(entry, given)),
        "synthprobe": synthprobe,
    }


def _stripped_entry(entry: Entry, tasks: list[TaskRun]) -> dict:
    """The entry without the per-item lists that went into sample files (each task's ``drop``)."""
    data = json.loads(json.dumps(entry.data))
    for t in tasks:
        if not t.drop:
            continue
        *path, last = t.drop
        node = data["results"]
        for step in path:
            node = node[step]
        node.pop(last, None)
    return data


def generated_protocol(entry) -> str | None:
    """The protocol of an entry scored by generation (``letters``/``free``), None for ``loglik``:
    lm-eval's multiple-choice task has no place for a generated answer, so such entries are left
    out of its files (and said so)."""
    proto = entry.data.get("protocol") if isinstance(entry.data.get("protocol"), dict) else {}
    name = proto.get("name", "loglik")
    return None if name == "loglik" else str(name)


def lm_eval_files(
    results: Results, *, when: datetime | None = None, protocol: Any = None, **options: Any
) -> dict[str, bytes]:
    """Relative path → bytes of the lm-eval output files of every model in ``results``
    (``protocol``: the document's ``protocol`` object, kept under ``synthprobe``). Each results
    block becomes tasks through its benchmark's ``lm_eval`` part; ``options`` go to the part that
    takes them (``data=``: the Deep Arithmark file the models were scored on)."""
    if not results.models:
        raise results.reader.fail("models", "is empty; expected at least one scored model")
    when = when or datetime.now(UTC)
    parts = routed("lm_eval", options, "lm_eval_files")
    shared: dict[str, dict] = {bench.name: {} for bench, _, _ in parts}
    files: dict[str, bytes] = {}
    folders: dict[str, int] = {}
    kept = [e for e in results.models if generated_protocol(e) is None]
    if not kept:
        raise results.reader.fail(
            "models",
            "holds only generated answers (--protocol "
            f"{', '.join(sorted({generated_protocol(e) for e in results.models}))}); lm-eval's "
            "files hold the log-likelihood protocol (loglik) only",
        )
    for entry in kept:
        label = str(entry.model.get("name") or entry.model.get("spec") or "model")
        folder = sanitize_model_name(label)
        folders[folder] = folders.get(folder, 0) + 1
        if folders[folder] > 1:
            folder = f"{folder}__{folders[folder]}"
        runs: dict[int, Run] = {}
        moved: list[TaskRun] = []
        given: list[EntryTasks] = []
        for bench, part, opts in parts:
            if bench.name not in entry.results or not hasattr(part, "result_tasks"):
                continue
            block = part.result_tasks(results, entry, shared=shared[bench.name], **opts)
            given.append(block)
            for t in block.tasks:
                run = runs.setdefault(t.k, Run(t.k))
                if any(x.name == t.name for x in run.tasks):
                    raise results.reader.fail(t.where, f"task {t.name} with K={t.k} appears twice")
                run.tasks.append(t)
                moved.append(t)
        if not runs:
            what = ", ".join(
                getattr(part, "SCORED", bench.title) for bench, part, _ in parts if hasattr(part, "result_tasks")
            )
            raise results.reader.fail(entry.where, f"holds no results lm-eval has a task for ({what})")
        order = sorted(runs)
        stamps = {k: date_id(when + timedelta(microseconds=n)) for n, k in enumerate(order)}
        for n, k in enumerate(order):
            run = runs[k]
            iso = stamps[k]
            meta: dict[str, Any] = {
                "version": FILES_VERSION,
                "writer": f"synthprobe {__version__}",
                "run": n,
                "runs": [stamps[x] for x in order],
            }
            if n == 0:
                meta.update(
                    {
                        "schema": SCHEMA,
                        "schema_version": SCHEMA_VERSION,
                        "source": {
                            "synthprobe": results.synthprobe,
                            "command": results.command,
                            "datasets": results.datasets,
                            "protocol": protocol,
                        },
                        "entry": _stripped_entry(entry, moved),
                        "samples": {t.key: {"run": stamps[t.k], "task": t.name} for t in moved},
                    }
                )
            doc = _results_file(entry, given, run, when + timedelta(microseconds=n), label, meta)
            files[f"{folder}/results_{iso}.json"] = json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")
            for t in run.tasks:
                body = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in t.samples)
                files[f"{folder}/samples_{t.name}_{iso}.jsonl"] = body.encode("utf-8")
    return files


def export_lm_eval_results(
    path: str | Path, out: str | Path, *, when: datetime | None = None, overwrite: bool = False, **options: Any
) -> list[Path]:
    """Read the results document ``path`` and write its lm-eval output files under ``out``;
    returns the written paths. Nothing is written when any model cannot be converted. ``when``
    (default: the results file's modification time) gives the files' time stamps; ``options``
    go to the benchmarks' ``lm_eval`` parts (``data=``, as :func:`lm_eval_files`)."""
    from synthprobe.results import parse, read_json

    path = Path(path)
    raw = read_json(path)
    results = parse(raw, path)
    out = check_out_dir(out)
    if when is None:
        when = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    files = lm_eval_files(results, when=when, protocol=raw.get("protocol"), **options)
    left = [f"{e.model.get('name')} ({generated_protocol(e)})" for e in results.models if generated_protocol(e)]
    if left:
        print(
            f"synthprobe: note: left out of lm-eval's files, which hold the loglik protocol only: {', '.join(left)}",
            file=sys.stderr,
        )
    inputs = [(path, "RESULTS.json")]
    for _, part, opts in routed("lm_eval", options, "export_lm_eval_results"):
        inputs += part.inputs(**opts) if hasattr(part, "inputs") else []
    return write_tree(out, files, inputs=inputs, overwrite=overwrite)
