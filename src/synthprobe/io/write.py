"""File helpers: atomic writes, the output-path rules of every command, a strict JSON decoder and a strict JSONL reader."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any, Iterator

from synthprobe.errors import InputError

#: Longest line a JSONL reader accepts (bytes). Real items are < 4 KiB.
MAX_LINE_BYTES = 1 << 20


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
                raise InputError(f"is {what}; refusing to overwrite an input, choose another output path",
                                 path=out, field=out_field)


def check_outputs(outputs, inputs=(), *, overwrite: bool = False) -> None:
    """The output rules of every command, checked before anything runs.

    1. an output that resolves to an input is refused (:func:`check_not_input`), even with
       ``overwrite``;
    2. an output file that already exists is refused unless ``overwrite``.

    Default output names are made new with :func:`default_output` before calling this."""
    check_not_input(outputs, inputs)
    if overwrite:
        return
    for out, field in _path_pairs(outputs):
        if os.path.lexists(out) and not out.is_dir():
            raise InputError("already exists; pass --overwrite to replace it, or choose another path",
                             path=out, field=field)


def check_output_dir(folder: str | Path, names, inputs=(), *, overwrite: bool = False,
                     field: str | None = "--out") -> None:
    """The output rules for a folder: refuse a folder that already holds any of ``names``
    (relative paths we would write) unless ``overwrite``, and any of them that is an input."""
    folder = Path(folder)
    paths = [folder / n for n in names]
    check_not_input([(p, field) for p in paths], inputs)
    if overwrite:
        return
    held = [str(n) for n, p in zip(names, paths) if os.path.lexists(p)]
    if held:
        more = f" and {len(held) - 1} more of the files this command writes" if len(held) > 1 else ""
        raise InputError(f"already holds {held[0]}{more}; pass --overwrite to replace them, or choose "
                         "another folder", path=folder, field=field)


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


def slug(spec: str) -> str:
    """The model's part of a default output name (``benchmarks/<benchmark>_<slug>.json``), the
    same for every scoring command: a GGUF file's stem, else the last part of the path or hub id
    (``HuggingFaceTB/SmolLM2-135M-Instruct`` and the alias ``smollm2-135m-instruct`` both give
    ``smollm2-135m-instruct``), lower-cased, runs of other characters as ``-``."""
    name = Path(spec).stem if spec.lower().endswith(".gguf") else spec.rstrip("/").split("/")[-1]
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-") or "model"


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
        raise InputError(f"cannot be written ({why}); expected a path inside a writable folder",
                         path=path) from None
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


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_jsonl(path: str | Path, *, allow_empty: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for each non-blank line of a UTF-8 JSONL file.

    A BOM is tolerated. Non-UTF-8 bytes, oversized lines, invalid JSON, anything
    :func:`loads_json` refuses (duplicate keys, huge integers, NaN, deep nesting, lone
    surrogates), a value that is not an object, or an empty file raise :class:`InputError`
    naming file and line (and the field where there is one).
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
            obj = loads_json(text, path=path, line=lineno)
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {type(obj).__name__}",
                                 path=path, line=lineno)
            seen = True
            yield lineno, obj
    if not seen and not allow_empty:
        raise InputError("file is empty; expected one JSON object per line", path=path)


# ---------------------------------------------------------------------------------------------
# Reading JSON strictly. Every JSON and JSONL reader of the package goes through
# :func:`loads_json`, so one malformed value is refused the same way everywhere.

#: Deepest nesting of arrays and objects a JSON document may have (results files use < 10).
MAX_JSON_DEPTH = 64

#: Longest integer literal accepted, in digits (item values have < 20; Python stops at 4,300).
MAX_INT_DIGITS = 100

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Bad:
    """Stands in for a value the strict decoder refuses; found again, with its path, after parsing."""

    __slots__ = ("why", "token")

    def __init__(self, why: str, token: str):
        self.why = why
        self.token = token  # the literal as written, to find its line in a whole document


class _Object(dict):
    """A decoded JSON object that remembers a key it held twice."""

    __slots__ = ("duplicate",)


def _check_depth(text: str, *, path, line: int | None) -> None:
    """Refuse nesting deeper than :data:`MAX_JSON_DEPTH` without letting the parser recurse:
    a cheap count first, a scan over the brackets outside strings only when that count is high."""
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return
    skeleton = _STRING.sub('""', text)
    depth = 0
    for m in _BRACKET.finditer(skeleton):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                where = line if line is not None else skeleton.count("\n", 0, m.start()) + 1
                raise InputError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep; expected a flat record",
                                 path=path, line=where)
        else:
            depth = max(depth - 1, 0)


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    marked = _Object(pairs)
    seen: set[str] = set()
    marked.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    return marked


def _int(text: str):
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        return _Bad(f"integer with {digits:,} digits; at most {MAX_INT_DIGITS} expected", text)
    return int(text)


def _float(text: str):
    value = float(text)
    if math.isinf(value):
        return _Bad(f"number {text[:20]}{'...' if len(text) > 20 else ''} is out of range; expected a finite number",
                    text)
    return value


def _constant(name: str):
    return _Bad(f"{name} is not a number JSON allows; expected a finite number", name)


def _field_path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


_LONE = "lone surrogate"


def _find_bad(value: Any, where: str, *, surrogates: bool) -> tuple[str, str, str | None] | None:
    """The first refused value under ``value`` as ``(field path, why, literal)``; depth is
    already bounded."""
    if isinstance(value, _Bad):
        return where, value.why, value.token
    if isinstance(value, str):
        if surrogates and _SURROGATE.search(value):
            return where, "string holds a lone surrogate (\\ud800-\\udfff escape); expected valid Unicode text", _LONE
        return None
    if isinstance(value, dict):
        dup = getattr(value, "duplicate", None)
        if dup is not None:
            return _field_path(where, dup), f"duplicate key {dup!r}; every key may appear once in an object", None
        for k, v in value.items():
            if surrogates and _SURROGATE.search(k):
                return _field_path(where, k), "key holds a lone surrogate; expected valid Unicode text", _LONE
            found = _find_bad(v, _field_path(where, k), surrogates=surrogates)
            if found:
                return found
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found = _find_bad(v, _field_path(where, i), surrogates=surrogates)
            if found:
                return found
    return None


_LONE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
                         r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _line_of(text: str, token: str | None) -> int | None:
    """Line of the first occurrence of a refused literal in a whole document (None when unsure)."""
    if token is None:
        return None
    if token == _LONE:
        m = _LONE_ESCAPE.search(text)
        return text.count("\n", 0, m.start()) + 1 if m else None
    skeleton = _STRING.sub('""', text)  # the literal outside strings; strings never hold newlines
    pos = skeleton.find(token)
    return skeleton.count("\n", 0, pos) + 1 if pos >= 0 else None


class _Refused(Exception):
    """Raised by the fast decoder's hooks at the first value to refuse."""


def _fast_pairs(pairs: list[tuple[str, Any]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused
    return obj


def _fast_int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS and len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused
    return int(text)


def _fast_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused
    return value


def _refuse(_: str):
    raise _Refused


#: The decoders of the common case: nothing to refuse, no Python call beyond the hooks.
_STRICT = json.JSONDecoder(object_pairs_hook=_fast_pairs, parse_int=_fast_int, parse_float=_fast_float,
                           parse_constant=_refuse)
_LENIENT = json.JSONDecoder(object_pairs_hook=_fast_pairs, parse_int=_fast_int)


def _marking_decoder(allow_nonfinite: bool) -> json.JSONDecoder:
    """A decoder that puts a :class:`_Bad` (or a :class:`_Object`) where a value is refused."""
    if allow_nonfinite:
        return json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int)
    return json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float,
                            parse_constant=_constant)


def loads_json(text: str, *, path: str | Path | None = None, line: int | None = None,
               allow_nonfinite: bool = False) -> Any:
    """Decode ``text`` strictly, or raise :class:`InputError` naming file, line and field.

    Refused: invalid JSON, nesting deeper than :data:`MAX_JSON_DEPTH`, a key twice in one object,
    integers longer than :data:`MAX_INT_DIGITS` digits, ``NaN``/``Infinity`` and numbers that
    overflow to infinity, and strings holding a lone surrogate (they cannot be written as UTF-8).
    ``line`` is the line of a JSONL record; for a whole document the line comes from the text.
    ``allow_nonfinite`` accepts ``NaN``/``Infinity`` (for files synthprobe itself wrote, such as
    the score cache, where a log-probability may be ``-Infinity``).
    """
    _check_depth(text, path=path, line=line)
    try:
        try:
            value = (_LENIENT if allow_nonfinite else _STRICT).decode(text)
            flagged = False
        except _Refused:  # something to refuse: decode again with markers to find its field
            value = _marking_decoder(allow_nonfinite).decode(text)
            flagged = True
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg} at column {exc.colno})", path=path,
                         line=line if line is not None else exc.lineno) from None
    except RecursionError:  # not reached after _check_depth; kept so it can never escape
        raise InputError(f"JSON nested too deeply; at most {MAX_JSON_DEPTH} levels expected",
                         path=path, line=line) from None
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if flagged or surrogates:
        found = _find_bad(value, "", surrogates=surrogates)
        if found:
            where, why, token = found
            if line is None:
                line = _line_of(text, token)
            raise InputError(why, path=path, line=line, field=where or None)
    return value


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


def resource_path(name: str) -> Path:
    """Path of a file shipped in ``synthprobe/resources``."""
    from importlib import resources

    return Path(str(resources.files("synthprobe").joinpath("resources", name)))
