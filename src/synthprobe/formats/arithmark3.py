"""The ArithMark 3.0 JSONL task contract (loader ``load_arithmark_3``), as one strict reader.

Rules (see DEEPARITHMARK_DESIGN.md): ``ctx`` a non-empty string; ``endings`` a list of at
least two non-empty strings, each starting with an ASCII space; endings distinct; ``label`` an
int, or a string of ASCII digits, in range; ``activity_label`` optional (default ``"unknown"``);
``ind`` optional (default ``line_<n>``). Other keys are carried along untouched.

The official loader checks neither id uniqueness nor distinct endings; we do, because a
duplicate id silently merges two items in every per-item table (``strict_ids``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl
from synthprobe.items import MCItem

#: What int() takes for a label, less the other scripts' digits and "1_0": ASCII digits, ASCII spaces.
_LABEL_TEXT = re.compile(r"[ \t\r\n]*[+-]?[0-9]{1,18}[ \t\r\n]*")


def parse_label(value: Any, n_endings: int, *, path: str | Path, line: int) -> int:
    if isinstance(value, bool) or value is None:
        raise InputError(
            f"expected an integer or a string holding one, got {value!r}", path=path, line=line, field="label"
        )
    if isinstance(value, int):
        label = value
    elif isinstance(value, str):
        # ASCII digits only: int() would also take "١", "５" and "1_0"
        if not _LABEL_TEXT.fullmatch(value):
            raise InputError(
                f'expected an integer string of ASCII digits such as "1", got {value!r}',
                path=path,
                line=line,
                field="label",
            )
        label = int(value)
    else:
        raise InputError(
            f"expected an integer or a string holding one, got {type(value).__name__} {value!r}",
            path=path,
            line=line,
            field="label",
        )
    if not 0 <= label < n_endings:
        raise InputError(
            f"label {label} out of range; expected 0 <= label < {n_endings}", path=path, line=line, field="label"
        )
    return label


def item_from_record(obj: dict, *, path: str | Path, line: int) -> MCItem:
    ctx = obj.get("ctx")
    if "ctx" not in obj:
        raise InputError("missing; expected a non-empty string", path=path, line=line, field="ctx")
    if not isinstance(ctx, str) or not ctx:
        raise InputError(f"expected a non-empty string, got {ctx!r}", path=path, line=line, field="ctx")
    endings = obj.get("endings")
    if "endings" not in obj:
        raise InputError("missing; expected a list of at least 2 strings", path=path, line=line, field="endings")
    if not isinstance(endings, list) or len(endings) < 2:
        raise InputError(
            f"expected a list of at least 2 strings, got {endings!r}", path=path, line=line, field="endings"
        )
    for i, e in enumerate(endings):
        if not isinstance(e, str) or not e:
            raise InputError(f"entry {i} must be a non-empty string, got {e!r}", path=path, line=line, field="endings")
        if not e.startswith(" "):
            raise InputError(
                f"entry {i} {e!r} must start with a space (every continuation must retain its leading space)",
                path=path,
                line=line,
                field="endings",
            )
    first: dict[str, int] = {}
    for i, e in enumerate(endings):
        if e in first:
            raise InputError(
                f"entry {i} {e!r} repeats entry {first[e]}; expected distinct endings",
                path=path,
                line=line,
                field="endings",
            )
        first[e] = i
    if "label" not in obj:
        raise InputError("missing; expected the index of the correct ending", path=path, line=line, field="label")
    label = parse_label(obj["label"], len(endings), path=path, line=line)
    category = obj.get("activity_label", "unknown")
    if not isinstance(category, str):
        raise InputError(f"expected a string, got {category!r}", path=path, line=line, field="activity_label")
    ind = obj.get("ind", f"line_{line}")
    if isinstance(ind, (dict, list)) or ind is None:
        raise InputError(f"expected a string or number, got {ind!r}", path=path, line=line, field="ind")
    return MCItem(id=str(ind), ctx=ctx, endings=tuple(endings), label=label, category=category, line=line, raw=obj)


def load_arithmark3(path: str | Path, *, strict_ids: bool = True) -> list[MCItem]:
    """Load a file under the ArithMark 3.0 contract. Raises :class:`InputError` on the first fault."""
    items: list[MCItem] = []
    seen: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        item = item_from_record(obj, path=path, line=line)
        if strict_ids:
            if item.id in seen:
                raise InputError(
                    f"duplicate id {item.id!r} (first on line {seen[item.id]})", path=path, line=line, field="ind"
                )
            seen[item.id] = line
        items.append(item)
    return items
