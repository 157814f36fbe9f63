"""The model backend protocol: what every scorer and task needs from a causal LM.

A backend wraps one loaded model and its tokenizer and offers three operations:

``score_choices(items)``
    For multiple-choice items (anything with ``ctx`` and ``endings``, e.g.
    :class:`synthprobe.formats.arithmark3.MCItem`) return, per item, one :class:`EndingScore`
    per ending: the summed log-probability of the ending's tokens given the context, the
    number of ending tokens, the number of characters, and whether every ending token was
    the model's greedy (argmax) choice. Tokenisation follows the ArithMark 3.0 protocol:
    context and ending are encoded separately without special tokens and concatenated.

``loglikelihood(pairs)``
    The same quantity for free ``(context, continuation)`` string pairs, returned as one
    :class:`EndingScore` per pair.

``generate(prompts, max_new_tokens, stop)``
    Greedy continuations, delegated to :func:`synthprobe.backends.hf.generate.greedy_generate`
    (``details=True``: each continuation also says how it ended — stop string, end of
    sequence, or cut at ``max_new_tokens``).

``sample(prompts, n=, temperature=, seeds=, max_new_tokens=)``
    ``n`` sampled continuations per prompt, one seeded generator per prompt so a prompt's
    samples do not depend on the rest of the batch; delegated to
    :func:`synthprobe.backends.hf.generate.sample_generate`.

plus the identity fields ``name``, ``fingerprint`` (a stable hash of the weights, config and
tokenizer, independent of dtype and device), ``n_params``, ``dtype`` and ``device``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable


class ModelLoadError(RuntimeError):
    """A model could not be resolved or loaded. ``str(err)`` is the message shown to the user."""


class ScoringError(RuntimeError):
    """Scoring could not be carried out for a reason that is not bad input (e.g. out of memory)."""


@dataclass(frozen=True)
class EndingScore:
    """The score of one continuation given its context."""

    #: Sum of the continuation tokens' log-probabilities (natural log, computed in fp32).
    logprob: float
    #: Number of continuation tokens.
    n_tokens: int
    #: Number of characters of the continuation string (leading space included).
    n_chars: int
    #: True when every continuation token is the argmax of the model's next-token distribution.
    is_greedy: bool

    @property
    def per_token(self) -> float:
        """Mean log-probability per token (ArithMark 3.0's normalised score)."""
        return self.logprob / max(self.n_tokens, 1)

    @property
    def per_char(self) -> float:
        """Log-probability per character (lm-eval's ``acc_norm`` normalisation)."""
        return self.logprob / max(self.n_chars, 1)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Called once per finished item with ``(index in the input list, scores of its endings)``.
ItemCallback = Callable[[int, list[EndingScore]], None]


@runtime_checkable
class Backend(Protocol):
    """What :func:`synthprobe.backends.load_backend` returns."""

    name: str
    fingerprint: str
    n_params: int
    dtype: str
    device: str

    def score_choices(self, items: Sequence[Any], *, batch_size: int = 32, max_context: int = 1024,
                      scorer: str = "onepass", progress: bool = True,
                      on_item: ItemCallback | None = None) -> list[list[EndingScore]]:
        ...

    def loglikelihood(self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32,
                      max_context: int = 1024, progress: bool = False) -> list[EndingScore]:
        ...

    def generate(self, prompts: Sequence[str], max_new_tokens: int, stop: str | Sequence[str] | None = None,
                 *, batch_size: int = 16, progress: bool = True, details: bool = False,
                 skip_leading_whitespace: bool = False) -> list[str] | list[Any]:
        ...

    def sample(self, prompts: Sequence[str], *, n: int, temperature: float, seeds: Sequence[int],
               max_new_tokens: int, top_p: float = 1.0, stop: str | Sequence[str] | None = None,
               batch_size: int = 16, progress: bool = True,
               skip_leading_whitespace: bool = False) -> list[list[Any]]:
        ...

    def describe(self) -> dict[str, Any]:
        ...
