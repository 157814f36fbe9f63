"""Model backends: load a causal LM from an alias, a local folder, a .gguf file or a hub id.

``load_backend(spec, ...)`` (see :mod:`synthprobe.backends.hf.backend`) returns a backend that scores
multiple-choice items, computes log-likelihoods and generates text. Imports are lazy so that
``import synthprobe.backends`` does not pull in torch.
"""

from __future__ import annotations

from synthprobe.backends.base import Backend, EndingScore, ModelLoadError, ScoringError
from synthprobe.backends.spec import EMBEDDED_ALIAS, ModelSpec, resolve_spec

__all__ = ["Backend", "EndingScore", "ModelLoadError", "ScoringError", "EMBEDDED_ALIAS", "ModelSpec",
           "resolve_spec", "load_backend"]


def load_backend(spec: str, **kwargs):
    """See :func:`synthprobe.backends.hf.backend.load_backend`."""
    from synthprobe.backends.hf.backend import load_backend as _load

    return _load(spec, **kwargs)
