"""Two one-line helpers for quick experiments, as in the benchmark cards' quickstart.

``model`` is a loaded backend (from :func:`synthprobe.models.load_backend`) or a model spec
string (``"smollm2-135m-instruct"``, a local folder, a ``.gguf`` file or a hub id); a spec is
loaded once and kept for later calls.

>>> import synthprobe
>>> synthprobe.generate("smollm2-135m-instruct", "Q: What is 2 plus 2?\\n\\nA:", max_new_tokens=4, stop="\\n")
>>> synthprobe.loglik("smollm2-135m-instruct", "Q: What is 2 plus 2?\\n\\nA:", " 4")

``loglik`` tokenises context and continuation separately without special tokens (the
multiple-choice scorer's protocol); ``generate`` decodes greedily.
"""

from __future__ import annotations

import functools
from typing import Sequence


@functools.lru_cache(maxsize=2)
def _load(spec: str):
    from synthprobe.models import load_backend

    return load_backend(spec, progress=False)


def _backend(model):
    if isinstance(model, str):
        return _load(model)
    if not (hasattr(model, "loglikelihood") and hasattr(model, "generate")):
        raise TypeError(f"expected a model spec string or a loaded backend, got {type(model).__name__}")
    return model


def loglik(model, context: str, continuation: str) -> float:
    """Sum of the log-probabilities of ``continuation``'s tokens given ``context``."""
    return float(_backend(model).loglikelihood([(context, continuation)])[0].logprob)


def generate(model, prompt: str, max_new_tokens: int = 32, stop: str | Sequence[str] | None = None) -> str:
    """The greedy continuation of ``prompt``, cut before the first ``stop`` string."""
    return _backend(model).generate([prompt], max_new_tokens, stop, progress=False)[0]
