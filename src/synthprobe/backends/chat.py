"""How a model is addressed: raw text, or conversations rendered by a chat template.

:class:`ChatSetup` is what ``--chat-template``, ``--system-prompt`` and ``--fewshot-as-multiturn``
say (built by :func:`synthprobe.commandline.chat_setup`), and :meth:`ChatSetup.identity` is the block
every results file records per model, so two runs that differ only in template never look alike:

``{"chat_template": "none" | "auto" | <file path>, "chat_template_name": the template's name,
"chat_template_sha256": SHA-256 of its text (UTF-8), "system_prompt": text or null,
"system_prompt_sha256": ..., "fewshot_layout": "plain" | "single-turn" | "multiturn"}``

``none`` (the default) is no template at all: every prompt goes to the model as the raw text it
always was, so every earlier score stands. ``auto`` is the model's own template (the tokenizer's
``chat_template``; the embedded SmolLM2-135M-Instruct carries a ChatML one in its GGUF file);
a NAME is one of the tokenizer's named templates (a tokenizer may ship several, e.g. ``default``
and ``tool_use``; ``auto`` is its ``default``), as lm-eval's ``--apply_chat_template NAME`` picks
it; a path is a Jinja file rendered as transformers renders a tokenizer's template. synthprobe
ships no templates of its own: the model's own template or a file says exactly what ran.

Rendering is the engine's (:meth:`~synthprobe.backends.base.Backend.render_chat`); this module
only decides and names. :func:`render_with_tokenizer` is the one rendering routine of the engines
that hold a Hugging Face tokenizer (HF, vLLM in process).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.backends.conversation import ChatTemplateError, Message, check_conversations
from synthprobe.errors import InputError

#: ``--chat-template`` values that are not paths.
NONE, AUTO = "none", "auto"

#: What a template NAME looks like (anything else, or a name with a template file's suffix, is a path).
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_FILE_SUFFIXES = (".jinja", ".jinja2", ".j2", ".txt", ".tmpl")


def looks_like_name(value: str) -> bool:
    """Whether a template argument is a NAME (an identifier such as ``tool_use``) rather than a
    template's Jinja text: what an engine's :func:`render_with_tokenizer` looks up."""
    return bool(_NAME.fullmatch(value))


def is_template_name(value: str) -> bool:
    """Whether a ``--chat-template`` value names one of the tokenizer's templates rather than a
    file: an identifier (``tool_use``, ``default``) that is no existing path and has no template
    file's suffix (decided once, on the command line)."""
    return (
        value not in (NONE, AUTO)
        and looks_like_name(value)
        and not value.lower().endswith(_FILE_SUFFIXES)
        and not Path(value).exists()
    )


def sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ChatSetup:
    """The chat flags of one command, resolved (the template file read)."""

    #: ``"none"``, ``"auto"`` or the path given.
    source: str = NONE
    #: The Jinja text read from ``source`` when it is a path; None for none/auto.
    text: str | None = None
    system_prompt: str | None = None
    #: GPT-3 demonstrations as user/assistant pairs (else inside the one user turn).
    fewshot_as_multiturn: bool = False
    #: One of the tokenizer's named templates (``--chat-template NAME``), resolved by the engine.
    name: str | None = None

    @property
    def enabled(self) -> bool:
        return self.source != NONE

    @property
    def template_arg(self) -> str | None:
        """What :meth:`Backend.render_chat` / ``generate_chat`` take as ``template``: the file's
        text, a tokenizer template's NAME (:func:`render_with_tokenizer` looks it up), or None for
        the model's own."""
        return self.text if self.text is not None else self.name

    def user_turns(self, backend: Any) -> bool:
        """Whether questions go to ``backend`` as user turns: under a template, or always on an
        engine whose server applies the model's own template (``server_chat_template``, a chat
        endpoint), where a raw-prompt cue such as a trailing ``Answer:`` would sit inside the
        user's message."""
        return self.enabled or bool(getattr(backend, "server_chat_template", False))

    def conversation(self, user: str, *, demos: Sequence[tuple[str, str]] = ()) -> list[Message]:
        """The messages of one request: the system prompt (when given), each demonstration as a
        user/assistant pair, then ``user``. (Single-turn few-shot is the caller's: it puts the
        demonstrations into ``user`` and passes no ``demos``.)"""
        msgs: list[Message] = []
        if self.system_prompt is not None:
            msgs.append({"role": "system", "content": self.system_prompt})
        for q, a in demos:
            msgs.append({"role": "user", "content": q})
            msgs.append({"role": "assistant", "content": a})
        msgs.append({"role": "user", "content": user})
        return msgs

    def template_text(self, backend: Any) -> str | None:
        """The template text that runs on ``backend`` (None without a template)."""
        if not self.enabled:
            return None
        if self.text is not None:
            return self.text
        return backend.chat_template_text(self.name) if self.name else backend.chat_template_text()

    def identity(self, backend: Any | None = None, *, fewshot: bool = False) -> dict[str, Any]:
        """The block recorded per model (see the module docstring). ``fewshot``: whether the
        task shows demonstrations (else the layout is ``zero-shot``)."""
        text = self.template_text(backend) if backend is not None or self.text is not None else None
        if not self.enabled:
            name = NONE
        elif self.text is not None:
            name = Path(self.source).name
        elif self.name is not None:
            name = f"{self.name} (the model's own, by name)"
        else:
            name = "auto (the model's own)"
        if not fewshot:
            layout = "zero-shot"
        elif not self.enabled:
            layout = "plain"
        else:
            layout = "multiturn" if self.fewshot_as_multiturn else "single-turn"
        return {
            "chat_template": self.source,
            "chat_template_name": name,
            "chat_template_sha256": sha256_text(text),
            "system_prompt": self.system_prompt,
            "system_prompt_sha256": sha256_text(self.system_prompt),
            "fewshot_layout": layout,
        }

    def label(self, backend: Any | None = None) -> str:
        """A short tag for table rows: ``""`` without a template, else ``chat:<name>@<sha8>``
        (plus ``+sys@<sha8>`` with a system prompt)."""
        if not self.enabled:
            return "" if self.system_prompt is None else f"sys@{sha256_text(self.system_prompt)[:8]}"
        ident = self.identity(backend)
        sha = (ident["chat_template_sha256"] or "")[:8]
        name = self.name or ("auto" if self.text is None else ident["chat_template_name"])
        tag = f"chat:{name}@{sha}"
        if self.system_prompt is not None:
            tag += f"+sys@{ident['system_prompt_sha256'][:8]}"
        return tag


def chat_setup_for(
    source: str | None,
    system_prompt: str | None = None,
    *,
    fewshot_as_multiturn: bool = False,
    fields: tuple[str, str] = ("--chat-template", "--system-prompt"),
) -> ChatSetup:
    """The :class:`ChatSetup` of a chat-template value (``auto``, ``none``, a tokenizer's template
    NAME or a Jinja file's PATH) and a system prompt; a missing or unparsable template file, or a
    system prompt or multiturn layout without a template, is an :class:`InputError` naming
    ``fields`` (the flags, or a model's own keys)."""
    source = source or NONE
    if source == NONE:
        if system_prompt is not None:
            raise InputError(f"a system prompt needs a chat template; add {fields[0]} auto or PATH", field=fields[1])
        if fewshot_as_multiturn:
            raise InputError(
                f"multiturn demonstrations need a chat template; add {fields[0]} auto or PATH",
                field="--fewshot-as-multiturn",
            )
        return ChatSetup()
    if is_template_name(source):  # looked up in the model's tokenizer once it has loaded
        return ChatSetup(
            source=source, name=source, system_prompt=system_prompt, fewshot_as_multiturn=fewshot_as_multiturn
        )
    text = None if source == AUTO else read_template(source)
    return ChatSetup(source=source, text=text, system_prompt=system_prompt, fewshot_as_multiturn=fewshot_as_multiturn)


def read_template(path: str | Path) -> str:
    """A Jinja chat-template file, checked for syntax (it must compile with the sandboxed
    environment transformers renders templates in). Raises :class:`ChatTemplateError`."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    p = Path(path)
    if not p.is_file():
        raise ChatTemplateError(
            "no such file; expected 'auto', 'none' or a Jinja chat-template file", path=p, field="--chat-template"
        )
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ChatTemplateError(f"cannot read the template: {exc}", path=p, field="--chat-template") from None
    if not text.strip():
        raise ChatTemplateError("the template file is empty", path=p, field="--chat-template")
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"])
    try:
        env.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(
            f"not a valid Jinja template: {exc.message}", path=p, line=exc.lineno, field="--chat-template"
        ) from None
    return text


def tokenizer_template(tokenizer: Any, name: str | None = None) -> str | None:
    """The tokenizer's own chat template text (a tokenizer with several named ones: its
    ``default``, or the one called ``name``), or None."""
    t = getattr(tokenizer, "chat_template", None)
    if isinstance(t, dict):
        t = t.get(name or "default")
    elif name is not None:  # one unnamed template: only "default" names it
        t = t if name == "default" else None
    return t if isinstance(t, str) and t.strip() else None


def template_names(tokenizer: Any) -> list[str]:
    """The names of the tokenizer's chat templates (``["default"]`` for a single one)."""
    t = getattr(tokenizer, "chat_template", None)
    if isinstance(t, dict):
        return sorted(t)
    return ["default"] if isinstance(t, str) and t.strip() else []


def render_with_tokenizer(tokenizer: Any, conversations: Any, *, template: str | None, where: str) -> list[str]:
    """Each conversation rendered by ``tokenizer.apply_chat_template`` (``tokenize=False``,
    ``add_generation_prompt=True``) with ``template`` or the tokenizer's own template. A missing
    template or one that fails to render is a :class:`ChatTemplateError` naming ``where``."""
    convs = check_conversations(conversations)
    if template is not None and looks_like_name(template):  # --chat-template NAME
        named = tokenizer_template(tokenizer, template)
        if named is None:
            have = ", ".join(template_names(tokenizer)) or "none"
            raise ChatTemplateError(
                f"{where}'s tokenizer has no chat template named {template!r} (its templates: "
                f"{have}), and there is no such file; expected 'auto', 'none', one of those "
                "names or a Jinja file",
                field="--chat-template",
            )
        template = named
    if template is None and tokenizer_template(tokenizer) is None:
        raise ChatTemplateError(
            f"{where} has no chat template of its own; pass --chat-template PATH (a Jinja "
            "file) or --chat-template none",
            field="--chat-template",
        )
    out: list[str] = []
    for conv in convs:
        try:
            text = tokenizer.apply_chat_template(
                conv, tokenize=False, add_generation_prompt=True, chat_template=template
            )
        except Exception as exc:  # jinja2 errors, ValueError from transformers, a template's raise_exception
            detail = " ".join(str(exc).split())[:300]
            raise ChatTemplateError(
                f"the chat template failed to render a {len(conv)}-turn conversation for "
                f"{where}: {type(exc).__name__}: {detail}",
                field="--chat-template",
            ) from None
        if not isinstance(text, str) or not text:
            raise ChatTemplateError(f"the chat template rendered nothing for {where}", field="--chat-template")
        out.append(text)
    return out
