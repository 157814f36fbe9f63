"""A run's plan and its estimate, printed before the work starts, for every command that runs
a model (``score deeparithmark``, ``score gpt3``, ``probe steps``, ``probe number-format``,
``probe grammar``, ``probe novel-words``, ``sweep``).

A plan is a list of :class:`Cell` (what is scored, how many items, with which settings) and
the number of models. Above :data:`CALIBRATE_ABOVE` items, or :data:`CALIBRATE_ABOVE_TOKENS` planned
prompt tokens where the cells know them (20 few-shot GPT-3 items of 1,500 tokens each are a
long run of few items), a short calibration on the loaded
model times the *first batch* of one cell of each kind: the cell's own scoring function runs
under :func:`time_cell`, where :func:`synthprobe.scoring.runner.run_items` scores the first
``batch_size`` items the score cache does not hold (the longest, as the run orders them),
times them and stops the cell there (:class:`Timed`). The records stay in memory
(:class:`Ahead`) and the run proper takes them instead of scoring them again, so a calibration
costs next to nothing and changes no score: the run forms the same batches after it (the
one-pass scorer packs by a token budget too; on the Deep Arithmark release its first forward holds
``batch_size`` items up to batch 51, and it is batch invariant beyond). Cached items cost ~0
and are counted as such. A run of several models reckons each of the others at the loaded
model's time per item (where the loaded model has every item of a kind cached, a batch of them
is timed all the same, and the run still reads them from the cache); the items each other model
already holds in its own score cache are counted first and cost ~0 too, found without loading its
weights: the command lists the others (:attr:`Plan.others`) with a stand-in of each
(:func:`synthprobe.backends.identify_backend`: name, fingerprint, dtype, BOS, tokenizer), whose
cells run up to the runner, which counts the cell's cached items and stops (:func:`count_cached`).
A model whose engine cannot tell its identity before loading (a GGUF file not yet converted, a
vLLM model with an adapter, an engine without ``identify``) is reckoned in full, and the one-hour
guard counts it so. With
several kinds of cells to time (GPT-3's tasks x settings), a line says which one is being
timed. The estimate errs on the long side (the longest items are timed). A
run estimated over :data:`CONFIRM_ABOVE_S` stops with exit 2 (nothing written) unless ``--yes``.

The run proper refreshes the estimate (``estimate now: about ... left``): once, after it has
scored calibrated items for :data:`REFRESH_AFTER_S` (a calibration during a load spike, or a
first batch slower than the rest, is corrected by the pace the run keeps), and whenever a later
model finds enough of its items in its score cache, which the estimate had reckoned as work.

Usage, with the (first) model loaded::

    check_plan(Plan(cells, "...", models=2), yes=args.yes)   # prints; exit 2 if too long
    ... the run, which takes the calibration's records ...
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthprobe.errors import InputError

#: Runs of at most this many items (all cells, one model) are planned without a calibration.
CALIBRATE_ABOVE = 48

#: ... or of at most this many planned prompt tokens (all cells, one model), where cells count them:
#: about what 48 Deep Arithmark items hold, so a run of few but long prompts is estimated too.
CALIBRATE_ABOVE_TOKENS = 12_000

#: A run estimated longer than this waits for ``--yes``.
CONFIRM_ABOVE_S = 3600.0

#: The estimate is refreshed once the run proper has scored calibrated items for this long.
REFRESH_AFTER_S = 20.0

#: A later model whose score cache saves at least this share of what is left gets a new estimate.
MENTION_SAVING = 0.10


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
    #: the prompt tokens the cell's items hold, all of them, where the command can count them
    #: before the run (None: not counted; the item count alone decides on a calibration)
    tokens: int | None = None
    #: for a cell of a model other than the loaded one (no ``score``): scores the cell on a stand-in
    #: of its model up to the runner (:func:`count_on` counts what its cache holds; None: the
    #: model cannot be told before it loads). Those items cost ~0 in the estimate.
    held: Callable[[], Any] | None = None


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
    #: The models after the loaded one, each ``(name, cells)``: ``cells()`` gives the run's cells
    #: on a stand-in of that model (:func:`synthprobe.backends.identify_backend`: its identity in
    #: the score cache, no weights), or None where its engine cannot tell it before loading. Its
    #: items already in its score cache are then counted as cached (:func:`count_cached`); a
    #: model not listed, or given None, is reckoned in full at the loaded model's time per item.
    others: Sequence[tuple[str, Callable[[], list[Cell] | None]]] = ()


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
    #: Seconds one more model takes, none of its items cached, at the loaded model's time per
    #: item (the models after the first of a run: each has its own score cache entries).
    each_other: float = 0.0
    #: Items timed again although the score cache holds them, to reckon the other models (the
    #: loaded model had nothing left to time).
    retimed: int = 0
    #: Each other model's ``(name, seconds, items its score cache holds, items)``, for those whose
    #: cache was counted before the run (:attr:`Plan.others`); the rest cost :attr:`each_other`.
    others: list[tuple[str, float, int, int]] = field(default_factory=list)


class Timed(BaseException):
    """Raised by :func:`~synthprobe.scoring.runner.run_items` under :func:`time_cell` once a
    cell's first batch is timed (a ``BaseException``: no ``except Exception`` swallows it)."""

    def __init__(self, seconds: float, timed: int, todo: int, cached: int, *, kept: bool = True, retimed: bool = False):
        super().__init__(f"timed {timed} items in {seconds:.3f} s")
        self.seconds, self.timed, self.todo, self.cached = seconds, timed, todo, cached
        #: Whether the run takes the timed items (False: a workload outside the runner timed a
        #: small sample that the run scores again).
        self.kept = kept
        #: Whether the timed items are cached ones, timed only to reckon the other models.
        self.retimed = retimed


class Counted(BaseException):
    """Raised by :func:`~synthprobe.scoring.runner.run_items` while :func:`count_cached` counts a
    later model's cached items: ``cached`` of the cell's items are in its score cache; ``key``
    is the run the cell would be."""

    def __init__(self, cached: int, key: tuple):
        super().__init__(f"{cached} items cached")
        self.cached, self.key = cached, key


class _Enough(BaseException):
    """The calibration's batch is complete: stop the workload."""


_CURRENT: contextvars.ContextVar[Ahead | None] = contextvars.ContextVar("synthprobe_ahead", default=None)


class Ahead:
    """Records a calibration scored, kept until the run proper asks for the same items (each
    taken once). :func:`check_plan` makes a fresh one current for the run that follows (a command
    runs in its own context, :func:`synthprobe.errors.run_command_line`, so it ends with it)."""

    def __init__(self) -> None:
        self._records: dict[tuple, dict[int, dict]] = {}
        self.timing = False
        #: Whether a cell whose items are all cached is timed all the same (a run of several
        #: models: the others are reckoned at this model's time per item).
        self.time_cached = False
        #: Whether the runner only counts a cell's cached items (:func:`count_cached`).
        self.counting = False
        #: calibrated seconds per item, by workload (:func:`_workload`: the same for every model)
        self.rates: dict[tuple, float] = {}
        #: runs whose cached items the estimate counted as cached (the loaded model's)
        self.counted: set[tuple] = set()
        #: the run's estimate in seconds (None: no estimate, nothing to refresh)
        self.planned: float | None = None
        self.say: Callable[[str], None] | None = None
        #: the run proper so far: seconds scoring items of calibrated workloads, what the
        #: estimate gave those items, seconds on other items, items scored, seconds saved by
        #: caches the estimate did not count
        self.seen = self.expected = self.other = self.saved = 0.0
        self.scored = 0
        self.refreshed = False

    def clear(self) -> None:
        self._records.clear()

    def take(self, key: tuple) -> dict[int, dict]:
        """The records kept for ``key`` (position -> record), now handed over (empty if none)."""
        return self._records.pop(key, {})

    def time_first_batch(self, key: tuple, todo: list[int], work: Callable, batch_size: int, cached: int) -> None:
        """Score and time the first batch of ``todo`` through ``work``; keep its records under
        ``key``; raise :class:`Timed`."""
        retimed = not todo and bool(cached) and self.time_cached
        if retimed:  # every item cached: time a batch of them anyway, for the models that follow
            todo = list(range(cached))
        elif not todo:
            self.counted.add(key)
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
        self.counted.add(key)
        if got:
            self.rates[_workload(key)] = seconds / len(got)
        if retimed:  # the run reads these from the cache
            raise Timed(seconds, len(got), 0, cached, kept=False, retimed=True)
        self._records[key] = got
        raise Timed(seconds, len(got), len(todo), cached)

    # -- the run proper: refresh the estimate (issue: a calibration during a load spike, a later
    # model whose items are cached) --------------------------------------------------------------

    def begin(self, seconds: float, say: Callable[[str], None] | None) -> None:
        """The estimate the run starts from; refreshed lines go to ``say`` (None: stderr, above
        any progress bar)."""
        self.planned, self.say = seconds, say

    def _pace(self) -> float:
        """How the run proper's time per item compares with the calibration's (1: as timed)."""
        return self.seen / self.expected if self.expected > 0 else 1.0

    def left(self) -> float:
        """Seconds the run still needs: what the estimate has not yet seen scored or saved, at
        the pace measured so far (items of workloads never timed count at that pace too)."""
        pace = self._pace()
        done = self.expected + self.other / pace + self.saved
        return max((self.planned or 0.0) - done, 0.0) * pace

    def _tell(self, line: str) -> None:
        if self.say is not None:
            self.say(line)
            return
        from tqdm.auto import tqdm

        tqdm.write(line, file=sys.stderr)

    def found_cached(self, key: tuple, cached: int, total: int) -> None:
        """The run proper of ``key`` starts with ``cached`` of ``total`` items in the score cache.
        Where the estimate reckoned them as work (a model after the loaded one), the estimate
        is that much shorter, and says so when it matters."""
        rate = self.rates.get(_workload(key))
        if self.planned is None or not cached or rate is None or key in self.counted:
            return
        before = self.left()
        self.saved += cached * rate
        self.counted.add(key)
        if before > 0 and (before - self.left()) >= MENTION_SAVING * before:
            self._tell(
                f"estimate now: about {duration(self.left())} left ({key[1]} has {cached:,} of {total:,} "
                f"items of {_workload(key)[0]} in the score cache; the estimate had counted them as work)"
            )

    def rate_of(self, key: tuple) -> float | None:
        """The calibrated seconds per item of ``key``'s workload (None: not timed). A run looks
        it up once and hands it to :meth:`scored_item` for each item."""
        return self.rates.get(_workload(key))

    def scored_item(self, rate: float | None, seconds: float) -> None:
        """The run proper scored one more item in ``seconds``, of a workload timed at ``rate``
        (:meth:`rate_of`). Once calibrated items have been scored for :data:`REFRESH_AFTER_S`,
        the estimate is refreshed, once."""
        if self.planned is None:
            return
        if rate is None:
            self.other += seconds
            return
        # A batch's items arrive together: its first carries the batch's time, the others ~0. So
        # the pace is read just before an item that carries time is added, over whole batches
        # (read after it, one batch's time would be set against one item's share).
        if not self.refreshed and self.scored and self.seen >= REFRESH_AFTER_S and seconds >= rate / 2:
            self.refreshed = True
            self._tell(
                f"estimate now: about {duration(self.left())} left ({plural(self.scored, 'item')} scored "
                f"so far took {self._pace():.2f} x the calibration's time per item)"
            )
        self.seen += seconds
        self.expected += rate
        self.scored += 1


def _workload(key: tuple) -> tuple:
    """A run's key less its model: ``(where, model name, cache, ids)`` -> ``(where without
    " · <name>", ids)``, shared by every model of the run."""
    where, name, _cache, ids = key
    return (where.replace(f" · {name}", "") if name else where, ids)


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


def count_on(score: Callable[[], Any], ahead: Ahead) -> tuple[int, tuple] | None:
    """Run ``score`` (a cell's scoring on a stand-in of a model, no weights) up to the runner,
    which counts the items its score cache holds and stops (:class:`Counted`): (that count, the
    run's key); None when it cannot get there (it needs what a stand-in lacks, or scores outside
    the runner)."""
    ahead.counting = True
    try:
        score()
    except Counted as c:
        return c.cached, c.key
    except Exception:  # a stand-in lacks what the cell asks for before the runner
        return None
    finally:
        ahead.counting = False
    return None  # scored outside the runner: nothing to count


def count_cached(cells: Sequence[Cell], ahead: Ahead) -> list[int] | None:
    """How many of each cell's items a later model's score cache holds, each cell's scoring run
    on that model's stand-in (:func:`count_on`); None if any cell cannot be counted so. The runs
    counted are marked as such, so that the run proper does not take their cached items off
    again."""
    counts, keys = [], []
    for cell in cells:
        got = count_on(cell.score, ahead) if cell.score is not None and cell.items else (0, None)
        if got is None:
            return None
        counts.append(got[0])
        if got[1] is not None:
            keys.append(got[1])
    ahead.counted.update(keys)
    return counts


class _LaterModel:
    """The cells of a later model on a stand-in of it, made when called; :meth:`close` lets go of
    the stand-in (a server's holds a connection)."""

    def __init__(self, spec: str, options: dict[str, Any], cells_on: Callable[[Any], list[Cell]]):
        self.spec, self.options, self.cells_on, self.stand = spec, options, cells_on, None

    def __call__(self) -> list[Cell] | None:
        from synthprobe.backends import identify_backend

        self.stand = identify_backend(self.spec, **self.options)
        return None if self.stand is None else self.cells_on(self.stand)

    def close(self) -> None:
        if self.stand is not None and callable(getattr(self.stand, "close", None)):
            self.stand.close()
        self.stand = None


def later_model(
    name: str, spec: str, options: dict[str, Any], cells_on: Callable[[Any], list[Cell]]
) -> tuple[str, Callable[[], list[Cell] | None]]:
    """An entry of :attr:`Plan.others`: the model ``name`` (``spec`` loaded with ``options``), whose
    cells are ``cells_on(stand_in)`` on a stand-in of it made when the estimate is
    (:func:`synthprobe.backends.identify_backend`; None where its engine cannot make one)."""
    return name, _LaterModel(spec, options, cells_on)


def _count_other(cells_of: Callable[[], list[Cell] | None], ahead: Ahead) -> list[int] | None:
    """:func:`count_cached` on a later model's cells (None: its stand-in could not be made)."""
    try:
        cells = cells_of()
        return None if cells is None else count_cached(cells, ahead)
    except Exception:  # a stand-in without what building the cells asks of it
        return None
    finally:
        if callable(close := getattr(cells_of, "close", None)):
            close()


def _count_held(cell: Cell, ahead: Ahead) -> int | None:
    """The items of ``cell`` (another model's) its score cache holds (:attr:`Cell.held`), marked
    as counted; None where they cannot be counted."""
    got = count_on(cell.held, ahead)
    if got is None:
        return None
    ahead.counted.add(got[1])
    return got[0]


def calibrate(
    cells: Sequence[Cell],
    ahead: Ahead,
    *,
    stop_above: float | None = None,
    models: int = 1,
    echo: Callable[[str], None] | None = None,
    others: Sequence[tuple[str, Callable[[], list[Cell] | None]]] = (),
) -> Estimate:
    """Estimated seconds for ``cells`` on the loaded model (see the module docstring); the timed
    items are kept in ``ahead``. ``models``: the run scores that many models, the loaded one
    first; each of the others is reckoned at the loaded model's time per item with none of its
    items cached (where the loaded model has every item of a kind cached, a batch of them is
    timed all the same). ``seconds`` is the whole run's. Once it passes ``stop_above`` the rest
    is not timed (the figure is then a lower bound). ``echo``: told which cell is being timed,
    when there are several kinds to time (a long calibration, e.g. GPT-3's few-shot grid, shows
    where it is). ``others``: :attr:`Plan.others`, whose cached items are counted first."""
    per_item: dict[Hashable, float] = {}
    rest: dict[int, int] = {}  # cell index -> items still to score after the calibration
    cached = kept = sampled = retimed = 0
    others_n = max(models, 1) - 1
    others = list(others)[:others_n]
    ahead.time_cached = others_n > 0
    kinds = list(dict.fromkeys(_kind(i, c) for i, c in enumerate(cells) if c.items and c.score is not None))

    def first() -> float:
        return sum(per_item.get(_kind(i, c), 0.0) * rest.get(i, c.items - pre.get(i, 0)) for i, c in enumerate(cells))

    def each_other(held: Sequence[int] = ()) -> float:
        """One more model's time, ``held[i]`` of cell i's items in its cache (none by default)."""
        return sum(
            per_item.get(_kind(i, c), 0.0) * max(c.items - (held[i] if held else 0), 0) for i, c in enumerate(cells)
        )

    held = [(name, _count_other(cells_of, ahead)) for name, cells_of in others]
    # cells of other models, each counted on its own stand-in (a sweep's jobs)
    pre: dict[int, int] = {}
    for i, c in enumerate(cells):
        got = _count_held(c, ahead) if c.held is not None and c.items else None
        if got is not None:
            pre[i] = got
            cached += got
    known = [(name, h) for name, h in held if h is not None]

    def estimate(complete: bool) -> Estimate:
        rest_s = sum(each_other(h) for _, h in known) + (others_n - len(known)) * each_other()
        return Estimate(
            first() + rest_s,
            complete,
            cached,
            kept,
            sampled,
            each_other(),
            retimed,
            [(name, each_other(h), sum(h), sum(c.items for c in cells)) for name, h in known],
        )

    for i, cell in enumerate(cells):
        kind = _kind(i, cell)
        if kind in per_item or cell.items == 0:
            continue
        if echo is not None and len(kinds) > 1 and cell.score is not None:
            echo(f"timing {kinds.index(kind) + 1}/{len(kinds)}: {cell.what} (the first batch on the loaded model)")
        t = time_cell(cell, ahead)
        if t is None:
            continue
        cached += t.cached
        kept += t.timed if t.kept else 0
        retimed += t.timed if t.retimed else 0
        sampled += t.timed if not t.kept and not t.retimed else 0
        rest[i] = t.todo - t.timed if t.kept else t.todo
        if t.timed:  # else every item was cached: the kind stays open for its next cell
            per_item[kind] = t.seconds / t.timed
            untimed = any(c.items and _kind(j, c) not in per_item for j, c in enumerate(cells) if j > i)
            if stop_above is not None and estimate(False).seconds > stop_above and untimed:
                return estimate(False)
    return estimate(True)


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
    """Print ``plan:`` (and, above :data:`CALIBRATE_ABOVE` items or :data:`CALIBRATE_ABOVE_TOKENS`
    planned tokens over all models, ``estimate:``) on stderr; raise
    :class:`~synthprobe.errors.InputError` (exit 2) for a run estimated over an hour unless
    ``yes``. Call it with the (first) model loaded, before any item is scored: the run that
    follows in the same context takes the timed items instead of scoring them again."""
    say = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    ahead = Ahead()
    _CURRENT.set(ahead)  # for the run that follows
    say(f"plan: {plan.text}")
    items = sum(c.items for c in plan.cells)
    tokens = sum(c.tokens or 0 for c in plan.cells)
    models = max(plan.models, 1)
    # every model's items: two models of 20 items are 40; and a few long prompts are a long run
    if items * models <= CALIBRATE_ABOVE and tokens * models <= CALIBRATE_ABOVE_TOKENS:
        return None
    est = calibrate(
        plan.cells,
        ahead,
        stop_above=None if yes else CONFIRM_ABOVE_S,
        models=models,
        echo=say,
        others=plan.others,
    )
    seconds = est.seconds
    about = f"about {duration(seconds)}" if est.complete else f"over {duration(seconds)}"
    how = []
    if est.timed:
        how.append(f"{est.timed:,} items timed on the loaded model, the first batch of each kind, kept for the run")
    if est.sampled:
        how.append(f"{plural(est.sampled, 'item')} timed on the loaded model")
    if not how:
        how.append("nothing left to time")
    if est.retimed:
        how.append(f"{est.retimed:,} cached items timed again for the other models")
    if est.cached:
        how.append(f"{est.cached:,} items already in the score cache cost ~0")
    if models > 1:
        how.append(_others_text(models, est))
    if plan.note:
        how.append(plan.note)
    if not est.complete:
        how.append("stopped timing once past the limit")
    say(f"estimate: {about} on this machine ({'; '.join(how)})")
    if seconds > CONFIRM_ABOVE_S and not yes:
        ahead.clear()
        raise InputError(
            f"this run is estimated at {about} ({items * models:,} items); pass --yes to "
            f"start it, or score less with {plan.shorter}",
            field="--yes",
        )
    if est.complete:
        ahead.begin(seconds, echo)
    return est


def _others_text(models: int, est: Estimate) -> str:
    """The estimate's words on the models after the loaded one: each whose score cache was
    counted with its time and what its cache holds, the rest at the uncached time each."""
    uncounted = models - 1 - len(est.others)
    parts = [
        f"{name} at about {duration(seconds)} ({held:,} of its {total:,} items in its score cache)"
        for name, seconds, held, total in est.others
    ]
    if uncounted:
        if not parts:
            rest = "the other" if uncounted == 1 else "the others"
        else:
            rest = "one more model" if uncounted == 1 else f"{uncounted} more models"
        parts.append(
            f"{rest} at about {duration(est.each_other)} each, none of "
            f"{'its' if uncounted == 1 else 'their'} items cached"
        )
    return f"for {models} models: " + "; ".join(parts)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"
