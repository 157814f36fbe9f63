"""The twins in the item viewer (:mod:`synthprobe.report.viewer`, ``items.html``): each saved
pair of ``results.twins.items`` (``synthprobe probe twins --save-items``) gives the page the
original and the twin as two items, each with the model's pick, and the twin's answer names its
original (``"tw": {"of": original's key, "k": kind, "src": the named mistake picked}``), so the
page shows every twin beside its original: both prompts, the options, the picks, right or wrong,
and which mistake the twin's pick was.

Prompts and options are read from the data files at report time, as for Deep Arithmark's own
runs (:mod:`synthprobe.benchmarks.deeparithmark.report.items`): the originals' file and each
kind's twin file, matched by the SHA-256 the block pins (``originals.sha256``, ``files.<kind>``;
a block without ``files`` names them through its manifest, ``manifest.path``/``sha256``). A file
is looked for among ``synthprobe report --data``, at its recorded path, and at that path taken
from the results file's folder and its parent. One that is missing or differs is not used: the
pairs are shown with their picks but no prompt, and the page says why.

One run per model entry and protocol (``"<model> · twins, <protocol>"``), so each protocol is
its own column of picks. An item's key is Deep Arithmark's, ``<12 hex digits of its file's
SHA-256>:<id>``, so an original also scored by ``score deeparithmark`` is one item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.report.viewer import Answer, Run, run_name
from synthprobe.results import Results

BLOCK = "twins"
BENCHMARK = "deeparithmark"


@dataclass
class TwinsRun(Run):
    """One model's saved pairs under one protocol."""

    protocol: str = ""
    #: (recorded path, SHA-256) of the originals' file
    originals: tuple[str, str] = ("", "")
    #: kind → (recorded path, SHA-256) of its twin file ("" path: not recorded)
    files: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: (recorded path, SHA-256) of the build's manifest
    manifest: tuple[str, str] = ("", "")

    def _candidates(self, path: str, data_files: Sequence[Path]) -> list[Path]:
        out = list(data_files)
        if path:
            p = Path(path)
            out.append(p)
            if not p.is_absolute():
                here = Path(self.source).resolve().parent
                out += [here / p, here.parent / p]
            if self.manifest[0]:
                out.append(_resolve(self.manifest[0], self.source).parent / p.name)
        return out

    def _find(self, path: str, sha: str, data_files: Sequence[Path], hashes: dict) -> Path | None:
        from synthprobe.io.read import sha256_file

        for p in self._candidates(path, data_files):
            key = p.resolve() if p.exists() else p
            if key not in hashes:
                hashes[key] = sha256_file(p) if p.is_file() else None
            if sha and hashes[key] == sha:
                return p
        return None

    def _kind_files(self, data_files: Sequence[Path], hashes: dict) -> dict[str, tuple[str, str]]:
        """The twin files the block names, else those its manifest names (when it is found)."""
        if self.files:
            return self.files
        path, sha = self.manifest
        found = self._find(path, sha, data_files, hashes) if path else None
        if found is None:
            return {}
        doc = json.loads(found.read_text(encoding="utf-8"))
        kinds = doc.get("kinds") if isinstance(doc, dict) else None
        return {
            k: (str(found.parent / str(v.get("file", ""))), str(v.get("sha256", "")))
            for k, v in (kinds or {}).items()
            if isinstance(v, dict)
        }

    def _table(self, path: str, sha: str, what: str, data_files, shared, notes) -> dict | None:
        tables = shared.setdefault("twins texts", {})
        if sha not in tables:
            found = self._find(path, sha, data_files, shared.setdefault("deeparithmark hashes", {}))
            tables[sha] = _texts(found) if found is not None else None
            if found is None:
                notes.append(
                    f"Prompts and options of the {what} are not shown for {self.model}: the data file "
                    f"{path or '(not recorded)'} with SHA-256 {sha[:12] or '?'}… was not found (give it to "
                    "`synthprobe report --data FILE`)."
                )
        return tables[sha]

    def answers(self, data_files: Sequence[Path], shared: dict) -> tuple[list[Answer], list[str]]:
        notes: list[str] = []
        hashes = shared.setdefault("deeparithmark hashes", {})
        files = self._kind_files(data_files, hashes)
        orig_table = self._table(*self.originals, "originals", data_files, shared, notes)
        out: list[Answer] = []
        seen: set[str] = set()
        for rec in self.records:
            here = f"{self.where}.items[{rec['_index']}]"
            kind = rec["kind"]
            o_key, o_item = self._item(orig_table, self.originals[1], rec["twin_of"], rec, "original", here)
            path, sha = files.get(kind, ("", ""))
            t_table = self._table(path, sha, f"{kind} twins", data_files, shared, notes) if sha else None
            if not sha and f"no file {kind}" not in seen:
                seen.add(f"no file {kind}")
                notes.append(
                    f"Prompts and options of the {kind} twins are not shown for {self.model}: the results "
                    "file names no twin file for that kind (nor a manifest that was found)."
                )
            t_key, t_item = self._item(t_table, sha, rec["id"], rec, "twin", here)
            if o_key not in seen:
                seen.add(o_key)
                out.append((o_key, o_item, self._row(rec["original"])))
            row = self._row(rec["twin"])
            row["tw"] = {"of": o_key, "k": kind, "src": rec["twin"].get("pick_source")}
            out.append((t_key, t_item, row))
        return out, list(dict.fromkeys(notes))

    def _item(self, table: dict | None, sha: str, source_id: str, rec: dict, side: str, here: str):
        text = table.get(source_id) if table is not None else None
        if table is not None and text is None:
            raise InputError(
                f"item {source_id!r} is not in the data file the document names for the {side}s",
                path=self.source,
                field=f"{here}.{'twin_of' if side == 'original' else 'id'}",
            )
        ind = text["ind"] if text else rec[side].get("ind", source_id)
        key = f"{(sha or 'nofile')[:12]}:{ind}"
        md = text["metadata"] if text else {}
        item = {
            "key": key,
            "id": source_id,
            "depth": md.get("depth", rec.get("depth") if side == "original" else None),
            "template": md.get("template", rec.get("family")),
            "topic": md.get("topic"),
            "label": text["label"] if text else None,
            "prompt": text["prompt"] if text else None,
            "endings": text["endings"] if text else None,
            "mistakes": md.get("option_sources"),
            "values": md.get("option_values"),
        }
        return key, item

    def _row(self, side: dict) -> dict[str, Any]:
        pick = side.get("pick")
        row: dict[str, Any] = {"p": -1 if pick is None else pick, "ok": int(bool(side["correct"])), "pr": self.protocol}
        if side.get("text") is not None:
            row["gen"] = side["text"]
        return row


def _resolve(path: str, source: str) -> Path:
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return Path(source).resolve().parent / p


def _texts(path: Path) -> dict[str, dict[str, Any]]:
    """source_id → the item's prompt, endings, label, metadata and its id in the file."""
    from synthprobe.formats.arithmark3 import load_arithmark3

    return {
        str(it.raw.get("source_id", it.id)): {
            "ind": it.id,
            "prompt": it.ctx,
            "endings": list(it.endings),
            "label": it.label,
            "metadata": it.metadata,
        }
        for it in load_arithmark3(path)
    }


def runs_of(doc: Results) -> list[TwinsRun]:
    """The twins runs with saved pairs in one results file: one per model entry and protocol (the
    block's fields checked by :func:`..read.parse`, which the report runs first)."""
    from synthprobe.benchmarks.deeparithmark.twins.report.read import parse

    parse(doc)  # located errors for a malformed block, before anything reads it
    out: list[TwinsRun] = []
    for e, block in doc.blocks(BLOCK):
        items = block.data.get("items")
        if not items:
            continue
        data = block.data
        files = {
            k: (str(v.get("path") or ""), str(v.get("sha256") or ""))
            for k, v in (data.get("files") or {}).items()
            if isinstance(v, dict)
        }
        manifest = data.get("manifest") or {}
        by_protocol: dict[str, list[dict]] = {}
        for i, rec in enumerate(items):
            by_protocol.setdefault(rec["protocol"], []).append({**rec, "_index": i})
        for protocol, recs in by_protocol.items():
            out.append(
                TwinsRun(
                    benchmark=BENCHMARK,
                    model=f"{run_name(e)} · twins, {protocol}",
                    source=str(doc.path),
                    spec=str(e.model.get("spec") or ""),
                    fingerprint=e.model.get("fingerprint"),
                    where=block.where,
                    records=recs,
                    protocol=protocol,
                    originals=(str(data["originals"].get("path") or ""), str(data["originals"]["sha256"])),
                    files=files,
                    manifest=(str(manifest.get("path") or ""), str(manifest.get("sha256") or "")),
                )
            )
    return out


def runs(docs: Sequence[Results]) -> list[Run]:
    """Deep Arithmark's ``viewer`` part: its own runs with saved predictions
    (:func:`synthprobe.benchmarks.deeparithmark.report.items.runs`), then the twins runs."""
    from synthprobe.benchmarks.deeparithmark.report.items import runs as deep_runs

    return [*deep_runs(docs), *(run for doc in docs for run in runs_of(doc))]


__all__ = ["TwinsRun", "runs", "runs_of"]
