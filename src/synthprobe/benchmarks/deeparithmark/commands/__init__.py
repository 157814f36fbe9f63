"""Deep Arithmark's own sub-commands, its registry part ``commands``: ``build deeparithmark``
(:mod:`.build`, also behind ``deeparithmark.py``), ``score deeparithmark`` (:mod:`.score`, also
behind ``bench_deeparithmark.py``), its per-step probe, ``probe steps`` (:mod:`.probe`), and the
release as a Hub dataset folder, ``export hf`` (:mod:`.export`); and its option on the generic
``export lm-eval``, the release to export (:func:`lm_eval_arguments`, also :mod:`.export`).

:func:`register` gets the verbs the command line builds (those of :data:`VERBS` it names) and
imports each verb's module only then, so ``synthprobe build ...`` never builds the score parser.
"""

from __future__ import annotations

import importlib

#: the verbs these commands add to, each one module of this package
VERBS = ("build", "score", "probe", "export")


def register(verbs: dict) -> None:
    """Add the sub-commands of each verb in ``verbs`` (verb → its sub-parsers action)."""
    for verb in VERBS:
        if verb in verbs:
            importlib.import_module(f"{__name__}.{verb}").register(verbs)


def lm_eval_arguments(parser) -> None:
    """Add its option to ``synthprobe export lm-eval`` (:mod:`.export`)."""
    from synthprobe.benchmarks.deeparithmark.commands.export import lm_eval_arguments

    lm_eval_arguments(parser)


def lm_eval_options(args) -> dict:
    """Its keyword options of ``export_lm_eval`` from the parsed ``export lm-eval`` arguments."""
    from synthprobe.benchmarks.deeparithmark.commands.export import lm_eval_options

    return lm_eval_options(args)
