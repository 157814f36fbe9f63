"""The contract every GPT-3 synthetic task follows, and the task registry.

A leaf: it imports no task module. The task modules import it and call :func:`register`;
the package's ``__init__`` imports them (:data:`synthprobe.benchmarks.gpt3.TASK_MODULES`), so any
import of this module, which runs the package's ``__init__`` first, finds every task registered.

A task is registered once, with a canonical name (lm-eval's where one exists), the GPT-3 paper
code and other aliases, its default size, its few-shot K, and a ``build`` function
``build(config) -> list[Item]``. Building is deterministic: the same :class:`BuildConfig`
gives the same items, byte for byte, on any machine and any ``PYTHONHASHSEED``; item ``i`` is
drawn from ``item_rng(task, seed, i)`` and a prefix of a larger build equals a smaller build.

Items are written as JSON lines in the exact layout of OpenAI's released files:
``{"context": ..., "completion": ...}`` for generation tasks, and an ArithMark-style
multiple-choice record (``ctx``, ``endings``, ``label``) for SAT analogies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from synthprobe.errors import InputError
from synthprobe.items import GenItem, MCItem

#: Item layouts a build can write.
FORMATS = ("openai", "eleuther")

#: Shot settings and how the paper names them.
SETTINGS = ("zero", "one", "few")


Item = GenItem | MCItem


@dataclass(frozen=True)
class BuildConfig:
    """What to build: task, seed, number of items, item layout, and (SAT) the source file."""

    task: str
    seed: int = 0
    n: int | None = None
    format: str = "openai"
    sat_file: str | None = None
    #: How the arithmetic tasks write numbers (:mod:`synthprobe.prompts.numformat`): ``plain``
    #: (OpenAI's files), ``comma`` or ``space``; only the arithmetic tasks take another than plain.
    number_format: str = "plain"

    def validate(self) -> Task:
        """Check every field; return the resolved :class:`Task`. Raises :class:`InputError`."""
        task = get_task(self.task)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"expected an integer >= 0, got {self.seed!r}", field="seed")
        if self.n is not None:
            if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
                raise InputError(f"expected an integer >= 1, got {self.n!r}", field="n")
            if task.max_n is not None and self.n > task.max_n:
                raise InputError(f"{task.name} has at most {task.max_n:,} distinct items, got n={self.n:,}", field="n")
        if self.format not in FORMATS:
            raise InputError(f"expected one of {', '.join(FORMATS)}, got {self.format!r}", field="format")
        from synthprobe.prompts.numformat import PLAIN, check_number_format

        check_number_format(self.number_format, field="number_format")
        if self.number_format != PLAIN and task.family != "arithmetic":
            raise InputError(
                f"only the arithmetic tasks write numbers; {task.name} takes no {self.number_format!r} number format",
                field="number_format",
            )
        if self.sat_file is not None and task.family != "sat":
            raise InputError(f"only the SAT task reads a source file, not {task.name}", field="sat_file")
        return task

    @property
    def size(self) -> int:
        task = get_task(self.task)
        return self.n if self.n is not None else task.default_n


@dataclass(frozen=True)
class Task:
    """A registered task."""

    name: str
    code: str
    family: str  # "arithmetic" | "words" | "sat"
    summary: str
    default_n: int | None  # None: as many as the source file holds
    k_few: int  # GPT-3's few-shot K
    build: Callable[[BuildConfig], list]
    aliases: tuple[str, ...] = ()
    max_n: int | None = None
    max_new_tokens: int = 16
    kind: str = "generate"  # "generate" | "choice"
    extra: dict = field(default_factory=dict, compare=False)


TASKS: dict[str, Task] = {}
_ALIASES: dict[str, str] = {}

#: The paper's order of the task families (tasks of one family keep their module's order).
FAMILY_ORDER = ("arithmetic", "words", "sat")


def _key(name: str) -> str:
    return name.strip().lower().replace("\u2212", "-").replace("\u00d7", "x")


def register(task: Task) -> Task:
    """Add ``task`` to the registry; its name, code and aliases must be new."""
    if task.name in TASKS:
        raise ValueError(f"task {task.name!r} registered twice")
    for alias in (task.name, task.code, *task.aliases):
        key = _key(alias)
        if key in _ALIASES and _ALIASES[key] != task.name:
            raise ValueError(f"alias {alias!r} of {task.name} already names {_ALIASES[key]}")
        _ALIASES[key] = task.name
    TASKS[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The task called ``name`` (canonical name, paper code such as ``2D+``, or alias)."""
    if not isinstance(name, str):
        raise InputError(f"expected a task name, got {name!r}", field="task")
    canonical = _ALIASES.get(_key(name))
    if canonical is None:
        raise InputError(
            f"unknown task {name!r}; expected one of {', '.join(task_names())} (or a paper code such as 2D+, CL, SAT)",
            field="task",
        )
    return TASKS[canonical]


def ordered_tasks() -> list[Task]:
    """All tasks in the paper's order, whatever order their modules were imported in."""
    position = {name: i for i, name in enumerate(TASKS)}
    return sorted(TASKS.values(), key=lambda t: (FAMILY_ORDER.index(t.family), position[t.name]))


def task_names() -> list[str]:
    """Canonical names of all tasks, in the paper's order."""
    return [t.name for t in ordered_tasks()]


def resolve_tasks(spec: str | list[str]) -> list[Task]:
    """Tasks named by a comma-separated list; ``all``, ``arithmetic`` and ``words`` expand to groups."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[Task] = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if part.lower() == "all":
            group = ordered_tasks()
        elif part.lower() in ("arithmetic", "words"):
            group = [t for t in ordered_tasks() if t.family == part.lower()]
        else:
            group = [get_task(part)]
        for t in group:
            if t not in out:
                out.append(t)
    if not out:
        raise InputError("expected at least one task name", field="tasks")
    return out


def build_items(config: BuildConfig) -> list:
    """Validate ``config`` and build its items (a new list on every call).

    The generated tasks' builds are kept per config (:func:`_generated`; their items are frozen):
    one process asks for the same pool again and again (the lm-eval results export once per shot
    setting of a task, the report once per file), and drawing a words pool takes a fraction of a
    second. SAT reads its source file, so it is built on every call.
    """
    task = config.validate()
    if task.family == "sat":
        return task.build(config)
    return list(_generated(config))


@functools.lru_cache(maxsize=64)
def _generated(config: BuildConfig) -> tuple:
    return tuple(get_task(config.task).build(config))


def serialize(items: list) -> str:
    """The JSONL text of ``items`` (one object per line, trailing newline)."""
    return "".join(item.to_json() + "\n" for item in items)
