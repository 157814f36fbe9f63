"""The chat-completions engine: ``--model openai-chat:URL`` (vLLM, SGLang, TGI, llama-server, hosted APIs).

``openai-chat:http://127.0.0.1:8000/v1`` sends every prompt to ``POST /v1/chat/completions``; the
server applies the model's chat template. Everything else is the ``openai:`` engine's
(:mod:`synthprobe.backends.openai`): the async client, the bound on requests in flight and its
adaptation to a server that pushes back (429/503, ``Retry-After``), retries, the deadline of a
request, the API-key rules, the token accounting and ``--max-tokens-total``, the identity block
and the per-item score cache. The options (``--model-arg``) are the same.

Generation and first tokens only (``first_token_chat``: ``logprobs: true, top_logprobs: top_k``,
read from ``choices[0].logprobs.content[0].top_logprobs``). A chat endpoint returns no prompt
log-probabilities, so ``loglikelihood`` and multiple choice by log-likelihood are refused;
commands check this before anything loads (:data:`CAN`, :func:`synthprobe.backends.check_backend`)
and name the protocols that work.

Prompts: :meth:`OpenAIChatBackend.generate` and ``sample`` take, per prompt, either a string (sent
as one user message) or a conversation: a list of ``{"role": "system"|"user"|"assistant",
"content": str}`` messages, sent as given; ``generate_chat(conversations, ...)`` (the backend
contract's chat request) takes conversations only. All of them go through one request builder.
``generate`` is greedy (``temperature=0``).

Identity: ``fingerprint`` is ``openai-chat:<model id>@<url>`` (its own, as the server's template
shapes every answer), ``describe()`` says ``endpoint: /chat/completions`` and
``chat_template: "server"`` (the template is the server's; its text cannot be read through the API).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthprobe.backends import openai
from synthprobe.backends.base import FirstToken, ScoringError

ENGINE = "openai-chat"
ROLES = ("system", "user", "assistant")

#: What this engine can do (see :func:`synthprobe.backends.check_backend`'s ``needs``).
CAN = frozenset({"generate", "sample", "first_token"})

#: Why log-likelihoods are refused, and what works instead.
NO_LOGLIK = (
    f"the {ENGINE} engine cannot score log-likelihoods: a chat endpoint (/v1/chat/completions) "
    "returns no prompt log-probabilities. Use a generation protocol with it (--protocol letters "
    "or --protocol free), or the openai: engine on a server that implements echo on /v1/completions"
)


def as_messages(prompt: Any) -> list[dict[str, str]]:
    """A prompt as chat messages: a string becomes one user message; a list of messages is checked
    (each a role from :data:`ROLES` and a string content) and returned as plain dicts."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    if not isinstance(prompt, (list, tuple)) or not prompt:
        raise TypeError(f"a chat prompt is a string or a non-empty list of messages, got {type(prompt).__name__}")
    out = []
    for k, m in enumerate(prompt):
        role = m.get("role") if isinstance(m, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if role not in ROLES or not isinstance(content, str):
            raise TypeError(
                f"message {k} must be {{'role': one of {', '.join(ROLES)}, 'content': str}}, got {m!r}"[:300]
            )
        out.append({"role": role, "content": content})
    return out


class OpenAIChatBackend(openai.OpenAIBackend):
    """A model behind ``/v1/chat/completions`` (see the module docstring)."""

    engine = ENGINE
    endpoint = "/chat/completions"
    per_choice_tokens = {"logprobs": True, "top_logprobs": 0}

    def _prompt_body(self, prompt: Any) -> dict[str, Any]:
        return {"messages": as_messages(prompt)}

    @staticmethod
    def _choice_text(choice: dict) -> Any:
        message = choice.get("message")
        return message.get("content") if isinstance(message, dict) else None

    @staticmethod
    def _choice_tokens(choice: dict) -> list | None:
        lp = choice.get("logprobs")
        own = lp.get("content") if isinstance(lp, dict) else None
        return own if isinstance(own, list) else None

    #: The server renders every conversation with the model's own template.
    server_chat_template = True

    @staticmethod
    def _own_template_only(template: str | None) -> None:
        if template is not None:
            raise ValueError(
                f"the {ENGINE} engine cannot apply a chat template of its own: the server "
                "renders the conversation with the model's template; leave --chat-template out "
                "(or 'auto') with it"
            )

    def generate_chat(
        self,
        conversations: Sequence[Any],
        max_new_tokens: int,
        stop=None,
        *,
        template: str | None = None,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
    ):
        """Greedy replies to conversations (lists of messages), sent as they are: the server applies
        its own chat template, so ``template`` (another template's text) cannot be honoured here."""
        self._own_template_only(template)
        if isinstance(conversations, (str, dict)) or any(isinstance(c, str) for c in conversations):
            raise TypeError("conversations must be a sequence of message lists")
        return self.generate(
            list(conversations), max_new_tokens, stop, batch_size=batch_size, progress=progress, details=details
        )

    def _top_request(self, top_k: int) -> dict[str, Any]:
        return {"logprobs": True, "top_logprobs": top_k}

    top_fields = ("logprobs: true, top_logprobs: top_k", "choices[0].logprobs.content[0].top_logprobs")

    @staticmethod
    def _first_alternatives(choice: dict) -> list[tuple[Any, Any]] | None:
        """``logprobs.content[0].top_logprobs``: a list of ``{"token", "logprob"}`` objects."""
        lp = choice.get("logprobs")
        content = lp.get("content") if isinstance(lp, dict) else None
        first = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else None
        tops = first.get("top_logprobs") if first is not None else None
        if not isinstance(tops, list) or not tops or not all(isinstance(t, dict) for t in tops):
            return None
        return [(t.get("token"), t.get("logprob")) for t in tops]

    def first_token_chat(
        self,
        conversations: Sequence[Any],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop=None,
        *,
        template: str | None = None,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]:
        """The first token of the reply to each conversation, sent as it is (the server applies its
        own template, so ``template`` is refused as in :meth:`generate_chat`); see
        :meth:`~synthprobe.backends.openai.OpenAIBackend.first_token`. ``first_token`` itself takes
        strings as one user message each, as ``generate`` does."""
        self._own_template_only(template)
        if isinstance(conversations, (str, dict)) or any(isinstance(c, str) for c in conversations):
            raise TypeError("conversations must be a sequence of message lists")
        return self.first_token(
            list(conversations), candidates, max_new_tokens, stop, top_k=top_k, batch_size=batch_size, progress=progress
        )

    def loglikelihood(self, pairs, **kwargs):
        raise ScoringError(NO_LOGLIK)

    def run_choices(self, items, **kwargs):
        raise ScoringError(NO_LOGLIK)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "chat_template": "server"}


def check(spec: str, **options) -> None:
    """Check the URL and options before anything is sent (raises :class:`InputError`)."""
    openai._settings(spec, options, ENGINE)


def load(spec: str, **options) -> OpenAIChatBackend:
    """Connect to the server at ``spec`` (or ``base_url``), pick the model and return the backend."""
    settings = openai._settings(spec, options, ENGINE)
    return OpenAIChatBackend(settings, progress=bool(options.get("progress", True)))


def identify(spec: str, **options) -> OpenAIChatBackend:
    """As :func:`synthprobe.backends.openai.identify`: the backend itself (no weights to spare)."""
    return load(spec, **options)
