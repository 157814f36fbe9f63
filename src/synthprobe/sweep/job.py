"""One sweep job and what every job shares: the job (:class:`Job`: model, task, seed), the
settings of the whole sweep (:class:`Settings`), a job's load options and the ``sweep`` block that
ends its results entry.

The bottom of the sweep package: the benchmarks' sweep parts (:mod:`synthprobe.sweep.part`)
import this, and the grid (:mod:`.grid`) and the runner (:mod:`.run`) import them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe import registry
from synthprobe.backends.chat import ChatSetup

#: the grid's seed label that stands for each benchmark's own release seed
RELEASE = "release"
#: engines that load the weights into the job's own process: they get a GPU when there is one
IN_PROCESS_KINDS = ("hf", "vllm")


@dataclass(frozen=True)
class GridModel:
    spec: str
    label: str
    #: per-model load options that replace the shared model block's (dtype, device, engine args)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Seed:
    label: str
    value: int


@dataclass(frozen=True)
class Job:
    index: int
    model: GridModel
    task: str
    seed: Seed
    #: the seed its items are built from: ``seed.value``, or for 'release' the benchmark's own
    #: release seed (:func:`synthprobe.sweep.grid.task_seed`)
    build_seed: int

    @property
    def name(self) -> str:
        return f"{self.model.label} · {self.task} · seed {self.seed.label}"


@dataclass(frozen=True)
class Settings:
    """What every job shares: the model block's options and the scoring settings."""

    #: ``load_backend`` options from the model block (dtype, device, threads, --model-arg keys)
    options: dict[str, Any]
    batch_size: int = 32
    max_context: int = 1024
    #: ``--bos`` / ``--no-bos``; None: each model as it was trained (a grid file's model may set it)
    bos: bool | None = None
    scorer: str = "onepass"
    cache: bool = True
    limit: int | None = None
    #: where the private variants are built (one JSONL file per seed)
    data_dir: str = ""
    #: CPUs a job asks Ray for, and torch threads of an in-process CPU model without --threads
    cpus_per_job: int = 1
    #: the shot setting of GPT-3 tasks (zero, one, few or a number)
    shots: str = "zero"
    #: ``--chat-template`` / ``--system-prompt``: every job asks its items under it (each entry's
    #: ``chat`` block, or each GPT-3 row's, records it)
    chat: ChatSetup = field(default_factory=ChatSetup)

    def recorded(self) -> dict[str, Any]:
        """The settings that change a score (the results document records them)."""
        return {
            "batch_size": self.batch_size,
            "max_context": self.max_context,
            "bos": self.bos,
            "scorer": self.scorer,
            "limit": self.limit,
            **recorded_settings(self),
        }


def recorded_settings(settings) -> dict[str, Any]:
    """The settings each built-in benchmark's sweep part records (its ``recorded``), in registry order."""
    out: dict[str, Any] = {}
    for name in registry.BUILTIN:
        bench = registry.find(name)
        part = bench.part("sweep") if bench is not None and bench.has("sweep") else None
        if part is not None and hasattr(part, "recorded"):
            out.update(part.recorded(settings))
    return out


def default_data_dir() -> Path:
    from synthprobe.backends.spec import cache_root

    return cache_root() / "sweep" / "data"


def variant_path(task: str, seed: int, data_dir: str | Path) -> Path:
    return Path(data_dir) / f"{task}-seed{seed}.jsonl"


def kind_of(spec: str) -> str:
    from synthprobe.backends import split_kind

    return split_kind(spec)[0]


def job_options(job: Job, settings: Settings) -> dict[str, Any]:
    """The job's ``load_backend`` options: the shared model block, then the grid file's per-model
    values; an in-process model without ``threads`` runs on ``cpus_per_job`` torch threads, the
    same in a serial run and on Ray (so the arithmetic, and the scores, are the same)."""
    options = {k: v for k, v in settings.options.items() if k != "progress"}
    for key in ("dtype", "device"):
        if key in job.model.options:
            options[key] = job.model.options[key]
    options.update(job.model.options.get("model_args", {}))
    if kind_of(job.model.spec) in IN_PROCESS_KINDS and options.get("threads") is None:
        options["threads"] = settings.cpus_per_job
    return options


def sweep_block(job: Job) -> dict[str, Any]:
    """The ``sweep`` block that ends every job's results entry."""
    return {
        "job": job.index,
        "label": job.model.label,
        "spec": job.model.spec,
        "task": job.task,
        "seed": job.build_seed,
        "seed_label": job.seed.label,
    }
