"""``synthprobe probe twins``: score a model on originals and their perturbation twins.

The input is the manifest ``synthprobe build twins`` writes (``DIR/<stem>.twins.json``): the
originals' file and each kind's twin file, with their SHA-256. Every file is checked against
the manifest before anything is scored, so a twin file is never scored beside originals other
than its own (:func:`load_twins`: one clear :class:`InputError`, nothing written).

The originals that have a twin of a chosen kind (the first ``--limit`` of them) and their
twins are scored as ``synthprobe score deeparithmark`` scores items, under every protocol
asked (``loglik``, ``letters``, ``free``; :func:`..scoring.workloads.score_dataset` and
:func:`..scoring.workloads.generate_dataset`, so the same engines, chat templates, answer reading,
score cache and resume). Each item's pick is the option chosen (``loglik``: the highest
per-token log-likelihood, ``acc_norm``; ``letters``/``free``: the option named or written, or
none); the pairs then go to :mod:`.metrics`.

The A/A check (``--aa SEED2``) pairs the same originals with the items of an independent build
of the same size from ``SEED2``, by position within (family, correct slot, answer rank), and
computes the same statistics: with nothing changed between the two, its McNemar test should
reject at no more than the stated rate.

The block (``results.twins`` of the one results document)::

    {"version": 1,
     "originals": {"path", "sha256", "n" (originals scored), "n_in_file", "seed"},
     "manifest": {"path", "sha256"},
     "files": {kind: {"path", "sha256", "n" (twins scored)}},
     "settings": {"protocols", "kinds", "limit", "pick", "ci", "test", "holm", "max_context", ...},
     "runs": [{"set", "protocol", "cached_items", "truncated", "seconds"}],
     "summary": {protocol: {kind: CELL + by_depth + by_family}},     (:mod:`.metrics`)
     "aa"?: {"seed", "n", "pairing", "summary": {protocol: {"aa": CELL + ...}}},
     "items"?: [{"id", "twin_of", "kind", "protocol", "family", "depth",
                 "original": {"ind", "pick", "correct", "text"},
                 "twin": {"ind", "pick", "correct", "pick_source", "text"}}]}   (--save-items)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS
from synthprobe.benchmarks.deeparithmark.layout import TWINS_VERSION
from synthprobe.benchmarks.deeparithmark.twins import metrics
from synthprobe.benchmarks.deeparithmark.twins.check import MANIFEST_FORMAT, MANIFEST_VERSION
from synthprobe.errors import InputError
from synthprobe.io.paths import slug
from synthprobe.io.read import sha256_file
from synthprobe.items import MCItem
from synthprobe.results import fmt_p, fmt_pct, results_document
from synthprobe.scoring.settings import RunSettings

#: the manifest versions this reader takes
MANIFEST_VERSIONS = (MANIFEST_VERSION,)
#: the kind name of the A/A pairs (originals against an independent build)
AA = "aa"
PROTOCOLS = ("loglik", "letters", "free")
PICK = {
    "loglik": "the option with the highest per-token log-likelihood (acc_norm; ties: lowest index)",
    "letters": "the option whose letter is read back (none: the answer names no option, counted wrong)",
    "free": "the option whose value is written (none: another value or nothing read, counted wrong)",
}


@dataclass(kw_only=True)
class TwinsConfig(RunSettings):
    """A ``probe twins`` run: the shared settings (:class:`RunSettings`) and the twins' own."""

    manifest: Path
    #: the twin kinds to score (None: every kind the manifest lists)
    kinds: tuple[str, ...] | None = None
    protocols: tuple[str, ...] = ("loglik",)
    #: ``--aa SEED2``: also pair the originals with an independent build from this seed
    aa: int | None = None
    cot: bool = False
    #: ``--bos`` / ``--no-bos``; None: what the model was trained with (:mod:`synthprobe.backends.bos`)
    bos: bool | None = None
    scorer: str = "onepass"


@dataclass
class Scored:
    """One set of items to score: the originals, one kind's twins, or the A/A partners."""

    name: str
    items: list[MCItem]
    info: dict[str, Any]


@dataclass
class TwinSet:
    manifest: dict[str, Any]
    originals: Scored
    twins: dict[str, Scored]
    #: twin kind → [(index into originals.items, index into twins[kind].items)]
    pairs: dict[str, list[tuple[int, int]]]
    n_in_file: int
    seed: int | None
    #: every item of the originals' file, in order (the A/A pairing reads their positions)
    all_originals: list[MCItem] = field(default_factory=list)


def default_output(model: str) -> Path:
    return Path("benchmarks") / f"twins_{slug(model)}.json"


def _digest(path: Path) -> str:
    return sha256_file(path)


def _read_manifest(path: Path) -> dict[str, Any]:
    from synthprobe.io.read import loads_json

    if path.is_dir():
        found = sorted(path.glob("*.twins.json"))
        if len(found) != 1:
            raise InputError(
                f"expected one twins manifest (*.twins.json) in the folder, found {len(found)}; pass the file",
                path=path,
                field="MANIFEST",
            )
        path = found[0]
    if not path.is_file():
        raise InputError(
            "file does not exist" if not path.exists() else "not a regular file", path=path, field="MANIFEST"
        )
    doc = loads_json(path.read_text(encoding="utf-8"))

    def need(obj: Any, key: str, typ, where: str):
        here = f"{where}.{key}" if where else key
        if not isinstance(obj, dict) or key not in obj:
            raise InputError(
                "missing; expected a twins manifest written by 'synthprobe build twins'", path=path, field=here
            )
        value = obj[key]
        if not isinstance(value, typ) or isinstance(value, bool):
            raise InputError(f"expected {getattr(typ, '__name__', typ)}, got {value!r}", path=path, field=here)
        return value

    if need(doc, "format", str, "") != MANIFEST_FORMAT:
        raise InputError(f"expected {MANIFEST_FORMAT!r}, got {doc['format']!r}", path=path, field="format")
    if need(doc, "version", int, "") not in MANIFEST_VERSIONS:
        raise InputError(f"expected one of {list(MANIFEST_VERSIONS)}, got {doc['version']}", path=path, field="version")
    orig = need(doc, "originals", dict, "")
    need(orig, "path", str, "originals")
    need(orig, "sha256", str, "originals")
    kinds = need(doc, "kinds", dict, "")
    for kind, entry in kinds.items():
        if kind not in TWIN_KINDS:
            raise InputError(f"expected one of {', '.join(TWIN_KINDS)}, got {kind!r}", path=path, field="kinds")
        need(entry, "file", str, f"kinds.{kind}")
        need(entry, "sha256", str, f"kinds.{kind}")
    return {"doc": doc, "path": path}


def _originals_path(manifest: Path, given: str) -> Path:
    """The originals' file: relative to the manifest's folder, else as given."""
    p = Path(given)
    if p.is_absolute():
        return p
    beside = manifest.parent / p
    return beside if beside.exists() or not p.exists() else p


def _check_file(path: Path, want: str, what: str, manifest: Path, where: str) -> str:
    if not path.is_file():
        raise InputError(
            f"{what} named by the manifest ({where}) is missing: {path}; a twin file is scored only "
            "beside the files it was built with (build them again with 'synthprobe build twins')",
            path=manifest,
            field=where,
        )
    got = _digest(path)
    if got != want:
        raise InputError(
            f"{what} {path} is not the file these twins were built from: its SHA-256 is {got[:12]}…, "
            f"the manifest says {want[:12]}… (build the twins again for this file with 'synthprobe build twins')",
            path=manifest,
            field=where,
        )
    return got


def _info(path: Path, sha: str, items: list[MCItem], n_file: int) -> dict[str, Any]:
    return {"path": str(path), "sha256": sha, "n_items_in_file": n_file, "n_items": len(items)}


def load_twins(config: TwinsConfig) -> TwinSet:
    """Read and check the manifest, the originals and the twin files; pick the originals to
    score (those with a twin of a chosen kind, the first ``limit``) and their twins. Any fault
    is one :class:`InputError`, raised before a model is touched."""
    from synthprobe.formats.arithmark3 import load_arithmark3

    _check_protocols(config)
    m = _read_manifest(Path(config.manifest))
    doc, mpath = m["doc"], m["path"]
    kinds = _chosen_kinds(config, list(doc["kinds"]), mpath)
    opath = _originals_path(mpath, doc["originals"]["path"])
    osha = _check_file(opath, doc["originals"]["sha256"], "the originals' file", mpath, "originals.path")
    originals = load_arithmark3(opath)
    by_source = {it.raw["source_id"]: i for i, it in enumerate(originals) if isinstance(it.raw.get("source_id"), str)}
    files = {kind: _twin_file(doc["kinds"][kind], kind, mpath, opath, by_source) for kind in kinds}
    has = sorted({by_source[it.metadata["twin_of"]] for _p, _s, items in files.values() for it in items})
    if not has:
        raise InputError("no original has a twin of the kinds chosen", path=mpath, field="--kinds")
    chosen = has[: config.limit] if config.limit is not None else has
    where = {i: k for k, i in enumerate(chosen)}
    orig_items = [originals[i] for i in chosen]
    twins: dict[str, Scored] = {}
    pairs: dict[str, list[tuple[int, int]]] = {}
    for kind, (tpath, tsha, items) in files.items():
        kept = [it for it in items if by_source[it.metadata["twin_of"]] in where]
        twins[kind] = Scored(kind, kept, _info(tpath, tsha, kept, len(items)))
        pairs[kind] = [(where[by_source[it.metadata["twin_of"]]], j) for j, it in enumerate(kept)]
    seed = doc["originals"].get("seed")
    return TwinSet(
        manifest={"path": str(mpath), "sha256": _digest(mpath)},
        originals=Scored("originals", orig_items, _info(opath, osha, orig_items, len(originals))),
        twins=twins,
        pairs=pairs,
        n_in_file=len(originals),
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        all_originals=originals,
    )


def _check_protocols(config: TwinsConfig) -> None:
    config.check_run()
    bad = [p for p in config.protocols if p not in PROTOCOLS]
    if bad or not config.protocols:
        raise InputError(
            f"expected one or more of {', '.join(PROTOCOLS)}, got {','.join(config.protocols)!r}", field="--protocol"
        )
    if config.cot and "loglik" in config.protocols:
        raise InputError(
            "--cot lets a model reason first; loglik generates nothing. Use letters or free", field="--cot"
        )


def _chosen_kinds(config: TwinsConfig, listed: list[str], mpath: Path) -> list[str]:
    """``--kinds`` (default: every kind the manifest lists), each a kind the manifest has."""
    kinds = list(config.kinds) if config.kinds else listed
    for kind in kinds:
        if kind not in TWIN_KINDS:
            raise InputError(f"expected one or more of {', '.join(TWIN_KINDS)}, got {kind!r}", field="--kinds")
        if kind not in listed:
            raise InputError(
                f"the manifest has no {kind} twins (it lists {', '.join(listed) or 'none'})",
                path=mpath,
                field="--kinds",
            )
    if not kinds:
        raise InputError("the manifest lists no twin kind", path=mpath, field="kinds")
    return kinds


def _twin_file(
    entry: dict, kind: str, mpath: Path, opath: Path, by_source: dict[str, int]
) -> tuple[Path, str, list[MCItem]]:
    """One kind's twin file, its SHA-256 checked against the manifest, each item a twin of that
    kind of an original in the originals' file."""
    from synthprobe.formats.arithmark3 import load_arithmark3

    tpath = mpath.parent / entry["file"]
    tsha = _check_file(tpath, entry["sha256"], f"the {kind} twin file", mpath, f"kinds.{kind}.file")
    items = load_arithmark3(tpath)
    for it in items:
        md = it.metadata
        if md.get("twin_kind") != kind:
            raise InputError(
                f"item {it.id} has twin_kind {md.get('twin_kind')!r}; a {kind} twin file holds {kind} twins",
                path=tpath,
                line=it.line,
                field="metadata.twin_kind",
            )
        if md.get("twin_of") not in by_source:
            raise InputError(
                f"item {it.id} is a twin of {md.get('twin_of')!r}, which is not among the originals ({opath})",
                path=tpath,
                line=it.line,
                field="metadata.twin_of",
            )
    return tpath, tsha, items


def aa_partners(ts: TwinSet, seed2: int) -> tuple[Scored, list[tuple[int, int]]]:
    """The A/A partners: an independent build of the originals' size from ``seed2`` (the
    release's families), each chosen original paired with the item at the same position among
    the items of its (family, correct slot, answer rank) in the other build."""
    from synthprobe.benchmarks.deeparithmark.build import render_bytes
    from synthprobe.formats.arithmark3 import item_from_record
    from synthprobe.io.read import loads_json

    if ts.seed is not None and seed2 == ts.seed:
        raise InputError(f"the originals were built from seed {seed2}; the A/A check needs another seed", field="--aa")
    data = render_bytes(seed2, ts.n_in_file)
    where = f"<build seed {seed2}, {ts.n_in_file} items>"
    other = [
        item_from_record(loads_json(line), path=where, line=k + 1)
        for k, line in enumerate(data.decode("utf-8").splitlines())
    ]

    def key(it: MCItem) -> tuple:
        return (it.metadata.get("template"), it.label, it.metadata.get("answer_rank"))

    slots: dict[tuple, list[int]] = {}
    for j, it in enumerate(other):
        slots.setdefault(key(it), []).append(j)
    # the position of each original among the originals of its key, in file order: over the
    # whole originals file (the chosen ones are a subset of it, in order)
    seen: dict[tuple, int] = {}
    position: dict[str, int] = {}
    for it in ts.all_originals:
        k = key(it)
        position[it.id] = seen.get(k, 0)
        seen[k] = position[it.id] + 1
    items, pairs = [], []
    for i, it in enumerate(ts.originals.items):
        cands = slots.get(key(it), [])
        pos = position[it.id]
        if pos < len(cands):
            pairs.append((i, len(items)))
            items.append(other[cands[pos]])
    if not pairs:
        raise InputError(
            f"no original has a partner in the seed-{seed2} build (the A/A check pairs by family, slot and "
            "rank in a build of the release's families)",
            field="--aa",
        )
    info = {
        "path": where,
        "sha256": hashlib.sha256(data).hexdigest(),
        "n_items_in_file": len(other),
        "n_items": len(items),
    }
    return Scored(AA, items, info), pairs


def _score_config(config: TwinsConfig):
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig

    return ScoreConfig(
        chat=config.chat,
        protocols=config.protocols,
        cot=config.cot,
        max_new_tokens=config.max_new_tokens,
        batch_size=config.batch_size,
        max_context=config.max_context,
        bos=config.bos,
        scorer=config.scorer,
        progress=config.progress,
        cache=config.cache,
    )


def score_set(backend, s: Scored, config: TwinsConfig, protocol: str) -> dict[str, Any]:
    """Score one set under one protocol as ``score deeparithmark`` does; its block, predictions
    included (the same cache entries as ``score deeparithmark`` for the same file and settings)."""
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset, generate_dataset, score_dataset

    ds = Dataset("deeparithmark", s.items, s.info)
    sc = _score_config(config)
    quiet = lambda line: None  # noqa: E731 - the progress lines say enough
    if protocol == "loglik":
        return score_dataset(backend, ds, sc, echo=quiet)
    return generate_dataset(backend, ds, sc, protocol, echo=quiet)


def outcome(rec: dict[str, Any], protocol: str, ind: str) -> dict[str, Any]:
    """One side of a pair from a scored record: the option picked (None: none), right or not,
    the named mistake picked and the generated text."""
    from synthprobe.scoring.records import record_correct

    pick = rec["pred_acc_norm"] if protocol == "loglik" else rec.get("pred")
    sources = rec.get("option_sources")
    return {
        "ind": ind,
        "pick": pick,
        "correct": record_correct(rec),
        "pick_source": sources[pick] if pick is not None and sources else None,
        "text": rec.get("raw") if protocol != "loglik" else None,
    }


def _pairs(
    kind: str, protocol: str, originals: list[dict], others: list[dict], ts_items, other_items, links
) -> list[dict[str, Any]]:
    out = []
    for i, j in links:
        orig, tw = ts_items[i], other_items[j]
        o = outcome(originals[i], protocol, orig.id)
        o.pop("pick_source")
        out.append(
            {
                "id": tw.raw.get("source_id", tw.id),
                "twin_of": orig.raw.get("source_id", orig.id),
                "kind": kind,
                "protocol": protocol,
                "family": orig.metadata.get("template"),
                "depth": orig.metadata.get("depth"),
                "original": o,
                "twin": outcome(others[j], protocol, tw.id),
            }
        )
    return out


def score_twins(backend, ts: TwinSet, config: TwinsConfig) -> dict[str, Any]:
    """Score the originals and every kind's twins (and the A/A partners) under every protocol;
    return the ``twins`` block."""
    sets: list[tuple[Scored, list[tuple[int, int]] | None]] = [(ts.originals, None)]
    sets += [(ts.twins[k], ts.pairs[k]) for k in ts.twins]
    aa = aa_partners(ts, config.aa) if config.aa is not None else None
    if aa is not None:
        sets.append(aa)
    runs, pairs, aa_pairs = [], [], []
    for protocol in config.protocols:
        records: dict[str, list[dict]] = {}
        for s, _links in sets:
            if not s.items:
                records[s.name] = []
                continue
            t0 = time.perf_counter()
            block = score_set(backend, s, config, protocol)
            records[s.name] = block["predictions"]
            runs.append(
                {
                    "set": s.name,
                    "protocol": protocol,
                    "items": len(s.items),
                    "cached_items": block["cached_items"],
                    "truncated": block.get("truncated", 0),
                    "seconds": round(time.perf_counter() - t0, 3),
                    # a generated answer's outcome (answered, unparsed, inconsistent, echo, cut off)
                    **({"outcomes": block["extraction"]["outcomes"]} if "extraction" in block else {}),
                }
            )
        orig = records["originals"]
        for s, links in sets[1:]:
            got = _pairs(s.name, protocol, orig, records[s.name], ts.originals.items, s.items, links)
            (aa_pairs if s.name == AA else pairs).extend(got)
    kinds = list(ts.twins)
    block: dict[str, Any] = {
        "version": TWINS_VERSION,
        "originals": {
            "path": ts.originals.info["path"],
            "sha256": ts.originals.info["sha256"],
            "n": len(ts.originals.items),
            "n_in_file": ts.n_in_file,
            "seed": ts.seed,
        },
        "manifest": ts.manifest,
        "files": {
            k: {"path": s.info["path"], "sha256": s.info["sha256"], "n": len(s.items)} for k, s in ts.twins.items()
        },
        "settings": {
            "protocols": list(config.protocols),
            "kinds": kinds,
            "limit": config.limit,
            "pick": {p: PICK[p] for p in config.protocols},
            "ci": metrics.CI_METHOD,
            "test": metrics.MCNEMAR_METHOD,
            "holm": metrics.HOLM_METHOD,
            "uptake": "irrelevant_clause: of the twin's picks that are decoys, the share that is the "
            "irrelevant-number decoy, against 1/3; one-sided exact binomial test",
            "depth": "by_depth groups pairs by the original's depth",
            "max_context": config.max_context,
            "max_new_tokens": config.max_new_tokens,
            "cot": config.cot,
            "bos": backend.bos,
            "scorer": config.scorer,
        },
        "runs": runs,
        "summary": metrics.summarise(pairs, config.protocols, kinds),
    }
    if aa is not None:
        summary = metrics.summarise(aa_pairs, config.protocols, [AA])
        for cells in summary.values():
            cells[AA].pop("p_holm", None)  # one comparison: nothing to adjust
        block["aa"] = {
            "seed": config.aa,
            "n": len(aa[1]),
            "pairing": "each original with the item at the same position among the items of its "
            "(family, correct slot, answer rank) in an independent build of the same size",
            "summary": summary,
        }
    if config.save_items:
        block["items"] = [{k: v for k, v in p.items()} for p in pairs]
    return block


def run_plan(backend, ts: TwinSet, config: TwinsConfig, *, models: int = 1):
    """The run's :class:`~synthprobe.plan.Plan`: one cell per protocol and set of items."""
    from synthprobe.plan import Cell, Plan, plural

    sets = [ts.originals, *ts.twins.values()]
    cells = [
        Cell(f"{s.name} · {p}", len(s.items), lambda s=s, p=p: score_set(backend, s, config, p))
        for p in config.protocols
        for s in sets
        if s.items
    ]
    n = sum(len(s.items) for s in sets)
    return Plan(
        cells,
        f"twins: {plural(len(ts.originals.items), 'original')} and {plural(n - len(ts.originals.items), 'twin')} "
        f"({', '.join(ts.twins)}) x {plural(len(config.protocols), 'protocol')} ({', '.join(config.protocols)})"
        f"{' + the A/A partners' if config.aa is not None else ''}, for {plural(models, 'model')}",
        models=models,
    )


def run(
    backend, ts: TwinSet, config: TwinsConfig, *, spec: str, load_s: float, command: str | None = None
) -> dict[str, Any]:
    """The results document for one model (``backend`` is closed by the caller)."""
    from synthprobe.scoring.settings import environment

    entry = {
        "model": {"spec": spec, **backend.describe()},
        "settings": {
            "batch_size": config.batch_size,
            "max_context": config.max_context,
            "limit": config.limit,
            "chat": config.chat.identity(backend),
            **environment(backend),
        },
        "load_s": round(load_s, 3),
        "results": {"twins": score_twins(backend, ts, config)},
    }
    datasets = {"twins": {k: ts.originals.info[k] for k in ("path", "sha256", "n_items_in_file", "n_items")}}
    return results_document(command=command or None, datasets=datasets, models=[entry])


def format_table(block: dict[str, Any], echo: Callable[[str], None] = print) -> None:
    """Per protocol, one line per kind: pairs, original and twin accuracy (%), the difference in
    points with its 95 % interval, McNemar p, Holm p and (irrelevant_clause) the uptake."""
    rows = [(p, k, c) for p, cells in block["summary"].items() for k, c in cells.items()]
    if "aa" in block:
        rows += [(p, f"A/A (seed {block['aa']['seed']})", cells[AA]) for p, cells in block["aa"]["summary"].items()]
    for protocol in block["summary"]:
        echo(f"accuracy ({protocol}): right picks over the pairs; the pick is {PICK[protocol]}")
    echo("| protocol | kind | pairs | original % | twin % | difference [95 % CI] | McNemar p | Holm p | uptake |")
    echo("|---|---|---:|---:|---:|---|---:|---:|---|")
    for protocol, kind, c in rows:
        diff = "—"
        if c["difference"] is not None:
            lo, hi = c["ci"]
            diff = f"{100 * c['difference']:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}]"
        up = c.get("uptake")
        uptake = "—"
        if up is not None and up["share"] is not None:
            share = fmt_pct(up["share"], 1)
            uptake = f"{up['irrelevant']}/{up['wrong_picks']} = {share} % vs 33.3 % (p {fmt_p(up['p'])})"
        holm = c.get("p_holm")
        echo(
            f"| {protocol} | {kind} | {c['n']} | {fmt_pct(c['original'], 1)} | {fmt_pct(c['twin'], 1)} | {diff} | "
            f"{fmt_p(c['p_mcnemar']) if c['p_mcnemar'] is not None else '—'} | "
            f"{fmt_p(holm) if holm is not None else '—'} | {uptake} |"
        )
    for line in metrics.answers_read(block["runs"]):
        echo(line)


__all__ = [
    "AA",
    "TwinSet",
    "TwinsConfig",
    "aa_partners",
    "default_output",
    "format_table",
    "load_twins",
    "outcome",
    "run",
    "run_plan",
    "score_twins",
]
