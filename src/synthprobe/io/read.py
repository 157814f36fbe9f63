"""Reading files strictly: the JSON decoder every JSON and JSONL reader of the package goes through
(:func:`loads_json`), the JSONL reader (:func:`read_jsonl`) and file digests (:func:`sha256_file`).
Bad input is one :class:`~synthprobe.errors.InputError` naming file, line and field."""

from __future__ import annotations

import hashlib
import json
import math
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError

#: Longest line a JSONL reader accepts (bytes). Real items are < 4 KiB.
MAX_LINE_BYTES = 1 << 20


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
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError("file does not exist", path=path) from None
    except OSError as exc:  # a folder on the way this user may not enter, say
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("not a regular file", path=path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    seen = False
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if len(raw) > MAX_LINE_BYTES:
                if lineno == 1:  # a results file on one line, say
                    _refuse_document(path)
                raise InputError(
                    f"line is {len(raw):,} bytes; at most {MAX_LINE_BYTES:,} expected", path=path, line=lineno
                )
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path, line=lineno) from None
            if not text.strip():
                continue
            try:
                obj = loads_json(text, path=path, line=lineno)
            except InputError:
                if lineno == 1:  # a whole JSON document (a results file, say) given for a JSONL file
                    _refuse_document(path)
                raise
            if lineno == 1 and isinstance(obj, dict) and _results_kind(obj):
                raise InputError(
                    f"{_results_kind(obj)}, not a data file; expected JSONL, one JSON object per line", path=path
                )
            if not isinstance(obj, dict):
                raise InputError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno)
            seen = True
            yield lineno, obj
    if not seen and not allow_empty:
        raise InputError("file is empty; expected one JSON object per line", path=path)


#: Largest file read whole to say what it is when it turns out not to be JSONL.
MAX_DOCUMENT_BYTES = 256 << 20


def _results_kind(doc: Any) -> str | None:
    """What a JSON document is when it is a results file rather than data: a synthprobe results
    document (any of its layouts) or an lm-evaluation-harness results file; else None."""
    if not isinstance(doc, dict):
        return None
    schema = doc.get("schema")
    if isinstance(schema, str) and schema.startswith("synthprobe/") and "models" in doc:
        return f"this is a synthprobe results file (schema {schema})"
    if isinstance(doc.get("benchmark"), str) and isinstance(doc.get("results"), list) and "model" in doc:
        return "this is a synthprobe results file (an earlier one-model layout)"
    if isinstance(doc.get("results"), dict) and any(k in doc for k in ("n-shot", "configs", "lm_eval_version")):
        return "this is an lm-evaluation-harness results file"
    return None


def _refuse_document(path: Path) -> None:
    """Raise the one error saying what ``path`` is when, read whole, it is one JSON document
    (its first line alone is no JSON object); return when it is no JSON document either, or too
    large to read whole (:data:`MAX_DOCUMENT_BYTES`)."""
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            return
        text = path.read_text(encoding="utf-8-sig")
        doc = loads_json(text, allow_nonfinite=True)
    except (InputError, OSError, UnicodeDecodeError):
        return
    kind = _results_kind(doc)
    if kind:
        raise InputError(f"{kind}, not a data file; expected JSONL, one JSON object per line", path=path)
    if "\n" not in text.strip():
        return  # one line after all: the caller's own error (too long, say) is the one to give
    raise InputError(
        f"is one JSON {'object' if isinstance(doc, dict) else 'document'} over several lines; "
        "expected JSONL, one JSON object per line",
        path=path,
    )


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
                expected = "a flat record" if line is not None else "a results or settings document"
                raise InputError(
                    f"JSON nested more than {MAX_JSON_DEPTH} levels deep; expected {expected}", path=path, line=where
                )
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
        return _Bad(
            f"number {text[:20]}{'...' if len(text) > 20 else ''} is out of range; expected a finite number", text
        )
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


_LONE_ESCAPE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


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
_STRICT = json.JSONDecoder(
    object_pairs_hook=_fast_pairs, parse_int=_fast_int, parse_float=_fast_float, parse_constant=_refuse
)
_LENIENT = json.JSONDecoder(object_pairs_hook=_fast_pairs, parse_int=_fast_int)


def _marking_decoder(allow_nonfinite: bool) -> json.JSONDecoder:
    """A decoder that puts a :class:`_Bad` (or a :class:`_Object`) where a value is refused."""
    if allow_nonfinite:
        return json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int)
    return json.JSONDecoder(object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_constant)


def _json_hint(text: str, exc: json.JSONDecodeError) -> str:
    """What a JSON error most often means in a hand-edited or truncated file, said in words."""
    if exc.msg.startswith("Invalid control character"):
        return (
            f"; a raw control character ({text[exc.pos]!r}) inside a string: a line break or tab that is not "
            "escaped, as when a record is cut in two and its rest moved to the next line"
        )
    if exc.msg.startswith("Unterminated string") or (exc.msg.startswith("Expecting") and not text[exc.pos :].strip()):
        return "; the text ends before the JSON value does: the record looks cut short"
    return ""


def loads_json(
    text: str, *, path: str | Path | None = None, line: int | None = None, allow_nonfinite: bool = False
) -> Any:
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
        # json's messages that end in "at" ("Unterminated string starting at") name a position
        where = f"column {exc.colno}" if exc.msg.endswith(" at") else f"at column {exc.colno}"
        raise InputError(
            f"invalid JSON ({exc.msg} {where}){_json_hint(text, exc)}",
            path=path,
            line=line if line is not None else exc.lineno,
        ) from None
    except RecursionError:  # not reached after _check_depth; kept so it can never escape
        raise InputError(
            f"JSON nested too deeply; at most {MAX_JSON_DEPTH} levels expected", path=path, line=line
        ) from None
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    if flagged or surrogates:
        found = _find_bad(value, "", surrogates=surrogates)
        if found:
            where, why, token = found
            if line is None:
                line = _line_of(text, token)
            raise InputError(why, path=path, line=line, field=where or None)
    return value
