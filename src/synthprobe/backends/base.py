"""The model contract: everything a scorer, a task, a probe or the study needs from a causal LM.

Every engine (``backends/hf`` today; one file or folder per engine) returns a :class:`Backend`
from ``load(spec, **options)``; nothing outside ``backends/`` touches a tokenizer or a model.

``loglikelihood(pairs)``
    ``log P(continuation | context)`` for free ``(context, continuation)`` string pairs, one
    :class:`EndingScore` per pair (summed log-probability, tokens, characters, greedy or not).

``score_choices(items)`` / ``run_choices(items)``
    For multiple-choice items (anything with ``ctx`` and ``endings``) one :class:`EndingScore`
    per ending; ``run_choices`` also says which scorer ran, what was truncated and how long it
    took (:class:`ChoiceRun`), and calls ``on_item`` as each item finishes.

``generate(prompts, max_new_tokens, stop)`` / ``sample(prompts, n=, temperature=, seeds=, ...)``
    Greedy continuations (``details=True``: :class:`Generation` objects saying how each ended)
    and ``n`` seeded samples per prompt.

``generate_chat(conversations, max_new_tokens, stop, *, template=None, ...)``
    The same greedy continuations for chat requests: each request is a conversation, a list of
    :data:`Message` dicts ``{"role": "system"|"user"|"assistant", "content": str}``, and the
    model answers as the assistant. Same keywords and return shape as ``generate``.
    ``template``: Jinja text of a chat template to use instead of the model's own (``None``:
    the model's own). In-process engines render the conversation with ``render_chat`` and call
    ``generate`` (:class:`BaseBackend` does this); a chat-only HTTP engine sends the messages.

``first_token(prompts, candidates, max_new_tokens, stop, *, top_k=20, ...)`` / ``first_token_chat(...)``
    The next-token distribution where a greedy answer starts, read in the same pass that starts
    it: per prompt a :class:`FirstToken` with the log-probability of each ``candidates`` string
    as the first generated token (e.g. the letters ``"A"`` and ``" A"``), the ``top_k`` most
    likely first tokens, and the greedy continuation of at most ``max_new_tokens`` tokens, cut
    at ``stop`` (:class:`Generation`: one decoding step after the first token shows whether the
    answer ends there). In process the continuation is exactly what ``generate`` returns for
    the same prompts and batches; a server returns its ``top_logprobs``. Engines list
    ``"first_token"`` in ``CAN``; the others raise :class:`ScoringError`.

``render_chat(conversations, *, template=None)``
    Each conversation as the prompt text the model sees, with the generation prompt (the start
    of the assistant turn) added, as ``tokenizer.apply_chat_template(..., tokenize=False,
    add_generation_prompt=True)`` renders it. A model without a template (and no ``template``
    given), or a template that fails to render, raises :class:`ChatTemplateError`.
    ``chat_template_text()`` is the model's own template (None when it has none or the engine
    cannot see it, e.g. a server).

What an engine can do at all (log-likelihoods, generation, sampling) is its module's ``CAN`` set,
read before anything loads (:func:`synthprobe.backends.engine_can`, ``check_backend(needs=...)``);
a chat-only endpoint lacks ``loglikelihood`` and raises in ``loglikelihood``/``run_choices``.

``server_chat_template``
    True when the engine's server renders every prompt with the model's own chat template (a
    chat endpoint): a question is then always written as a user turn, with or without
    ``--chat-template`` (:meth:`synthprobe.backends.chat.ChatSetup.user_turns`).

``prompt_lengths(texts)``
    The lengths a run orders its prompts by to form batches, longest first: an engine holding
    the model's tokenizer (HF, vLLM) gives token counts, so a padded batch holds prompts of
    nearly one length; the others characters (a server batches on its own).

``count_tokens(text)``, ``describe()``, ``runtime()``, ``close()``
    plus the identity fields ``name``, ``fingerprint``, ``n_params``, ``dtype``, ``device``,
    ``bos`` and ``max_length`` (the model's positions, or None).

:class:`BaseBackend` gives ``score_choices``/``run_choices`` from ``loglikelihood`` (as
lm-eval's ``TemplateLM`` builds multiple choice from log-likelihoods), a ``sample`` that says
the engine cannot sample, and the rest, so a new engine implements ``loglikelihood`` and
``generate`` only. :class:`TokenizerBackend` adds what an engine holding a Hugging Face
tokenizer (the HF and vLLM engines) reads from it: chat rendering, the template's text and
token counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from synthprobe.backends.bos import BosNeed
from synthprobe.backends.conversation import ChatTemplateError, Message


class ModelLoadError(RuntimeError):
    """A model could not be resolved or loaded. ``str(err)`` is the message shown to the user."""


class ScoringError(RuntimeError):
    """Scoring could not be carried out for a reason that is not bad input (e.g. out of memory)."""


class TokenBudgetSpent(ScoringError):
    """A server-backed engine reached its token budget (``--max-tokens-total``) and sent nothing more;
    the answers that came back are kept (the runner caches them, so the same command resumes)."""


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

#: :meth:`Backend.run_choices`'s ``on_item``: ``(index, scores of its endings, context truncated)``.
ChoiceCallback = Callable[[int, list[EndingScore], bool], None]


#: The multiple-choice scorers an engine may offer (``--scorer``); engines without a one-pass
#: path run every request on its own, which is what ``reference`` means.
SCORERS = ("onepass", "reference")

#: Why a continuation ended: a stop string, an end-of-sequence token, or the token budget.
FinishReason = Literal["stop", "eos", "length"]


@dataclass(frozen=True)
class Generation:
    """One continuation and how it ended."""

    text: str
    finish: FinishReason
    #: Generated tokens (the end-of-sequence token not counted by in-process engines; a server's usage
    #: may count it, as vLLM does).
    n_tokens: int
    #: Prompt tokens as the engine counted them, where it reports them (a server's ``usage``); else None.
    prompt_tokens: int | None = field(default=None, compare=False)

    @property
    def finished(self) -> bool:
        """True when a stop string or an end-of-sequence token ended it; False when the
        ``max_new_tokens`` budget ran out first (the text is truncated)."""
        return self.finish != "length"


@dataclass(frozen=True)
class FirstToken:
    """The distribution of the first generated token after a prompt, and the greedy answer that
    starts with its most likely token (:meth:`Backend.first_token`)."""

    #: Each candidate string's log-probability as the first generated token (natural log, fp32);
    #: None where the string is not one token of the vocabulary, or where the engine returned only
    #: its ``top_k`` most likely tokens and the string was not among them (then it is below the
    #: last of ``top``).
    candidates: dict[str, float | None]
    #: The most likely first tokens as ``(text, logprob)``, most likely first.
    top: tuple[tuple[str, float], ...]
    #: The greedy continuation, at most ``max_new_tokens`` tokens, cut at the stop strings.
    generation: Generation
    #: How many of the most likely tokens the engine returned; None: the whole vocabulary was read
    #: (every candidate's log-probability is exact).
    top_k: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": dict(self.candidates),
            "top": [list(t) for t in self.top],
            "text": self.generation.text,
            "finish": self.generation.finish,
            "n_tokens": self.generation.n_tokens,
            "top_k": self.top_k,
        }


def first_token_arguments(candidates: Sequence[str], max_new_tokens: Any, top_k: Any) -> list[str]:
    """The checked arguments of a ``first_token`` call, for every engine: the candidates as a list.
    Raises ``TypeError`` / ``ValueError`` naming the argument that is out of range."""
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
        raise ValueError(f"top_k must be an integer >= 1, got {top_k!r}")
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be >= 1 to read a first token, got {max_new_tokens!r}")
    if isinstance(candidates, str):
        raise TypeError("candidates must be a sequence of strings, not one string")
    out = list(candidates)
    for c in out:
        if not isinstance(c, str) or not c:
            raise ValueError(f"candidates must be non-empty strings, got {c!r}")
    return out


@dataclass
class ChoiceRun:
    """Scores of one multiple-choice run plus how it went."""

    scores: list[list[EndingScore]]
    #: Per item: whether its context was left-truncated to fit ``max_context``.
    truncated: list[bool]
    scorer_used: str
    fallback_reason: str | None = None
    #: JSON-ready timing (``tokenize_s``, ``eval_s``, ``items_per_s``, ...).
    timing: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    """What :func:`synthprobe.backends.load_backend` returns."""

    name: str
    fingerprint: str
    n_params: int | None
    dtype: str
    device: str
    bos: bool
    max_length: int | None
    server_chat_template: bool

    def loglikelihood(
        self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32, max_context: int = 1024, progress: bool = False
    ) -> list[EndingScore]: ...

    def score_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ItemCallback | None = None,
    ) -> list[list[EndingScore]]: ...

    def run_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ChoiceCallback | None = None,
        desc: str | None = None,
        source: str | None = None,
    ) -> ChoiceRun: ...

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
        skip_leading_whitespace: bool = False,
    ) -> list[str] | list[Generation]: ...

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        seeds: Sequence[int],
        max_new_tokens: int,
        top_p: float = 1.0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 16,
        progress: bool = True,
        skip_leading_whitespace: bool = False,
    ) -> list[list[Generation]]: ...

    def generate_chat(
        self,
        conversations: Sequence[Sequence[Message]],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        template: str | None = None,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
    ) -> list[str] | list[Generation]: ...

    def first_token(
        self,
        prompts: Sequence[str],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]: ...

    def first_token_chat(
        self,
        conversations: Sequence[Sequence[Message]],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        template: str | None = None,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]: ...

    def render_chat(self, conversations: Sequence[Sequence[Message]], *, template: str | None = None) -> list[str]: ...

    def chat_template_text(self, name: str | None = None) -> str | None: ...

    def prompt_lengths(self, texts: Sequence[str]) -> list[int]: ...

    def count_tokens(self, text: str) -> int: ...

    def describe(self) -> dict[str, Any]: ...

    def runtime(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class BaseBackend:
    """Defaults for an engine: subclass it, set the identity fields, implement
    :meth:`loglikelihood` and :meth:`generate`; override the rest where the engine can do better."""

    name: str = "model"
    fingerprint: str = ""
    n_params: int | None = None
    dtype: str = "float32"
    device: str = "cpu"
    bos: bool = False
    #: what the model was trained with (:mod:`synthprobe.backends.bos`): nothing known by default
    bos_need: BosNeed = BosNeed(None)
    max_length: int | None = None
    server_chat_template: bool = False

    def loglikelihood(
        self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32, max_context: int = 1024, progress: bool = False
    ) -> list[EndingScore]:
        raise NotImplementedError(f"{type(self).__name__} does not implement loglikelihood")

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
        skip_leading_whitespace: bool = False,
    ) -> list[str] | list[Generation]:
        raise NotImplementedError(f"{type(self).__name__} does not implement generate")

    def run_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ChoiceCallback | None = None,
        desc: str | None = None,
        source: str | None = None,
    ) -> ChoiceRun:
        """Every ending of every item through :meth:`loglikelihood`, one item's endings per call
        (so ``on_item`` fires as each item finishes); the scorer used is always ``reference``."""
        t0 = time.perf_counter()
        scores: list[list[EndingScore]] = []
        for k, item in enumerate(items):
            row = list(
                self.loglikelihood(
                    [(item.ctx, e) for e in item.endings],
                    batch_size=batch_size,
                    max_context=max_context,
                    progress=False,
                )
            )
            scores.append(row)
            if on_item is not None:
                on_item(k, row, False)
        eval_s = time.perf_counter() - t0
        reason = None if scorer == "reference" else f"{type(self).__name__} scores each ending on its own"
        return ChoiceRun(
            scores=scores,
            truncated=[False] * len(scores),
            scorer_used="reference",
            fallback_reason=reason,
            timing={
                "eval_s": round(eval_s, 3),
                "items_per_s": round(len(scores) / eval_s, 3) if scores and eval_s > 0 else None,
            },
        )

    def score_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ItemCallback | None = None,
    ) -> list[list[EndingScore]]:
        return self.run_choices(
            items,
            batch_size=batch_size,
            max_context=max_context,
            scorer=scorer,
            progress=progress,
            on_item=None if on_item is None else lambda k, s, _t: on_item(k, s),
        ).scores

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        seeds: Sequence[int],
        max_new_tokens: int,
        top_p: float = 1.0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 16,
        progress: bool = True,
        skip_leading_whitespace: bool = False,
    ) -> list[list[Generation]]:
        raise ScoringError(f"the {type(self).__name__} engine cannot sample; use temperature 0 (greedy decoding)")

    def generate_chat(
        self,
        conversations: Sequence[Sequence[Message]],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        template: str | None = None,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
    ) -> list[str] | list[Generation]:
        """Render each conversation with :meth:`render_chat` and continue it with :meth:`generate`
        (greedy). The rendered prompt ends with the assistant turn's opening, so the text that
        comes back is the assistant's answer. A chat-only engine overrides this to send the
        messages themselves."""
        prompts = self.render_chat(conversations, template=template)
        return self.generate(prompts, max_new_tokens, stop, batch_size=batch_size, progress=progress, details=details)

    def first_token(
        self,
        prompts: Sequence[str],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]:
        raise ScoringError(
            f"the {type(self).__name__} engine cannot read next-token probabilities; "
            "use a protocol that generates (letters, free)"
        )

    def first_token_chat(
        self,
        conversations: Sequence[Sequence[Message]],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        template: str | None = None,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]:
        """Render each conversation with :meth:`render_chat` and read it with :meth:`first_token`;
        a chat-only engine overrides this to send the messages themselves."""
        prompts = self.render_chat(conversations, template=template)
        return self.first_token(
            prompts, candidates, max_new_tokens, stop, top_k=top_k, batch_size=batch_size, progress=progress
        )

    def render_chat(self, conversations: Sequence[Sequence[Message]], *, template: str | None = None) -> list[str]:
        raise ChatTemplateError(f"the {type(self).__name__} engine cannot render chat templates")

    def chat_template_text(self, name: str | None = None) -> str | None:
        """The model's own chat template (Jinja text; ``name``: one of its named templates), or None."""
        return None

    def prompt_lengths(self, texts: Sequence[str]) -> list[int]:
        """What orders ``texts`` into batches, longest first: here their characters (an engine
        that sends each prompt on its own, or whose server batches, gains nothing from more)."""
        return [len(t) for t in texts]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text``; by default its UTF-8 bytes, an upper bound for byte-level vocabularies."""
        return len(text.encode("utf-8"))

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": type(self).__name__,
            "params": self.n_params,
            "fingerprint": self.fingerprint,
            "dtype": self.dtype,
            "device": self.device,
            "bos": self.bos,
            "max_positions": self.max_length,
        }

    def runtime(self) -> dict[str, Any]:
        """Library versions and thread settings recorded beside scores (none by default)."""
        return {}

    def close(self) -> None:
        pass


class TokenizerBackend(BaseBackend):
    """An engine that holds the model's Hugging Face tokenizer in ``tokenizer`` (the HF and vLLM
    engines): chat rendering, the chat template's text and token counts come from it."""

    tokenizer: Any

    def render_chat(self, conversations: Sequence[Any], *, template: str | None = None) -> list[str]:
        """Conversations as prompt text through the tokenizer's chat template (or ``template``);
        see :func:`synthprobe.backends.chat.render_with_tokenizer`."""
        from synthprobe.backends.chat import render_with_tokenizer

        return render_with_tokenizer(self.tokenizer, conversations, template=template, where=self.name)

    def chat_template_text(self, name: str | None = None) -> str | None:
        from synthprobe.backends.chat import tokenizer_template

        return tokenizer_template(self.tokenizer, name)

    def prompt_lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts of ``texts`` (one tokenizer call): batches formed by them hold prompts of
        nearly one length, so a padded batch pads little (ordered by characters, the release's
        prompts padded 8 % of a prompt pass; by tokens 0.5 %)."""
        texts = list(texts)
        if not texts:
            return []
        return [len(ids) for ids in self.tokenizer(texts, add_special_tokens=False)["input_ids"]]

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as a prompt is encoded for generation (no special tokens)."""
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
