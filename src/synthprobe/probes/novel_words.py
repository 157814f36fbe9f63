"""GPT-3's novel-word probe (Brown et al. 2020, §3.9.5, Figure 3.16).

Each made-up word is defined in one line, followed by ``An example of a sentence that uses
the word <word> is:`` and, on the next line, a sentence. The first word(s) carry a
human-written sentence; every later definition is appended after the model's previous answer,
so the n-th word sees all earlier definitions and answers ("one sitting", no retries).

Whether a generated sentence really uses the new word is judged by a simple automatic proxy:
the word or one of its regular inflections (plural, past, -ing, -er, ...) occurs as a token.
"""

from __future__ import annotations

import re
from typing import Any

from tqdm import tqdm

from synthprobe.backends.decoding import Sampling, generate
from synthprobe.probes.items import NovelWord
from synthprobe.seeding import derive_seed

TASK = "probe-novel-words"
STOP = ("\n",)
_VOWELS = set("aeiou")


def definition_line(w: NovelWord) -> str:
    """The definition sentence plus the question, exactly as in Figure 3.16."""
    d = w.definition.strip()
    if not d.endswith((".", "!", "?")):
        d += "."
    if w.pos == "noun":
        head = f'A "{w.word}" is {d}'
    elif w.pos == "verb":
        head = f'To do a "{w.word}" means to {d}'
    else:  # verb-object
        head = f'To "{w.word}" something is to {d}'
    return f"{head} An example of a sentence that uses the word {w.word} is:"


def build_prompt(history: list[tuple[NovelWord, str]], target: NovelWord) -> str:
    """Earlier (definition, sentence) pairs one per line, then the target's definition line.

    The prompt ends with a newline: the answer goes on the line after the question, as in the
    worked example.
    """
    parts = [f"{definition_line(w)}\n{sentence}\n" for w, sentence in history]
    return "".join(parts) + definition_line(target) + "\n"


def inflections(word: str) -> set[str]:
    """Lower-case regular forms of ``word``: the word, -s/-es, -ed/-d, -ing, -er(s), y→ies/ied,
    e-drop before -ing/-er, final-consonant doubling (cvc) before -ed/-ing/-er."""
    w = word.lower()
    forms = {w, w + "s", w + "es", w + "ed", w + "ing", w + "er", w + "ers"}
    if w.endswith("e"):
        stem = w[:-1]
        forms |= {w + "d", w + "r", w + "rs", stem + "ing"}
    if len(w) >= 2 and w.endswith("y") and w[-2] not in _VOWELS:
        forms |= {w[:-1] + "ies", w[:-1] + "ied"}
    if len(w) >= 3 and w[-1] not in _VOWELS and w[-1] not in "wxy" and w[-2] in _VOWELS and w[-3] not in _VOWELS:
        forms |= {w + w[-1] + s for s in ("ed", "ing", "er", "ers")}
    return forms


_TOKEN = re.compile(r"[a-z]+(?:[-'][a-z]+)*")


def used_form(sentence: str, word: str) -> str | None:
    """The token of ``sentence`` that is ``word`` or an inflection of it, else ``None``.

    Possessives (``word's``) count; hyphenated compounds are checked part by part.
    """
    forms = inflections(word)
    for tok in _TOKEN.findall(sentence.lower()):
        for cand in (tok, *tok.split("-")):
            base = cand[:-2] if cand.endswith("'s") else cand
            if base in forms:
                return cand
    return None


def distinct_n(texts: list[str], n: int) -> float | None:
    """Distinct-n (Li et al. 2016): unique word n-grams over all word n-grams of ``texts``
    (lower-cased words); None when there is no n-gram. 1.0: no n-gram repeats."""
    grams = [
        tuple(toks[i : i + n]) for toks in (_TOKEN.findall(t.lower()) for t in texts) for i in range(len(toks) - n + 1)
    ]
    return round(len(set(grams)) / len(grams), 4) if grams else None


def shared_frames(texts: list[str], words: list[str]) -> int:
    """How many of ``texts`` are, once their own target word (any form) is blanked out, the same
    sentence as another one: "uses the word" counts them all, yet they are one template."""
    frames = []
    for text, word in zip(texts, words):
        forms = inflections(word)
        toks = [
            "_" if (tok[:-2] if tok.endswith("'s") else tok) in forms else tok for tok in _TOKEN.findall(text.lower())
        ]
        frames.append(" ".join(toks))
    counts: dict[str, int] = {}
    for f in frames:
        counts[f] = counts.get(f, 0) + 1
    return sum(1 for f in frames if f and counts[f] > 1)


def time_first(lm, words: list[NovelWord], sampling: Sampling, *, seed: int, chat=None) -> float:
    """Seconds to write the first sentence as :func:`run` asks for it (the plan's calibration:
    one word, about 1/n of a run)."""
    import time

    history = [(w, w.sentence) for w in words if w.sentence is not None]
    first = next(w for w in words if w.sentence is None)
    t0 = time.perf_counter()
    generate(lm, [build_prompt(history, first)], sampling, seeds=[derive_seed(TASK, seed, 0)], stop=STOP, chat=chat)
    return time.perf_counter() - t0


def run(
    lm, words: list[NovelWord], sampling: Sampling, *, seed: int, progress: bool = True, chat=None
) -> dict[str, Any]:
    """Generate a sentence (``sampling.n`` samples) for every word without a human sentence.

    ``lm`` is a synthprobe backend. The first sample continues the chain. Returns the
    JSON-ready ``results`` and ``summary``. With ``chat`` (``--chat-template``) each prompt is
    asked as one user turn.
    """
    history = [(w, w.sentence) for w in words if w.sentence is not None]
    targets = [w for w in words if w.sentence is None]
    results = []
    for index, w in enumerate(tqdm(targets, desc="novel words", unit="word", disable=not progress)):
        prompt = build_prompt(history, w)
        (run_,) = generate(lm, [prompt], sampling, seeds=[derive_seed(TASK, seed, index)], stop=STOP, chat=chat)
        gens = [g.text for g in run_]
        forms = [used_form(g, w.word) for g in gens]
        results.append(
            {
                "word": w.word,
                "pos": w.pos,
                "definition": w.definition,
                "line": w.line,
                "earlier_examples": len(history),
                "prompt": prompt,
                "new_text": definition_line(w),
                "generations": gens,
                "finished": [g.finished for g in run_],
                "uses_word": [f is not None for f in forms],
                "used_form": forms,
            }
        )
        history.append((w, gens[0]))
    n = len(results)
    first = sum(r["uses_word"][0] for r in results)
    every = [u for r in results for u in r["uses_word"]]
    gens_all = [g for r in results for g in r["generations"]]
    summary = {
        "words": n,
        "samples_per_word": sampling.n,
        "uses_word_first_sample": first,
        "uses_word_rate_first_sample": round(first / n, 4) if n else None,
        "uses_word_rate_all_samples": round(sum(every) / len(every), 4) if every else None,
        # beside the proxy: how varied the sentences are (a single template sentence with the
        # word swapped in "uses the word" every time)
        "distinct_1": distinct_n(gens_all, 1),
        "distinct_2": distinct_n(gens_all, 2),
        "shared_frame_first_sample": shared_frames(
            [r["generations"][0] for r in results], [r["word"] for r in results]
        ),
        "empty_generations": sum(1 for r in results for g in r["generations"] if not g),
        "truncated_generations": sum(1 for r in results for f in r["finished"] if not f),
    }
    return {
        "demonstrations": [
            {"word": w.word, "pos": w.pos, "definition": w.definition, "sentence": w.sentence}
            for w in words
            if w.sentence is not None
        ],
        "results": results,
        "summary": summary,
    }
