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

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

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


#: per-model keys that are the model loader's when the run's settings have no field for them
LOAD_KEYS = ("bos", "dtype", "device")


def for_model(settings: Any, ref: Any) -> Any:
    """``settings`` (a :class:`RunSettings` or a benchmark's subclass) as one model runs it: the
    run-wide values overridden by the model's own (``--model NAME=SPEC,KEY=VALUE``,
    :class:`~synthprobe.backends.refs.ModelRef`). ``chat_template`` and ``system_prompt`` make a
    new chat setup, the other run keys replace the field of their name, and engine keys join
    ``model_args`` where the settings have those fields; ``bos``, ``dtype``, ``device`` and engine
    keys they lack are the loader's (:func:`synthprobe.commandline.model_backend_options`). A run
    key that neither takes is an InputError naming the model."""
    from synthprobe.backends.chat import chat_setup_for

    own = dict(getattr(ref, "settings", None) or {})
    if not own:
        return settings
    names = {f.name for f in dataclasses.fields(settings)}
    where = f"--model {ref.name + '=' if ref.name else ''}{ref.spec}"
    changes: dict[str, Any] = {}
    if "chat_template" in own or "system_prompt" in own:
        if "chat" not in names:
            raise InputError("this command sends no chat turns; drop chat_template/system_prompt", field=where)
        chat = settings.chat
        changes["chat"] = chat_setup_for(
            own.get("chat_template", chat.source),
            own.get("system_prompt", chat.system_prompt),
            fewshot_as_multiturn=chat.fewshot_as_multiturn,
            fields=(f"{where},chat_template=", f"{where},system_prompt="),
        )
    for key in ref.run_settings():
        if key in ("chat_template", "system_prompt"):
            continue
        if key in names:
            changes[key] = own[key]
        elif key not in LOAD_KEYS:
            raise InputError(f"this command has no {key} setting for one model", field=f"{where},{key}=")
    engine = ref.engine_settings()
    if engine and "model_args" in names:
        changes["model_args"] = {**settings.model_args, **engine}
    out = dataclasses.replace(settings, **changes)
    if hasattr(out, "check_run"):
        out.check_run()
    return out


def environment(backend) -> dict[str, Any]:
    """Where a model was run, for an entry's ``settings`` block: the engine's libraries (torch and
    transformers first), synthprobe's version, the rest of the engine's ``runtime()`` (threads,
    device), Python and the platform. Every scoring command puts these fields into its entries
    from here."""
    import platform

    from synthprobe.version import __version__

    rt = backend.runtime()
    return {
        **{k: rt[k] for k in ("torch", "transformers") if k in rt},
        "synthprobe": __version__,
        **{k: v for k, v in rt.items() if k not in ("torch", "transformers")},
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }
