"""Read results JSON files into :class:`~synthprobe.report.model.ModelResult` rows (Deep
Arithmark) or :class:`~synthprobe.report.model.Gpt3Result` (GPT-3 synthetic tasks), strictly.

The report reads nothing but these files. Every value it uses is type-checked; a missing
or wrong field is an :class:`InputError` naming the file and the field's path inside it
(``models[1].metrics.by_depth.3.correct``), a JSON syntax error names the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.io import loads_json
from synthprobe.report.model import Count, Gpt3Result, MistakeCount, ModelResult

MAX_BYTES = 512 << 20


class _Reader:
    """Typed access to a parsed JSON document with located errors."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, message: str) -> InputError:
        return InputError(message, path=self.path, field=where or None)

    def get(self, obj: dict, key: str, where: str, typ, *, required: bool = True, what: str = ""):
        here = f"{where}.{key}" if where else key
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(here, f"missing; expected {what or _type_name(typ)}")
            return None
        value = obj[key]
        if not _is(value, typ):
            raise self.fail(here, f"expected {what or _type_name(typ)}, got {_short(value)}")
        return value


def _type_name(typ) -> str:
    names = {int: "an integer", float: "a number", str: "a string", dict: "an object", list: "a list",
             bool: "true or false"}
    if isinstance(typ, tuple):
        return " or ".join(names.get(t, t.__name__) for t in typ)
    return names.get(typ, typ.__name__)


def _is(value: Any, typ) -> bool:
    types = typ if isinstance(typ, tuple) else (typ,)
    if isinstance(value, bool) and bool not in types:
        return False
    if float in types and isinstance(value, int):
        return True
    return isinstance(value, types)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def read_json(path: str | Path) -> Any:
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", path=path)
    if not path.is_file():
        raise InputError("not a regular file", path=path)
    if path.stat().st_size > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES >> 20} MiB; not a results file", path=path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path) from None
    return loads_json(text, path=path)


def load_results(path: str | Path) -> list[ModelResult]:
    """All model rows of one Deep Arithmark results file."""
    from synthprobe.report.deeparithmark.read import parse_document

    path = Path(path)
    doc = read_json(path)
    return parse_document(doc, _Reader(path))


def load_gpt3(path: str | Path) -> Gpt3Result:
    """One GPT-3 synthetic-task results file (``"benchmark": "gpt3-synthetic"``)."""
    from synthprobe.report.gpt3.read import parse_document

    path = Path(path)
    r = _Reader(path)
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise r.fail("", f"expected a JSON object (a results file), got {type(doc).__name__}")
    return parse_document(doc, r)


def load_any(path: str | Path) -> tuple[list[ModelResult], list[Gpt3Result]]:
    """A Deep Arithmark or a GPT-3 results file, told apart by its top-level key:
    ``"schema"`` (Deep Arithmark) or ``"benchmark"`` (GPT-3 synthetic tasks)."""
    from synthprobe.report.deeparithmark import read as schema
    from synthprobe.report.gpt3 import read as gpt3_schema

    path = Path(path)
    r = _Reader(path)
    doc = read_json(path)
    if isinstance(doc, dict) and "schema" not in doc and "benchmark" in doc:
        return [], [gpt3_schema.parse_document(doc, r)]
    return schema.parse_document(doc, r), []


__all__ = ["load_any", "load_gpt3", "load_results", "read_json", "Count", "Gpt3Result", "MistakeCount",
           "ModelResult"]
