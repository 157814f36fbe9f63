"""Build the twins of a Deep Arithmark file: one file per twin kind, item by item.

For every original item (re-drawn exactly as the builder drew it, :func:`..build.iter_drawn`)
whose family registers the kind, the transform is called with the original problem and the
stream ``item_rng("deeparithmark/twin/<kind>/<template>", seed, ind, attempt)``; a draw the
transform rejects, whose answer cannot sit at the original's rank, or (``irrelevant_clause``)
whose decoys cannot include the irrelevant-number value is discarded and ``attempt`` goes up.
The twin takes its original's slot and rank, and the decoys come from the same rules as the
builder's (same-length endings first). Every twin is checked against every per-item rule.

Twins of a role-balanced file (items with ``metadata.group``): the original's decoys are values of
its group, named by mistakes from the family's ``mistakes`` *and* ``extra_mistakes``, so the twin
draws from that same pool (:func:`..base.usable_mistakes` with ``extra=True``) and, among the sets
that put its answer at the original's rank, takes those that keep the most of its original's
decoys (by mistake name), then the fewest off-length endings (an original's decoy shown with its
original's value never counts: the original showed it). A ``reordered`` twin
whose mistakes all carry over so shows its original's four values, and the twins of a group's
items stay a group as far as their kind allows. The twin keeps its original's ``metadata.group``,
so the audit's classifier folds a group's twins together, as it does their originals (trained on
three twins of a group it would learn the group's values as decoys and avoid the fourth's key).

An original none of whose first :data:`MAX_TWIN_ATTEMPTS` draws serves has no twin of that kind:
it is counted (:attr:`TwinStats.no_usable`, per kind and family, in the manifest and the
command's output) and the build goes on. A transform that breaks the kind's contract is a family
bug and fails the build.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import (
    IRRELEVANT,
    TWIN_DEPTH_STEP,
    TWIN_KINDS,
    TWINS,
    GenerationError,
    NoTwin,
    Problem,
    usable_mistakes,
)
from synthprobe.benchmarks.deeparithmark.build import (
    SAME_LENGTH_ATTEMPTS,
    BuildError,
    BuildStats,
    _by_name,
    iter_drawn,
)
from synthprobe.benchmarks.deeparithmark.checks import CORRECT, GROUP_KEY, ITEM_RULES, item_faults, twin_source_id
from synthprobe.benchmarks.deeparithmark.composition import (
    DEFAULT_DECOYS,
    N_OPTIONS,
    RELEASE_SEED,
    RELEASE_SIZE,
    TEMPLATES,
    Template,
)
from synthprobe.benchmarks.deeparithmark.item import DecoySet, decoy_sets, item_json
from synthprobe.benchmarks.deeparithmark.twins.check import MANIFEST_FORMAT, MANIFEST_VERSION, check_twin_items
from synthprobe.seeding import ItemStreams

#: Draws of one twin tried before the original is counted as having no usable twin of that kind.
MAX_TWIN_ATTEMPTS = 500


def supported(template: str, kind: str) -> bool:
    """Whether family ``template`` registers twin ``kind``."""
    return (template, kind) in TWINS


@dataclass
class TwinStats:
    """What a twin build did, per kind: twins written, originals without that twin, discards."""

    written: Counter = field(default_factory=Counter)  # kind -> twins
    # (kind, family) -> originals skipped: the family has no such twin, or the transform says
    # this original has none (:func:`..base.no_twin`)
    unsupported: Counter = field(default_factory=Counter)
    # (kind, family) -> originals none of whose MAX_TWIN_ATTEMPTS draws served
    no_usable: Counter = field(default_factory=Counter)
    # (kind, reason) -> draws of those originals, by why each was discarded
    no_usable_why: Counter = field(default_factory=Counter)
    attempts: Counter = field(default_factory=Counter)  # kind -> draws
    discarded: Counter = field(default_factory=Counter)  # (kind, reason) -> draws


def _check_twin(kind: str, original: Problem, tw: Problem) -> str | None:
    """What is wrong with ``tw`` as a ``kind`` twin of ``original`` (``None``: nothing)."""
    depth = original.depth + TWIN_DEPTH_STEP.get(kind, 0)
    if (tw.family, tw.topic, tw.depth) != (original.family, original.topic, depth):
        return (
            f"returned family {tw.family!r}, topic {tw.topic!r}, depth {tw.depth}; a {kind} twin of "
            f"{original.family!r} is family {original.family!r}, topic {original.topic!r}, depth {depth}"
        )
    if kind in ("irrelevant_clause", "reordered") and tw.answer != original.answer:
        return f"changed the answer from {original.answer} to {tw.answer}; a {kind} twin keeps it"
    if kind == "irrelevant_clause" and IRRELEVANT not in tw.mistakes:
        return f"has no mistake named {IRRELEVANT!r}"
    if tw.ctx == original.ctx:
        return "returned the original's prompt unchanged"
    return None


def keeping_sets(
    problem: Problem, rank: int, usable: Mapping[str, int], keep: Mapping[str, int], *, required: str | None = None
) -> tuple[int, list[DecoySet]]:
    """The decoy triples of ``usable`` that put the answer at ``rank`` (holding the mistake
    ``required`` where given) and keep the most of the mistakes named in ``keep`` (a role-balanced
    original's decoys, name -> the value it showed); among those, the ones with the fewest endings
    off the answer's length, where a kept decoy showing its original's value never counts (the
    original showed it). Returns ``(that number, the sets)``, the sets in
    :func:`..item.decoy_sets`'s order; no set: ``(N_OPTIONS, [])``."""
    answer, render = problem.answer, problem.render
    width = len(render(answer))
    below = [(name, v) for name, v in usable.items() if v < answer]
    above = [(name, v) for name, v in usable.items() if v > answer]
    off = {name: keep.get(name) != v and len(render(v)) != width for name, v in usable.items()}
    best: tuple[int, int] | None = None
    out: list[DecoySet] = []
    for lo in itertools.combinations(below, rank):
        for hi in itertools.combinations(above, N_OPTIONS - 1 - rank):
            chosen = lo + hi
            if required is not None and all(name != required for name, _ in chosen):
                continue
            score = (-sum(name in keep for name, _ in chosen), sum(off[name] for name, _ in chosen))
            if best is None or score < best:
                best, out = score, [chosen]
            elif score == best:
                out.append(chosen)
    return (N_OPTIONS, []) if best is None else (best[1], out)


class NoUsableTwin(Exception):
    """None of an original's :data:`MAX_TWIN_ATTEMPTS` draws of a twin kind served (counted,
    not a failed build)."""

    def __init__(self, message: str, why: Counter):
        super().__init__(message)
        self.why = why


def draw_twin(
    kind: str, original: Problem, item: dict, seed: int, stats: TwinStats
) -> tuple[Problem, random.Random, list] | None:
    """The first usable ``kind`` twin of ``original`` (the problem of ``item``): ``(twin, rng,
    decoy sets)``; ``None`` when the transform says this original has none
    (:func:`..base.no_twin`). Raises :class:`NoUsableTwin` when no draw serves and
    :class:`BuildError` naming the family when the transform breaks the kind's contract."""
    make = TWINS[original.family, kind]
    md = item["metadata"]
    rank = md["answer_rank"]
    grouped = GROUP_KEY in md  # a role-balanced original: its decoys may be extra mistakes
    slot = int(item["label"])
    keep = {name: v for i, (name, v) in enumerate(zip(md["option_sources"], md["option_values"])) if i != slot}
    streams = ItemStreams(f"deeparithmark/twin/{kind}/{original.family}", seed, item["ind"])
    why: Counter = Counter()
    for attempt in range(MAX_TWIN_ATTEMPTS):
        rng = streams.rng(attempt)
        stats.attempts[kind] += 1
        try:
            tw = make(original, rng)
        except NoTwin:
            return None
        except GenerationError:
            why["the transform rejected the draw"] += 1
            continue
        fault = _check_twin(kind, original, tw)
        if fault is not None:
            raise BuildError(f"family {original.family!r}: its {kind} twin of item {item['ind']} {fault}")
        usable = usable_mistakes(tw, extra=grouped)
        required = IRRELEVANT if kind == "irrelevant_clause" else None
        if kind == "irrelevant_clause":
            value = tw.mistakes[IRRELEVANT]
            if usable.get(IRRELEVANT) != value or list(tw.mistakes.values()).count(value) != 1:
                why["the irrelevant-number value cannot be a decoy of its own"] += 1
                continue
        if grouped:
            off, sets = keeping_sets(tw, rank, usable, keep, required=required)
        else:
            off, sets = decoy_sets(tw, rank, usable, required=required)
        if not sets:
            why[f"mistakes cannot put the answer at rank {rank}"] += 1
            continue
        if off and attempt < SAME_LENGTH_ATTEMPTS:
            why[f"no same-length decoys for rank {rank}"] += 1
            continue
        for reason, count in why.items():
            stats.discarded[kind, reason] += count
        return tw, rng, sets
    reasons = ", ".join(f"{v} × {k}" for k, v in why.most_common())
    raise NoUsableTwin(
        f"family {original.family!r}: no usable {kind} twin of item {item['ind']} in "
        f"{MAX_TWIN_ATTEMPTS} draws ({reasons})",
        why,
    )


def place_options(tw: Problem, item: dict, sets: list[DecoySet], rng: random.Random) -> list[tuple[str, int]]:
    """The twin's options in slot order: the decoy set that keeps most of the original's
    mistakes (by name; ties: the twin's stream chooses), each kept mistake in the slot it held in
    the original, the answer in the original's slot and any new decoy in a freed slot. So a
    ``reordered`` twin whose mistakes all carry over shows the same options in the same slots, and
    an ``irrelevant_clause`` twin differs from its original by the prompt and one decoy."""
    md = item["metadata"]
    slot = int(item["label"])
    original = {name: i for i, name in enumerate(md["option_sources"]) if i != slot}
    best = max(sum(name in original for name, _ in s) for s in sets)
    chosen = rng.choice([s for s in sets if sum(name in original for name, _ in s) == best])
    options: list[tuple[str, int] | None] = [None] * len(md["option_sources"])
    options[slot] = (CORRECT, tw.answer)
    new = []
    for name, value in chosen:
        if name in original:
            options[original[name]] = (name, value)
        else:
            new.append((name, value))
    rng.shuffle(new)
    free = iter(i for i, o in enumerate(options) if o is None)
    for option in new:
        options[next(free)] = option
    return options  # type: ignore[return-value]


def iter_twins(
    kinds: Sequence[str] = tuple(TWIN_KINDS),
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    *,
    templates: Sequence[Template] = TEMPLATES,
    stats: TwinStats | None = None,
    decoys: str = DEFAULT_DECOYS,
) -> Iterator[tuple[dict, dict[str, dict]]]:
    """Each original item of the ``n``-item file for ``seed`` (built with decoy mode ``decoys``),
    in file order, with its twins by kind (only the kinds its family registers and that have a
    usable draw: see :class:`TwinStats`). Twins are numbered per kind in file order, so ``ind``
    is the twin's position in its kind's file. Raises :class:`BuildError` on a faulty twin
    (nothing is yielded past it)."""
    unknown = [k for k in kinds if k not in TWIN_KINDS]
    if unknown:
        raise ValueError(f"unknown twin kind {unknown[0]!r}; expected one of {', '.join(TWIN_KINDS)}")
    stats = stats if stats is not None else TwinStats()
    by_name = _by_name(templates)
    position: Counter = Counter()
    for item, problem in iter_drawn(seed, n, stats=BuildStats(), templates=templates, decoys=decoys):
        template = item["metadata"]["template"]
        twins: dict[str, dict] = {}
        for kind in kinds:
            if not supported(template, kind):
                stats.unsupported[kind, template] += 1
                continue
            try:
                drawn = draw_twin(kind, problem, item, seed, stats)
            except NoUsableTwin as exc:  # counted; the original goes without this twin
                stats.no_usable[kind, template] += 1
                for reason, count in exc.why.items():
                    stats.no_usable_why[kind, reason] += count
                continue
            if drawn is None:  # the transform says this original has no such twin
                stats.unsupported[kind, template] += 1
                continue
            tw, rng, sets = drawn
            ind = position[kind]
            slot, rank = int(item["label"]), item["metadata"]["answer_rank"]
            options = place_options(tw, item, sets, rng)
            out = item_json(tw, options, template=template, ind=ind, slot=slot, rank=rank)
            out["source_id"] = twin_source_id(template, tw.depth, ind, kind)
            group = {GROUP_KEY: item["metadata"][GROUP_KEY]} if GROUP_KEY in item["metadata"] else {}
            out["metadata"] = {**out["metadata"], **group, "twin_of": item["source_id"], "twin_kind": kind}
            faults = item_faults(out, ind, by_name)
            if faults:
                rule, msg = faults[0]
                raise BuildError(
                    f"the {kind} twin of item {item['ind']} (family {template!r}) breaks the rule "
                    f"'{ITEM_RULES[rule]}': {msg}"
                )
            position[kind] += 1
            stats.written[kind] += 1
            twins[kind] = out
        yield item, twins


def twin_file_items(
    kind: str,
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    *,
    templates: Sequence[Template] = TEMPLATES,
    decoys: str = DEFAULT_DECOYS,
) -> list[dict]:
    """The items of one kind's twin file, in order (for tests and small builds)."""
    drawn = iter_twins((kind,), seed, n, templates=templates, decoys=decoys)
    return [twins[kind] for _item, twins in drawn if kind in twins]


def kinds_of(families: Mapping[str, object]) -> dict[str, list[str]]:
    """Twin kind → the families (of ``families``) that register it."""
    return {kind: [f for f in families if supported(f, kind)] for kind in TWIN_KINDS}


# ---------------------------------------------------------------------------------------
# Twin files: ``synthprobe build twins``
# ---------------------------------------------------------------------------------------


def stem_of(originals: str | Path) -> str:
    """The originals' file name without ``.jsonl`` (``deeparithmark-1``)."""
    name = Path(originals).name
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def twin_file_name(stem: str, kind: str) -> str:
    return f"{stem}.twins-{kind}.jsonl"


def manifest_name(stem: str) -> str:
    return f"{stem}.twins.json"


class OriginalsDiffer(ValueError):
    """The originals' file is not the build the twins are drawn from (bad input: exit 2)."""


@dataclass
class TwinBuildResult:
    """What :func:`build_twins` wrote."""

    out: Path
    manifest: Path
    files: dict[str, Path]
    doc: dict
    stats: TwinStats
    checks: dict  # kind -> check.FileCheck
    seconds: float


def _compare_line(fh, want: str, lineno: int, seed: int, n: int) -> None:
    have = fh.readline()
    if have != want.encode("utf-8"):
        what = "ends" if not have else "differs from the build"
        raise OriginalsDiffer(
            f"line {lineno} {what} for seed {seed}, n {n:,}: twins are drawn from the build itself, "
            "so the file must be byte-identical to it (rebuild it with 'synthprobe build deeparithmark', "
            "or name the seed with --seed)"
        )


def _nearest_dir(path: Path) -> Path:
    p = path.resolve()
    while not p.exists():
        p = p.parent
    return p


def _trained_audit(
    originals: list[dict], twins: Mapping[str, list[dict]], seed: int, templates, decoys: str, number_format: str
) -> dict:
    """The trained adversaries on each kind's twins and on the originals, in brief (the manifest's
    ``trained_audit``): per set its status (``fails`` when a stratum is flagged), accuracies and
    worst stratum."""
    from synthprobe.benchmarks.deeparithmark import trained_audit as ta

    sets = {"originals": originals, **{kind: items for kind, items in twins.items() if items}}
    report = ta.run_on_items(sets, seed=seed, templates=templates, decoys=decoys, number_format=number_format)
    return {
        "budget": report["budget"],
        "decoys": report["decoys"],
        "adversaries": list(report["adversaries"]),
        "screen_alpha": report["screen_alpha"],
        "note": report["note"],
        "sets": {label: ta.summary(report, label) for label in sets},
    }


def build_twins(
    originals: str | Path,
    out: str | Path,
    *,
    kinds: Sequence[str],
    seed: int = RELEASE_SEED,
    n: int = RELEASE_SIZE,
    templates: Sequence[Template] = TEMPLATES,
    number_format: str = "plain",
    decoys: str = DEFAULT_DECOYS,
    shown_path: str | None = None,
    progress: bool | None = None,
    overwrite: bool = False,
    trained: bool = True,
) -> TwinBuildResult:
    """Write the twins of ``kinds`` of the ``n``-item file for ``seed`` and decoy mode ``decoys``
    (``originals``, which must hold exactly that build's bytes) into the folder ``out``: one JSONL file per kind and the
    manifest, all or nothing (each file goes to a temporary name beside its place and all are
    renamed at the end). Every twin is checked (:func:`.check.check_twin_items`; a fault is a
    :class:`BuildError`) and each kind is compared with its originals (:mod:`.controls`). With
    ``trained``, the trained choices-only adversaries (:func:`..trained_audit.run_on_items`, fitted
    on fresh builds of the same families) are scored on each kind's twins and on the originals;
    the manifest's ``trained_audit`` holds each set's brief (:func:`..trained_audit.summary`).

    An original with no usable twin of a kind is counted in the manifest (``no_usable_twin``, per
    family), not a failure. Raises :class:`OriginalsDiffer` when the file is not that build,
    :class:`BuildError` when a twin breaks a rule; nothing is written then."""
    import hashlib
    import os
    import tempfile
    import time

    from synthprobe.benchmarks.deeparithmark.build import _progress, dumps_item, format_item
    from synthprobe.benchmarks.deeparithmark.twins.controls import Tally, controls
    from synthprobe.io.read import sha256_file
    from synthprobe.io.write import dumps_json

    t0 = time.perf_counter()
    originals, out = Path(originals), Path(out)
    stem = stem_of(originals)
    names = {k: twin_file_name(stem, k) for k in kinds}
    mname = manifest_name(stem)
    by_name = _by_name(templates)
    stats = TwinStats()
    tallies = {k: Tally() for k in kinds}
    kept_originals: list[dict] = []  # the originals, for the per-file check
    twin_items: dict[str, list[dict]] = {k: [] for k in kinds}
    digests = {k: hashlib.sha256() for k in kinds}
    home = out if out.is_dir() else _nearest_dir(out)
    temps: dict[str, str] = {}
    handles = {}
    try:
        for key in [*kinds, mname]:
            fd, tmp = tempfile.mkstemp(prefix=f".{names.get(key, key)}.", suffix=".tmp", dir=home)
            temps[key] = tmp
            if key != mname:
                handles[key] = os.fdopen(fd, "wb")
            else:
                os.close(fd)
        with open(originals, "rb") as src:
            it = iter_twins(kinds, seed, n, templates=templates, stats=stats, decoys=decoys)
            for lineno, (item, twins) in enumerate(_progress(it, n, progress, "twins build"), start=1):
                shown = format_item(item, number_format, by_name)
                _compare_line(src, dumps_item(shown) + "\n", lineno, seed, n)
                kept_originals.append(shown)
                for kind, tw in twins.items():
                    tw = format_item(tw, number_format, by_name)
                    line = (dumps_item(tw) + "\n").encode("utf-8")
                    handles[kind].write(line)
                    digests[kind].update(line)
                    twin_items[kind].append(tw)
                    tallies[kind].add(shown, tw)
            if src.read(1):
                raise OriginalsDiffer(f"has lines after the {n:,} items of the build for seed {seed}")
        checks = {}
        for kind in kinds:
            fc = check_twin_items(kept_originals, twin_items[kind], kind, by_name)
            if fc.faults:
                raise BuildError(f"the {kind} twins fail their check: {fc.faults[0]}")
            checks[kind] = fc
        families = list(dict.fromkeys(t.name for t in templates))
        trained_doc = (
            _trained_audit(kept_originals, twin_items, seed, templates, decoys, number_format) if trained else None
        )
        doc = {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "originals": {
                "path": shown_path if shown_path is not None else os.path.relpath(originals.resolve(), out.resolve()),
                "sha256": sha256_file(originals),
                "seed": seed,
                "n": n,
                "decoys": decoys,
            },
            "kinds": {
                kind: {
                    "file": names[kind],
                    "sha256": digests[kind].hexdigest(),
                    "n": stats.written[kind],
                    "unsupported": {f: stats.unsupported[kind, f] for f in families if stats.unsupported[kind, f]},
                    "no_usable_twin": {f: stats.no_usable[kind, f] for f in families if stats.no_usable[kind, f]},
                    "audit": checks[kind].audit_json(),
                }
                for kind in kinds
            },
            "controls": controls(tallies),
        }
        if trained_doc is not None:
            doc["trained_audit"] = trained_doc
        for fh in handles.values():
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
        with open(temps[mname], "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps_json(doc))
        out.mkdir(parents=True, exist_ok=True)
        mask = os.umask(0)
        os.umask(mask)
        finals = {**{k: out / names[k] for k in kinds}, mname: out / mname}
        for key, tmp in temps.items():
            os.chmod(tmp, 0o666 & ~mask)
            os.replace(tmp, finals[key])
        temps.clear()
    finally:
        for fh in handles.values():
            fh.close()
        for tmp in temps.values():
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
    return TwinBuildResult(
        out=out,
        manifest=out / mname,
        files={k: out / names[k] for k in kinds},
        doc=doc,
        stats=stats,
        checks=checks,
        seconds=time.perf_counter() - t0,
    )
