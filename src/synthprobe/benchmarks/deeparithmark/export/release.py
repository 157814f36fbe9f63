"""Load a Deep Arithmark release file for export, with located errors.

The exports need more than the ArithMark 3.0 contract (:mod:`synthprobe.formats.arithmark3`):
the dataset card is computed from ``metadata`` (depth, template, option values and sources,
answer rank) and ``ctx``. :func:`load_release` applies the contract, then checks that every
row carries those fields with the right types, so a malformed file fails before anything is
written.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.items import MCItem

#: Where ``synthprobe build deeparithmark`` writes the release (relative to the repo root).
DEFAULT_RELEASE = RELEASE_FILE

#: metadata fields the exports read, with the Python type each must have.
_METADATA_FIELDS: dict[str, tuple[type, str]] = {
    "depth": (int, "an integer (number of dependent operations)"),
    "template": (str, "the family name, a string"),
    "topic": (str, "the topic label, a string"),
    "option_values": (list, "a list of integers, one per ending"),
    "option_sources": (list, "a list of strings, one per ending"),
    "answer_rank": (int, "an integer, the answer's rank among the option values"),
}


@dataclass(frozen=True)
class Release:
    """A validated release: its path, SHA-256, raw bytes and items (file order)."""

    path: Path
    sha256: str
    data: bytes
    items: tuple[MCItem, ...]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The JSON objects exactly as they appear in the file."""
        return [item.raw for item in self.items]

    @property
    def name(self) -> str:
        return self.path.name


def _check_metadata(item: MCItem, path: Path) -> None:
    md = item.raw.get("metadata")
    if not isinstance(md, dict):
        raise InputError(
            f"expected an object with {', '.join(_METADATA_FIELDS)}, got {md!r}",
            path=path,
            line=item.line,
            field="metadata",
        )
    for key, (typ, what) in _METADATA_FIELDS.items():
        value = md.get(key)
        if key not in md:
            raise InputError(f"missing; expected {what}", path=path, line=item.line, field=f"metadata.{key}")
        if not isinstance(value, typ) or isinstance(value, bool):
            raise InputError(f"expected {what}, got {value!r}", path=path, line=item.line, field=f"metadata.{key}")
    n = len(item.endings)
    values, sources = md["option_values"], md["option_sources"]
    for key, seq, typ in (("option_values", values, int), ("option_sources", sources, str)):
        if len(seq) != n or not all(isinstance(v, typ) and not isinstance(v, bool) for v in seq):
            raise InputError(
                f"expected {n} {typ.__name__} entries (one per ending), got {seq!r}",
                path=path,
                line=item.line,
                field=f"metadata.{key}",
            )
    if sources[item.label] != "correct":
        raise InputError(
            f"entry {item.label} (the label) must be 'correct', got {sources[item.label]!r}",
            path=path,
            line=item.line,
            field="metadata.option_sources",
        )
    if not 0 <= md["answer_rank"] < n:
        raise InputError(
            f"expected 0 <= answer_rank < {n}, got {md['answer_rank']}",
            path=path,
            line=item.line,
            field="metadata.answer_rank",
        )


def load_release(path: str | Path) -> Release:
    """Read and validate ``path``; raises :class:`InputError` naming file, line and field."""
    path = Path(path)
    items = load_arithmark3(path)
    for item in items:
        _check_metadata(item, path)
    data = path.read_bytes()
    return Release(path=path, sha256=hashlib.sha256(data).hexdigest(), data=data, items=tuple(items))
