"""Deep Arithmark's own sub-commands, its registry part ``commands``: ``build deeparithmark``
(:mod:`.build`, also behind ``deeparithmark.py``) and ``score deeparithmark`` (:mod:`.score`, also
behind ``bench_deeparithmark.py``).

:func:`register` gets the verbs the command line builds (those of :data:`VERBS` it names) and
imports each verb's module only then, so ``synthprobe build ...`` never builds the score parser.
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
