"""The GPT-3 synthetic tasks' sweep part (the protocol of :mod:`synthprobe.sweep.part`), named in
:mod:`synthprobe.benchmarks.gpt3.benchmark`: the grid task ``gpt3:<task name or paper code>``, scored
as ``synthprobe score gpt3`` does in the sweep's shot setting (``--shots``) through
:func:`synthprobe.benchmarks.gpt3.scoring.score.run` and its score cache, the items drawn from the job's seed
('release' is seed 0, ``synthprobe build gpt3``'s default)."""

from __future__ import annotations

import os
import time
from typing import Any

from synthprobe.errors import InputError
from synthprobe.sweep.job import Job, Settings, job_options, sweep_block

PREFIX = "gpt3:"
RELEASE_SEED = 0
METRIC = "accuracy"

#: how `synthprobe sweep --help` names its grid tasks (the --task help)
TASK_HELP = f"a GPT-3 synthetic task as {PREFIX}<name or paper code>, e.g. {PREFIX}2D+ (its 'release' seed is 0)"
#: what `synthprobe sweep --help` says of its jobs: its sentences of the description's first
#: paragraph, laid out as they sit there (the built-in benchmarks' follow one another)
HELP = (
    "GPT-3\n"
    "synthetic tasks join the grid as gpt3:<task> (e.g. gpt3:2D+), scored as `synthprobe score gpt3`\n"
    "does in the --shots setting, their items drawn from the seed ('release' = seed 0)."
)


def recorded(settings: Settings) -> dict[str, Any]:
    """Its settings in the sweep's results document: the shot setting its jobs ran under, and the
    context they were given — ``score gpt3``'s own (GPT-3's window), not the sweep's
    ``--max-context``, which few-shot prompts of 1-2k tokens would not fit."""
    from synthprobe.benchmarks.gpt3.scoring.score import MAX_CONTEXT

    return {"gpt3_shots": settings.shots, "gpt3_max_context": MAX_CONTEXT}


def _task(task: str):
    from synthprobe.benchmarks.gpt3.registry import get_task

    return get_task(task[len(PREFIX) :])


def canonical(task: str) -> str:
    if not task.startswith(PREFIX):
        raise InputError(
            f"expected a GPT-3 synthetic task as {PREFIX}<name or paper code> (e.g. {PREFIX}2D+), got {task!r}"
        )
    return PREFIX + _task(task).name


def _config(job: Job, settings: Settings):
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig

    return EvalConfig(
        tasks=[_task(job.task)],
        shots=[settings.shots],
        limit=settings.limit,
        seed=job.build_seed,
        batch_size=settings.batch_size,
        save_items=False,
        progress=False,
        cache=settings.cache,
        chat=settings.chat,
    ).validate()


def check(task: str, settings: Settings) -> None:
    """The shot setting (and the other settings) as ``score gpt3`` checks them."""
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig

    EvalConfig(
        tasks=[_task(task)], shots=[settings.shots], limit=settings.limit, batch_size=settings.batch_size
    ).validate()


def size(job: Job, settings: Settings) -> int:
    from synthprobe.benchmarks.gpt3.scoring.score import plan

    return sum(c.n for c in plan(_config(job, settings)))


def run(job: Job, settings: Settings) -> dict[str, Any]:
    """One GPT-3 task in one shot setting; the entry is what ``score gpt3`` writes for one model,
    less the timings."""
    from synthprobe.backends import load_backend
    from synthprobe.benchmarks.gpt3.scoring.score import run as score_gpt3
    from synthprobe.version import __version__

    t0 = time.perf_counter()
    config = _config(job, settings)
    task, seed = config.tasks[0], config.seed
    backend = load_backend(job.model.spec, progress=False, **job_options(job, settings))
    load_s = time.perf_counter() - t0
    try:
        rows = score_gpt3(backend, config)
        model, runtime = backend.describe(), backend.runtime()
    finally:
        backend.close()
    timing = [{k: row.pop(k, None) for k in ("cached_items", "seconds", "items_per_s")} for row in rows]
    entry = {
        "model": model,
        "settings": {
            "tasks": [task.name],
            "shots": [settings.shots],
            "seed": seed,
            "limit": settings.limit,
            "batch_size": settings.batch_size,
            "threads": runtime.get("torch_threads"),
            "synthprobe": __version__,
        },
        "results": {"gpt3": {"rows": rows}},
        "sweep": sweep_block(job),
    }
    facts = {
        "job": job.index,
        "pid": os.getpid(),
        "load_s": round(load_s, 3),
        "timing": timing,
        "cached_items": sum(t["cached_items"] or 0 for t in timing),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    return {"entry": entry, "run": facts}


def load(job: Job, settings: Settings):
    from synthprobe.backends import load_backend

    return load_backend(job.model.spec, progress=False, **job_options(job, settings))


def identify(job: Job, settings: Settings):
    from synthprobe.backends import identify_backend

    return identify_backend(job.model.spec, progress=False, **job_options(job, settings))


def score(backend, job: Job, settings: Settings) -> Any:
    from synthprobe.benchmarks.gpt3.scoring.score import run as score_gpt3

    return score_gpt3(backend, _config(job, settings))


def accuracy(entry: dict[str, Any], task: str) -> float:
    """Exact-match (or choice) accuracy of the job's one row."""
    row = entry["results"]["gpt3"]["rows"][0]
    return row["correct"] / row["n"] if row["n"] else float("nan")
