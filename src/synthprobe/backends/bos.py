"""Whether a model reads a BOS token first: what it was trained with, and the default that follows.

The multiple-choice protocols (ArithMark 3.0, lm-eval's) add no BOS token, and most models are
scored that way. Two kinds of model are known to differ, and synthprobe knows them from the files
it loads, before anything is scored:

- **Gemma** (``model_type`` gemma, gemma2, gemma3, gemma3_text, ...) is trained with ``<bos>``
  first; without it its log-likelihoods degrade (docs/second-model.md measures how much).
  lm-evaluation-harness turns BOS on for Gemma by itself, and so does synthprobe: a Gemma model
  given no BOS setting runs with it.
- A model whose BOS token is a **chat-turn marker** of its own template (SmolLM2's
  ``<|im_start|>``) was trained without a start-of-text token: putting it first begins a chat turn
  that never comes.

:func:`trained_with` says which (or that nothing is known); :func:`resolve` turns a BOS setting
(True, False, or None: not given) into the one a run uses; :func:`contradiction` is the warning a
command prints when a run-wide ``--bos``/``--no-bos`` goes against a model's known need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BosNeed:
    """What is known of a model's BOS: ``wants`` True (trained with one), False (trained without)
    or None (nothing known), and why, in words."""

    wants: bool | None
    why: str = ""


def trained_with(model_type: str | None, bos_token: str | None, chat_template: str | None) -> BosNeed:
    """The model's known need, from its config's ``model_type``, its tokenizer's BOS token and its
    chat template."""
    if model_type and "gemma" in model_type.lower():
        return BosNeed(True, f"{model_type} models are trained with a BOS token first (lm-eval adds it for Gemma too)")
    if bos_token and chat_template and bos_token in chat_template:
        return BosNeed(False, f"its BOS token {bos_token!r} is a chat-turn marker of its template, not a start of text")
    return BosNeed(None)


def decide(bos: bool | None, model_type: str | None, tokenizer: Any) -> tuple[BosNeed, bool]:
    """An engine's BOS on loading: the model's known need (:func:`trained_with`, from its config's
    ``model_type`` and its tokenizer) and the setting the run uses (:func:`resolve`)."""
    need = trained_with(model_type, getattr(tokenizer, "bos_token", None), getattr(tokenizer, "chat_template", None))
    return need, resolve(bos, need)


def resolve(bos: bool | None, need: BosNeed) -> bool:
    """The BOS a run uses: the setting when given, else the model's known need (off when unknown,
    as the protocols have it)."""
    return bool(need.wants) if bos is None else bool(bos)


def contradiction(name: str, bos: bool | None, need: BosNeed) -> str | None:
    """The warning for a run-wide BOS setting that goes against ``name``'s known need, naming the
    per-model way to set it; None when there is nothing to say."""
    if bos is None or need.wants is None or bool(bos) == need.wants:
        return None
    flag = "--bos" if bos else "--no-bos"
    own = "true" if need.wants else "false"
    needs = "needs a BOS token" if need.wants else "must run without one"
    return (
        f"warning: {flag} applies to every model, but {name} {needs}: {need.why}. Set BOS per model "
        f"instead: --model NAME=SPEC,bos={own} for this one (and bos=... on the others)"
    )
