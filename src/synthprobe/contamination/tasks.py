"""The tasks a contamination check reads: the release, a Deep Arithmark file, a GPT-3 task file.

``--task release`` is the release file (``data/deeparithmark-1.jsonl``); any other value is a
file: a record with ``context`` makes it a GPT-3 task file in OpenAI's released format
(``[NAME=]PATH``, read by :func:`synthprobe.benchmarks.gpt3.taskfile.load_task_file`), anything else
a Deep Arithmark / ArithMark 3.0 file (:func:`synthprobe.formats.arithmark3.load_arithmark3`).
An item's prompt is what the model is shown: a Deep Arithmark item's ``ctx``, a GPT-3 item's
``context``. A GPT-3 arithmetic item (2–5 digit addition and subtraction, 2-digit
multiplication) also has its problem ``A op B`` for GPT-3's own search; one-digit composite
problems have three operands and are searched by n-grams only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.contamination.ngrams import ItemText
from synthprobe.errors import InputError

FIELD = "--task"
_PROBLEM = re.compile(r"What is ([0-9]+) (plus|minus|times) ([0-9]+)\?")
_OPS = {"plus": "+", "minus": "-", "times": "*"}


@dataclass
class TaskItems:
    """One task's items as the check sees them, and what rescoring needs."""

    name: str  # "deeparithmark" or the GPT-3 task's name
    benchmark: str  # "deeparithmark" | "gpt3"
    code: str | None  # the GPT-3 paper code (2D+ ...)
    path: Path
    sha256: str
    ids: list[str]  # Deep Arithmark ids; GPT-3: the position in the file
    texts: list[ItemText]
    golds: list[str]  # the right ending / completion, to match a scores file's items


def _first_record(path: Path) -> dict:
    from synthprobe.io.read import read_jsonl

    for _line, obj in read_jsonl(path):
        return obj
    raise InputError("is empty; expected a task file", path=path, field=FIELD)


def load_task(spec: str) -> TaskItems:
    from synthprobe.io.read import sha256_file

    if spec == "release":
        from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE
        from synthprobe.benchmarks.deeparithmark.release import locate_release

        spec = str(locate_release(RELEASE_FILE))
    name, sep, rest = spec.partition("=")
    path = Path(rest) if sep and not Path(spec).is_file() else Path(spec)
    if not path.exists():
        raise InputError("does not exist", path=path, field=FIELD)
    if not path.is_file():
        raise InputError("not a regular file", path=path, field=FIELD)
    first = _first_record(path)
    if isinstance(first, dict) and "context" in first:
        from synthprobe.benchmarks.gpt3.taskfile import load_task_file

        try:
            tf = load_task_file(spec)
        except InputError as exc:  # the same rules as `score gpt3 --task-file`, named as our flag
            if exc.field != "--task-file":
                raise
            raise InputError(exc.detail, path=exc.path, line=exc.line, field=FIELD) from None
        texts = []
        for it in tf.items:
            m = _PROBLEM.search(it.context) if tf.task.family == "arithmetic" else None
            texts.append(ItemText(it.context, (m[1], _OPS[m[2]], m[3]) if m else None))
        return TaskItems(
            tf.task.name,
            "gpt3",
            tf.task.code,
            tf.path,
            tf.sha256,
            [str(i) for i in range(len(tf.items))],
            texts,
            [it.completion for it in tf.items],
        )
    if sep and not Path(spec).is_file():
        raise InputError(
            "NAME=PATH names a GPT-3 task file, but this file holds no 'context' records", path=path, field=FIELD
        )
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(path)
    if not items:
        raise InputError("holds no items", path=path, field=FIELD)
    return TaskItems(
        "deeparithmark",
        "deeparithmark",
        None,
        path,
        sha256_file(path),
        [it.id for it in items],
        [ItemText(it.ctx) for it in items],
        [str(it.label) for it in items],
    )


def load_tasks(specs: list[str]) -> list[TaskItems]:
    tasks = [load_task(s) for s in specs]
    seen: dict[str, Path] = {}
    for t in tasks:
        if t.name in seen:
            raise InputError(
                f"is a second {t.name} task ({seen[t.name]} is the first); check one file per task",
                path=t.path,
                field=FIELD,
            )
        seen[t.name] = t.path
    return tasks


__all__ = ["TaskItems", "load_task", "load_tasks"]
