"""GPT-3's five word-manipulation tasks (Brown et al. 2020, §3.9.2), regenerated.

Words come from Norvig's unigram counts as shipped by the ``wordsegment`` package
(``wordsegment/unigrams.txt``, sorted by descending count), read at run time in file order:

* A1 uses the first 10,000 words with 5 <= len <= 15;
* CL, A2, RI and RW share the first 10,000 words with 6 <= len <= 15.

These rules reproduce the word sets of OpenAI's released files exactly. Transformations:

* CL  rotate left by r, r uniform in 1..len-1, redrawn while the rotation equals the word
      (``searchsearch`` rotated by 6); never the word unless it is one letter repeated;
* A1  shuffle all letters but the first and last once; if that gives the word back, rotate
      the middle left by one instead;
* A2  the same with the first two and last two letters kept. A middle of one letter repeated
      (``yellow``, ``buffer``) has no other arrangement and stays unchanged (193 A2 words,
      none in A1, as in the released files).

The anagram rule is inferred from the released files: where the middle has three distinct
letters, it comes out as a left rotation in about 1/3 of words (1/6 from the shuffle, 1/6 from
the shuffles that gave the word back), not the 1/5 of reshuffling until the word changes
(``bench/anagram_rotation_share.py`` measures it).
* RI  one character, uniform over space . / !, between every pair of adjacent letters;
* RW  the word reversed.

Items read ``{"context": "\\n<scrambled> =", "completion": " <word>"}``, in a seeded random
order; item ``i`` is transformed with ``item_rng(task, seed, i)``.
"""

from __future__ import annotations

import functools
import importlib.resources
import random

from synthprobe.benchmarks.gpt3.registry import BuildConfig, Task, register
from synthprobe.errors import InputError
from synthprobe.items import GenItem
from synthprobe.seeding import derive_seed, item_rng

#: GPT-3's instruction line for every word task (App. G).
INSTRUCTION = "Please unscramble the letters into a word, and write that word:"

#: Size of each task's word set.
WORD_SET_SIZE = 10_000

#: Characters random insertion puts between letters.
INSERTIONS = (" ", ".", "/", "!")


def _unigrams_path():
    try:
        return importlib.resources.files("wordsegment") / "unigrams.txt"
    except ModuleNotFoundError:
        raise InputError(
            "the word tasks need the 'wordsegment' package (pip install "
            "wordsegment==1.3.1); it ships Norvig's word counts"
        ) from None


@functools.lru_cache(maxsize=1)
def norvig_words() -> tuple[str, ...]:
    """All words of ``wordsegment/unigrams.txt`` in file order (descending count)."""
    path = _unigrams_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot be read ({exc})", path=str(path)) from None
    words = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0] or not (parts[1].isascii() and parts[1].isdigit()):
            raise InputError(f"expected 'word<TAB>count', got {line[:60]!r}", path=str(path), line=lineno)
        words.append(parts[0])
    if not words:
        raise InputError("holds no words", path=str(path))
    return tuple(words)


@functools.lru_cache(maxsize=4)
def word_set(min_len: int, max_len: int, size: int = WORD_SET_SIZE) -> tuple[str, ...]:
    """The first ``size`` words of Norvig's list with ``min_len <= len <= max_len``, in list order."""
    out = []
    for w in norvig_words():
        if min_len <= len(w) <= max_len:
            out.append(w)
            if len(out) == size:
                return tuple(out)
    raise InputError(f"Norvig's list has only {len(out):,} words of {min_len}-{max_len} letters; {size:,} expected")


# --------------------------------------------------------------------------------------
# Transformations: pure functions of (word, rng)
# --------------------------------------------------------------------------------------


def cycle_letters(word: str, rng: random.Random) -> str:
    """Rotate left by r, r uniform in 1..len-1, redrawn while the rotation equals the word.

    A word made of a repeated block (``searchsearch``, ``phonephone``) equals some of its
    rotations; r is redrawn from the same ``rng`` until the word changes, so a word that
    never needs a redraw gets the same rotation as with a single draw. A word of one letter
    repeated (``aaaaaa``) has no other rotation and is returned unchanged, as the anagram
    tasks return a word whose middle has only one arrangement.
    """
    if len(word) < 2:
        raise ValueError(f"cannot cycle a word of {len(word)} letter(s)")
    if len(set(word)) < 2:  # every rotation is the word itself
        return word
    while True:
        r = rng.randint(1, len(word) - 1)
        out = word[r:] + word[:r]
        if out != word:
            return out


def _shuffle_middle(word: str, keep: int, rng: random.Random) -> str:
    """Shuffle ``word`` between its first and last ``keep`` letters once; if the word comes
    back unchanged, rotate the original middle left by one instead (GPT-3's rule).

    The result differs from the word whenever the middle has two or more distinct letters (a
    rotation by one changes any such middle); a middle of one letter repeated stays as it is.
    """
    head, middle, tail = word[:keep], word[keep : len(word) - keep], word[len(word) - keep :]
    if len(set(middle)) < 2:  # only one arrangement: nothing can change
        return word
    letters = list(middle)
    rng.shuffle(letters)
    shuffled = "".join(letters)
    if shuffled == middle:
        shuffled = middle[1:] + middle[:1]
    return head + shuffled + tail


def anagram_1(word: str, rng: random.Random) -> str:
    """Shuffle all letters but the first and last once; rotate them left by one if the word came back."""
    return _shuffle_middle(word, 1, rng)


def anagram_2(word: str, rng: random.Random) -> str:
    """Shuffle all letters but the first two and last two once; rotate them left by one if the word came back."""
    return _shuffle_middle(word, 2, rng)


def random_insertion(word: str, rng: random.Random) -> str:
    """One of space . / ! between every pair of adjacent letters."""
    out = [word[0]] if word else []
    for ch in word[1:]:
        out.append(rng.choice(INSERTIONS))
        out.append(ch)
    return "".join(out)


def reversed_word(word: str, rng: random.Random | None = None) -> str:
    """The word reversed."""
    return word[::-1]


def word_item(scrambled: str, word: str) -> GenItem:
    return GenItem(f"\n{scrambled} =", f" {word}")


def build_words(name: str, min_len: int, transform, config: BuildConfig) -> list[GenItem]:
    words = list(word_set(min_len, 15))
    random.Random(derive_seed(name, config.seed, "order")).shuffle(words)
    return [word_item(transform(w, item_rng(name, config.seed, i)), w) for i, w in enumerate(words[: config.size])]


_SPECS = (
    # name, code, paper file stem, min length, transform, summary
    (
        "cycle_letters",
        "CL",
        "cycle_letters_in_word",
        6,
        cycle_letters,
        "cycle letters: the word rotated left by 1..len-1 (lyinevitab -> inevitably)",
    ),
    (
        "anagrams1",
        "A1",
        "mid_word_1_anagrams",
        5,
        anagram_1,
        "anagram of all but the first and last letter (criroptuon -> corruption)",
    ),
    (
        "anagrams2",
        "A2",
        "mid_word_2_anagrams",
        6,
        anagram_2,
        "anagram of all but the first two and last two letters (opoepnnt -> opponent)",
    ),
    (
        "random_insertion",
        "RI",
        "random_insertion_in_word",
        6,
        random_insertion,
        "one of space . / ! between every pair of letters (s.u!c/c!e.s s i/o/n -> succession)",
    ),
    ("reversed_words", "RW", "reversed_words", 6, reversed_word, "the word reversed (stcejbo -> objects)"),
)

for _name, _code, _stem, _min, _fn, _summary in _SPECS:
    register(
        Task(
            name=_name,
            code=_code,
            family="words",
            summary=_summary,
            default_n=WORD_SET_SIZE,
            k_few=100,
            max_n=WORD_SET_SIZE,
            max_new_tokens=20,
            aliases=(_stem,),
            build=lambda cfg, _n=_name, _m=_min, _f=_fn: build_words(_n, _m, _f, cfg),
            extra={"min_len": _min, "max_len": 15, "instruction": INSTRUCTION},
        )
    )
