"""Models named on a command line, as data: ``[NAME=]SPEC`` parsed and checked (:class:`ModelRef`),
one run's names kept apart (:class:`NameRegistry`), a backend's description under the given name
(:func:`named_model`). The command line reads ``--model`` into these; scoring and sweeps use them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError

#: ``NAME`` of ``--model NAME=SPEC``: letters, digits and ``. _ + -``, starting with a letter or digit
_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}")


@dataclass(frozen=True)
class ModelRef:
    """One ``--model`` value: the SPEC to load and the NAME the user gave it (None: unnamed)."""

    spec: str
    name: str | None = None

    def shown(self, engine_name: str) -> str:
        """The name in tables and reports: the given one, else the engine's."""
        return self.name or engine_name


def parse_model_ref(text: str) -> ModelRef:
    """``--model [NAME=]SPEC`` (the rule: docs/command-line.md, "Models"); raises InputError (exit 2)."""
    name, sep, spec = text.partition("=")
    if not sep or not _MODEL_NAME.fullmatch(name):
        return ModelRef(text)
    if Path(text).expanduser().exists():
        raise InputError(
            f"{text!r} is both NAME=SPEC and an existing path; write ./{text} for the path, or "
            f"NAME=./{text} to name it",
            field="--model",
        )
    if not spec.strip():
        raise InputError(f"expected NAME=SPEC with a model after '=', got {text!r}", field="--model")
    return ModelRef(spec, name)


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
