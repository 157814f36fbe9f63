"""Writing files: atomic writes (a file appears whole or not at all) and the output rules of every
command (no output replaces an input; an existing output only with ``--overwrite``; a default
output name that exists gets a new one)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same real path (symlinks resolved) or the same
    (device, inode) pair (hard links)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _path_pairs(paths) -> list[tuple[Path, str | None]]:
    """``[(path, field)]`` from paths or ``(path, field)`` pairs; ``None`` and ``'-'`` dropped."""
    out = []
    for entry in paths:
        path, field = entry if isinstance(entry, tuple) else (entry, None)
        if path is None or str(path) == "-":
            continue
        out.append((Path(path), field))
    return out


def check_not_input(outputs, inputs) -> None:
    """Refuse any output that resolves to an input (same path, a symlink or a hard link to it).

    ``outputs`` and ``inputs`` hold paths or ``(path, field)`` pairs. Call this before any work
    starts (before any model loads); raises :class:`InputError` (exit 2)."""
    ins = [(p, f) for p, f in _path_pairs(inputs) if os.path.lexists(p)]  # nothing there, nothing to lose
    for out, out_field in _path_pairs(outputs):
        for src, src_field in ins:
            if same_file(out, src):
                what = f"the input {src_field} {src}" if src_field else f"the input {src}"
                raise InputError(
                    f"is {what}; refusing to overwrite an input, choose another output path", path=out, field=out_field
                )


def check_outputs(outputs, inputs=(), *, overwrite: bool = False) -> None:
    """The output rules of every command, checked before anything runs.

    1. an output that resolves to an input is refused (:func:`check_not_input`), even with
       ``overwrite``;
    2. an output file that already exists is refused unless ``overwrite``.

    Default output names are made new with :func:`default_output` before calling this."""
    check_not_input(outputs, inputs)
    for out, field in _path_pairs(outputs):
        if not overwrite and os.path.lexists(out) and not out.is_dir():
            raise InputError(
                "already exists; pass --overwrite to replace it, or choose another path", path=out, field=field
            )
        check_writable(out, field, folder=out.is_dir())


def check_writable(path: str | Path, field: str | None = None, *, folder: bool = False) -> None:
    """Refuse, before any work, an output that cannot be written: a folder in its way that is a file,
    or a folder (the nearest that exists) where no file can be created — a read-only folder or disk.
    ``folder``: ``path`` is a folder the command writes into. Found by creating and removing a
    probe file there, which is what the write itself will do (permission bits alone do not say it:
    root ignores them, an immutable or read-only mount does not)."""
    path = Path(path)
    anc = path if folder else path.parent
    while not os.path.lexists(anc) and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"cannot be created: {anc} is not a directory", path=path, field=field)
    try:
        fd, probe = tempfile.mkstemp(prefix=".synthprobe-probe.", dir=anc)
    except OSError as exc:
        raise InputError(f"cannot be written: {anc} is not writable ({exc.strerror})", path=path, field=field) from None
    os.close(fd)
    os.unlink(probe)


def check_output_dir(
    folder: str | Path, names, inputs=(), *, overwrite: bool = False, field: str | None = "--out"
) -> None:
    """The output rules for a folder: refuse a folder that already holds any of ``names``
    (relative paths we would write) unless ``overwrite``, and any of them that is an input."""
    folder = Path(folder)
    paths = [folder / n for n in names]
    check_not_input([(p, field) for p in paths], inputs)
    check_writable(folder, field, folder=True)
    if overwrite:
        return
    held = [str(n) for n, p in zip(names, paths) if os.path.lexists(p)]
    if held:
        more = f" and {len(held) - 1} more of the files this command writes" if len(held) > 1 else ""
        raise InputError(
            f"already holds {held[0]}{more}; pass --overwrite to replace them, or choose another folder",
            path=folder,
            field=field,
        )


def default_output(path: str | Path, *, now: float | None = None) -> Path:
    """``path`` if nothing exists there, else a new name beside it with a timestamp suffix
    (``results_20260102T030405.json``, then ``..._2.json`` ...): a default output never
    replaces an existing file."""
    import time

    path = Path(path)
    if not os.path.lexists(path):
        return path
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
    base = path.with_name(f"{path.stem}_{stamp}{path.suffix}")
    candidate, k = base, 2
    while os.path.lexists(candidate):
        candidate = base.with_name(f"{base.stem}_{k}{base.suffix}")
        k += 1
    return candidate


def _unsupported_tmpfile(exc: OSError) -> bool:
    return exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOSYS, errno.EPERM)


def _open_unnamed(folder: Path) -> int | None:
    """An unnamed (O_TMPFILE) file in ``folder``, or ``None`` where the OS or file system has none."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if _unsupported_tmpfile(exc):
            return None
        raise


def _link_into_place(fd: int, path: Path) -> None:
    """Give the unnamed file ``fd`` a name beside ``path`` and rename it over ``path``.

    The link goes through ``linkat(..., AT_SYMLINK_FOLLOW)`` (a folder descriptor makes Python
    call ``linkat``; plain ``link`` would link the ``/proc`` symlink itself)."""
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        while True:
            tmp = f".{path.name}.{secrets.token_hex(6)}.tmp"
            try:
                os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=folder, follow_symlinks=True)
                break
            except FileExistsError:
                continue
        try:
            os.replace(tmp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8"):
    """Write to a temporary file in ``path``'s folder; put it at ``path`` only on success.

    On Linux the temporary file is unnamed (``O_TMPFILE``) and gets its name only at the end,
    so even a process killed with SIGKILL leaves nothing behind; elsewhere (or on a file system
    without ``O_TMPFILE``) it is a ``.name.XXXX.tmp`` file removed on any exception."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = _open_unnamed(path.parent)
        if fd is None:
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        # A parent that is a file, a read-only folder, a full disk: say where, not a traceback.
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is a file, not a folder" if blocker else (exc.strerror or str(exc))
        raise InputError(f"cannot be written ({why}); expected a path inside a writable folder", path=path) from None
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
            if tmp is None:
                _link_into_place(fh.fileno(), path)
        if tmp is not None:
            # mkstemp creates 0600; give the result the permissions a plain open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
            os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
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


# -- output folders (exports, reports) ------------------------------------------------------


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
    pairs) or, unless ``overwrite``, already exists (:func:`check_output_dir`).
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
