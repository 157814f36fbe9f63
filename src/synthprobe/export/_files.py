"""Write an export folder: every file is computed first, then each is written atomically."""

from __future__ import annotations

import os
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io import atomic_write_bytes, check_output_dir


def check_out_dir(out: str | Path) -> Path:
    """``out`` must be a folder or not exist yet (its parent is created on write)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder; expected an output folder", path=out)
    parent = out.resolve().parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(f"cannot create the output folder: {probe} is not a folder", path=out)
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def readable(path: Path) -> None:
    """Give a freshly written file the usual mode (0o666 minus the umask): atomic writes go
    through a private temporary file (0o600), but exports and reports are meant to be shared."""
    os.chmod(path, 0o666 & ~_umask())


def write_tree(out: str | Path, files: dict[str, bytes], *, inputs=(), overwrite: bool = False) -> list[Path]:
    """Write ``files`` (relative path → bytes) under ``out``; returns the paths in key order.

    Call this only after every file's bytes exist, so bad input never leaves a half export.
    Nothing is written if one of the files is an input (``inputs``: paths or ``(path, field)``
    pairs) or, unless ``overwrite``, already exists (:func:`synthprobe.io.check_output_dir`).
    """
    out = Path(out)
    check_output_dir(out, list(files), inputs, overwrite=overwrite)
    written = []
    for rel, data in files.items():
        path = out / rel
        try:
            atomic_write_bytes(path, data)
            readable(path)
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror})", path=path) from None
        written.append(path)
    return written
