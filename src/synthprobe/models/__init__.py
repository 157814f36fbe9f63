"""Model backends: load a causal LM from an alias, a local folder, a .gguf file or a hub id.

``load_backend(spec, ...)`` (see :mod:`synthprobe.models.hf`) returns a backend that scores
multiple-choice items, computes log-likelihoods and generates text. Imports are lazy so that
``import synthprobe.models`` does not pull in torch.
"""

from __future__ import annotations

from synthprobe.models.base import Backend, EndingScore, ModelLoadError, ScoringError
from synthprobe.models.resolve import EMBEDDED_ALIAS, ModelSpec, resolve_spec

__all__ = ["Backend", "EndingScore", "ModelLoadError", "ScoringError", "EMBEDDED_ALIAS", "ModelSpec",
           "resolve_spec", "load_backend"]


def load_backend(spec: str, **kwargs):
    """See :func:`synthprobe.models.hf.load_backend`."""
    from synthprobe.models.hf import load_backend as _load

    return _load(spec, **kwargs)
