"""THE scoring loop, written once for every scored workload (Deep Arithmark, ArithMark 3.0,
GPT-3 tasks): per-item cache, resume, progress, the Ctrl-C message and out-of-memory halving
(:func:`run_with_oom_backoff`: the batch halved on an engine's out-of-memory error and retried).

A workload says only what to ask the backend: a ``work(todo, batch_size, emit)`` function that
scores the items at positions ``todo`` (in input order) and calls ``emit(position, record)``
as each one finishes; ``record`` is a JSON object whose ``id`` names the item in the cache;
and what keys its cache beyond the model (a :class:`CacheKey`: the data's SHA-256 and the
settings that change a score). :func:`run_items` does the rest, the score cache included (built
from the backend's fingerprint and dtype and that key), and returns every item's record (fresh
or cached) in order.
Workloads that batch prompts themselves walk them with :func:`batches` (longest first, the
order a resumed run repeats, with one progress bar).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from synthprobe.backends.base import ScoringError, TokenBudgetSpent
from synthprobe.scoring.cache import ScoreCache, cache_key, cacheable, from_cache_note

T = TypeVar("T")

#: ``emit(position, record)``: one item finished.
Emit = Callable[[int, dict], None]


class ScoringInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) while scoring; the message says how far the run got and what is cached."""

    @classmethod
    def after(cls, finished: int, where: str, *, cached: int | None, total: int) -> ScoringInterrupted:
        """``finished`` items scored by this run of ``where`` before Ctrl-C; ``cached`` of the
        ``total`` items are now in the score cache (``None``: the cache is off)."""
        kept = (
            "nothing is cached (--no-cache)"
            if cached is None
            else f"{cached} of {total} items are cached, run the same command again to resume"
        )
        return cls(f"interrupted after {finished} items ({where}); {kept}")


@dataclass(frozen=True)
class CacheKey:
    """What keys a run's items in the score cache beside the model: the SHA-256 of the data
    scored and the settings that change a score (the task, BOS, context, protocol, chat, ...).
    :func:`score_cache` adds the model's fingerprint and the engine's ``dtype``."""

    data_sha256: str
    settings: Mapping[str, Any]


def score_cache(backend, key: CacheKey | Callable[[], CacheKey] | None) -> ScoreCache | None:
    """The score cache of ``backend``'s scores under ``key`` (settings plus the engine's
    ``dtype``), or None: no key (``--no-cache``), or an engine whose scores may not be cached
    (:func:`~synthprobe.scoring.cache.cacheable`). ``key`` may be a function, called only when
    the cache is used, for settings worth working out only then."""
    if key is None or not cacheable(backend):
        return None
    if callable(key):
        key = key()
    settings = {"dtype": backend.dtype, **key.settings}
    return ScoreCache(cache_key(backend.fingerprint, key.data_sha256, settings))


@dataclass
class RunResult:
    #: Every item's record, in input order (fresh or from the cache).
    records: list[dict]
    #: Positions handed to ``work`` by this run, in input order (not those the run's calibration
    #: scored ahead, :mod:`synthprobe.plan`: their records come with the cached ones).
    todo: list[int]
    #: Items read back from the cache.
    cached: int
    #: Records the cache held when the run started (it may hold items beyond ``ids``).
    stored: int
    #: The batch size that finally worked (after out-of-memory halving).
    batch_size: int
    #: What ``work`` returned.
    extra: Any
    #: The score cache the run used (None: off).
    cache: ScoreCache | None = None


def run_items(
    ids: Sequence[str],
    work: Callable[[list[int], int, Emit], T],
    *,
    where: str,
    backend,
    cache: CacheKey | Callable[[], CacheKey] | None,
    batch_size: int,
    progress: bool,
    echo: Callable[[str], None] = print,
) -> RunResult:
    """Score the items named ``ids`` (see the module docstring) with ``backend`` and return
    their records.

    With ``cache`` (the key of :func:`score_cache`; None: off), finished records are appended
    once per ``batch_size`` items (one fsync per batch), and items already there are not scored
    again. Ctrl-C saves what finished and raises :class:`ScoringInterrupted`; out of memory
    halves the batch and retries (the backend's ``name`` is the model in the error when even a
    batch of one does not fit).

    Under a run's calibration (:mod:`synthprobe.plan`) only the first batch is scored,
    timed and kept; the run proper then takes those records instead of scoring them again. While
    the plan counts a later model's cached items (on a stand-in of it, no weights) the run counts
    the items its cache holds and stops there (:class:`synthprobe.plan.Counted`).
    """
    from synthprobe.plan import Counted, current

    cache = score_cache(backend, cache)
    name = getattr(backend, "name", "the model")
    total = len(ids)
    ahead = current()
    key = (where, name, str(cache.path) if cache is not None else None, tuple(ids))
    if ahead is not None and ahead.counting:  # a later model's stand-in: count its cached items, stop
        done = cache.load() if cache is not None else {}
        raise Counted(sum(1 for k in ids if k in done), key)
    if ahead is not None and ahead.timing:  # the run's calibration: time the first batch, keep it
        done = cache.load() if cache is not None else {}
        ahead.time_first_batch(
            key,
            [i for i, k in enumerate(ids) if k not in done],
            work,
            batch_size,
            cached=sum(1 for k in ids if k in done),
        )
    # items the calibration scored before the run: this run's, not scored again
    early = ahead.take(key) if ahead is not None else {}

    def attempt(size: int):
        done = cache.load() if cache is not None else {}
        fresh: dict[int, dict] = {i: rec for i, rec in early.items() if ids[i] not in done}
        todo = [i for i, key in enumerate(ids) if key not in done and i not in fresh]
        pending: list[dict] = list(fresh.values()) if cache is not None else []
        if progress and len(todo) + len(fresh) < total:
            print(f"{where}: {from_cache_note(total - len(todo) - len(fresh), total)}", file=sys.stderr, flush=True)
        if ahead is not None:  # the run's estimate: refreshed from what this run finds and takes
            ahead.found_cached(key, total - len(todo) - len(fresh), total)
        rate = ahead.rate_of(key) if ahead is not None else None
        last = [time.perf_counter()]

        def emit(pos: int, record: dict) -> None:
            fresh[pos] = record
            if ahead is not None:
                now = time.perf_counter()
                ahead.scored_item(rate, now - last[0])
                last[0] = now
            if cache is None:
                return
            pending.append(record)
            if len(pending) >= size:  # one fsync per batch
                cache.append(pending)
                pending.clear()

        try:
            extra = work(todo, size, emit)
        except ScoringError as exc:
            # a spent token budget (a clean stop) or a failed run (a server past its deadline, an
            # answer refused): what came back is kept, so the same command resumes
            budget = isinstance(exc, TokenBudgetSpent)
            if cache is None:
                if not budget:
                    raise
                raise TokenBudgetSpent(f"{exc}; {len(fresh)} items were scored and none is kept (--no-cache)") from None
            if not fresh and not budget:
                raise
            cache.append(list(fresh.values()))
            n_cached = len(cache.load())
            how = "with a larger --max-tokens-total (or without it) to finish" if budget else "again to resume"
            raise type(exc)(
                f"{exc}; {min(n_cached, total)} of {total} items of {where} are cached: run the same command {how}"
            ) from None
        except KeyboardInterrupt:
            if cache is None:
                raise ScoringInterrupted.after(len(fresh), where, cached=None, total=total) from None
            # Ctrl-C may land while a batch is being saved: save what is not on disk yet (the
            # cache writes each item once), then count what is there.
            cache.append(list(fresh.values()))
            n_cached = len(cache.load())
            raise ScoringInterrupted.after(n_cached - len(done), where, cached=n_cached, total=total) from None
        if cache is not None and pending:
            cache.append(pending)
        return done, todo, fresh, extra

    def halved(old: int, new: int) -> None:
        echo(f"synthprobe: out of memory at batch size {old}; retrying with {new}")

    try:
        (done, todo, fresh, extra), used = run_with_oom_backoff(attempt, batch_size, on_halve=halved)
    except RuntimeError as exc:
        if "out of memory" in str(exc).lower():
            raise ScoringError(f"out of memory while scoring with {name} even at batch size 1") from exc
        raise
    records = [fresh[i] if i in fresh else done[key] for i, key in enumerate(ids)]
    return RunResult(
        records=records,
        todo=todo,
        cached=total - len(fresh),
        stored=len(done),
        batch_size=used,
        extra=extra,
        cache=cache,
    )


def _is_oom(exc: BaseException) -> bool:
    """An engine's out-of-memory error (torch's ``OutOfMemoryError``, or any engine's class of
    that name), recognised without importing an engine here."""
    return any(cls.__name__ == "OutOfMemoryError" for cls in type(exc).__mro__)


def run_with_oom_backoff(
    fn: Callable[[int], T], batch_size: int, *, on_halve: Callable[[int, int], None] | None = None
) -> tuple[T, int]:
    """Call ``fn(batch_size)``; on ``torch.OutOfMemoryError`` halve the batch and retry.

    Returns ``(result, batch size that worked)``. When even a batch of one runs out of memory
    the error is re-raised, so the caller fails loudly instead of writing a partial result.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    size = batch_size
    while True:
        try:
            return fn(size), size
        except Exception as exc:
            if not _is_oom(exc) or size == 1:
                raise
            new = size // 2
            if on_halve is not None:
                on_halve(size, new)
            torch = sys.modules.get("torch")  # loaded by the engine that ran out, if any
            if torch is not None and torch.cuda.is_available():
                torch.cuda.empty_cache()
            size = new


def batches(
    todo: Sequence[T],
    batch_size: int,
    *,
    length: Callable[[T], int],
    tiebreak: Callable[[T], Any],
    desc: str,
    total: int,
    progress: bool,
) -> Iterator[list[T]]:
    """``todo`` longest first (``length``, then ``tiebreak``), ``batch_size`` at a time, under one
    progress bar that starts at the ``total - len(todo)`` items already done. A resumed run forms
    the same batches (the cached ones are a prefix of this order), so its outputs are the same."""
    from tqdm.auto import tqdm

    order = sorted(todo, key=lambda x: (-length(x), tiebreak(x)))
    with tqdm(
        total=total,
        initial=total - len(order),
        desc=desc,
        unit="item",
        disable=not progress or not order,
        dynamic_ncols=True,
    ) as bar:
        for s in range(0, len(order), batch_size):
            chunk = order[s : s + batch_size]
            yield chunk
            bar.update(len(chunk))
