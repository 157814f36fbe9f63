"""Check a twin file against its originals: every twin a valid item and a faithful twin.

:func:`pair_faults` holds the kind-specific invariants of one twin and its original;
:func:`check_twin_items` checks a whole twin file (every per-item rule of :mod:`..checks`, each
``twin_of`` among the originals, the originals' order, one twin per original, the pair
invariants) and runs the shortcut audit (:mod:`..audit`) on its items; :func:`check_build` does
that for every kind a manifest lists, after checking each file's SHA-256 against it.
``synthprobe build twins`` runs the per-file check on what it is about to write (a fault is a
failed build, nothing written) and ``synthprobe build twins --check DIR`` re-runs all of it on
a written build.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.audit import StrategyScore, audit, audit_item, tolerance
from synthprobe.benchmarks.deeparithmark.base import IRRELEVANT, TWIN_DEPTH_STEP
from synthprobe.benchmarks.deeparithmark.checks import GROUP_KEY, ITEM_RULES, item_faults
from synthprobe.benchmarks.deeparithmark.composition import TEMPLATE_BY_NAME, Template

#: What a twin build's manifest declares itself as (``build twins`` writes it; this module and
#: ``score twins`` read it).
MANIFEST_FORMAT = "synthprobe/deeparithmark-twins"
MANIFEST_VERSION = 1

#: Faults shown per failing file (the count is always given).
SHOWN = 5

#: The kinds that keep the answer and the solution steps.
SAME_ANSWER = ("irrelevant_clause", "reordered")


def pair_faults(original: dict, twin: dict, kind: str) -> list[str]:
    """What breaks the ``kind`` contract between ``original`` and its ``twin`` (both item dicts)."""
    o, t = original["metadata"], twin["metadata"]
    out = []
    if t.get("twin_of") != original["source_id"]:
        out.append(f"twin_of {t.get('twin_of')!r}, not its original's source_id {original['source_id']!r}")
    if t.get("twin_kind") != kind:
        out.append(f"twin_kind {t.get('twin_kind')!r} in the {kind} file")
    if (t["template"], t["topic"]) != (o["template"], o["topic"]):
        out.append(
            f"family {t['template']!r} / topic {t['topic']!r}; its original is {o['template']!r} / {o['topic']!r}"
        )
    if twin["label"] != original["label"]:
        out.append(f"correct slot {twin['label']}; its original's is {original['label']}")
    if t["answer_rank"] != o["answer_rank"]:
        out.append(f"answer rank {t['answer_rank']}; its original's is {o['answer_rank']}")
    if t.get(GROUP_KEY) != o.get(GROUP_KEY):  # the audit folds a group's twins together
        out.append(f"group {t.get(GROUP_KEY)!r}; its original's is {o.get(GROUP_KEY)!r}")
    if twin["ctx"] == original["ctx"]:
        out.append("the prompt is its original's, unchanged")
    depth = o["depth"] + TWIN_DEPTH_STEP.get(kind, 0)
    if t["depth"] != depth:
        out.append(f"depth {t['depth']}; a {kind} twin of a depth-{o['depth']} item is depth {depth}")
    if kind in SAME_ANSWER:
        if t["answer"] != o["answer"]:
            out.append(f"answer {t['answer']!r}; a {kind} twin keeps its original's {o['answer']!r}")
        if t["solution_steps"] != o["solution_steps"]:
            out.append(f"solution steps differ from its original's; a {kind} twin keeps them")
    if kind == "one_step_more":
        steps, before = t["solution_steps"], o["solution_steps"]
        if steps[: len(before)] != before or len(steps) != len(before) + 1:
            out.append("its solution steps are not its original's plus one line")
    if kind == "irrelevant_clause" and IRRELEVANT not in t["option_sources"]:
        out.append(f"no option is the decoy {IRRELEVANT!r}")
    return out


@dataclass
class FileCheck:
    """The check of one twin file. The shortcut audit runs on the twins and on their originals
    (the same items before the perturbation): a strategy passes within the audit's tolerance of
    chance, or within :attr:`tolerance_vs_originals` of its score on the originals — a small twin
    file (one family's twins) strays from chance as its originals do, and what a twin must not do
    is open a shortcut its originals lack. That second band is the 95 % band of the *difference*
    of two chance-level scores on ``n`` items each (√2 × the tolerance): the twins' and the
    originals' scores are two measurements, each with its own noise (the classifier of a
    ``one_step_more`` or ``unit_change`` file reads other numbers than its originals', so its
    score is close to independent of theirs)."""

    kind: str
    n: int
    faults: list[str] = field(default_factory=list)
    audit: list[StrategyScore] = field(default_factory=list)
    original_audit: list[StrategyScore] = field(default_factory=list)

    @property
    def tolerance(self) -> float:
        return tolerance(self.n) if self.n else 0.0

    @property
    def tolerance_vs_originals(self) -> float:
        """The band of a twins-minus-originals difference: √2 × :attr:`tolerance`."""
        return math.sqrt(2.0) * self.tolerance

    def _passes(self, row: StrategyScore) -> bool:
        if row.within(self.tolerance):
            return True
        base = {r.name: r.percent for r in self.original_audit}.get(row.name)
        return base is not None and abs(row.percent - base) <= self.tolerance_vs_originals

    @property
    def audit_ok(self) -> bool:
        return all(self._passes(r) for r in self.audit)

    @property
    def ok(self) -> bool:
        return not self.faults and self.audit_ok

    def audit_json(self) -> dict[str, Any]:
        base = {r.name: r.percent for r in self.original_audit}
        return {
            "n": self.n,
            "tolerance": round(self.tolerance, 2),
            "tolerance_vs_originals": round(self.tolerance_vs_originals, 2),
            "strategies": {
                r.name: {"twins": round(r.percent, 2), "originals": round(base[r.name], 2), "ok": self._passes(r)}
                for r in self.audit
            },
            "ok": self.audit_ok,
        }

    def summary(self) -> str:
        head = f"{self.kind}: {self.n:,} twins, {len(self.faults)} fault{'s' if len(self.faults) != 1 else ''}"
        base = {r.name: r.percent for r in self.original_audit}
        if self.audit:
            worst = max(self.audit, key=lambda r: abs(r.percent - 25.0))
            head += (
                f"; shortcut audit {'PASS' if self.audit_ok else 'FAIL'} (furthest from chance: "
                f"{worst.name} {worst.percent:.2f} %, originals {base[worst.name]:.2f} %; 25 ± {self.tolerance:.1f}, "
                f"or originals ± {self.tolerance_vs_originals:.1f})"
            )
        lines = [head]
        lines += [f"  {f}" for f in self.faults[:SHOWN]]
        if len(self.faults) > SHOWN:
            lines.append(f"  ... and {len(self.faults) - SHOWN} more")
        lines += [
            f"  shortcut {r.name}: {r.percent:.2f} % on the twins, {base[r.name]:.2f} % on their originals: "
            f"outside 25 ± {self.tolerance:.1f} and {r.percent - base[r.name]:+.2f} points from the originals "
            f"(± {self.tolerance_vs_originals:.1f} allowed)"
            for r in self.audit
            if not self._passes(r)
        ]
        return "\n".join(lines)


def check_twin_items(
    originals: Sequence[dict],
    twins: Sequence[dict],
    kind: str,
    by_name: Mapping[str, Template] = TEMPLATE_BY_NAME,
    *,
    classifier: bool = True,
) -> FileCheck:
    """Check the items of one kind's twin file (in file order) against the originals' items."""
    res = FileCheck(kind, len(twins))
    by_source = {it["source_id"]: (i, it) for i, it in enumerate(originals)}
    seen: set[str] = set()
    last = -1
    for i, tw in enumerate(twins):
        where = f"twin {i}"
        faults = item_faults(tw, i, by_name)
        if faults:
            rule, msg = faults[0]
            res.faults.append(f"{where}: breaks the rule '{ITEM_RULES[rule]}': {msg}")
            continue
        of = tw["metadata"].get("twin_of")
        if of not in by_source:
            res.faults.append(f"{where}: twin_of {of!r} is not an item of the originals")
            continue
        if of in seen:
            res.faults.append(f"{where}: a second twin of {of!r}")
        seen.add(of)
        pos, original = by_source[of]
        if pos <= last:
            res.faults.append(f"{where}: out of the originals' order (its original is item {pos})")
        last = max(last, pos)
        res.faults += [f"{where} (of {of}): {msg}" for msg in pair_faults(original, tw, kind)]
    if twins and not res.faults:
        pairs = [(by_source[t["metadata"]["twin_of"]][1], t) for t in twins]
        res.audit = audit(
            [audit_item(t["endings"], int(t["label"]), t["metadata"]) for _o, t in pairs], classifier=classifier
        )
        res.original_audit = audit(
            [audit_item(o["endings"], int(o["label"]), o["metadata"]) for o, _t in pairs], classifier=classifier
        )
    return res


@dataclass
class BuildCheck:
    """``synthprobe build twins --check``: the manifest's files and each kind's file check."""

    manifest: Path
    files: list[str] = field(default_factory=list)  # digest faults
    kinds: list[FileCheck] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.files and all(k.ok for k in self.kinds)

    def table(self) -> str:
        lines = [f"Twin build {self.manifest}:"]
        lines += [f"  FAIL {f}" for f in self.files]
        for k in self.kinds:
            lines.append(("PASS " if k.ok else "FAIL ") + k.summary())
        lines.append("all checks pass" if self.ok else "some checks FAIL")
        return "\n".join(lines)


def _read_jsonl(path: Path) -> list[dict]:
    from synthprobe.io.read import read_jsonl

    return [obj for _lineno, obj in read_jsonl(path, allow_empty=True)]


def manifest_of(path: str | Path) -> Path:
    """The manifest a ``--check`` names: the file, or the one ``*.twins.json`` in a folder."""
    from synthprobe.errors import InputError

    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*.twins.json"))
        if len(found) != 1:
            raise InputError(
                f"expected one twins manifest (*.twins.json) in the folder, found {len(found)}; pass the file",
                path=p,
                field="--check",
            )
        return found[0]
    if not p.is_file():
        raise InputError("no such file or folder; expected a twin build's folder or its *.twins.json", path=p)
    return p


def _originals_path(manifest: Path, given: str) -> Path:
    """The originals' file a manifest names: relative to the manifest's folder, else as given."""
    p = Path(given)
    if p.is_absolute():
        return p
    beside = manifest.parent / p
    return beside if beside.exists() or not p.exists() else p


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest at ``path``, its shape checked (:class:`~synthprobe.errors.InputError`)."""
    from synthprobe.benchmarks.deeparithmark.base import TWIN_KINDS
    from synthprobe.errors import InputError
    from synthprobe.io.read import loads_json

    try:
        doc = loads_json(path.read_text(encoding="utf-8"), path=path)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot be read ({getattr(exc, 'strerror', None) or exc})", path=path) from None
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        raise InputError(f'expected a JSON object with "format": "{MANIFEST_FORMAT}"', path=path, field="format")
    if doc.get("version") != MANIFEST_VERSION:
        raise InputError(f"expected version {MANIFEST_VERSION}, got {doc.get('version')!r}", path=path, field="version")
    orig, kinds = doc.get("originals"), doc.get("kinds")
    if not isinstance(orig, dict) or not isinstance(orig.get("path"), str) or not isinstance(orig.get("sha256"), str):
        raise InputError("expected an object with path and sha256", path=path, field="originals")
    if not isinstance(kinds, dict):
        raise InputError("expected an object: twin kind -> its file", path=path, field="kinds")
    for kind, entry in kinds.items():
        if kind not in TWIN_KINDS:
            raise InputError(f"expected one of {', '.join(TWIN_KINDS)}, got {kind!r}", path=path, field="kinds")
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("file"), str)
            or not isinstance(entry.get("sha256"), str)
        ):
            raise InputError("expected an object with file and sha256", path=path, field=f"kinds.{kind}")
    return doc


def check_build(path: str | Path, *, classifier: bool = True) -> BuildCheck:
    """Check a written twin build (its folder or manifest): the originals' and every twin file's
    SHA-256 against the manifest, then every kind's file (:func:`check_twin_items`). A missing or
    unreadable file is :class:`~synthprobe.errors.InputError`; a digest that differs is a
    failed check (the items are checked all the same, to say what changed)."""
    from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES
    from synthprobe.benchmarks.deeparithmark.plugins import by_name as table_by_name
    from synthprobe.benchmarks.deeparithmark.plugins import read_table
    from synthprobe.errors import InputError
    from synthprobe.io.read import sha256_file

    mpath = manifest_of(path)
    doc = read_manifest(mpath)
    res = BuildCheck(mpath)
    opath = _originals_path(mpath, doc["originals"]["path"])
    if not opath.is_file():
        raise InputError(
            f"the originals' file the manifest names is missing: {opath}", path=mpath, field="originals.path"
        )
    if sha256_file(opath) != doc["originals"]["sha256"]:
        res.files.append(f"the originals' file {opath} differs from the one the twins were built from (SHA-256)")
    found = read_table(opath)
    by_name = table_by_name(TEMPLATES if found is None else found[0])
    originals = _read_jsonl(opath)
    for kind, entry in doc["kinds"].items():
        tpath = mpath.parent / entry["file"]
        if not tpath.is_file():
            raise InputError(f"the {kind} twin file the manifest names is missing: {tpath}", path=mpath)
        if sha256_file(tpath) != entry["sha256"]:
            res.files.append(f"{tpath.name} differs from the file the manifest lists (SHA-256)")
        res.kinds.append(check_twin_items(originals, _read_jsonl(tpath), kind, by_name, classifier=classifier))
    return res
