"""Zero-, one- and few-shot prompts as GPT-3 built them (Brown et al. 2020, §2.4).

Each test item is preceded by K demonstrations drawn from the same task's pool (the synthetic
tasks have no training split) without the test item itself. The draw is deterministic: a
hash of (task, seed, test index) seeds it, so prompts never depend on which other items are
scored or on ``--limit``.

Layouts (``format``):

``openai`` (GPT-3's)
    arithmetic: demonstration contexts and completions concatenated, then the test context,
    the leading two-newline delimiter stripped: ``Q: What is 17 minus 14?\\n\\nA: 3\\n\\nQ: What
    is 98 plus 45?\\n\\nA:``. Word tasks: the instruction line ``Please unscramble the letters
    into a word, and write that word:``, then the one-newline items (``\\nasinoc = casino``…),
    then the test context. SAT: ``<a> is to <b> as <c> is to <d>`` demonstrations, one per
    line, then the test context; the paper does not state SAT's delimiter, one newline is used.
``eleuther`` (lm-eval's arithmetic)
    arithmetic items in ``Question: …\\nAnswer:`` layout joined by a blank line, as lm-eval's
    ``arithmetic_*`` tasks; word tasks as ``openai`` without the instruction line, which is
    *not* lm-eval's ``unscramble`` layout (lm-eval keeps each context's leading newline, puts
    its target delimiter, a space, before the completion and a blank line between few-shot
    examples); SAT as above.

Demonstrations that do not fit are dropped from the far end (the start of the prompt, furthest
from the test item) until prompt plus ``reserve`` tokens (room for the answer) fit
``max_context``; the number actually used is kept on every :class:`Prompt`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from synthprobe.benchmarks.gpt3.registry import FORMATS, Task
from synthprobe.errors import InputError
from synthprobe.items import GenItem, MCItem
from synthprobe.seeding import draw_demos

#: The shot settings and their K (``few`` is the task's own default K).
SHOT_NAMES = {"zero": 0, "one": 1}


@dataclass(frozen=True)
class PromptConfig:
    """How to build prompts for one task."""

    shots: int
    format: str = "openai"
    max_context: int | None = 2048
    seed: int = 0
    #: Room kept after the prompt: the new tokens of a generation, the longest choice for SAT.
    reserve: int = 0

    def validate(self) -> PromptConfig:
        if isinstance(self.shots, bool) or not isinstance(self.shots, int) or self.shots < 0:
            raise InputError(f"expected an integer >= 0, got {self.shots!r}", field="shots")
        if self.format not in FORMATS:
            raise InputError(f"expected one of {', '.join(FORMATS)}, got {self.format!r}", field="format")
        if self.max_context is not None and (
            isinstance(self.max_context, bool) or not isinstance(self.max_context, int) or self.max_context < 8
        ):
            raise InputError(f"expected an integer >= 8, got {self.max_context!r}", field="max_context")
        if isinstance(self.reserve, bool) or not isinstance(self.reserve, int) or self.reserve < 0:
            raise InputError(f"expected an integer >= 0, got {self.reserve!r}", field="reserve")
        return self


@dataclass(frozen=True)
class Prompt:
    """The prompt for one test item."""

    index: int  # test item's index in the pool
    text: str
    n_shots: int  # demonstrations actually used
    requested: int  # demonstrations asked for
    drawn: int  # demonstrations drawn: requested, or pool size - 1 if smaller
    demos: tuple[int, ...]  # pool indices of the demonstrations used, in prompt order
    n_tokens: int | None = None  # prompt length in tokens, when a tokenizer was given

    @property
    def reduced(self) -> bool:
        """True when max-context forced fewer demonstrations than were drawn."""
        return self.n_shots < self.drawn


def parse_shots(value: str | int, task: Task) -> int:
    """``zero``/``one``/``few`` or an integer; ``few`` is the task's GPT-3 K."""
    if isinstance(value, int) and not isinstance(value, bool):
        k = value
    else:
        text = str(value).strip().lower()
        if text == "few":
            return task.k_few
        if text in SHOT_NAMES:
            return SHOT_NAMES[text]
        if not (text.isascii() and text.isdigit() and len(text) <= 9):  # int() would take "٣" and "1_0"
            raise InputError(
                f"expected zero, one, few or an integer >= 0 in ASCII digits, got {value!r}", field="--shots"
            )
        k = int(text)
    if k < 0:
        raise InputError(f"expected an integer >= 0, got {k}", field="--shots")
    return k


def demo_pieces(task: Task, pool: Sequence, demos: Sequence[int], test, fmt: str) -> tuple[str, list[str], str]:
    """(head, demonstration pieces, test piece) whose concatenation is the prompt."""
    if task.family == "sat":
        return "", [f"{pool[j].ctx}{pool[j].completion}\n" for j in demos], test.ctx
    if task.family == "arithmetic" and fmt == "eleuther":
        return "", [f"{pool[j].context}{pool[j].completion}\n\n" for j in demos], test.context
    head = task.extra.get("instruction", "") if fmt == "openai" else ""
    return head, [pool[j].context + pool[j].completion for j in demos], test.context


def _assemble(head: str, demo_pieces: list[str], test_piece: str) -> str:
    text = head + "".join(demo_pieces) + test_piece
    if not head:
        # The first item's delimiter ("\n\n" or "\n") opens nothing: strip it.
        text = text.lstrip("\n")
    return text


def build_prompt(
    task: Task,
    pool: Sequence[GenItem | MCItem],
    index: int,
    config: PromptConfig,
    count_tokens: Callable[[str], int] | None = None,
) -> Prompt:
    """The prompt for ``pool[index]`` with ``config.shots`` demonstrations from ``pool``.

    With ``count_tokens`` and ``config.max_context``, demonstrations are dropped from the far
    end until ``count_tokens(prompt) + config.reserve <= max_context``.
    """
    demos = draw_demos(task.name, config.seed, index, len(pool), config.shots)
    head, pieces, test_piece = demo_pieces(task, pool, demos, pool[index], config.format)

    def text_for(m: int) -> str:  # keep the m demonstrations nearest the test item
        return _assemble(head, pieces[len(pieces) - m :] if m else [], test_piece)

    if count_tokens is None or config.max_context is None:
        return Prompt(index, text_for(len(pieces)), len(pieces), config.shots, len(demos), tuple(demos))

    budget = config.max_context - config.reserve

    def fits(m: int) -> tuple[bool, int]:
        n = count_tokens(text_for(m))
        return n <= budget, n

    ok, n_tokens = fits(len(pieces))
    m = len(pieces)
    if not ok:
        ok0, n0 = fits(0)
        if not ok0:
            raise InputError(
                f"item {index} of {task.name} needs {n0} prompt tokens plus "
                f"{config.reserve} reserved, more than max context {config.max_context}",
                field="--max-context",
            )
        lo, hi, n_tokens = 0, len(pieces), n0  # fits(lo) holds, fits(hi) does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            ok_mid, n_mid = fits(mid)
            if ok_mid:
                lo, n_tokens = mid, n_mid
            else:
                hi = mid
        m = lo
    used = tuple(demos[len(demos) - m :]) if m else ()
    return Prompt(index, text_for(m), m, config.shots, len(demos), used, n_tokens)


def prompt_text(task: Task, pool: Sequence[GenItem | MCItem], index: int, config: PromptConfig, n_shots: int) -> str:
    """The text :func:`build_prompt` gave ``pool[index]`` when it kept ``n_shots`` of its
    demonstrations (the nearest to the test item), as a results file records per item; no
    tokenizer needed (the report rebuilds prompts with it)."""
    demos = draw_demos(task.name, config.seed, index, len(pool), config.shots)
    head, pieces, test_piece = demo_pieces(task, pool, demos, pool[index], config.format)
    kept = min(max(n_shots, 0), len(pieces))
    return _assemble(head, pieces[len(pieces) - kept :] if kept else [], test_piece)


def build_prompts(
    task: Task,
    pool: Sequence,
    indices: Sequence[int],
    config: PromptConfig,
    count_tokens: Callable[[str], int] | None = None,
) -> list[Prompt]:
    """:func:`build_prompt` for each index in ``indices``."""
    config.validate()
    return [build_prompt(task, pool, i, config, count_tokens) for i in indices]
