"""What a sweep asks of one benchmark: the benchmark's *sweep part*.

A grid task is ``NAME`` or ``NAME:SUB``, where NAME is a benchmark of the registry
(:mod:`synthprobe.registry`) and SUB one of its sub-tasks (e.g. ``gpt3:2D+``). The sweep
reaches the benchmark only through its ``sweep`` part (a module, or any object with these
attributes), named in its :class:`~synthprobe.registry.Benchmark`:

``RELEASE_SEED``
    the seed the grid's ``release`` label stands for in this benchmark's jobs.
``METRIC``
    the name of the score a job reports (``acc_norm``, ``accuracy``, ...).
``canonical(task) -> str``
    the task's canonical name (``gpt3:2D+`` → ``gpt3:arithmetic_2da``); an
    :class:`~synthprobe.errors.InputError` saying what was expected when there is no such task.
``size(job, settings) -> int``
    the items the job scores (the sweep's plan).
``run(job, settings) -> {"entry", "run"}``
    score one job: ``entry`` is its results entry, which holds only what the grid and the scores
    decide and ends with :func:`synthprobe.sweep.job.sweep_block`; ``run`` the facts of this run
    (``job``, ``pid``, ``load_s``, ``timing``, ``cached_items``, ``seconds``), printed, not written.
``load(job, settings) -> backend`` and ``score(backend, job, settings)``
    the plan's calibration: load the job's model once, then score a job with it (the first
    model's first job of each task); the sweep closes the backend.
``accuracy(entry, task) -> float``
    the job's score as a fraction, from its entry.

and, optionally:

``check(task, settings)``
    refuse settings the task cannot run under, before any job starts.
``prepare(task, seeds, data_dir, *, limit, progress)``
    build the data files of ``seeds`` (the jobs' seeds, :func:`synthprobe.sweep.grid.task_seed`)
    in the driver, once, so that jobs only read them.
``table(entries) -> str | None``
    text printed after the sweep for this benchmark's entries.
``identify(job, settings) -> stand-in | None``
    the job's model as :func:`synthprobe.backends.identify_backend` gives it (its identity in the
    score cache, no weights), loaded with what ``load`` would load it with: the plan runs ``score``
    on it to count the items the other models' caches hold (without it they are reckoned in full).
``recorded(settings) -> dict``
    the sweep settings of its own that change its scores (a built-in benchmark's are recorded
    in every sweep's results document, after the shared ones: :meth:`synthprobe.sweep.job.Settings.recorded`).
``PROTOCOL``
    the default benchmark's (:data:`synthprobe.registry.DEFAULT`) is the results document's
    ``protocol`` block.
``TASK_HELP``, ``HELP``
    what ``synthprobe sweep --help`` says of a built-in benchmark: how ``--task`` names its
    tasks, and its sentences of the description (how its jobs build and score).

A benchmark with no sweep part but with ``build``, ``load``, ``work`` and ``metrics`` joins a
sweep through :class:`synthprobe.sweep.generic.GenericPart`. Nothing here names a benchmark.
"""

from __future__ import annotations

from typing import Any

from synthprobe import registry
from synthprobe.errors import InputError

#: the parts a benchmark needs to join a sweep without a sweep part of its own
GENERIC_PARTS = ("build", "load", "work", "metrics")
#: what every sweep part has (the optional ones: check, prepare, table, PROTOCOL)
REQUIRED = ("RELEASE_SEED", "METRIC", "canonical", "size", "run", "load", "score", "accuracy")


PART_HELP = "the protocol of synthprobe.sweep.part"


def benchmark_of(task: str) -> str:
    """The benchmark's name of a grid task ``NAME`` or ``NAME:SUB``."""
    return task.partition(":")[0]


def sweep_part(name: str) -> Any:
    """The sweep part of the benchmark called ``name``: its own, else the generic one when it has
    the parts that needs; an :class:`InputError` saying which are missing otherwise."""
    bench = registry.get(name)
    if bench.has("sweep"):
        part = bench.part("sweep")
        missing = [a for a in REQUIRED if not hasattr(part, a)]
        if missing:
            raise InputError(
                f"benchmark {name!r}: its sweep part {bench.sweep!r} has no {', '.join(missing)}; expected {PART_HELP}"
            )
        return part
    missing = [p for p in GENERIC_PARTS if not bench.has(p)]
    if missing:
        raise InputError(
            f"benchmark {name!r} cannot join a sweep: it has no 'sweep' part, and no "
            f"{', '.join(repr(p) for p in missing)} part for the generic one"
        )
    from synthprobe.sweep.generic import GenericPart

    return GenericPart(bench)


def part_for(task: str) -> Any:
    """The sweep part of a grid task's benchmark."""
    return sweep_part(benchmark_of(task))


def default_part() -> Any:
    """The sweep part of the registry's default benchmark."""
    return sweep_part(registry.DEFAULT)
