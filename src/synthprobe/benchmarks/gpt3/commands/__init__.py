"""The GPT-3 synthetic tasks' own sub-commands, their registry part ``commands``: one
``build <task>`` per task and ``build gpt3`` (:mod:`.build`), and ``score gpt3`` (:mod:`.score`);
and their options on the generic ``export lm-eval`` (:func:`lm_eval_arguments`, :mod:`.export`).

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


def lm_eval_arguments(parser) -> None:
    """Add their options to ``synthprobe export lm-eval`` (:mod:`.export`)."""
    from synthprobe.benchmarks.gpt3.commands.export import lm_eval_arguments

    lm_eval_arguments(parser)


def lm_eval_options(args) -> dict:
    """Their keyword options of ``export_lm_eval`` from the parsed ``export lm-eval`` arguments."""
    from synthprobe.benchmarks.gpt3.commands.export import lm_eval_options

    return lm_eval_options(args)
