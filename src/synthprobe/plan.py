"""A run's plan and its estimate, printed before the work starts, for every command that runs
a model (``score deeparithmark``, ``score gpt3``, ``probe steps``, ``probe number-format``,
``probe grammar``, ``probe novel-words``, ``sweep``).

A plan is a list of :class:`Cell` (what is scored, how many items, with which settings) and
the number of models. Above :data:`CALIBRATE_ABOVE` items, a short calibration on the loaded
model times the *first batch* of one cell of each kind: the cell's own scoring function runs
under :func:`time_cell`, where :func:`synthprobe.scoring.runner.run_items` scores the first
``batch_size`` items the score cache does not hold (the longest, as the run orders them),
times them and stops the cell there (:class:`Timed`). The records stay in memory
(:class:`Ahead`) and the run proper takes them instead of scoring them again, so a calibration
costs next to nothing and changes no score: the run forms the same batches after it (the
one-pass scorer packs by a token budget too; on the Deep Arithmark release its first forward holds
``batch_size`` items up to batch 51, and it is batch invariant beyond). Cached items cost ~0
and are counted as such. The estimate errs on the long side (the longest items are timed). A
run estimated over :data:`CONFIRM_ABOVE_S` stops with exit 2 (nothing written) unless ``--yes``.

Usage, with the (first) model loaded::

    check_plan(Plan(cells, "...", models=2), yes=args.yes)   # prints; exit 2 if too long
    ... the run, which takes the calibration's records ...
"""

from __future__ import annotations

import contextvars
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

from synthprobe.errors import InputError

#: Runs of at most this many items (all cells, one model) are planned without a calibration.
CALIBRATE_ABOVE = 48

#: A run estimated longer than this waits for ``--yes``.
CONFIRM_ABOVE_S = 3600.0


@dataclass
class Cell:
    """One unit of a run: ``items`` items of ``what`` (e.g. ``"deeparithmark · loglik"``,
    ``"2D+ few"``). ``score`` runs the cell's real scoring on the loaded model (it is called only
    under :func:`time_cell`, which stops it after one batch). Cells of one ``kind`` are
    reckoned at the time per item of the first of them that is timed (``None``: its own kind)."""

    what: str
    items: int
    score: Callable[[], Any] | None = None
    kind: Hashable = None


@dataclass
class Plan:
    cells: list[Cell]
    #: The ``plan:`` line, e.g. ``deeparithmark x 1 protocol x 200 items, for 1 model``.
    text: str
    models: int = 1
    #: Added to the estimate line, e.g. ``2 workers divide it``.
    note: str = ""
    #: What makes a run shorter, named in the refusal (``--limit N`` first).
    shorter: str = "--limit N"


@dataclass
class Estimate:
    seconds: float
    #: False when timing stopped once the estimate passed the limit (``seconds`` is a lower bound).
    complete: bool
    #: Items the score cache holds (cost ~0), among the timed cells.
    cached: int = 0
    #: Items timed (scored by the calibration, kept for the run).
    timed: int = 0
    #: Items timed by a workload outside the runner (a small sample the run scores again).
    sampled: int = 0


class Timed(BaseException):
    """Raised by :func:`~synthprobe.scoring.runner.run_items` under :func:`time_cell` once a
    cell's first batch is timed (a ``BaseException``: no ``except Exception`` swallows it)."""

    def __init__(self, seconds: float, timed: int, todo: int, cached: int, *, kept: bool = True):
        super().__init__(f"timed {timed} items in {seconds:.3f} s")
        self.seconds, self.timed, self.todo, self.cached = seconds, timed, todo, cached
        #: Whether the run takes the timed items (False: a workload outside the runner timed a
        #: small sample that the run scores again).
        self.kept = kept


class _Enough(BaseException):
    """The calibration's batch is complete: stop the workload."""


_CURRENT: contextvars.ContextVar["Ahead | None"] = contextvars.ContextVar("synthprobe_ahead", default=None)


class Ahead:
    """Records a calibration scored, kept until the run proper asks for the same items (each
    taken once). :func:`check_plan` makes a fresh one current for the run that follows (a command
    runs in its own context, :func:`synthprobe.errors.run_command_line`, so it ends with it)."""

    def __init__(self) -> None:
        self._records: dict[tuple, dict[int, dict]] = {}
        self.timing = False

    def clear(self) -> None:
        self._records.clear()

    def take(self, key: tuple) -> dict[int, dict]:
        """The records kept for ``key`` (position -> record), now handed over (empty if none)."""
        return self._records.pop(key, {})

    def time_first_batch(self, key: tuple, todo: list[int], work: Callable, batch_size: int,
                         cached: int) -> None:
        """Score and time the first batch of ``todo`` through ``work``; keep its records under
        ``key``; raise :class:`Timed`."""
        if not todo:
            raise Timed(0.0, 0, 0, cached)
        want = min(batch_size, len(todo))
        got: dict[int, dict] = {}

        def emit(pos: int, record: dict) -> None:
            got[pos] = record
            if len(got) >= want:
                raise _Enough

        t0 = time.perf_counter()
        try:
            work(list(todo), batch_size, emit)
        except _Enough:
            pass
        seconds = time.perf_counter() - t0
        self._records[key] = got
        raise Timed(seconds, len(got), len(todo), cached)


def current() -> Ahead | None:
    """The current run's :class:`Ahead` (None when no plan was checked)."""
    return _CURRENT.get()


def time_cell(cell: Cell, ahead: Ahead) -> Timed | None:
    """Run ``cell.score`` until its first batch is timed; None if it scored nothing through the
    runner (then it cannot be timed). A workload outside the runner times a small sample itself
    and returns a :class:`Timed` with ``kept=False``."""
    if cell.score is None:
        return None
    ahead.timing = True
    try:
        done = cell.score()
    except Timed as t:
        return t
    finally:
        ahead.timing = False
    return done if isinstance(done, Timed) else None


def calibrate(cells: Sequence[Cell], ahead: Ahead, *, stop_above: float | None = None) -> Estimate:
    """Estimated seconds for ``cells`` on the loaded model (see the module docstring); the timed
    items are kept in ``ahead``. Once the estimate passes ``stop_above`` the rest is not timed
    (the figure is then a lower bound)."""
    per_item: dict[Hashable, float] = {}
    rest: dict[int, int] = {}  # cell index -> items still to score after the calibration
    cached = kept = sampled = 0

    def total() -> float:
        return sum(per_item.get(_kind(i, c), 0.0) * rest.get(i, c.items) for i, c in enumerate(cells))

    for i, cell in enumerate(cells):
        kind = _kind(i, cell)
        if kind in per_item or cell.items == 0:
            continue
        t = time_cell(cell, ahead)
        if t is None:
            continue
        cached += t.cached
        kept += t.timed if t.kept else 0
        sampled += 0 if t.kept else t.timed
        rest[i] = t.todo - t.timed if t.kept else t.todo
        if t.timed:  # else every item was cached: the kind stays open for its next cell
            per_item[kind] = t.seconds / t.timed
            untimed = any(c.items and _kind(j, c) not in per_item for j, c in enumerate(cells) if j > i)
            if stop_above is not None and total() > stop_above and untimed:
                return Estimate(total(), False, cached, kept, sampled)
    return Estimate(total(), True, cached, kept, sampled)


def _kind(i: int, cell: Cell) -> Hashable:
    return ("cell", i) if cell.kind is None else cell.kind


def duration(seconds: float) -> str:
    """``40 s``, ``12 min``, ``3.5 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:,.1f} h"


def check_plan(plan: Plan, *, yes: bool, echo: Callable[[str], None] | None = None) -> Estimate | None:
    """Print ``plan:`` (and, above :data:`CALIBRATE_ABOVE` items, ``estimate:``) on stderr; raise
    :class:`~synthprobe.errors.InputError` (exit 2) for a run estimated over an hour unless
    ``yes``. Call it with the (first) model loaded, before any item is scored: the run that
    follows in the same context takes the timed items instead of scoring them again."""
    say = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    ahead = Ahead()
    _CURRENT.set(ahead)  # for the run that follows
    say(f"plan: {plan.text}")
    items = sum(c.items for c in plan.cells)
    if items <= CALIBRATE_ABOVE:
        return None
    models = max(plan.models, 1)
    limit = None if yes else CONFIRM_ABOVE_S / models
    est = calibrate(plan.cells, ahead, stop_above=limit)
    seconds = est.seconds * models
    about = f"about {duration(seconds)}" if est.complete else f"over {duration(seconds)}"
    how = []
    if est.timed:
        how.append(f"{est.timed:,} items timed on the loaded model, the first batch of each kind, kept for the run")
    if est.sampled:
        how.append(f"{plural(est.sampled, 'item')} timed on the loaded model")
    if not how:
        how.append("nothing left to time")
    if est.cached:
        how.append(f"{est.cached:,} items already in the score cache cost ~0")
    if models > 1:
        how.append(f"times {models} models")
    if plan.note:
        how.append(plan.note)
    if not est.complete:
        how.append("stopped timing once past the limit")
    say(f"estimate: {about} on this machine ({'; '.join(how)})")
    if seconds > CONFIRM_ABOVE_S and not yes:
        ahead.clear()
        raise InputError(f"this run is estimated at {about} ({items * models:,} items); pass --yes to "
                         f"start it, or score less with {plan.shorter}", field="--yes")
    return est


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"

