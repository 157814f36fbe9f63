"""A user's GPT-3 task file in OpenAI's released format, read for ``score gpt3 --task-file``.

OpenAI released each synthetic task as JSON lines ``{"context": ..., "completion": ...}``
(``two_digit_addition.jsonl``, ``mid_word_1_anagrams.jsonl``, …); ``synthprobe build`` writes
the same layout. A file is named to its task by ``NAME=PATH`` or, without a name, by its file
name: any task name, paper code or released file name (``arithmetic_2da``, ``2D+``,
``two_digit_addition``, ``cycle_letters_in_word``). SAT analogies were never released in this
format; score them with ``--sat-file``.

Every record is checked before any model loads, and the first bad one is reported as one
:class:`~synthprobe.errors.InputError` naming file, line and field:

* exactly the two fields ``context`` and ``completion``, both strings, the completion not blank;
* no record repeated (OpenAI's files hold each item once);
* the record holds the named task: an arithmetic context is ``Q: What is …?`` (GPT-3's layout,
  as released) or ``Question: What is …?\\nAnswer:`` (lm-eval's), one layout for the whole file,
  with the task's operator, operands below its digit bound and the right answer; a word
  task's context is ``\\n<scrambled> =`` and ``<scrambled>`` is that task's transformation of
  the completion's word (a rotation for CL, the ends kept for A1/A2, one character between
  letters for RI, the reversal for RW).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.gpt3.registry import Task, get_task
from synthprobe.benchmarks.gpt3.words import INSERTIONS
from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl
from synthprobe.items import GenItem

FIELD = "--task-file"
FIELDS = ("context", "completion")

_OPENAI = re.compile(r"(?:\n\n)?Q: What is (?P<q>[^\n]*)\?\n\nA:")
_ELEUTHER = re.compile(r"Question: What is (?P<q>[^\n]*)\?\nAnswer:")
_TWO = re.compile(r"(?P<a>[0-9]+) (?P<op>plus|minus|times) (?P<b>[0-9]+)")
_THREE = re.compile(r"\((?P<a>[0-9]) (?P<o1>[-+*]) (?P<b>[0-9])\) (?P<o2>[-+*]) (?P<c>[0-9])")
_INTEGER = re.compile(r" ?-?[0-9]+")
_WORD_CONTEXT = re.compile(r"\n(?P<s>[^\n]+) =")
_OPS = {
    "plus": lambda a, b: a + b,
    "minus": lambda a, b: a - b,
    "times": lambda a, b: a * b,
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
}
_OP_OF = {"a": "plus", "s": "minus", "m": "times"}


@dataclass(frozen=True)
class TaskFile:
    """One user task file: its task, its items (in file order) and where they came from."""

    task: Task
    path: Path
    items: list[GenItem]
    format: str  # the arithmetic layout read from the file ("openai" or "eleuther"), else None
    sha256: str


def parse_spec(spec: str) -> tuple[Task, Path]:
    """``NAME=PATH`` or ``PATH``: the task and the file. The name before ``=`` must name a task
    (a path may itself hold ``=`` when no name is given and the file exists)."""
    name, sep, rest = spec.partition("=")
    if sep and name:
        try:
            return get_task(name), Path(rest)
        except InputError:
            if not Path(spec).is_file():
                raise InputError(
                    f"{name!r} before '=' names no GPT-3 task; expected NAME=PATH with NAME "
                    "a task name, paper code or released file name (2D+, arithmetic_2da, "
                    "two_digit_addition, CL, mid_word_1_anagrams, ...)",
                    field=FIELD,
                ) from None
    path = Path(spec)
    if not spec:
        raise InputError("expected [NAME=]PATH, got an empty value", field=FIELD)
    try:
        return get_task(path.name.split(".")[0]), path
    except InputError:
        raise InputError(
            f"the file name {path.name!r} names no GPT-3 task; name the file after one "
            "(arithmetic_2da.jsonl, two_digit_addition.jsonl, mid_word_1_anagrams.jsonl, "
            "...) or pass NAME=PATH",
            path=path,
            field=FIELD,
        ) from None


def _check_arithmetic(task: Task, question: str, answer: str, path: Path, line: int) -> None:
    def bad(message: str, field: str = "context"):
        return InputError(f"{message}, as {task.code} ({task.name}) has", path=path, line=line, field=field)

    if not _INTEGER.fullmatch(answer):
        raise InputError(
            f"expected ' <integer>' (ASCII digits), got {answer[:40]!r}", path=path, line=line, field="completion"
        )
    if task.name == "arithmetic_1dc":
        m = _THREE.fullmatch(question)
        if not m:
            raise bad(f"expected a question '(a o b) o c' with one-digit operands, got {question[:60]!r}")
        value = _OPS[m["o2"]](_OPS[m["o1"]](int(m["a"]), int(m["b"])), int(m["c"]))
    else:
        m = _TWO.fullmatch(question)
        op = _OP_OF[task.name[-1]]
        digits = int(task.name.split("_")[1][0])
        if not m or m["op"] != op:
            raise bad(f"expected a question 'a {op} b', got {question[:60]!r}")
        if max(len(m["a"]), len(m["b"])) > 6 or max(int(m["a"]), int(m["b"])) >= 10**digits:
            raise bad(f"expected operands below {10**digits:,}, got {question[:60]!r}")
        value = _OPS[op](int(m["a"]), int(m["b"]))
    if int(answer) != value:
        raise InputError(
            f"wrong answer: {question} is {value}, the completion says {answer.strip()}",
            path=path,
            line=line,
            field="completion",
        )


def _word_ok(task: Task, scrambled: str, word: str) -> bool:
    code = task.code
    if code == "RI":
        return (
            len(scrambled) == 2 * len(word) - 1
            and scrambled[::2] == word
            and all(ch in INSERTIONS for ch in scrambled[1::2])
        )
    if code == "RW":
        return scrambled == word[::-1]
    if len(scrambled) != len(word) or sorted(scrambled) != sorted(word):
        return False
    if code == "CL":
        return any(word[r:] + word[:r] == scrambled for r in range(len(word)))
    keep = 1 if code == "A1" else 2
    return scrambled[:keep] == word[:keep] and scrambled[-keep:] == word[-keep:]


_WORD_RULES = {
    "CL": "a rotation of",
    "A1": "an anagram, first and last letter kept, of",
    "A2": "an anagram, first two and last two letters kept, of",
    "RI": "one of space . / ! between every pair of letters of",
    "RW": "the reversal of",
}


def check_record(obj: dict, path: str | Path, line: int) -> tuple[str, str]:
    """One record's shape, whatever its task: exactly ``context`` and ``completion``, both
    non-blank strings. Returns them; raises :class:`InputError` naming file, line and field."""
    for key in obj:
        if key not in FIELDS:
            raise InputError(
                "unexpected field; OpenAI's task files hold only 'context' and 'completion'",
                path=path,
                line=line,
                field=str(key)[:40],
            )
    for key in FIELDS:
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"expected a non-empty string, got {value!r:.60}", path=path, line=line, field=key)
    return obj["context"], obj["completion"]


def load_task_file(spec: str) -> TaskFile:
    """Read and check one ``[NAME=]PATH``; raises :class:`InputError` on the first bad record."""
    import hashlib

    task, path = parse_spec(spec)
    if task.family == "sat":
        raise InputError(
            "SAT analogies were not released as context/completion lines; pass Turney's file with --sat-file",
            path=path,
            field=FIELD,
        )
    items: list[GenItem] = []
    seen: dict[tuple[str, str], int] = {}
    layout = None
    for line, obj in read_jsonl(path):
        context, completion = check_record(obj, path, line)
        if task.family == "arithmetic":
            m_openai, m_eleuther = _OPENAI.fullmatch(context), _ELEUTHER.fullmatch(context)
            m = m_openai or m_eleuther
            if m is None:
                raise InputError(
                    f"expected an arithmetic question '\\n\\nQ: What is ...?\\n\\nA:' (or lm-eval's "
                    f"'Question: What is ...?\\nAnswer:') for {task.code}, got {context[:60]!r}",
                    path=path,
                    line=line,
                    field="context",
                )
            this = "openai" if m_openai else "eleuther"
            if layout is None:
                layout = this
            elif this != layout:
                raise InputError(
                    f"{this} layout, but the file's first item uses the {layout} layout",
                    path=path,
                    line=line,
                    field="context",
                )
            _check_arithmetic(task, m["q"], completion, path, line)
        else:
            m = _WORD_CONTEXT.fullmatch(context)
            if m is None:
                raise InputError(
                    f"expected '\\n<scrambled> =' for {task.code}, got {context[:60]!r}",
                    path=path,
                    line=line,
                    field="context",
                )
            word = completion.strip()
            if "\n" in completion or not _word_ok(task, m["s"], word):
                raise InputError(
                    f"{m['s'][:40]!r} is not {_WORD_RULES[task.code]} {word[:40]!r} ({task.code}, {task.name})",
                    path=path,
                    line=line,
                    field="context",
                )
        key = (context, completion)
        if key in seen:
            raise InputError(f"repeats the item of line {seen[key]}", path=path, line=line, field="context")
        seen[key] = line
        items.append(GenItem(context, completion))
    return TaskFile(task, path, items, layout, hashlib.sha256(path.read_bytes()).hexdigest())


def load_task_files(specs: list[str]) -> list[TaskFile]:
    """Every ``--task-file``, checked; one file per task."""
    files: list[TaskFile] = []
    for spec in specs:
        tf = load_task_file(spec)
        for other in files:
            if other.task.name == tf.task.name:
                raise InputError(
                    f"names {tf.task.code} ({tf.task.name}) again; {other.path} already does", path=tf.path, field=FIELD
                )
        files.append(tf)
    return files
