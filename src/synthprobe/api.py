"""Two one-line helpers for quick experiments, as in the benchmark cards' quickstart.

``model`` is a loaded backend (from :func:`synthprobe.backends.load_backend`) or a model spec
string (``"smollm2-135m-instruct"``, a local folder, a ``.gguf`` file or a hub id); a spec is
loaded once and kept for later calls.

>>> import synthprobe
>>> synthprobe.generate("smollm2-135m-instruct", "Q: What is 2 plus 2?\\n\\nA:", max_new_tokens=4, stop="\\n")
>>> synthprobe.loglik("smollm2-135m-instruct", "Q: What is 2 plus 2?\\n\\nA:", " 4")

``loglik`` tokenises context and continuation separately without special tokens (the
multiple-choice scorer's protocol) and scores them over the model's full window (its
``max_length``), never cutting the context: a pair longer than the window raises
:class:`~synthprobe.errors.InputError`. ``generate`` decodes greedily.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence


@functools.lru_cache(maxsize=2)
def _load(spec: str):
    from synthprobe.backends import load_backend

    return load_backend(spec, progress=False)


def _backend(model):
    if isinstance(model, str):
        return _load(model)
    if not (hasattr(model, "loglikelihood") and hasattr(model, "generate")):
        raise TypeError(f"expected a model spec string or a loaded backend, got {type(model).__name__}")
    return model


def _request_tokens(backend, context: str, continuation: str) -> int:
    """Tokens of context (with the backend's BOS, if any) plus continuation, tokenised separately
    as the scorer feeds them; an empty context stands as one token (BOS, else EOS)."""
    if not isinstance(context, str) or not isinstance(continuation, str):
        raise TypeError(
            f"context and continuation must be strings, got {type(context).__name__} and {type(continuation).__name__}"
        )
    n_ctx = backend.count_tokens(context) if context else 0
    n_ctx = n_ctx + (1 if backend.bos else 0) if n_ctx else 1
    return n_ctx + backend.count_tokens(continuation)


def loglik(model, context: str, continuation: str) -> float:
    """Sum of the log-probabilities of ``continuation``'s tokens given ``context``.

    The whole context is used, up to the model's positions (the backend's ``max_length``);
    when context plus continuation need more tokens than that, :class:`InputError` says so
    instead of silently dropping the start of the context.
    """
    from synthprobe.errors import InputError

    backend = _backend(model)
    needed = _request_tokens(backend, context, continuation)
    limit = backend.max_length
    if isinstance(limit, int) and limit > 0:
        if needed > limit:
            raise InputError(
                f"context plus continuation are {needed:,} tokens, but "
                f"{getattr(backend, 'name', 'the model')} has only {limit:,} positions; "
                f"shorten the context",
                field="context",
            )
        window = limit
    else:  # the model names no limit: give the request all it needs
        window = needed
    return float(backend.loglikelihood([(context, continuation)], max_context=window)[0].logprob)


def generate(model, prompt: str, max_new_tokens: int = 32, stop: str | Sequence[str] | None = None) -> str:
    """The greedy continuation of ``prompt``, cut before the first ``stop`` string."""
    return _backend(model).generate([prompt], max_new_tokens, stop, progress=False)[0]
