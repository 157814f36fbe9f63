"""The sweep's grid: models × tasks × seeds, from the command line and an optional grid file.

A grid file (YAML, or JSON when it ends in ``.json``) may hold::

    models:                       # strings, or objects with per-model options
      - smollm2-135m-instruct
      - {spec: smollm2-135m-instruct, label: smollm2-bf16, dtype: bfloat16}
      - {spec: "openai:http://127.0.0.1:8000/v1", model_args: {concurrency: 8}}
    seeds: release,1-10           # or a list: [release, 1, 2, 3]
    tasks: [deeparithmark, "gpt3:2D+"]   # registered benchmarks: NAME or NAME:SUB
    limit: 100

Command-line ``--model`` values are added after the file's models; ``--seeds``, ``--task`` and
``--limit`` replace the file's values when given. Jobs are ordered model, then task, then seed,
and the results keep that order whatever finishes first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.sweep.job import RELEASE, GridModel, Job, Seed
from synthprobe.sweep.part import benchmark_of, default_part, part_for, sweep_part

#: the most jobs one sweep may hold (a typo such as 1-100000 is refused, not queued)
MAX_JOBS = 100_000
_RANGE = re.compile(r"([0-9]{1,12})-([0-9]{1,12})")
_MODEL_KEYS = ("spec", "label", "dtype", "device", "model_args")
_FILE_KEYS = ("models", "seeds", "tasks", "limit")


def canonical_task(name: Any, *, path: Path | None = None, field: str = "--task") -> str:
    """A grid task, ``NAME`` or ``NAME:SUB`` with NAME a registered benchmark, in its benchmark's
    canonical spelling (``gpt3:2D+`` → ``gpt3:arithmetic_2da``)."""
    from synthprobe import registry

    if not isinstance(name, str) or registry.find(benchmark_of(name)) is None:
        raise InputError(
            f"expected a benchmark NAME or NAME:SUB, NAME one of {registry.names()}, got {name!r}",
            path=path,
            field=field,
        )
    try:
        return sweep_part(benchmark_of(name)).canonical(name)
    except InputError as exc:
        raise InputError(exc.detail, path=path, field=field) from None


def task_seed(task: str, seed: Seed) -> int:
    """The seed a job of ``task`` builds its items from: the grid's seed, or for 'release' the
    benchmark's own release seed (its sweep part's ``RELEASE_SEED``)."""
    if seed.label == RELEASE:
        return part_for(task).RELEASE_SEED
    return seed.value


def release_seed() -> int:
    """The value the grid records for 'release': the default benchmark's release seed."""
    return default_part().RELEASE_SEED


def parse_seeds(text: Any, *, where: str = "--seeds", path: Path | None = None) -> list[Seed]:
    """``release,1-10`` (or a list of such parts) → seeds in the given order; duplicates refused."""
    parts: list[Any]
    if isinstance(text, str):
        parts = [p.strip() for p in text.split(",")]
    elif isinstance(text, list):
        parts = text
    else:
        raise InputError(
            f"expected seeds such as 'release,1-10' or a list, got {type(text).__name__}", path=path, field=where
        )
    seeds: list[Seed] = []
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, (str, int)):
            raise InputError(f"expected a seed, a range a-b or 'release', got {part!r}", path=path, field=where)
        text_part = str(part).strip()
        if text_part == RELEASE:
            seeds.append(Seed(RELEASE, release_seed()))
        elif text_part.isascii() and text_part.isdigit() and len(text_part) <= 12:
            seeds.append(Seed(str(int(text_part)), int(text_part)))
        elif (m := _RANGE.fullmatch(text_part)) is not None:
            lo, hi = int(m.group(1)), int(m.group(2))
            if lo > hi:
                raise InputError(f"range {text_part!r} runs backwards", path=path, field=where)
            if hi - lo >= MAX_JOBS:
                raise InputError(f"range {text_part!r} holds more than {MAX_JOBS:,} seeds", path=path, field=where)
            seeds.extend(Seed(str(s), s) for s in range(lo, hi + 1))
        else:
            raise InputError(
                f"expected a seed (digits), a range a-b or 'release', got {text_part!r}", path=path, field=where
            )
        if len(seeds) > MAX_JOBS:
            raise InputError(f"more than {MAX_JOBS:,} seeds", path=path, field=where)
    values = [s.value for s in seeds]
    dupes = sorted({v for v in values if values.count(v) > 1})
    if dupes:
        raise InputError(f"seed {dupes[0]} is listed twice (release = {release_seed()})", path=path, field=where)
    if not seeds:
        raise InputError("expected at least one seed", path=path, field=where)
    return seeds


def _default_label(spec: str, options: dict[str, Any]) -> str:
    extras = [str(options["dtype"])] if options.get("dtype") else []
    extras += [f"{k}={v}" for k, v in sorted((options.get("model_args") or {}).items())]
    return spec + (f" ({', '.join(extras)})" if extras else "")


def parse_model(value: Any, where: str, path: Path | None) -> GridModel:
    if isinstance(value, str) and value.strip():
        return GridModel(value, value)
    if not isinstance(value, dict):
        raise InputError(f"expected a model spec or an object with 'spec', got {value!r}", path=path, field=where)
    unknown = [k for k in value if k not in _MODEL_KEYS]
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}; expected some of {list(_MODEL_KEYS)}",
            path=path,
            field=f"{where}.{unknown[0]}",
        )
    spec = value.get("spec")
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("expected a model spec (text)", path=path, field=f"{where}.spec")
    options: dict[str, Any] = {}
    for key in ("dtype", "device"):
        if key in value:
            if not isinstance(value[key], str):
                raise InputError("expected text", path=path, field=f"{where}.{key}")
            options[key] = value[key]
    if "model_args" in value:
        args = value["model_args"]
        if not isinstance(args, dict) or not all(isinstance(k, str) and k.isidentifier() for k in args):
            raise InputError(
                "expected an object of engine options (plain names as keys)", path=path, field=f"{where}.model_args"
            )
        options["model_args"] = dict(args)
    label = value.get("label", _default_label(spec, options))
    if not isinstance(label, str) or not label.strip():
        raise InputError("expected text", path=path, field=f"{where}.label")
    return GridModel(spec, label, options)


def read_grid_file(path: Path) -> dict[str, Any]:
    """A grid file's keys, checked (the values are checked where they are used)."""
    from synthprobe.io.read import loads_json

    if not path.is_file():
        raise InputError("grid file not found", path=path, field="--grid")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path) from None
    if path.suffix.lower() == ".json":
        doc = loads_json(text, path=path)
    else:
        import yaml

        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(
                f"not valid YAML: {getattr(exc, 'problem', None) or exc}",
                path=path,
                line=None if mark is None else mark.line + 1,
            ) from None
    if not isinstance(doc, dict):
        raise InputError(f"expected a mapping with keys {list(_FILE_KEYS)}, got {type(doc).__name__}", path=path)
    unknown = [k for k in doc if k not in _FILE_KEYS]
    if unknown:
        raise InputError(f"unknown key; expected some of {list(_FILE_KEYS)}", path=path, field=str(unknown[0]))
    return doc


@dataclass
class Grid:
    models: list[GridModel]
    tasks: list[str]
    seeds: list[Seed]
    limit: int | None

    def jobs(self) -> list[Job]:
        out: list[Job] = []
        for model in self.models:
            for task in self.tasks:
                for seed in self.seeds:
                    out.append(Job(len(out), model, task, seed, task_seed(task, seed)))
        return out

    def describe(self) -> dict[str, Any]:
        """The grid as the results document records it."""
        return {
            "models": [{"label": m.label, "spec": m.spec, "options": m.options} for m in self.models],
            "tasks": list(self.tasks),
            "seeds": [{"label": s.label, "seed": s.value} for s in self.seeds],
            "limit": self.limit,
        }


def make_grid(
    *, grid_file: Path | None, models: list[str] | None, seeds: str | None, tasks: list[str] | None, limit: int | None
) -> Grid:
    doc = read_grid_file(grid_file) if grid_file is not None else {}
    where = grid_file
    file_models = doc.get("models", [])
    if not isinstance(file_models, list):
        raise InputError("expected a list of models", path=where, field="models")
    grid_models = [parse_model(v, f"models[{i}]", where) for i, v in enumerate(file_models)]
    grid_models += [parse_model(m, "--model", None) for m in models or []]
    if not grid_models:
        from synthprobe.backends.spec import EMBEDDED_ALIAS

        grid_models = [GridModel(EMBEDDED_ALIAS, EMBEDDED_ALIAS)]
    labels = [m.label for m in grid_models]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise InputError(
            f"two models share the label {dupes[0]!r}; give one a 'label' in the grid file", path=where, field="models"
        )
    if seeds is not None:
        seed_list = parse_seeds(seeds)
    else:
        seed_list = parse_seeds(doc.get("seeds", RELEASE), where="seeds", path=where)
    from synthprobe.registry import DEFAULT

    task_list = tasks if tasks else doc.get("tasks", [DEFAULT])
    if not isinstance(task_list, list) or not task_list:
        raise InputError("expected a list of tasks", path=where, field="tasks")
    task_list = [
        canonical_task(t, path=None if tasks else where, field="--task" if tasks else "tasks") for t in task_list
    ]
    if len(set(task_list)) != len(task_list):
        raise InputError("a task is listed twice", path=None if tasks else where, field="--task" if tasks else "tasks")
    for task in task_list:  # 'release' may be another seed of the list for a benchmark of its own release seed
        values = [task_seed(task, s) for s in seed_list]
        if len(set(values)) != len(values):
            raise InputError(
                f"'release' is seed {task_seed(task, Seed(RELEASE, 0))} for {task}; list one of them",
                path=where,
                field="seeds",
            )
    if limit is None and "limit" in doc:
        limit = doc["limit"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InputError(f"expected a positive whole number, got {limit!r}", path=where, field="limit")
    n_jobs = len(grid_models) * len(task_list) * len(seed_list)
    if n_jobs > MAX_JOBS:
        raise InputError(f"the grid holds {n_jobs:,} jobs; at most {MAX_JOBS:,}", field="--seeds")
    return Grid(grid_models, list(task_list), seed_list, limit)
