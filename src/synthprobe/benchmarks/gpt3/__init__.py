"""GPT-3's synthetic probe tasks (Brown et al. 2020, §3.9), regenerated and scored.

One module per task family, each registering its tasks in :mod:`.registry` on import (this
package imports them, :data:`TASK_MODULES`):

* :mod:`.arithmetic` — 2D+ … 5D−, 2Dx, 1DC (lm-eval names ``arithmetic_2da`` …);
* :mod:`.words` — CL, A1, A2, RI, RW from Norvig's word list (``wordsegment``);
* :mod:`.sat` — SAT analogies from a Turney-format file (a self-written sample ships).

:mod:`.prompts` builds zero-/one-/few-shot prompts, :mod:`.paper` holds GPT-3's published
figures (Table H.1), :mod:`.taskfile` reads a user's task files, :mod:`.commands` holds the build
and score commands.
Scoring is :mod:`synthprobe.benchmarks.gpt3.scoring.score` (``synthprobe score gpt3``).
"""

import importlib

from synthprobe.benchmarks.gpt3.registry import (
    TASKS,
    BuildConfig,
    Task,
    build_items,
    get_task,
    resolve_tasks,
    serialize,
    task_names,
)
from synthprobe.items import GenItem, MCItem

#: The modules that register tasks, in the paper's order; importing the package imports them.
#: A new task family is one module here that calls :func:`~synthprobe.benchmarks.gpt3.registry.register`.
TASK_MODULES = ("arithmetic", "words", "sat")

for _name in TASK_MODULES:
    importlib.import_module(f"{__name__}.{_name}")

__all__ = [
    "TASKS",
    "TASK_MODULES",
    "BuildConfig",
    "GenItem",
    "MCItem",
    "Task",
    "build_items",
    "get_task",
    "resolve_tasks",
    "serialize",
    "task_names",
]
