"""Run a sweep's jobs (serially in this process, or as Ray tasks) and merge them into one
results document.

A job is one (model, task, seed), run by the sweep part of the task's benchmark
(:mod:`synthprobe.sweep.part`, found through the registry): Deep Arithmark's builds (or finds) the
seed's data file and scores it through the per-item score cache (``$SYNTHPROBE_CACHE/scores``).
A job that Ray restarts after its worker died therefore scores only the items that were not yet
cached, and its scores equal a fresh run's (the one-pass scorer is batch invariant).

The merged document depends only on the grid and the scores: jobs keep grid order whatever
finishes first, and the facts of one particular run (seconds, items read from the cache, the
worker's process) are printed, not written, so a Ray run's file is byte-identical to a serial
run's. Ray is imported only here, and only for a Ray run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from synthprobe.errors import CommandFailed, InputError
from synthprobe.sweep.grid import Grid, task_seed
from synthprobe.sweep.job import (  # noqa: F401
    IN_PROCESS_KINDS,
    Job,
    Settings,
    default_data_dir,
    job_options,
    kind_of,
    sweep_block,
    variant_path,
)
from synthprobe.sweep.part import benchmark_of, default_part, part_for

#: Ray's task name prefix; a job's worker process is titled ``ray::synthprobe-sweep-job-<index>``
TASK_NAME = "synthprobe-sweep-job"


def prepare_data(grid: Grid, data_dir: Path, *, progress: bool = True) -> None:
    """Build every task's data files once, in the driver (each benchmark's sweep part's
    ``prepare``; an identical file is left untouched), so that jobs only read them. Same seed →
    the same bytes; Deep Arithmark's release seed gives the release file."""
    for task in grid.tasks:
        part = part_for(task)
        if hasattr(part, "prepare"):
            part.prepare(task, [task_seed(task, s) for s in grid.seeds], data_dir, limit=grid.limit, progress=progress)


def resources(job: Job, settings: Settings, *, cluster_has_gpu: bool) -> dict[str, float]:
    """What the job asks Ray for: one GPU for an in-process model on CUDA (``--device cuda``, or
    ``auto`` on a cluster with GPUs), else CPUs only; a server-backed model needs one CPU."""
    options = job_options(job, settings)
    if kind_of(job.model.spec) not in IN_PROCESS_KINDS:
        return {"num_cpus": 1, "num_gpus": 0}
    device = str(options.get("device") or "auto")
    gpu = device.startswith("cuda") or (device == "auto" and cluster_has_gpu)
    return {"num_cpus": settings.cpus_per_job, "num_gpus": 1 if gpu else 0}


def check_models(grid: Grid, settings: Settings) -> None:
    """Every task's settings as its sweep part checks them (e.g. GPT-3's shot setting), and every
    model spec and its options as its engine would check them, before any job starts."""
    from synthprobe.backends import check_backend

    for task in grid.tasks:
        part = part_for(task)
        if hasattr(part, "check"):
            part.check(task, settings)
    seen = set()
    for job in grid.jobs():
        if job.model.label in seen:
            continue
        seen.add(job.model.label)
        options = job_options(job, settings)
        check_backend(job.model.spec, **options)


def run_job(job: Job, settings: Settings) -> dict[str, Any]:
    """Score one job through its benchmark's sweep part; returns ``{"entry": results entry,
    "run": facts of this run}``."""
    return part_for(job.task).run(job, settings)


@contextlib.contextmanager
def sweep_plan(grid: Grid, settings: Settings, jobs: list[Job], *, where: str, workers: int | None) -> Iterator[Any]:
    """The sweep's :class:`~synthprobe.plan.Plan`: one cell per job (its items); the
    calibration loads the first model here, once, and times each task's first job as the job
    scores it; every other model's jobs of that task are reckoned at the first model's time, less
    the items their own score caches hold (counted on a stand-in of each model, no weights).
    A serial run's first jobs take the timed items; Ray workers score them again (one batch a
    task). ``workers``: the local Ray's CPUs (0: a cluster's; None: serial)."""
    from synthprobe.plan import Cell, Plan, plural

    loaded: dict[str, Any] = {}

    def score(job: Job) -> Any:
        part = part_for(job.task)
        if "model" not in loaded:
            loaded["model"] = part.load(job, settings)
        return part.score(loaded["model"], job, settings)

    stand_ins: dict[tuple[str, str], Any] = {}  # (model label, task) -> its stand-in (or None)

    def held(job: Job) -> Any:
        """Score ``job`` on a stand-in of its model, for the plan to count what its cache holds
        (:attr:`synthprobe.plan.Cell.held`); nothing where its part or engine cannot make one."""
        part = part_for(job.task)
        key = (job.model.label, job.task)
        if key not in stand_ins:
            stand_ins[key] = part.identify(job, settings) if hasattr(part, "identify") else None
        if stand_ins[key] is not None:
            return part.score(stand_ins[key], job, settings)
        return None

    cells = []
    first = jobs[0].model.label if jobs else None
    sizes: dict[tuple[str, int], int] = {}  # items of each (task, seed), the same for every model
    for job in jobs:
        size = (job.task, job.seed.value)
        if size not in sizes:
            sizes[size] = part_for(job.task).size(job, settings)
        cells.append(
            Cell(
                job.name,
                sizes[size],
                kind=job.task,
                score=(lambda job=job: score(job)) if job.model.label == first else None,
                held=None if job.model.label == first else (lambda job=job: held(job)),
            )
        )
    shape = (
        f"{plural(len(jobs), 'job')} ({plural(len(grid.models), 'model')} x {plural(len(grid.tasks), 'task')} x "
        f"{plural(len(grid.seeds), 'seed')}) {where}, {plural(sum(c.items for c in cells), 'item')}"
    )
    note = (
        "one process; each job reckoned at the first model's time for its task, less the items "
        "its model's score cache holds"
    )
    if workers is not None:
        who = "the cluster's" if workers == 0 else str(workers)
        note += f"; {who} workers divide it"
    try:
        yield Plan(cells, shape, note=note, shorter="--limit N, fewer --seeds, models or tasks")
    finally:
        if "model" in loaded:
            loaded["model"].close()
        for stand in stand_ins.values():  # a server's stand-in holds a connection
            if stand is not None and callable(getattr(stand, "close", None)):
                stand.close()


def _ray_job(job: Job, settings: Settings) -> dict[str, Any]:
    return run_job(job, settings)


def run_serial(jobs: list[Job], settings: Settings, on_done: Callable[[Job, dict], None]) -> list[dict]:
    out = []
    for job in jobs:
        result = run_job(job, settings)
        on_done(job, result)
        out.append(result)
    return out


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise CommandFailed(
            f"synthprobe sweep on Ray needs the package 'ray' ({exc}); pip install "
            "'synthprobe[ray]', or run the jobs in this process with --serial"
        ) from None
    return ray


def check_fits(job: Job, res: dict[str, float], nodes: list[dict[str, float]]) -> None:
    """A task that asks for more than any one node has waits forever on Ray: end the command
    instead, before any job starts."""
    if any(n.get("CPU", 0) >= res["num_cpus"] and n.get("GPU", 0) >= res["num_gpus"] for n in nodes):
        return
    ask = f"{res['num_cpus']:g} CPU" + (f" and {res['num_gpus']:g} GPU" if res["num_gpus"] else "")
    have = ", ".join(sorted({f"{n.get('CPU', 0):g} CPU/{n.get('GPU', 0):g} GPU" for n in nodes})) or "no node"
    raise CommandFailed(
        f"job {job.index} ({job.name}) asks Ray for {ask} but no node of the cluster has that "
        f"much (nodes: {have}); lower --cpus-per-job, or --device cpu on a cluster without GPUs"
    )


#: ``ray.init`` options of a sweep's driver: the workers' output stays out of the terminal
_QUIET = {"log_to_driver": False, "logging_level": logging.WARNING}


def join_cluster(address: str) -> None:
    """Connect this process to the running cluster at ``address`` (``--ray-address``), failing
    fast with one line when it cannot be reached (:func:`synthprobe.ray_cluster.connect_ray`); the
    command does it before it writes anything, and :func:`run_ray` then uses that connection."""
    from synthprobe.ray_cluster import connect_ray

    connect_ray(address, **_QUIET)


def run_ray(
    jobs: list[Job],
    settings: Settings,
    on_done: Callable[[Job, dict], None],
    *,
    workers: int,
    address: str | None,
    max_retries: int,
) -> list[dict]:
    """Each job as a Ray task. A local Ray with ``workers`` CPUs is started for the run (and shut
    down after it), or ``address`` joins a running cluster. A task whose worker dies is retried up
    to ``max_retries`` times; an error raised by the job itself is not retried."""
    ray = _import_ray()
    if not ray.is_initialized():
        if address:
            join_cluster(address)
        else:
            ray.init(address="local", num_cpus=workers, include_dashboard=False, **_QUIET)
    try:
        has_gpu = ray.cluster_resources().get("GPU", 0) > 0
        nodes = [n.get("Resources", {}) for n in ray.nodes() if n.get("Alive")]
        remote = ray.remote(_ray_job)
        refs = {}
        for job in jobs:
            res = resources(job, settings, cluster_has_gpu=has_gpu)
            check_fits(job, res, nodes)
            ref = remote.options(
                name=f"{TASK_NAME}-{job.index}", max_retries=max_retries, retry_exceptions=False, **res
            ).remote(job, settings)
            refs[ref] = job
        results: dict[int, dict] = {}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                job = refs[ref]
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, InputError):
                        raise InputError(str(cause)) from None
                    raise CommandFailed(
                        f"job {job.index} ({job.name}) failed: "
                        f"{type(cause).__name__ if cause else 'error'}: {cause or exc}"
                    ) from None
                except ray.exceptions.RayError as exc:
                    raise CommandFailed(
                        f"job {job.index} ({job.name}) was lost after {max_retries} retries: {type(exc).__name__}"
                    ) from None
                results[job.index] = result
                on_done(job, result)
        return [results[job.index] for job in jobs]
    finally:
        ray.shutdown()


def accuracy(entry: dict[str, Any], task: str) -> float:
    """A job's score as a fraction (its benchmark's sweep part's ``accuracy``): acc_norm on Deep
    Arithmark, exact-match (or choice) accuracy of the one row of a GPT-3 task."""
    return part_for(task).accuracy(entry, task)


def metric_name(task: str) -> str:
    return part_for(task).METRIC


def summarise_sweep(grid: Grid, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Per task: :func:`synthprobe.metrics.sweep.seed_spread` of the task's metric over the seeds."""
    from synthprobe.metrics.sweep import seed_spread

    out = {}
    for task in grid.tasks:
        table: dict[str, dict[str, float]] = {}
        for e in entries:
            if e["sweep"]["task"] == task:
                table.setdefault(e["sweep"]["label"], {})[e["sweep"]["seed_label"]] = accuracy(e, task)
        out[task] = {"metric": metric_name(task), **seed_spread(table)}
    return out


def document(grid: Grid, settings: Settings, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The results document; its ``protocol`` is the default benchmark's (its sweep part's
    ``PROTOCOL``), whatever the grid's tasks."""
    from synthprobe.results import results_document

    return results_document(
        protocol=getattr(default_part(), "PROTOCOL", None),
        sweep={"grid": grid.describe(), "settings": settings.recorded(), "summary": summarise_sweep(grid, entries)},
        models=entries,
    )


def tables(grid: Grid, entries: list[dict[str, Any]]) -> list[str]:
    """What each benchmark of the grid prints of its jobs' entries (its sweep part's ``table``)."""
    out = []
    for name in dict.fromkeys(benchmark_of(t) for t in grid.tasks):
        part = part_for(name)
        if hasattr(part, "table"):
            text = part.table([e for e in entries if benchmark_of(e["sweep"]["task"]) == name])
            if text:
                out.append(text)
    return out


def format_summary(summary: dict[str, Any]) -> str:
    """The seed-to-seed spread as printed at the end of a sweep."""
    lines = []
    for task, s in summary.items():
        lines.append(f"{task} ({s['metric']} over seeds):")
        width = max(len(m) for m in s["models"])
        for label, m in s["models"].items():
            sd = "—" if m["sd"] is None else f"{100 * m['sd']:.2f}"
            lines.append(
                f"  {label:<{width}}  mean {100 * m['mean']:6.2f} %  sd {sd:>5}  "
                f"seeds {m['n_seeds']}  rank {m.get('rank_by_mean', 0):g} "
                f"(held on {m.get('seeds_at_rank_by_mean', 0)}/{len(s['seeds_compared'])} seeds)"
            )
        w = "—" if s["kendalls_w"] is None else f"{s['kendalls_w']:.3f}"
        p = "—" if s["friedman_p"] is None else f"{s['friedman_p']:.3g}"
        lines.append(
            f"  rank order: Kendall's W {w} (Friedman p {p}); "
            f"{s['seeds_matching_mean_ranking']}/{len(s['seeds_compared'])} seeds rank the models "
            "as their means do"
        )
    return "\n".join(lines)
