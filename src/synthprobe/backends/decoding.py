"""Model access for the probes and the news study, built on synthprobe's shared backend.

The model is a backend (:func:`synthprobe.backends.load_backend`, so ``--bos``, ``--dtype`` and
``--device`` mean what they mean for scoring, and the backend's fingerprint identifies the
weights). :func:`generate` draws continuations through it:

* temperature 0 -- the backend's batched greedy decoding
  (:func:`synthprobe.backends.hf.generate.greedy_generate`), one continuation per prompt;
* temperature > 0 -- :func:`synthprobe.backends.hf.generate.sample_generate`: all ``n`` samples of
  a prompt in one batch, drawn with a :class:`torch.Generator` seeded from the prompt's seed,
  so the same seed gives the same text.

Every continuation is stripped of surrounding whitespace and cut before the first stop
string; stop strings count only after the answer's leading whitespace (a prompt ending in
``is:`` may be answered on the next line). Each one also says whether it ended by itself (a
stop string or end-of-sequence token) or ran into ``max_new_tokens`` (truncated).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from synthprobe.backends.base import Generation
from synthprobe.errors import InputError


@dataclass(frozen=True)
class Sampling:
    """How continuations are drawn. ``temperature == 0`` means greedy decoding (``n`` must be 1)."""

    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    max_new_tokens: int = 64

    def __post_init__(self):
        if not (self.temperature >= 0 and self.temperature <= 10):
            raise InputError(f"temperature must be in [0, 10], got {self.temperature}", field="--temperature")
        if not (0 < self.top_p <= 1):
            raise InputError(f"top-p must be in (0, 1], got {self.top_p}", field="--top-p")
        if self.n < 1 or self.n > 64:
            raise InputError(f"the number of samples must be 1..64, got {self.n}", field="--samples")
        if self.temperature == 0 and self.n != 1:
            raise InputError(
                "greedy decoding (temperature 0) gives one continuation; use --samples 1 or a temperature above 0",
                field="--samples",
            )
        if self.max_new_tokens < 1 or self.max_new_tokens > 8192:
            raise InputError(f"max new tokens must be 1..8192, got {self.max_new_tokens}", field="--max-new-tokens")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decoding"] = "greedy" if self.greedy else "sampling (temperature, top-p; top-k off)"
        return d


def describe(backend) -> dict[str, Any]:
    """What output files record about the model: the backend's description (name, fingerprint,
    dtype, device, BOS, library versions, ...)."""
    return backend.describe()


def as_chat(backend, prompts: Sequence[str], chat=None) -> list:
    """``prompts`` as ``backend`` is to be asked them under ``chat`` (a
    :class:`~synthprobe.backends.chat.ChatSetup`, ``--chat-template`` / ``--system-prompt``): each
    one the user turn of a conversation, rendered by the template for an in-process engine, sent as
    messages to a chat endpoint (whose server applies the model's template); unchanged without."""
    prompts = list(prompts)
    if chat is None or not chat.enabled:
        return prompts
    conversations = [chat.conversation(p) for p in prompts]
    if getattr(backend, "server_chat_template", False):
        if chat.template_arg is not None:
            raise InputError(
                "a chat endpoint renders every conversation with the model's own template; use "
                "--chat-template auto with it",
                field="--chat-template",
            )
        return conversations
    return backend.render_chat(conversations, template=chat.template_arg)


def generate(
    backend,
    prompts: Sequence[str],
    sampling: Sampling,
    *,
    seeds: Sequence[int] | None = None,
    stop: Sequence[str] = (),
    progress: bool = False,
    chat=None,
) -> list[list[Generation]]:
    """``sampling.n`` continuations per prompt (see the module docstring); with ``chat`` (a
    :class:`~synthprobe.backends.chat.ChatSetup`) every prompt is a user turn (:func:`as_chat`).

    ``seeds`` (one per prompt) is needed for sampling and ignored by greedy decoding. Raises
    :class:`InputError` when a prompt plus ``max_new_tokens`` does not fit the model's context.
    """
    prompts = as_chat(backend, prompts, chat)
    try:
        if sampling.greedy:
            out = backend.generate(
                prompts,
                sampling.max_new_tokens,
                list(stop) or None,
                progress=progress,
                details=True,
                skip_leading_whitespace=True,
            )
            runs = [[g] for g in out]
        else:
            if seeds is None:
                raise ValueError("sampling needs one seed per prompt")
            runs = backend.sample(
                prompts,
                n=sampling.n,
                temperature=sampling.temperature,
                top_p=sampling.top_p,
                seeds=list(seeds),
                max_new_tokens=sampling.max_new_tokens,
                stop=list(stop) or None,
                progress=progress,
                skip_leading_whitespace=True,
            )
    except ValueError as exc:
        if "exceeds the model's" in str(exc):
            raise InputError(f"{exc}; use fewer or shorter items or a smaller --max-new-tokens") from None
        raise
    return [[replace(g, text=g.text.strip()) for g in run] for run in runs]
