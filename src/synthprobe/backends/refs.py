"""Models named on a command line, as data: ``[NAME=]SPEC[,KEY=VALUE...]`` parsed and checked
(:class:`ModelRef`), one run's names kept apart (:class:`NameRegistry`), a backend's description
under the given name (:func:`named_model`). The command line reads ``--model`` into these; scoring
and sweeps use them.

A model's own settings follow its SPEC after commas, as lm-eval's ``--model_args`` are written:
``--model gemma=gemma-3-270m,bos=true,max_context=2048``. They override the run-wide flags for that
model alone: :data:`MODEL_KEYS` are settings of the run (``--bos``, ``--dtype``, ``--device``,
``--max-context``, ``--chat-template``, ``--system-prompt``); any other key is one of its engine's
``--model-arg`` options (``adapter``, ``revision``, ``tokenizer``, ``api_key_env``, ...), checked
by the engine before anything loads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError

#: ``NAME`` of ``--model NAME=SPEC``: letters, digits and ``. _ + -``, starting with a letter or digit
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


#: the run settings a model may set for itself after its SPEC, and the flag each one overrides
MODEL_KEYS = {
    "bos": "--bos",
    "dtype": "--dtype",
    "device": "--device",
    "max_context": "--max-context",
    "chat_template": "--chat-template",
    "system_prompt": "--system-prompt",
}
#: ``,KEY=VALUE`` after a SPEC (a key is a plain identifier)
_SETTING = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass(frozen=True)
class ModelRef:
    """One ``--model`` value: the SPEC to load, the NAME the user gave it (None: unnamed) and the
    settings given for this model alone (``,KEY=VALUE`` after the SPEC; see the module's doc)."""

    spec: str
    name: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=True)

    def run_settings(self) -> dict[str, Any]:
        """This model's own values of the run settings (:data:`MODEL_KEYS`)."""
        return {k: v for k, v in self.settings.items() if k in MODEL_KEYS}

    def engine_settings(self) -> dict[str, Any]:
        """This model's own engine options (every other key)."""
        return {k: v for k, v in self.settings.items() if k not in MODEL_KEYS}

    def bos_warning(self, shown: str, shared: bool | None, need: Any) -> str | None:
        """The warning for a run-wide ``--bos``/``--no-bos`` (``shared``) against this model's known
        need (:func:`synthprobe.backends.bos.contradiction`); None when the model sets its own."""
        from synthprobe.backends.bos import contradiction

        return None if "bos" in self.settings else contradiction(shown, shared, need)

    def shown(self, engine_name: str) -> str:
        """The name in tables and reports: the given one, else the engine's."""
        return self.name or engine_name


def _setting_value(key: str, text: str, whole: str) -> Any:
    """A per-model value: JSON where the strict decoder takes it (``true``, ``2048``), else text;
    the run settings' types checked here, with the whole ``--model`` value in the message."""
    from synthprobe.io.read import loads_json

    try:
        value = loads_json(text)
    except InputError:
        value = text
    want = {"bos": bool, "max_context": int}.get(key)
    if want is not None and (type(value) is not want):
        kind = "true or false" if want is bool else "a whole number"
        raise InputError(f"expected {key}={kind} in {whole!r}, got {key}={text}", field="--model")
    if want is None and key in MODEL_KEYS and not isinstance(value, str):
        value = text
    return value


def _split_settings(text: str) -> tuple[str, dict[str, Any]]:
    """``SPEC,KEY=VALUE,...`` → (SPEC, settings); a text that is an existing path is all SPEC."""
    if "," not in text or Path(text).expanduser().exists():
        return text, {}
    head, *rest = text.split(",")
    settings: dict[str, Any] = {}
    for part in rest:
        m = _SETTING.match(part.strip())
        if m is None:
            raise InputError(
                f"expected KEY=VALUE after the model's SPEC and a comma, got {part!r} in {text!r} "
                f"(per-model keys: {', '.join(MODEL_KEYS)}, or an engine's --model-arg key)",
                field="--model",
            )
        key, value = m.group(1), m.group(2)
        if key in settings:
            raise InputError(f"{key} is given twice in {text!r}", field="--model")
        settings[key] = _setting_value(key, value, text)
    return head, settings


def parse_model_ref(text: str) -> ModelRef:
    """``--model [NAME=]SPEC[,KEY=VALUE...]`` (the rule: docs/command-line.md, "Models"); raises
    InputError (exit 2)."""
    text, settings = _split_settings(text)
    name, sep, spec = text.partition("=")
    if not sep or not _MODEL_NAME.fullmatch(name):
        return ModelRef(text, settings=settings)
    if Path(text).expanduser().exists():
        raise InputError(
            f"{text!r} is both NAME=SPEC and an existing path; write ./{text} for the path, or "
            f"NAME=./{text} to name it",
            field="--model",
        )
    if not spec.strip():
        raise InputError(f"expected NAME=SPEC with a model after '=', got {text!r}", field="--model")
    return ModelRef(spec, name, settings)


def model_refs(texts: list[str] | None) -> list[ModelRef]:
    """Every ``--model`` text of a command (the embedded model when none is given), parsed and
    checked before anything loads: two models with the same name (given, or the same unnamed spec
    twice) are an InputError (exit 2)."""
    from synthprobe.backends.spec import EMBEDDED_ALIAS

    refs = [parse_model_ref(t) for t in (texts or [EMBEDDED_ALIAS])]
    seen: dict[str, str] = {}
    for ref in refs:
        key = ref.name if ref.name is not None else ref.spec
        if key in seen:
            what = f"the name {key!r}" if ref.name is not None else f"the unnamed model {key!r}"
            raise InputError(
                f"{what} is given twice; give each model its own name with --model NAME=SPEC "
                "(e.g. --model base=SPEC --model tuned=SPEC)",
                field="--model",
            )
        seen[key] = ref.spec
    named = {r.name for r in refs if r.name is not None}
    clash = [r.spec for r in refs if r.name is None and r.spec in named]
    if clash:
        raise InputError(f"{clash[0]!r} is both a name and an unnamed model; name that model too", field="--model")
    shown: dict[str, str] = {r.name: r.spec for r in refs if r.name is not None}
    for ref in refs:
        if ref.name is None and (local := _local_name(ref.spec)) is not None:
            if local in shown:
                raise InputError(
                    f"{shown[local]!r} and {ref.spec!r} would both be shown as {local!r}; name them "
                    f"with --model NAME=SPEC (e.g. --model a={shown[local]} --model b={ref.spec})",
                    field="--model",
                )
            shown[local] = ref.spec
    return refs


def _local_name(spec: str) -> str | None:
    """The name a local checkpoint (a folder or a ``.gguf`` file) is shown under, from the same
    :func:`~synthprobe.backends.spec.resolve_spec` the engine loads it with, before anything
    loads; None for an alias, a hub id, an engine's spec or a path the engine will refuse."""
    from pathlib import Path

    from synthprobe.backends.spec import resolve_spec

    try:
        if not Path(spec).expanduser().exists():
            return None
        return resolve_spec(spec).display or None
    except (InputError, OSError):
        return None  # the engine's check says what is wrong with it


class NameRegistry:
    """The names of the models loaded so far in one run: a second model shown under a name already
    taken (two unnamed checkpoints whose engines both call them ``final``) is an InputError before
    it is scored (exit 2; the first one's scores stay in the score cache)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def claim(self, ref: ModelRef, engine_name: str) -> str:
        shown = ref.shown(engine_name)
        if shown in self.names:
            raise InputError(
                f"{ref.spec!r} and {self.names[shown]!r} are both called {shown!r}; name them with --model NAME=SPEC",
                field="--model",
            )
        self.names[shown] = ref.spec
        return shown


def named_model(described: dict, ref: ModelRef) -> dict:
    """A backend's ``describe()`` with the name the user gave: ``name`` is what every table and
    report shows, ``engine_name`` keeps the engine's own (only when a NAME was given)."""
    if ref.name is None:
        return dict(described)
    out = dict(described)
    out["engine_name"] = described.get("name")
    out["name"] = ref.name
    return out
