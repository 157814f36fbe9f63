"""Render a Deep Arithmark file deterministically from a seed.

How an N-item file is made (all of it reproducible from ``seed`` and ``N`` alone):

1. **Composition** — :func:`.composition.composition` gives each template its item count;
   item ``k`` of template ``t`` is the pair ``(t, k)``.
2. **Balance plan** — :func:`.composition.balance_plan` fixes how many items of each depth
   tier go to every (correct slot, answer rank) cell; within a tier the cells are dealt to
   the items by a seeded shuffle.
3. **Order** — a seeded shuffle of all items gives the file order; ``ind`` is the position.
4. **Items**, in file order — the family's generator draws from
   ``item_rng("deeparithmark/<template>", seed, k, attempt)``. A draw that raises
   :class:`GenerationError`, loses the answer-shape lottery (kept with the probability the
   fixed table of :mod:`.answer_shape` gives its answer's leading digits, so that each
   family's answers look like its decoys), cannot put the answer at the rank the plan
   requires, or repeats the context of an earlier item is discarded and ``attempt`` goes up
   by one. The three
   decoys for the required rank are sampled from the family's usable mistakes with the same
   RNG, the answer goes to its planned slot and the decoys fill the other slots in random
   order.
5. **Same-length decoys** — all four endings should have the same number of characters,
   so that neither a text-length nor a digit-count prior singles out the answer (a
   "stopped early" or "left-over" mistake is often an order of magnitude off, and a
   decoy that is the only one-digit option is an easy reject). For the first
   :data:`SAME_LENGTH_ATTEMPTS` draws of an item, a draw whose mistakes cannot fill the
   required rank with endings as long as the answer's is discarded too; after that the
   decoy sets with the fewest off-length endings are used. Among equally good sets the
   choice is uniform (item RNG).
6. Every item is re-checked against every per-item rule (:mod:`.checks`), and the counts
   against the plan, before the file is renamed into place; any fault aborts the build and
   leaves nothing behind.

**Parallel build** (``workers`` > 1): worker processes draw chunks of items, in file order,
as step 4 would if no context repeated, and return each line with its context hash and the
attempt used; the parent takes the chunks in file order, keeps the set of context hashes and
re-draws an item whose context repeats an earlier one itself, continuing from that attempt
exactly as the serial loop does. The bytes (and the build statistics) are those of the
serial build for every number of workers. By default (``workers=None``) a build of
:data:`PARALLEL_MIN_ITEMS` items or more uses one worker per CPU the process may use, a smaller
one runs in this process (a pool's start-up costs more than it saves there).

**Cost.** An item takes about 4.8–4.9 draws (half of them thinned by the answer-shape table), each
a seeded stream (:class:`~synthprobe.seeding.ItemStreams`: one hashed prefix and one reseeded
``random.Random`` per item) and a full ``generate``; the shared machinery keeps that cheap
(int fast paths in :mod:`.base` instead of ``Fraction``, cached per-family value tables and
answer shapes), and what a draw computes without drawing or rejecting — whole-number solution
lines, the depth-4/5 mistake re-runs — waits until the builder reads it, which a thinned draw
never does. ``bench/bench_deeparithmark_build.py`` measures it against the builder before
that work.

Memory is O(N) in small fixed-size entries — one byte per item for the plan, four for the
order and one 64-bit context hash in a set (about 70 bytes with Python's overhead) — so a
million-item file streams to disk in well under 200 MiB.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import os
import random
import time
from array import array
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.answer_shape import acceptance, load_table
from synthprobe.benchmarks.deeparithmark.base import (
    FAMILIES,
    Family,
    GenerationError,
    Problem,
    feasible_ranks,
    usable_mistakes,
)
from synthprobe.benchmarks.deeparithmark.checks import ITEM_RULES, item_faults
from synthprobe.benchmarks.deeparithmark.composition import (
    DECOY_MODES,
    DEFAULT_DECOYS,
    GROUPS,
    MAX_BUILD_SIZE,
    N_OPTIONS,
    RELEASE_SEED,
    RELEASE_SIZE,
    TEMPLATE_BY_NAME,
    TEMPLATES,
    Template,
    balance_plan,
    composition,
)
from synthprobe.benchmarks.deeparithmark.item import DecoySet, decoy_sets, make_item
from synthprobe.io.write import atomic_open
from synthprobe.prompts.numformat import PLAIN, check_number_format, format_numbers
from synthprobe.seeding import ItemStreams, derive_seed


def check_decoys(decoys: str) -> None:
    if decoys not in DECOY_MODES:
        raise ValueError(f"decoys must be one of {list(DECOY_MODES)}, got {decoys!r}")


#: Draws tried for one item before the build gives up on its template.
MAX_ATTEMPTS = 2000

#: Draws of an item that must offer same-length decoys for its rank before any will do.
SAME_LENGTH_ATTEMPTS = 50


class BuildError(RuntimeError):
    """The generator could not produce a valid file (a family bug or an exhausted template)."""


#: ``json.dumps(item, ensure_ascii=False, separators=(", ", ": "))`` builds this encoder on
#: every call; one kept for the build gives the same text.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))


def dumps_item(item: dict) -> str:
    """One JSONL line (without the newline): compact, UTF-8, keys in release order."""
    return _ENCODER.encode(item)


def load_families(templates: Sequence[Template] = TEMPLATES) -> dict[str, Family]:
    """Import our family modules and check every family of ``templates`` (default the release
    table) against its row; families from outside the package (:mod:`.plugins`) must have been
    loaded before."""
    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers every family)

    problems = []
    for t in templates:
        fam = FAMILIES.get(t.name)
        if fam is None:
            problems.append(
                f"template {t.name!r} has no registered family "
                + (
                    "(expected module families/{t.name}.py)"
                    if templates is TEMPLATES
                    else "(load its module with --family)"
                )
            )
        elif (fam.topic, fam.depth) != (t.topic, t.depth):
            problems.append(
                f"family {t.name!r} is registered with topic {fam.topic!r}, depth "
                f"{fam.depth}; the release table says {t.topic!r}, depth {t.depth}"
            )
    if problems:
        raise BuildError("; ".join(problems))
    return {t.name: FAMILIES[t.name] for t in templates}


def _ctx_key(ctx: str) -> int:
    return int.from_bytes(hashlib.blake2b(ctx.encode("utf-8"), digest_size=8).digest(), "big")


@dataclass
class Layout:
    """Where every item of an N-item build sits: template, index, slot, rank, file order.

    Items are numbered canonically — template by template in table order, ``k`` ascending —
    which groups them by depth tier."""

    n: int
    seed: int
    names: list[str]
    starts: list[int]  # canonical index of each template's first item
    cell: array  # canonical index -> slot * 4 + rank
    order: array  # file position -> canonical index
    templates: Sequence[Template] = TEMPLATES  # the table the items are drawn from

    def locate(self, c: int) -> tuple[str, int]:
        t = bisect.bisect_right(self.starts, c) - 1
        return self.names[t], c - self.starts[t]


def layout(seed: int, n: int, templates: Sequence[Template] = TEMPLATES) -> Layout:
    comp = composition(n, templates)
    plan = balance_plan(n, templates)
    names, starts, pos = [], [], 0
    for t in templates:
        if comp[t.name]:
            names.append(t.name)
            starts.append(pos)
            pos += comp[t.name]
    cell = array("b")
    for d, grid in plan.grid.items():
        tier = array(
            "b", (s * N_OPTIONS + r for s in range(N_OPTIONS) for r in range(N_OPTIONS) for _ in range(grid[s][r]))
        )
        random.Random(derive_seed("deeparithmark/plan", seed, d)).shuffle(tier)
        cell.extend(tier)
    if len(cell) != n:  # the plan and the composition disagree on a tier size
        raise BuildError(f"balance plan covers {len(cell)} items, composition {n}")
    order = array("I", range(n))
    random.Random(derive_seed("deeparithmark/order", seed)).shuffle(order)
    return Layout(n=n, seed=seed, names=names, starts=starts, cell=cell, order=order, templates=templates)


@dataclass
class BuildStats:
    """What a build did: attempts per template and why draws were discarded."""

    n: int = 0
    attempts: Counter = field(default_factory=Counter)
    discarded: Counter = field(default_factory=Counter)  # reason -> draws
    slots: Counter = field(default_factory=Counter)
    ranks: Counter = field(default_factory=Counter)
    grid: Counter = field(default_factory=Counter)  # (slot, rank, depth) -> items
    templates: Counter = field(default_factory=Counter)
    off_length: Counter = field(default_factory=Counter)  # template -> items with unequal lengths
    redrawn: int = 0  # parallel build: items re-drawn in the parent for a repeated context
    worker_cpu_s: float = 0.0  # parallel build: CPU seconds the worker processes spent on items


def _first_draw(
    fam: Family,
    template: str,
    seed: int,
    k: int,
    rank: int,
    seen: set[int],
    shapes: Mapping[str, Mapping[str, float]],
    start: int,
    why: Counter,
    *,
    roundness: bool = True,
) -> tuple[Problem, random.Random, int, list[DecoySet], int, int]:
    """The attempt loop of :func:`draw` from attempt ``start``: ``(problem, rng, key, sets,
    attempt, off)``; the reasons for discarded draws are counted into ``why``. ``roundness``:
    see :func:`iter_items`."""
    streams = ItemStreams(f"deeparithmark/{template}", seed, k)  # item_rng(…, k, attempt)
    for attempt in range(start, MAX_ATTEMPTS):
        rng = streams.rng(attempt)
        try:
            problem = fam.generate(rng)
        except GenerationError:
            why["generator rejected the draw"] += 1
            continue
        if rng.random() >= acceptance(shapes, problem):
            why["answer shape thinned"] += 1
            continue
        usable = usable_mistakes(problem, roundness=roundness)
        if rank not in feasible_ranks(problem, usable):
            why[f"mistakes cannot put the answer at rank {rank}"] += 1
            continue
        off, sets = decoy_sets(problem, rank, usable)
        if off and attempt < SAME_LENGTH_ATTEMPTS:
            why[f"no same-length decoys for rank {rank}"] += 1
            continue
        key = _ctx_key(problem.ctx)
        if key in seen:
            why["context repeats an earlier item"] += 1
            continue
        return problem, rng, key, sets, attempt, off
    reasons = ", ".join(f"{v} × {k_}" for k_, v in why.most_common())
    raise BuildError(
        f"template {template!r}, item {k}: no usable draw in {MAX_ATTEMPTS} attempts "
        f"({reasons}); the template's parameter space may be exhausted at this size"
    )


def draw(
    fam: Family,
    template: str,
    seed: int,
    k: int,
    rank: int,
    seen: set[int],
    stats: BuildStats,
    shapes: Mapping[str, Mapping[str, float]],
    *,
    start: int = 0,
    why: Counter | None = None,
    roundness: bool = True,
) -> tuple[Problem, random.Random, int, list[DecoySet]]:
    """Item ``k`` of ``template`` with its answer at ``rank``: the first draw that survives
    every rule (step 4 of the module docstring), its RNG (for the decoy choice), its context
    key and its decoy sets. ``shapes`` is the answer-shape table (:mod:`.answer_shape`).

    ``start`` and ``why`` resume the loop at a later attempt with the discard reasons of the
    earlier ones (the parallel build's re-draw after a repeated context). ``roundness``: see
    :func:`iter_items`."""
    why = why if why is not None else Counter()
    problem, rng, key, sets, attempt, off = _first_draw(
        fam, template, seed, k, rank, seen, shapes, start, why, roundness=roundness
    )
    stats.attempts[template] += attempt + 1
    stats.discarded.update(why)
    if off:
        stats.off_length[template] += 1
    return problem, rng, key, sets


def format_item(item: dict, number_format: str, by_name: Mapping[str, Template] = TEMPLATE_BY_NAME) -> dict:
    """``item`` with its prompt and endings written in ``number_format`` (see
    :mod:`synthprobe.prompts.numformat`): the same item, id and order, only the rendering differs.
    ``metadata`` stays canonical (plain digits, so values and steps check the same way in every
    format) and gains a last key ``number_format``; a ``plain`` item is returned unchanged, so a
    plain build is byte-identical to a build without the option."""
    if number_format == PLAIN:
        return item
    out = dict(item)
    out["ctx"] = format_numbers(item["ctx"], number_format)
    out["endings"] = [format_numbers(e, number_format) for e in item["endings"]]
    out["metadata"] = {**item["metadata"], "number_format": number_format}
    fault = _item_fault(out, item["ind"], item["metadata"]["template"], item["ind"], by_name)
    if fault is not None:
        raise BuildError(f"{number_format} rendering: {fault}")
    return out


def _start(seed: int, n: int, stats: BuildStats | None, templates: Sequence[Template]):
    """What every build of ``n`` items for ``seed`` starts from: the families, the layout (plan
    and order), the answer-shape table and the stats to fill."""
    if not 1 <= n <= MAX_BUILD_SIZE:
        raise ValueError(f"n must be 1..{MAX_BUILD_SIZE:,}, got {n}")
    return (
        load_families(templates),
        layout(seed, n, templates),
        load_table(),
        (stats if stats is not None else BuildStats()),
    )


def iter_items(
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    *,
    stats: BuildStats | None = None,
    number_format: str = PLAIN,
    templates: Sequence[Template] = TEMPLATES,
    roundness: bool = True,
    decoys: str = DEFAULT_DECOYS,
) -> Iterator[dict]:
    """Yield the ``n`` items of the file for ``seed`` in file order, each checked, with their
    numbers written in ``number_format`` (:func:`format_item`). ``templates``: the table the
    items are drawn from (default the release's; :func:`.composition.user_table` for others).

    ``roundness=False`` switches the roundness balance off: decoys come from every usable
    mistake whatever its roundness class, and the per-item checks skip the one-class rule
    (the ``roundness-off`` positive control of :mod:`.controls`, a deliberately flawed build;
    the release and every other build keep the default). Nothing else changes.

    Raises :class:`BuildError` on a faulty item, and after the last item if the counts
    differ from the plan (so a consumer that writes atomically keeps nothing)."""
    by_name = _by_name(templates)
    for item, _problem in iter_drawn(seed, n, stats=stats, templates=templates, roundness=roundness, decoys=decoys):
        yield format_item(item, number_format, by_name)


def iter_drawn(
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    *,
    stats: BuildStats | None = None,
    templates: Sequence[Template] = TEMPLATES,
    roundness: bool = True,
    decoys: str = DEFAULT_DECOYS,
) -> Iterator[tuple[dict, Problem]]:
    """:func:`iter_items` in plain digits, each item with the :class:`Problem` it was made from
    (its ``params``: what the story was drawn from; what a perturbation twin re-tells)."""
    check_decoys(decoys)
    families, lay, shapes, stats = _start(seed, n, stats, templates)
    by_name = _by_name(templates)
    seen: set[int] = set()
    if decoys == GROUPS:
        yield from _iter_grouped(seed, n, families, lay, stats, by_name, templates, seen)
        _check_counts(stats, n, templates)
        return
    for ind, c in enumerate(lay.order):
        template, k = lay.locate(c)
        slot, rank = divmod(lay.cell[c], N_OPTIONS)
        item, key, problem = _item(
            families, shapes, seed, ind, template, k, slot, rank, seen, stats, by_name, roundness=roundness
        )
        _count(stats, seen, key, template, slot, rank, by_name)
        yield item, problem
    _check_counts(stats, n, templates)


def _iter_grouped(seed, n, families, lay, stats, by_name, templates, seen) -> Iterator[tuple[dict, Problem]]:
    """The role-balanced build's items (:mod:`.grouped_build`), each checked and counted."""
    from synthprobe.benchmarks.deeparithmark.grouped_build import GroupBuildError, iter_grouped

    try:
        for item, problem, m in iter_grouped(seed, n, families, templates, lay.order):
            fault = _fault(problem, m.template, m.k, by_name)
            fault = fault or _item_fault(item, item["ind"], m.template, m.k, by_name)
            if fault is not None:
                raise BuildError(fault)
            stats.attempts[m.template] += 1
            _count(stats, seen, _ctx_key(problem.ctx), m.template, m.slot, m.position, by_name)
            yield item, problem
    except GroupBuildError as e:
        raise BuildError(str(e)) from None


def _by_name(templates: Sequence[Template]) -> Mapping[str, Template]:
    return TEMPLATE_BY_NAME if templates is TEMPLATES else {t.name: t for t in templates}


def _item(
    families: Mapping[str, Family],
    shapes: Mapping[str, Mapping[str, float]],
    seed: int,
    ind: int,
    template: str,
    k: int,
    slot: int,
    rank: int,
    seen: set[int],
    stats: BuildStats,
    by_name: Mapping[str, Template] = TEMPLATE_BY_NAME,
    start: int = 0,
    why: Counter | None = None,
    roundness: bool = True,
) -> tuple[dict, int, Problem]:
    """Item ``ind`` (``k`` of ``template``), checked, its context key and its problem (steps 4-6);
    ``roundness``: see :func:`iter_items`."""
    problem, rng, key, sets = draw(
        families[template], template, seed, k, rank, seen, stats, shapes, start=start, why=why, roundness=roundness
    )
    fault = _fault(problem, template, k, by_name)
    if fault is None:
        item = make_item(problem, sets, template=template, ind=ind, slot=slot, rank=rank, rng=rng)
        fault = _item_fault(item, ind, template, k, by_name, roundness=roundness)
    if fault is not None:
        raise BuildError(fault)
    return item, key, problem


def _fault(problem: Problem, template: str, k: int, by_name: Mapping[str, Template] = TEMPLATE_BY_NAME) -> str | None:
    row = by_name[template]
    if (problem.family, problem.topic, problem.depth) != (template, row.topic, row.depth):
        return (
            f"template {template!r}, item {k}: the family returned a problem for "
            f"{problem.family!r}, topic {problem.topic!r}, depth {problem.depth}"
        )
    return None


def _item_fault(
    item: dict,
    ind: int,
    template: str,
    k: int,
    by_name: Mapping[str, Template] = TEMPLATE_BY_NAME,
    *,
    roundness: bool = True,
) -> str | None:
    # the release's call stays the plain one (a control build alone passes roundness=False)
    if not roundness:
        faults = item_faults(item, ind, by_name, roundness=False)
    else:
        faults = item_faults(item, ind) if by_name is TEMPLATE_BY_NAME else item_faults(item, ind, by_name)
    if faults:
        rule, msg = faults[0]
        return f"item {ind} (template {template!r}, #{k}) breaks the rule '{ITEM_RULES[rule]}': {msg}"
    return None


def _count(
    stats: BuildStats,
    seen: set[int],
    key: int,
    template: str,
    slot: int,
    rank: int,
    by_name: Mapping[str, Template] = TEMPLATE_BY_NAME,
) -> None:
    seen.add(key)
    stats.n += 1
    stats.slots[slot] += 1
    stats.ranks[rank] += 1
    stats.grid[slot, rank, by_name[template].depth] += 1
    stats.templates[template] += 1


# ---------------------------------------------------------------------------------------
# Parallel build: workers draw chunks of items as if no context repeated; the parent takes
# the chunks in file order, keeps the context set and re-draws (serially, from the next
# attempt, with the same RNG stream) any item whose context repeats an earlier one — so the
# bytes are those of the serial build.
# ---------------------------------------------------------------------------------------

#: Items per task sent to a worker process.
CHUNK = 250

#: Smallest build that ``workers=None`` (the default) spreads over processes: below it the
#: pool's start-up costs more than it saves.
PARALLEL_MIN_ITEMS = 20_000


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_workers(n: int) -> int:
    """Worker processes for an ``n``-item build when none are asked for: one per available
    CPU from :data:`PARALLEL_MIN_ITEMS` items, else 1 (this process)."""
    return available_cpus() if n >= PARALLEL_MIN_ITEMS else 1


_WORKER: dict = {}


def _worker_init(templates: Sequence[Template], sources: Sequence) -> None:
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and cleans up
    parent = os.getppid()

    def orphaned() -> None:  # a parent killed outright (SIGKILL/SIGTERM) takes its workers along
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=orphaned, daemon=True).start()
    if sources:
        from synthprobe.benchmarks.deeparithmark.plugins import load_sources

        load_sources(sources)
    _WORKER["families"] = load_families(templates)
    _WORKER["by_name"] = _by_name(templates)
    _WORKER["shapes"] = load_table()


def _worker_chunk(seed: int, jobs: list[tuple[int, str, int, int, int]]) -> tuple[list[tuple], float]:
    """For each ``(ind, template, k, slot, rank)``: ``(line, key, attempt, why, off, failed)``
    as the serial build would make it if no earlier item had the same context; ``key`` is
    None when the draw itself failed, ``failed`` is True when the item broke a rule (the
    parent re-runs such items serially to raise the serial build's error). Returns those
    and the CPU seconds the chunk took in this process."""
    cpu0 = time.process_time()
    families, shapes, by_name = _WORKER["families"], _WORKER["shapes"], _WORKER["by_name"]
    out = []
    for ind, template, k, slot, rank in jobs:
        why: Counter = Counter()
        try:
            problem, rng, key, sets, attempt, off = _first_draw(
                families[template], template, seed, k, rank, frozenset(), shapes, 0, why
            )
        except BuildError:
            out.append((None, None, 0, None, 0, True))
            continue
        fault = _fault(problem, template, k, by_name)
        line = None
        if fault is None:
            item = make_item(problem, sets, template=template, ind=ind, slot=slot, rank=rank, rng=rng)
            fault = _item_fault(item, ind, template, k, by_name)
            line = dumps_item(item) + "\n"
        out.append((line, key, attempt, dict(why), off, fault is not None))
    return out, time.process_time() - cpu0


def iter_lines_parallel(
    seed: int,
    n: int,
    workers: int,
    *,
    stats: BuildStats | None = None,
    templates: Sequence[Template] = TEMPLATES,
    sources: Sequence = (),
) -> Iterator[str]:
    """The JSONL lines of :func:`iter_items` (with their newline), drawn by ``workers``
    processes; the same bytes, the same checks and the same errors. ``sources``: where the
    workers load the families from outside the package (:func:`.plugins.load_sources`)."""
    from concurrent.futures import ProcessPoolExecutor

    families, lay, shapes, stats = _start(seed, n, stats, templates)
    by_name = _by_name(templates)
    seen: set[int] = set()

    def chunks() -> Iterator[list[tuple[int, str, int, int, int]]]:
        for lo in range(0, n, CHUNK):
            jobs = []
            for ind in range(lo, min(n, lo + CHUNK)):
                c = lay.order[ind]
                template, k = lay.locate(c)
                slot, rank = divmod(lay.cell[c], N_OPTIONS)
                jobs.append((ind, template, k, slot, rank))
            yield jobs

    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(templates, tuple(sources)))
    try:
        todo = chunks()
        window = [(jobs, pool.submit(_worker_chunk, seed, jobs)) for jobs in itertools.islice(todo, 4 * workers)]
        while window:
            jobs, fut = window.pop(0)
            results, cpu = fut.result()
            stats.worker_cpu_s += cpu
            nxt = next(todo, None)
            if nxt is not None:
                window.append((nxt, pool.submit(_worker_chunk, seed, nxt)))
            for (ind, template, k, slot, rank), res in zip(jobs, results):
                line, key, attempt, why, off, failed = res
                if key is None or failed or key in seen:
                    stats.redrawn += key is not None and key in seen
                    # As the serial loop: a draw that failed or broke a rule raises there, a
                    # repeated context goes on from this attempt (counted as a discard).
                    item, key, _problem = _item(
                        families,
                        shapes,
                        seed,
                        ind,
                        template,
                        k,
                        slot,
                        rank,
                        seen,
                        stats,
                        by_name,
                        start=attempt if key is not None else 0,
                        why=Counter(why) if key is not None else None,
                    )
                    line = dumps_item(item) + "\n"
                else:
                    stats.attempts[template] += attempt + 1
                    stats.discarded.update(why)
                    if off:
                        stats.off_length[template] += 1
                _count(stats, seen, key, template, slot, rank, by_name)
                yield line
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    _check_counts(stats, n, templates)


def _check_counts(stats: BuildStats, n: int, templates: Sequence[Template] = TEMPLATES) -> None:
    plan = balance_plan(n, templates)
    comp = composition(n, templates)
    got = {t.name: stats.templates[t.name] for t in templates}
    if got != comp:
        raise BuildError(f"composition {got} differs from the plan {comp}")
    for d in plan.grid:
        for s in range(N_OPTIONS):
            for r in range(N_OPTIONS):
                if stats.grid[s, r, d] != plan.grid[d][s][r]:
                    raise BuildError(
                        f"cell slot {s} × rank {r} × depth {d} holds "
                        f"{stats.grid[s, r, d]} items; the plan says {plan.grid[d][s][r]}"
                    )


@dataclass
class BuildResult:
    path: Path
    n: int
    seed: int
    sha256: str
    seconds: float
    stats: BuildStats
    workers: int = 1
    cpu_s: float = 0.0  # CPU seconds of this process plus those of its workers

    @property
    def items_per_s(self) -> float:
        return self.n / self.seconds if self.seconds > 0 else float("inf")

    @property
    def cpu_us_per_item(self) -> float:
        """CPU time per item in microseconds: less sensitive to a loaded machine than wall time."""
        return 1e6 * self.cpu_s / self.n


def _progress(iterable, total: int, progress: bool | None, desc: str):
    from tqdm import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=" items",
        disable=None if progress is None else not progress,
        dynamic_ncols=True,
        mininterval=0.5,
    )


def build(
    out: str | Path,
    *,
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    progress: bool | None = None,
    workers: int | None = None,
    number_format: str = PLAIN,
    templates: Sequence[Template] = TEMPLATES,
    sources: Sequence = (),
    table: dict | None = None,
    decoys: str = DEFAULT_DECOYS,
) -> BuildResult:
    """Write the ``n``-item file for ``seed`` to ``out`` atomically; return its SHA-256.

    ``progress``: ``True``/``False`` force the tqdm bar on/off; ``None`` shows it on a terminal.
    ``workers``: processes drawing items (1: in this process; 0: one per available CPU;
    ``None``: :func:`default_workers`); any number gives the same bytes (a ``groups`` build always
    runs in this process, and its result says 1 worker). ``number_format``: how
    numbers are written (:func:`format_item`). ``templates``: the table to draw from (default
    the release's), with ``sources`` the outside family modules the workers load
    (:mod:`.plugins`); ``table``: the families table (:func:`.plugins.describe`) to write beside
    the file with its digest, before the file itself is renamed into place. ``decoys``: how decoys
    are chosen (:data:`DECOY_MODES`).
    """
    check_decoys(decoys)
    check_number_format(number_format)
    if decoys == GROUPS:  # a role-balanced build draws once per item, in this process: no pool
        workers = 1
    elif workers is None:
        workers = default_workers(n)
    elif workers == 0:
        workers = available_cpus()
    out = Path(out)
    stats = BuildStats()
    digest = hashlib.sha256()
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    with atomic_open(out, "wb") as fh:
        if workers == 1:
            lines = (
                dumps_item(item) + "\n"
                for item in iter_items(
                    seed, n, stats=stats, number_format=number_format, templates=templates, decoys=decoys
                )
            )
        else:
            lines = iter_lines_parallel(seed, n, workers, stats=stats, templates=templates, sources=sources)
            if number_format != PLAIN:
                by_name = _by_name(templates)
                lines = (dumps_item(format_item(json.loads(line), number_format, by_name)) + "\n" for line in lines)
        for text in _progress(lines, n, progress, "deeparithmark build"):
            line = text.encode("utf-8")
            digest.update(line)
            fh.write(line)
        if table is not None:
            from synthprobe.benchmarks.deeparithmark.plugins import table_path
            from synthprobe.io.write import atomic_write_json

            atomic_write_json(table_path(out), {**table, "data": out.name, "sha256": digest.hexdigest()})
    return BuildResult(
        path=out,
        n=n,
        seed=seed,
        sha256=digest.hexdigest(),
        seconds=time.perf_counter() - t0,
        stats=stats,
        workers=workers,
        cpu_s=time.process_time() - cpu0 + stats.worker_cpu_s,
    )


def render_bytes(
    seed: int = RELEASE_SEED, n: int = RELEASE_SIZE, number_format: str = PLAIN, decoys: str = DEFAULT_DECOYS
) -> bytes:
    """The whole file in memory (for comparisons and tests; use :func:`build` for large N)."""
    items = iter_items(seed, n, number_format=number_format, decoys=decoys)
    return "".join(dumps_item(item) + "\n" for item in items).encode("utf-8")
