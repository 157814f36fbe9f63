"""GPT-3's synthetic probe tasks (Brown et al. 2020, §3.9), regenerated and scored.

One module per task family, each registering its tasks on import:

* :mod:`.arithmetic` — 2D+ … 5D−, 2Dx, 1DC (lm-eval names ``arithmetic_2da`` …);
* :mod:`.words` — CL, A1, A2, RI, RW from Norvig's word list (``wordsegment``);
* :mod:`.sat` — SAT analogies from a Turney-format file (a self-written sample ships).

:mod:`.prompts` builds zero-/one-/few-shot prompts, :mod:`.evaluate` scores a model,
:mod:`.paper` holds GPT-3's published figures (Table H.1), :mod:`.cli` the commands.
"""

from synthprobe.tasks.gpt3.registry import (TASKS, BuildConfig, ChoiceItem, GenItem, Task, build_items,
                                        get_task, resolve_tasks, serialize, task_names)

__all__ = ["TASKS", "BuildConfig", "ChoiceItem", "GenItem", "Task", "build_items", "get_task",
           "resolve_tasks", "serialize", "task_names"]
