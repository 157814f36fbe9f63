"""The sweep part of a benchmark that has none of its own but has ``build``, ``load``, ``work``
and ``metrics`` (e.g. one installed through an entry point): the grid task is the benchmark's
name, with no sub-tasks.

A job scores the file that ``build(n, seed)`` makes for its seed, the same bytes as ``synthprobe
build NAME --n N --seed S``, with ``n`` the sweep's ``--limit`` (:data:`DEFAULT_ITEMS` without
one; 'release' is seed 0, the command's default), through the one runner and its score cache as
``synthprobe score NAME`` does (:func:`synthprobe.scoring.benchmark.score_block`); its entry is
that command's, less the timings. The job's score is the block summary's ``correct / total``
(the shape of :func:`synthprobe.metrics.stats.accuracy_block`), so ``metrics`` must report both.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.registry import Benchmark
from synthprobe.sweep.job import Job, Settings, default_data_dir, job_options, sweep_block

#: items built for each seed when the sweep has no ``--limit``
DEFAULT_ITEMS = 1000


class GenericPart:
    """The sweep part protocol (:mod:`synthprobe.sweep.part`) for ``bench``, from its own parts."""

    RELEASE_SEED = 0
    METRIC = "accuracy"

    def __init__(self, bench: Benchmark) -> None:
        self.bench = bench

    def canonical(self, task: str) -> str:
        if task != self.bench.name:
            raise InputError(
                f"benchmark {self.bench.name!r} has no sub-tasks; expected {self.bench.name!r}, got {task!r}"
            )
        return task

    def check(self, task: str, settings: Settings) -> None:
        """A chat template reaches a work function that takes ``chat``, as under ``score NAME``."""
        from synthprobe.scoring.benchmark import check_chat

        check_chat(self.bench, settings.chat)

    def _path(self, seed: int, data_dir: str | Path, limit: int | None) -> Path:
        return Path(data_dir) / f"{self.bench.name}-seed{seed}-n{limit or DEFAULT_ITEMS}.jsonl"

    def _write(self, path: Path, seed: int, limit: int | None) -> None:
        """The seed's file at ``path`` (an identical file is left untouched)."""
        from synthprobe.io.write import atomic_write_text
        from synthprobe.scoring.benchmark import build_jsonl

        _, text = build_jsonl(self.bench, n=limit or DEFAULT_ITEMS, seed=seed)
        if not (path.is_file() and path.read_bytes() == text.encode("utf-8")):
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)

    def prepare(self, task: str, seeds: list[int], data_dir: Path, *, limit: int | None, progress: bool) -> None:
        from tqdm import tqdm

        for seed in tqdm(seeds, desc=f"sweep data ({task})", unit=" seed", disable=not progress):
            self._write(self._path(seed, data_dir, limit), seed, limit)

    def _data(self, job: Job, settings: Settings) -> tuple[Path, list[dict]]:
        """The job's data file and items; a node without the driver's file builds it (the same
        bytes) at the driver's path, or in its own cache where that path cannot be written."""
        from synthprobe.scoring.benchmark import load_items

        seed = job.build_seed
        path = self._path(seed, settings.data_dir, settings.limit)
        if not path.is_file():
            try:
                self._write(path, seed, settings.limit)
            except OSError:
                path = self._path(seed, default_data_dir(), settings.limit)
                self._write(path, seed, settings.limit)
        return path, load_items(self.bench, path, limit=settings.limit)

    def size(self, job: Job, settings: Settings) -> int:
        return len(self._data(job, settings)[1])

    def _options(self, job: Job, settings: Settings) -> dict[str, Any]:
        options = job_options(job, settings)
        if settings.bos is not None:
            options.setdefault("bos", settings.bos)
        return {"progress": False, **options}

    def load(self, job: Job, settings: Settings):
        from synthprobe.backends import load_backend

        return load_backend(job.model.spec, **self._options(job, settings))

    def identify(self, job: Job, settings: Settings):
        from synthprobe.backends import identify_backend

        return identify_backend(job.model.spec, **self._options(job, settings))

    def score(self, backend, job: Job, settings: Settings) -> dict[str, Any]:
        from synthprobe.scoring.benchmark import score_block
        from synthprobe.scoring.settings import RunSettings

        path, items = self._data(job, settings)
        run = RunSettings(
            batch_size=settings.batch_size,
            max_context=settings.max_context,
            cache=settings.cache,
            progress=False,
            chat=settings.chat,
        )
        return score_block(self.bench, backend, items, path, run)

    def run(self, job: Job, settings: Settings) -> dict[str, Any]:
        t0 = time.perf_counter()
        backend = self.load(job, settings)
        load_s = time.perf_counter() - t0
        try:
            block = self.score(backend, job, settings)
            model = backend.describe()
            asked = settings.chat.identity(backend)
        finally:
            backend.close()
        self._counts(block["summary"])
        facts = {
            "job": job.index,
            "pid": os.getpid(),
            "load_s": round(load_s, 3),
            "timing": {"seconds": block.pop("seconds")},
            "cached_items": block.pop("cached_items"),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        entry = {
            "model": model,
            "chat": asked,
            "settings": {"batch_size": settings.batch_size, "limit": settings.limit},
            "results": {self.bench.name: block},
            "sweep": sweep_block(job),
        }
        return {"entry": entry, "run": facts}

    def _counts(self, summary: dict[str, Any]) -> tuple[int, int]:
        correct, total = summary.get("correct"), summary.get("total")
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (correct, total)) or not total:
            raise InputError(
                f"benchmark {self.bench.name!r}: metrics() gave no whole 'correct' and 'total' counts "
                "(total > 0); a sweep scores a job by them (synthprobe.metrics.stats.accuracy_block)"
            )
        return correct, total

    def accuracy(self, entry: dict[str, Any], task: str) -> float:
        correct, total = self._counts(entry["results"][task]["summary"])
        return correct / total
