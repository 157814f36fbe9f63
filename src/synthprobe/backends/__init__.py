"""Model backends: one contract (:mod:`.base`), one module or package per engine.

``load_backend("[kind:]spec", **options)`` picks the engine by ``kind`` (default ``hf``: a
transformers model from an alias, a local folder, a ``.gguf`` file or a hub id) and imports
its module only then, so ``import synthprobe.backends`` pulls in neither torch nor any
engine. An engine module offers ``load(spec, **options) -> Backend`` and, optionally,
``check(spec, **options)`` (raise :class:`~synthprobe.errors.InputError` on a bad spec or
option before anything loads).

Adding an engine is one file: put ``backends/<kind>.py`` beside this one and add its line to
:data:`ENGINES`, or, from outside the package (a plugin, a test), call
``register_engine("<kind>", "my_package.my_engine")``.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from synthprobe.backends.base import (
    Backend,
    BaseBackend,
    ChoiceRun,
    EndingScore,
    FirstToken,
    Generation,
    ModelLoadError,
    ScoringError,
    TokenBudgetSpent,
)
from synthprobe.backends.conversation import ChatTemplateError, Message, check_conversations
from synthprobe.backends.spec import EMBEDDED_ALIAS, ModelSpec, resolve_spec

__all__ = [
    "Backend",
    "BaseBackend",
    "ChatTemplateError",
    "Message",
    "check_conversations",
    "ChoiceRun",
    "EndingScore",
    "FirstToken",
    "Generation",
    "ModelLoadError",
    "ScoringError",
    "TokenBudgetSpent",
    "EMBEDDED_ALIAS",
    "ModelSpec",
    "resolve_spec",
    "load_backend",
    "check_backend",
    "engine_can",
    "text_embedder",
    "TextEmbedder",
    "register_engine",
    "ENGINES",
    "DEFAULT_KIND",
]

#: kind -> (module, the pip extra that brings its dependencies, or None).
ENGINES: dict[str, tuple[str, str | None]] = {
    "hf": ("synthprobe.backends.hf.backend", None),
    "openai": ("synthprobe.backends.openai", None),
    "openai-chat": ("synthprobe.backends.openai_chat", None),
    "vllm": ("synthprobe.backends.vllm", "vllm"),
}
DEFAULT_KIND = "hf"


def register_engine(kind: str, module: str, extra: str | None = None) -> None:
    """Make ``load_backend("<kind>:spec")`` use ``module`` (imported on first use)."""
    if not kind.replace("-", "_").isidentifier():
        raise ValueError(f"an engine kind is a plain name (letters, digits, _ and -), got {kind!r}")
    ENGINES[kind] = (module, extra)


def split_kind(spec: str) -> tuple[str, str]:
    """``"toy:abc"`` -> ``("toy", "abc")``; a spec without a registered kind prefix is HF's
    (``C:\\model`` or ``org/name`` stay whole)."""
    head, sep, rest = spec.partition(":")
    if sep and head in ENGINES:
        return head, rest
    return DEFAULT_KIND, spec


def _engine(kind: str) -> ModuleType:
    module, extra = ENGINES[kind]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install 'synthprobe[{extra}]'" if extra else "reinstall synthprobe"
        raise ModelLoadError(
            f"the {kind!r} engine needs a package that is not installed ({exc.name or exc}); {hint}"
        ) from exc


def engine_can(spec: str, need: str) -> bool:
    """Whether the engine of ``spec`` can do ``need`` (``"loglikelihood"``, ``"generate"``,
    ``"sample"``, ``"train"``: fine-tune a choice head, :mod:`synthprobe.backends.hf.train`;
    ``"embed"``: frozen text embeddings, :mod:`synthprobe.backends.hf.embed`), read from its module's
    ``CAN`` set before anything loads (an engine without one
    can do all of them). The one place that says whether an engine gives log-likelihoods."""
    can = getattr(_engine(split_kind(spec)[0]), "CAN", None)
    return can is None or need in can


def check_backend(spec: str, *, needs: tuple[str, ...] = (), **options) -> None:
    """Check ``spec`` and ``options`` as the engine would, without loading anything.

    ``needs``: what the command will ask of the model (``"loglikelihood"``, ``"generate"``,
    ``"sample"``); an engine whose module lists what it can do in ``CAN`` and lacks one of them is
    refused here with its own reason (its ``NO_LOGLIK`` for log-likelihoods), as an InputError."""
    from synthprobe.errors import InputError

    kind, rest = split_kind(spec)
    module = _engine(kind)
    missing = [n for n in needs if not engine_can(spec, n)]
    if missing:
        reason = getattr(module, "NO_LOGLIK", None) if "loglikelihood" in missing else None
        raise InputError(
            reason or f"the {kind} engine cannot do what this command needs: {', '.join(missing)}", field="--model"
        )
    check = getattr(module, "check", None)
    if check is not None:
        check(rest, **options)


def identify_backend(spec: str, **options) -> Any | None:
    """A stand-in for ``spec``'s backend that knows its identity in the score cache (name,
    fingerprint, dtype, BOS, tokenizer) without loading its weights, or None where the engine
    cannot tell it before loading (an engine without ``identify``, files not on this machine, any
    failure: the caller then reckons the model's items as work, as it would without this)."""
    kind, rest = split_kind(spec)
    identify = getattr(_engine(kind), "identify", None)
    if identify is None:
        return None
    try:
        return identify(rest, **options)
    except Exception:  # an estimate's refinement: a model it cannot read is reckoned in full
        return None


def load_backend(spec: str, **options) -> Backend:
    """Load ``[kind:]spec`` with the engine of ``kind`` (default ``hf``) and return its backend."""
    kind, rest = split_kind(spec)
    return _engine(kind).load(rest, **options)


class TextEmbedder:
    """Texts -> a float32 array, one row per text, from the model ``spec`` loaded on first use
    (once); each distinct text is embedded once however often it is asked for."""

    def __init__(self, spec: str, options: dict[str, Any]):
        self.spec, self.options = spec, options
        self.backend: Backend | None = None
        self.seen: dict[str, Any] = {}

    def __call__(self, texts):
        import numpy as np

        texts = list(texts)
        new = sorted({t for t in texts if t not in self.seen})
        if new:
            if self.backend is None:
                self.backend = load_backend(self.spec, **self.options)
            for text, row in zip(new, self.backend.embed(new)):
                self.seen[text] = row
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self.seen[t] for t in texts])

    def describe(self) -> dict[str, Any]:
        if self.backend is None:
            return {"model": self.spec}
        return {"model": self.backend.name, "fingerprint": self.backend.fingerprint}

    def close(self) -> None:
        if self.backend is not None:
            self.backend.close()
            self.backend = None


def text_embedder(spec: str, **options) -> TextEmbedder:
    """A :class:`TextEmbedder` of the model ``spec`` (an engine that can ``embed``); nothing loads
    until its first call, and ``close()`` frees the model. An engine that cannot embed, or a spec
    its engine refuses, fails here, before anything loads."""
    from synthprobe.errors import InputError

    if not engine_can(spec, "embed"):
        raise InputError(
            f"the engine of {spec!r} gives no text embeddings; use a transformers model", field="--embedder"
        )
    check_backend(spec, **options)
    return TextEmbedder(spec, options)
