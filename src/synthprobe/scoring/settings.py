"""One scoring run's settings, whatever the benchmark: :class:`RunSettings`.

Every command that scores a model reads the same model block (:func:`synthprobe.commandline.add_model_args`)
and hands the runner (:mod:`synthprobe.scoring.runner`) the same options: how many items, how many
rows a batch, the context a prompt must fit in, the generation budget, the score cache, the
progress bar, whether each item's record is kept, and the chat setup. Those live here, once, with
their one check (:meth:`RunSettings.check_run`).

What is a benchmark's own is a subclass in its folder that adds only its own fields and may change
a default: Deep Arithmark's ``ScoreConfig`` (its data file, the models, the protocols, the
comparison with ArithMark 3.0), GPT-3's ``EvalConfig`` (tasks, shot settings, layout), the per-step
probe's ``StepsConfig`` and the perturbation twins' ``TwinsConfig`` (a manifest, its kinds); the
sweep's job settings (:class:`synthprobe.sweep.job.Settings`) are one too. A generic part — the
``score NAME`` path (:func:`synthprobe.scoring.benchmark.score_block`), the sweep — takes any of
them as a :class:`RunSettings` and reads nothing else.

Every field is keyword-only, so a subclass may add fields without defaults (GPT-3's ``tasks``,
the twins' ``manifest``) after these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from synthprobe.backends.chat import ChatSetup
from synthprobe.errors import InputError


@dataclass(kw_only=True)
class RunSettings:
    """The settings every scoring run shares (see the module docstring)."""

    #: score the first N items only (None: all)
    limit: int | None = None
    #: rows a forward pass (the runner halves it on out-of-memory)
    batch_size: int = 32
    #: tokens a prompt and its answer must fit in
    max_context: int = 1024
    #: tokens a generated answer may take (None: the protocol's own budget)
    max_new_tokens: int | None = None
    #: read and write the per-item score cache (``--no-cache``: off)
    cache: bool = True
    #: show progress bars
    progress: bool = True
    #: keep each item's record in the results file
    save_items: bool = False
    #: ``--chat-template`` / ``--system-prompt`` (default: none, raw text)
    chat: ChatSetup = field(default_factory=ChatSetup)

    #: the smallest ``max_context`` this run's prompts can fit in (a subclass may raise it)
    MIN_CONTEXT: ClassVar[int] = 2

    def check_run(self) -> None:
        """One :class:`InputError` naming the flag when a shared setting is out of range, before
        any model loads."""
        for name, least, optional in (
            ("limit", 1, True),
            ("batch_size", 1, False),
            ("max_context", self.MIN_CONTEXT, False),
            ("max_new_tokens", 1, True),
        ):
            value = getattr(self, name)
            if value is None and optional:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise InputError(f"expected an integer >= {least}, got {value!r}", field="--" + name.replace("_", "-"))
