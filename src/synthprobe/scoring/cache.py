"""Per-item score cache, so an interrupted scoring run resumes where it stopped.

Each finished item is appended as one JSON line to
``$SYNTHPROBE_CACHE/scores/<key>.jsonl`` (default ``~/.cache/synthprobe``), where ``key`` is the
SHA-256 of everything that changes a score: the model fingerprint, the data file's SHA-256 and
the scoring settings (dtype, max_context, bos, scorer, ...). Lines are flushed and fsync'd once
per batch, so a run killed at any point (SIGINT or SIGKILL) loses at most the batch in flight.
The cache is exact: each item is on disk once, whatever the moment of an interrupt. A record
counts only when its line is complete (ends in a newline), so a torn last line (the kill landed
mid-write) is never read back and is cut off before the next append; :meth:`ScoreCache.append`
skips items already on disk, and when an interrupt left it unsure what reached the disk it
reads the file again before writing. Any other damage is an :class:`InputError` naming the
cache file and line.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.backends.spec import cache_root
from synthprobe.errors import InputError
from synthprobe.io.read import loads_json

#: Bump when the line layout changes; old files are then simply not found.
FORMAT = 1


def scores_dir() -> Path:
    return cache_root() / "scores"


def models_dir() -> Path:
    return cache_root() / "models"


def cacheable(backend) -> bool:
    """Whether ``backend``'s scores may be cached: entries are keyed by the model's weights
    fingerprint, so an engine that gives none (an empty ``fingerprint``, e.g. a server whose weights
    cannot be read) is never cached — two of its models would otherwise share entries."""
    return bool(getattr(backend, "fingerprint", ""))


def cache_key(model_fingerprint: Mapping[str, Any] | str, data_sha256: str, settings: Mapping[str, Any]) -> str:
    """SHA-256 over a canonical JSON of the three parts (key order does not matter)."""
    if not isinstance(data_sha256, str) or len(data_sha256) != 64:
        raise ValueError(f"data_sha256 must be a 64-character hex digest, got {data_sha256!r}")
    doc = {"format": FORMAT, "model": model_fingerprint, "data": data_sha256, "settings": dict(settings)}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class ScoreCache:
    """Append-only per-item records for one (model, data, settings) key.

    ``load()`` returns the finished items by id; ``append(records)`` writes one batch and
    fsyncs it. A record is any JSON object; its ``id`` field (a string) names the item.
    ``append`` writes only items not yet on disk, so calling it again with the same records
    (e.g. from a Ctrl-C handler after an interrupted save) never writes an item twice.
    """

    key: str
    folder: Path | None = None

    def __post_init__(self) -> None:
        self.folder = Path(self.folder) if self.folder is not None else scores_dir()
        self.path = self.folder / f"{self.key}.jsonl"
        #: Ids known to be on disk in complete lines; None: not read yet, or an append was cut
        #: short (an exception inside it), so the file must be read again before writing.
        self._on_disk: set[str] | None = None

    def _read(self) -> dict[str, dict]:
        done: dict[str, dict] = {}
        if not self.path.exists():
            return done
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise InputError(f"score cache cannot be read ({exc.strerror})", path=self.path) from None
        lines = raw.split(b"\n")
        # The part after the last newline is a write cut short (or nothing): never a record,
        # even when it happens to parse, since the next append cuts it off.
        for lineno, chunk in enumerate(lines[:-1], start=1):
            if not chunk.strip():
                continue
            try:
                obj = loads_json(chunk.decode("utf-8"), path=self.path, line=lineno, allow_nonfinite=True)
            except (UnicodeDecodeError, InputError) as exc:
                why = f" ({exc.detail})" if isinstance(exc, InputError) else ""
                raise InputError(
                    f"damaged score cache line{why}; run 'synthprobe cache clear --scores' or pass --no-cache",
                    path=self.path,
                    line=lineno,
                    field=getattr(exc, "field", None),
                ) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                raise InputError(
                    "expected an object with a string 'id'; run 'synthprobe cache clear --scores' or pass --no-cache",
                    path=self.path,
                    line=lineno,
                    field="id",
                )
            done[obj["id"]] = obj
        return done

    def load(self) -> dict[str, dict]:
        """The records on disk by id (complete lines only)."""
        done = self._read()
        self._on_disk = set(done)
        return done

    def _drop_torn_tail(self) -> None:
        """After a kill mid-write the file may end in part of a record: cut it off."""
        if not self.path.exists():
            return
        with open(self.path, "r+b") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return
            fh.seek(0)
            data = fh.read()
            fh.truncate(data.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())

    def append(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Append the records not yet on disk as one batch and fsync it; returns how many were
        written. Each id is written at most once, also across calls and interrupts."""
        lines: dict[str, str] = {}
        for rec in records:
            if not isinstance(rec.get("id"), str):
                raise ValueError(f"cache records need a string 'id', got {rec.get('id')!r}")
            lines[rec["id"]] = json.dumps(rec, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
        if not lines:
            return 0
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._drop_torn_tail()
            if self._on_disk is None:  # first write without load(), or the last one was cut short
                self._on_disk = set(self._read())
            on_disk = self._on_disk
            new = {i: line for i, line in lines.items() if i not in on_disk}
            if not new:
                return 0
            # Until the write is known to be complete, the next append must look at the file:
            # an interrupt may land before, during or after the bytes reach it.
            self._on_disk = None
            with open(self.path, "ab") as fh:
                fh.write("".join(new.values()).encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            on_disk.update(new)
            self._on_disk = on_disk
        except OSError as exc:
            raise InputError(
                f"score cache cannot be written ({exc.strerror}); pass --no-cache or set "
                "SYNTHPROBE_CACHE to a writable folder",
                path=self.path,
            ) from None
        return len(new)


def from_cache_note(cached: int, total: int) -> str:
    """What the progress display says when the score cache supplied items: "1,000 of 1,000
    from the cache", or "400 of 1,000 from the cache; scoring the other 600"."""
    note = f"{cached:,} of {total:,} from the cache"
    return note if cached >= total else f"{note}; scoring the other {total - cached:,}"


def _du(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return len(files), sum(p.stat().st_size for p in files)


def info() -> dict[str, Any]:
    """Where the cache is, and how many files and bytes each part holds."""
    out: dict[str, Any] = {"root": str(cache_root())}
    for name, folder in (("scores", scores_dir()), ("models", models_dir())):
        n, size = _du(folder)
        out[name] = {"path": str(folder), "files": n, "bytes": size}
    return out


def clear(*, scores: bool, models: bool) -> list[Path]:
    """Remove the chosen parts; returns the folders removed."""
    removed = []
    for wanted, folder in ((scores, scores_dir()), (models, models_dir())):
        if wanted and folder.exists():
            shutil.rmtree(folder)
            removed.append(folder)
    return removed
