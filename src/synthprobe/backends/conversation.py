"""A chat conversation as every engine takes it: a list of :data:`Message` turns, checked once
(:func:`check_conversations`), and the error a conversation that cannot be rendered raises.

Its own module so that the model contract (:mod:`synthprobe.backends.base`) and the chat
rendering (:mod:`synthprobe.backends.chat`) both read it without importing each other.
"""

from __future__ import annotations

from typing import Any

from synthprobe.errors import InputError

__all__ = ["ROLES", "ChatTemplateError", "Message", "check_conversations"]

#: One chat turn: ``{"role": "system" | "user" | "assistant", "content": text}``.
Message = dict[str, str]

#: The roles a :data:`Message` may carry.
ROLES = ("system", "user", "assistant")


class ChatTemplateError(InputError):
    """A conversation could not be rendered: the model has no chat template and none was given,
    or the template failed to render: bad input, so a command ends with exit status 2."""


def check_conversations(conversations: Any) -> list[list[Message]]:
    """The conversations of a chat request, checked: a sequence of non-empty lists of
    :data:`Message` dicts with a known role and string content. Raises ``TypeError`` /
    ``ValueError`` naming the conversation and turn at fault."""
    if isinstance(conversations, (str, dict)):
        raise TypeError("conversations must be a sequence of message lists")
    out: list[list[Message]] = []
    for i, conv in enumerate(conversations):
        if isinstance(conv, (str, dict)) or not conv:
            raise TypeError(f"conversation {i}: expected a non-empty list of messages, got {conv!r:.80}")
        turns: list[Message] = []
        for j, m in enumerate(conv):
            if not isinstance(m, dict) or m.get("role") not in ROLES or not isinstance(m.get("content"), str):
                raise ValueError(
                    f"conversation {i}, turn {j}: expected {{'role': one of {', '.join(ROLES)}, "
                    f"'content': str}}, got {m!r:.80}"
                )
            turns.append({"role": m["role"], "content": m["content"]})
        out.append(turns)
    return out
