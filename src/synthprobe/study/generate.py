"""Machine versions of the study articles, generated as in GPT-3's news study (§3.9.4).

For each human article the model reads other full articles (three for the ~200-word
variant, one for the ~500-word variant) and then the target's title and subtitle, ending in
``Article:``. It draws several samples (all in one batch, through synthprobe's backend); the
one whose word count is closest to the human article's is kept, automatically (ties go to the
earlier sample). Samples that ran into the token budget without finishing (no ``Title:`` of a
next article, no end-of-sequence token) end mid-sentence, a give-away to raters: the choice is
made among the complete samples, and only when none finished among all of them; each item says
which (``selection``, ``machine.complete``, ``samples_complete``). A truncated sample is cut
back to its last full sentence before its words are counted (``machine.trimmed``), so a rater
never sees a text that stops mid-word.

The ``control`` condition is deliberately weaker, like GPT-3's unconditional small model with
increased randomness: no earlier articles in the prompt (only the title and subtitle) and a
high sampling temperature with no nucleus cut-off.

Every (article, condition) draws from its own seed, hashed from (seed, article index,
condition): the same seed gives the same file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from synthprobe.backends.decoding import Sampling, describe, generate
from synthprobe.errors import InputError
from synthprobe.io.write import atomic_open
from synthprobe.seeding import derive_seed, item_rng
from synthprobe.study.articles import STOP, Article, build_prompt, word_count

TASK = "study-news"
CONDITIONS = ("model", "control")


@dataclass(frozen=True)
class LengthVariant:
    length: int
    context_articles: int
    max_new_tokens: int


#: GPT-3: ~200-word articles conditioned on three earlier articles; ~500-word articles on one.
LENGTHS = {
    200: LengthVariant(200, 3, 400),
    500: LengthVariant(500, 1, 900),
}


@dataclass(frozen=True)
class Settings:
    length: int = 200
    samples: int = 5
    temperature: float = 0.8
    top_p: float = 0.9
    control_temperature: float = 1.6
    control_top_p: float = 1.0
    max_new_tokens: int | None = None
    seed: int = 0

    @property
    def variant(self) -> LengthVariant:
        if self.length not in LENGTHS:
            raise InputError(f"expected one of {', '.join(map(str, LENGTHS))}, got {self.length}", field="--length")
        return LENGTHS[self.length]

    def sampling(self, condition: str) -> Sampling:
        budget = self.variant.max_new_tokens if self.max_new_tokens is None else self.max_new_tokens
        if condition == "control":
            return Sampling(self.control_temperature, self.control_top_p, self.samples, budget)
        return Sampling(self.temperature, self.top_p, self.samples, budget)


def closest_sample(counts: list[int], target: int) -> int:
    """Index of the count nearest to ``target``; ties go to the lowest index."""
    if not counts:
        raise ValueError("no samples to choose from")
    return min(range(len(counts)), key=lambda i: (abs(counts[i] - target), i))


#: ``selection`` values of a study item.
SELECT_COMPLETE = "closest word count among the complete samples"
SELECT_TRUNCATED = (
    "closest word count among all samples: none finished within the token budget, so the "
    "machine text is truncated (raise --max-new-tokens)"
)


_SENTENCE_END = re.compile(r"[.!?][\"'\u201d\u2019)\]]*(?=\s|$)")


def trim_to_sentence(text: str) -> str:
    """``text`` cut after its last full sentence (a ``.``, ``!`` or ``?``, with any closing quotes
    or brackets, followed by white space or the end); unchanged when it has none."""
    ends = list(_SENTENCE_END.finditer(text))
    return text[: ends[-1].end()] if ends else text


def pick_sample(counts: list[int], complete: list[bool], target: int) -> tuple[int, str]:
    """The sample to show raters and why: the one nearest ``target`` words among the complete
    samples (ties to the lowest index); among all samples only when none is complete."""
    if len(counts) != len(complete):
        raise ValueError("one completeness flag per sample expected")
    done = [i for i, ok in enumerate(complete) if ok]
    if not done:
        return closest_sample(counts, target), SELECT_TRUNCATED
    return done[closest_sample([counts[i] for i in done], target)], SELECT_COMPLETE


def pick_context(articles: list[Article], index: int, k: int, seed: int) -> list[Article]:
    """``k`` other articles for the prompt of article ``index`` (the same for every model)."""
    others = [a for j, a in enumerate(articles) if j != index]
    if len(others) < k:
        raise InputError(
            f"the ~{'200' if k == 3 else '500'}-word variant conditions on {k} other article(s); "
            f"the file has only {len(articles)} article(s)",
            field="--articles",
        )
    return item_rng(f"{TASK}-context", seed, index).sample(others, k)


def prompt_for(articles: list[Article], index: int, condition: str, settings: Settings) -> tuple[str, list[str]]:
    target = articles[index]
    if condition == "control":
        context: list[Article] = []
    else:
        context = pick_context(articles, index, settings.variant.context_articles, settings.seed)
    return build_prompt(context, target), [a.id for a in context]


def generate_items(
    articles: list[Article],
    settings: Settings,
    *,
    models: dict[str, tuple[str, Any]],
    conditions: tuple[str, ...] = CONDITIONS,
    progress: bool = True,
    chat: Any = None,
) -> list[dict[str, Any]]:
    """One study item per (article, condition): the human text and the chosen machine text.

    ``models`` maps each condition to ``(spec, backend)``. ``chat`` (a
    :class:`~synthprobe.backends.chat.ChatSetup`, ``--chat-template``): each prompt is asked as one
    user turn, and every item records the template and system prompt (``chat``).
    """
    _ = settings.variant  # validates the length
    for c in conditions:
        if c not in CONDITIONS:
            raise InputError(f"unknown condition {c!r}; expected {', '.join(CONDITIONS)}", field="--conditions")
    if "model" in conditions:
        pick_context(articles, 0, settings.variant.context_articles, settings.seed)  # enough articles?
    described = {c: describe(models[c][1]) for c in conditions}
    if chat is None:
        from synthprobe.backends.chat import ChatSetup

        chat = ChatSetup()
    chats = {c: chat.identity(models[c][1], fewshot=c == "model") for c in conditions}
    jobs = [(i, c) for i in range(len(articles)) for c in conditions]
    items = []
    for i, condition in tqdm(jobs, desc="study articles", unit="article", disable=not progress):
        art = articles[i]
        spec, lm = models[condition]
        sampling = settings.sampling(condition)
        prompt, context_ids = prompt_for(articles, i, condition, settings)
        seed = derive_seed(TASK, settings.seed, i, condition)
        try:
            (samples,) = generate(lm, [prompt], sampling, seeds=[seed], stop=STOP, chat=chat)
        except InputError as exc:
            raise InputError(f"article {art.id!r}: {exc.detail}", field="--articles") from None
        complete = [g.finished for g in samples]
        texts = [g.text if g.finished else trim_to_sentence(g.text) for g in samples]
        counts = [word_count(t) for t in texts]
        chosen, selection = pick_sample(counts, complete, art.words)
        items.append(
            {
                "id": f"{art.id}/{settings.length}/{condition}/{spec}",
                "article_id": art.id,
                "title": art.title,
                "subtitle": art.subtitle,
                "condition": condition,
                "model": lm.name,
                "model_spec": spec,
                "backend": described[condition],
                "chat": chats[condition],
                "length": settings.length,
                "human": {"text": art.article, "words": art.words},
                "machine": {
                    "text": texts[chosen],
                    "words": counts[chosen],
                    "complete": complete[chosen],
                    "trimmed": texts[chosen] != samples[chosen].text,
                },
                "samples_words": counts,
                "samples_complete": complete,
                "chosen_sample": chosen,
                "selection": selection,
                "context_ids": context_ids,
                "seed": settings.seed,
                "sample_seed": seed,
                "sampling": sampling.to_dict(),
            }
        )
    return items


def write_items(path: str | Path, items: list[dict[str, Any]]) -> None:
    with atomic_open(path) as fh:
        for it in items:
            fh.write(json.dumps(it, ensure_ascii=False, sort_keys=True) + "\n")
