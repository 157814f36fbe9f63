"""Deep Arithmark's sweep part (the protocol of :mod:`synthprobe.sweep.part`), named in
:mod:`synthprobe.benchmarks.deeparithmark.benchmark`: the grid task ``deeparithmark``. A job builds (or
finds) its seed's file, the same bytes as ``synthprobe build deeparithmark --seed S`` ('release'
is the release seed, the bytes of ``data/deeparithmark-1.jsonl``), and scores it with
:func:`synthprobe.benchmarks.deeparithmark.scoring.score.score_model`, as ``score deeparithmark`` does,
through the per-item score cache."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED  # noqa: F401 - the part's release seed
from synthprobe.benchmarks.deeparithmark.scoring.results import PROTOCOL  # noqa: F401 - the sweep document's protocol
from synthprobe.errors import InputError
from synthprobe.sweep.job import Job, Settings, default_data_dir, job_options, sweep_block, variant_path

NAME = "deeparithmark"
METRIC = "acc_norm"

#: how `synthprobe sweep --help` names its grid task (the --task help)
TASK_HELP = NAME
#: what `synthprobe sweep --help` says of its jobs: its sentences of the description's first
#: paragraph, laid out as they sit there (the built-in benchmarks' follow one another)
HELP = (
    "Each job builds\n"
    "(or finds) the seed's Deep Arithmark file (the same bytes as `synthprobe build deeparithmark\n"
    "--seed S`; 'release' is the release seed, the bytes of data/deeparithmark-1.jsonl) and scores it\n"
    "exactly as `synthprobe score deeparithmark` does, through the per-item score cache."
)


def canonical(task: str) -> str:
    if task != NAME:
        raise InputError(f"Deep Arithmark has no sub-tasks; expected {NAME!r}, got {task!r}")
    return task


def prepare(task: str, seeds: list[int], data_dir: Path, *, limit: int | None, progress: bool) -> None:
    """Build every seed's data file (an identical file is left untouched); the whole file, whatever
    the limit (a job reads its first ``limit`` items)."""
    from tqdm import tqdm

    from synthprobe.benchmarks.deeparithmark.build import render_bytes
    from synthprobe.io.write import atomic_write_bytes

    for seed in tqdm(seeds, desc="sweep data", unit=" seed", disable=not progress):
        path = variant_path(task, seed, data_dir)
        data = render_bytes(seed)
        if not (path.is_file() and path.read_bytes() == data):
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)


def _dataset(job: Job, settings: Settings):
    from synthprobe.benchmarks.deeparithmark.scoring.score import load_dataset

    seed = job.build_seed
    path = variant_path(job.task, seed, settings.data_dir)
    if not path.is_file():
        # a cluster node without the driver's files: build them here (the same bytes) at the
        # driver's path, or in this node's own cache where that path cannot be written (the
        # results then name the node's path)
        from synthprobe.benchmarks.deeparithmark.build import build

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            build(path, seed=seed, progress=False)
        except OSError:
            path = variant_path(job.task, seed, default_data_dir())
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                build(path, seed=seed, progress=False)
    return load_dataset(path, job.task, settings.limit)


def _config(job: Job, settings: Settings):
    """The job's data set and :class:`~synthprobe.benchmarks.deeparithmark.scoring.score.ScoreConfig`."""
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig

    ds = _dataset(job, settings)
    options = job_options(job, settings)
    dtype = options.pop("dtype", None)
    device = options.pop("device", "auto")
    bos = options.pop("bos", settings.bos)  # a grid file's model may set it; None: as the model was trained
    trust = bool(options.pop("trust_remote_code", False))
    config = ScoreConfig(
        data=Path(ds.info["path"]),
        models=[job.model.spec],
        dtype=dtype,
        device=device,
        batch_size=settings.batch_size,
        max_context=settings.max_context,
        bos=bos,
        trust_remote_code=trust,
        limit=settings.limit,
        progress=False,
        scorer=settings.scorer,
        cache=settings.cache,
        model_args=options,
        chat=settings.chat,
    )
    return ds, config


def size(job: Job, settings: Settings) -> int:
    return len(_dataset(job, settings).items)


def run(job: Job, settings: Settings) -> dict[str, Any]:
    from synthprobe.benchmarks.deeparithmark.scoring.score import drop_predictions, score_model

    t0 = time.perf_counter()
    ds, config = _config(job, settings)
    (entry,) = score_model(job.model.spec, [ds], config, echo=lambda _: None)
    drop_predictions([entry])
    block = entry["results"][job.task]
    facts = {
        "job": job.index,
        "pid": os.getpid(),
        "load_s": entry.pop("load_s", None),
        "timing": block.pop("timing", None),
        "cached_items": block.pop("cached_items", 0),
        "seconds": round(time.perf_counter() - t0, 3),
    }
    entry["sweep"] = sweep_block(job)
    return {"entry": entry, "run": facts}


def load(job: Job, settings: Settings):
    from synthprobe.benchmarks.deeparithmark.scoring.score import load_model

    return load_model(job.model.spec, _config(job, settings)[1])


def identify(job: Job, settings: Settings):
    from synthprobe.backends import identify_backend
    from synthprobe.benchmarks.deeparithmark.scoring.score import model_options

    return identify_backend(job.model.spec, **model_options(_config(job, settings)[1]))


def score(backend, job: Job, settings: Settings) -> Any:
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import score_dataset

    ds, config = _config(job, settings)
    return score_dataset(backend, ds, config, echo=lambda _: None)


def accuracy(entry: dict[str, Any], task: str) -> float:
    acc = entry["results"][task]["summary"]["metrics"][METRIC]
    return acc["correct"] / acc["total"]


def table(entries: list[dict[str, Any]]) -> str | None:
    """The score table of ``score deeparithmark``, one row per job."""
    from synthprobe.benchmarks.deeparithmark.scoring.results import format_table

    rows = [
        e["row"] | {"model": f"{e['sweep']['label']} · seed {e['sweep']['seed_label']}"} for e in entries if "row" in e
    ]
    return format_table(rows) if rows else None
