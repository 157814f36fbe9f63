"""The GPT-3 synthetic tasks' own sub-commands, their registry part ``commands``: one
``build <task>`` per task and ``build gpt3`` (:mod:`.build`), and ``score gpt3`` (:mod:`.score`).

:func:`register` gets the verbs the command line builds (those of :data:`VERBS` it names) and
imports each verb's module only then.
"""

from __future__ import annotations

import importlib

#: the verbs these commands add to, each one module of this package
VERBS = ("build", "score")


def register(verbs: dict) -> None:
    """Add the sub-commands of each verb in ``verbs`` (verb → its sub-parsers action)."""
    for verb in VERBS:
        if verb in verbs:
            importlib.import_module(f"{__name__}.{verb}").register(verbs)
