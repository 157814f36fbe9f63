"""How a Deep Arithmark item is asked: ``loglik``, ``letters``, ``letterprob`` or ``free`` (``--protocol``).

``loglik``
    ArithMark 3.0's protocol, unchanged: the context is continued by each ending and the
    endings' log-likelihoods are compared. Under a chat template the context is the user turn
    with the assistant turn opened after it, and each ending is scored as the start of the
    assistant's answer, exactly as lm-eval 0.4.13 scores the YAML of ``synthprobe export
    lm-eval`` with ``--apply_chat_template`` (it drops the task's target delimiter, which is
    ``""`` there: every ending keeps the leading space it is written with).
``letters``
    the sentence to finish with the four endings as options A-D; the model answers one letter.
    With ``--cot`` it may reason first and must end with the line ``ANSWER: X``.
``letterprob``
    ``letters``' question, answered in one pass (MMLU's original protocol, HELM's joint multiple
    choice with log-probabilities): the letter among A-D whose token is most likely as the first
    token of the answer. One decoding step more shows whether the greedy answer ends after that
    letter; where it does not, the same decoding goes on to the full ``letters`` answer
    (:func:`letter_candidates`).
``free``
    the sentence alone; the model writes the missing value, compared as a number (a clock time
    as minutes after midnight) with the item's answer. The only protocol in which the model
    must compute the answer rather than recognise it among offered ones.

:func:`prompt` builds the text (a user turn under a chat template, else a raw prompt ending in
``Answer:``); :func:`synthprobe.scoring.records.generation_record` reads a generated text back
with :mod:`synthprobe.metrics.extract`.
"""

from __future__ import annotations

from typing import Any

from synthprobe.metrics.extract import LETTERS

PROTOCOLS = ("loglik", "letters", "free", "letterprob")
GENERATIVE = ("letters", "free")


def letter_candidates(n_options: int = 4) -> tuple[str, ...]:
    """The first tokens ``letterprob`` reads for ``n_options`` options: each letter bare, then
    each after a space (tokenisers differ in which of the two starts an answer):
    ``("A", "B", "C", "D", " A", " B", " C", " D")`` for four."""
    return (*LETTERS[:n_options], *(" " + x for x in LETTERS[:n_options]))


#: New tokens of ``letterprob``'s one pass: the letter and the step that shows whether it ends there.
LETTERPROB_FAST_TOKENS = 2

#: The answer line ``--cot`` asks for.
ANSWER_LINE = "ANSWER:"

#: New tokens allowed per answer: (protocol, cot) -> budget (letterprob: its fallback to letters).
MAX_NEW_TOKENS = {
    ("letters", False): 8,
    ("letterprob", False): 8,
    ("free", False): 16,
    ("letters", True): 320,
    ("free", True): 320,
}


def is_clock(item: Any) -> bool:
    """A clock-time item (its answer is written ``5:12 p.m.``; ``option_values`` are minutes)."""
    return ":" in str(item.metadata.get("answer", ""))


def clock_pm(item: Any) -> bool:
    return "p.m." in str(item.metadata.get("answer", ""))


def prompt(item: Any, protocol: str, *, cot: bool = False, chat: bool = False) -> str:
    """The question for ``item`` under ``protocol``; ``chat``: the text is a user turn (no
    trailing ``Answer:``, which the assistant turn replaces)."""
    ctx = item.ctx.rstrip()
    n = len(item.endings)
    if protocol in ("letters", "letterprob"):  # letterprob asks letters' question
        opts = "\n".join(f"{LETTERS[i]}.{e if e.startswith(' ') else ' ' + e}" for i, e in enumerate(item.endings))
        letters = ", ".join(LETTERS[: n - 1]) + f" or {LETTERS[n - 1]}"
        body = f"Which option completes the sentence?\n\n{ctx} ...\n\n{opts}\n\n"
        if cot:
            body += (
                f"Think it through step by step, then finish with a line of the form "
                f'"{ANSWER_LINE} X" where X is {letters}.'
            )
        else:
            body += f"Reply with the letter of the correct option only ({letters})."
    elif protocol == "free":
        what = "time" if is_clock(item) else "number, with its unit"
        body = f"Complete the sentence with the missing {what}.\n\n{ctx} ...\n\n"
        if cot:
            body += f'Work it out step by step, then finish with a line of the form "{ANSWER_LINE} <answer>".'
        else:
            body += "Reply with the answer only."
    else:
        raise ValueError(f"no prompt for protocol {protocol!r}; expected one of {', '.join(GENERATIVE)}")
    return body if chat else body + "\nAnswer:"


def stop_strings(protocol: str, *, cot: bool) -> list[str] | None:
    """A one-line answer stops at the first newline; a reasoned one runs to the end of its turn."""
    return None if cot else ["\n"]
