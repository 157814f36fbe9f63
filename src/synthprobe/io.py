"""File helpers: atomic writes and a strict JSONL reader."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

from synthprobe.errors import InputError

#: Longest line a JSONL reader accepts (bytes). Real items are < 4 KiB.
MAX_LINE_BYTES = 1 << 20


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8"):
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        # A parent that is a file, a read-only folder, a full disk: say where, not a traceback.
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(f"cannot be written ({why}); expected a path inside a writable folder",
                         path=path) from None
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates 0600; give the result the permissions a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)


def dumps_json(obj: Any) -> str:
    """Pretty, stable JSON for results files."""
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, dumps_json(obj))


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_jsonl(path: str | Path, *, allow_empty: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a UTF-8 JSONL file.

    A BOM is tolerated. Non-UTF-8 bytes, oversized lines, invalid JSON, a value that is
    not an object, or an empty file raise :class:`InputError` naming file and line.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", path=path)
    if not path.is_file():
        raise InputError("not a regular file", path=path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    seen = False
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if len(raw) > MAX_LINE_BYTES:
                raise InputError(f"line is {len(raw):,} bytes; at most {MAX_LINE_BYTES:,} expected",
                                 path=path, line=lineno)
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path, line=lineno) from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"invalid JSON ({exc.msg} at column {exc.colno})",
                                 path=path, line=lineno) from None
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {type(obj).__name__}",
                                 path=path, line=lineno)
            seen = True
            yield lineno, obj
    if not seen and not allow_empty:
        raise InputError("file is empty; expected one JSON object per line", path=path)
