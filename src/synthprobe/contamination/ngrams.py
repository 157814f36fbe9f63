"""Normalisation, tokens, n-gram hashes and the item index the corpus scan looks things up in.

**Normalisation** (both the items and the corpus go through it): Unicode NFKC, then
``str.casefold`` (lower case). **Tokens** are the maximal runs of Unicode letters and digits
(``[^\\W_]+``): every other character, punctuation, symbols, ``_`` and whitespace alike, only
separates tokens, so ``"Q: What is 48 plus 76?\\nA:"`` is ``q what is 48 plus 76 a``.

**Hashes**: a token's hash is the 64-bit BLAKE2b digest of its UTF-8 bytes (little-endian);
an n-gram's hash is ``sum(h(t_i) * P**(n-1-i)) mod 2**64`` over its tokens, with the odd
constant :data:`PRIME`, so the corpus side is computed for every window with a few numpy
passes. Every hash hit is then checked token by token, so a reported match is exact (a hash
collision can cost time, never a false flag).

Only tokens that occur in some item can be part of a matching n-gram: the scan maps every
other corpus token to the id 0, and a window holding a 0 is never looked up. The index (the
item vocabulary and the n-gram table) is small: Deep Arithmark-1 gives ~2·10^4 token ids.

**Template n-grams.** An n-gram found in the prompts of two items whose normalised prompts
differ is the task's template text ("please unscramble the letters into a word"), not
evidence about either item; it is dropped (counted under ``template_ngrams``).

**Arithmetic forms** (GPT-3's own search, §4 of the paper): on the normalised text with every
run of whitespace collapsed to one space, U+2212 read as ``-`` and ``×`` as ``*``, the
problem ``A op B`` is found in the forms ``A + B =`` / ``A plus B`` (``-`` / ``minus``,
``*`` ``×`` ``x`` / ``times``), a space optional around the symbol, the numbers not part of a
longer number (:data:`ARITH`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

#: The n-gram lengths checked: GPT-3's decontamination length and the card's ArithMark 3.0 claim.
NGRAM_SIZES = (13, 8)
#: The odd multiplier of the polynomial n-gram hash.
PRIME = 0x100000001B3
#: A token longer than this (characters) can be in no item; the scan reads it as a non-item token.
MAX_TOKEN_CHARS = 256

#: Each size's pre-filter: a bit per value of the top FILTER_BITS bits of the n-gram hashes kept.
FILTER_BITS = 22

TOKEN = re.compile(r"[^\W_]+")
_SPACE = re.compile(r"\s+")
#: ``A op B =`` with a symbol, or ``A plus|minus|times B``, on text from :func:`arith_text`.
ARITH = re.compile(r"(?<![\w.,])(\d+) ?(?:([-+*x]) ?(\d+) ?=|(plus|minus|times) (\d+)(?!\w|[.,]\d))")
_OP = {"+": "+", "plus": "+", "-": "-", "minus": "-", "*": "*", "x": "*", "times": "*"}
OP_WORD = {"+": "plus", "-": "minus", "*": "times"}
OP_SYMBOL = {"+": "+", "-": "-", "*": "*"}


def normalise(text: str) -> str:
    """NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", text).casefold()


#: ASCII punctuation, symbols, ``_`` and controls → space (the fast path of :func:`split`)
_ASCII_SEPARATORS = str.maketrans({c: " " for c in range(128) if not chr(c).isalnum()})


def split(normalised: str) -> list[str]:
    """The tokens of already normalised text: :data:`TOKEN`'s matches (for ASCII text the same
    list, three times faster, from ``translate`` and ``split``)."""
    if normalised.isascii():
        return normalised.translate(_ASCII_SEPARATORS).split()
    return TOKEN.findall(normalised)


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` after :func:`normalise`."""
    return split(normalise(text))


def arith_text(normalised: str) -> str:
    """Normalised text as the arithmetic search reads it: whitespace runs as one space, the
    minus sign as ``-``, ``×`` as ``*``."""
    return _SPACE.sub(" ", normalised.replace("\u2212", "-").replace("\u00d7", "*"))


def arith_matches(text: str):
    """``(a, op, b, form)`` for every arithmetic form in ``text`` (already :func:`arith_text`);
    ``op`` is ``+``, ``-`` or ``*``, ``form`` ``"symbol"`` or ``"word"``."""
    for m in ARITH.finditer(text):
        if m.group(2) is not None:
            yield m.group(1), _OP[m.group(2)], m.group(3), "symbol"
        else:
            yield m.group(1), _OP[m.group(4)], m.group(5), "word"


def token_hash(token: str) -> int:
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "little")


def window_hashes(th: np.ndarray, n: int) -> np.ndarray:
    """The hash of every length-``n`` window of the token hashes ``th`` (uint64, wrapping)."""
    w = len(th) - n + 1
    if w <= 0:
        return np.zeros(0, dtype=np.uint64)
    out = th[0:w].copy()
    prime = np.uint64(PRIME)
    with np.errstate(over="ignore"):
        for i in range(1, n):
            out *= prime
            out += th[i : i + w]
    return out


def ngram_hash(hashes: list[int]) -> int:
    """One n-gram's hash from its tokens' hashes (the same value as :func:`window_hashes`)."""
    h = 0
    for x in hashes:
        h = (h * PRIME + x) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass
class Index:
    """What the scan looks up: the item vocabulary, each size's n-gram table, the arithmetic
    problems. Items are ``(task, item)`` pairs of positions. Picklable (sent to Ray workers)."""

    vocab: dict[str, int]  # token -> id >= 1
    token_hashes: np.ndarray  # id -> token hash; [0] = 0
    sizes: tuple[int, ...]
    #: per size: sorted unique n-gram hashes, and hash -> [(ids tuple, [(task, item), ...])]
    sorted_hashes: dict[int, np.ndarray] = field(default_factory=dict)
    #: per size: a bool array over the top FILTER_BITS bits of a hash (a window whose bit is off
    #: is in no table; most windows end there before the binary search)
    filters: dict[int, np.ndarray] = field(default_factory=dict)
    table: dict[int, dict[int, list[tuple[tuple[int, ...], list[tuple[int, int]]]]]] = field(default_factory=dict)
    #: (a, op, b) -> [(task, item), ...]
    problems: dict[tuple[str, str, str], list[tuple[int, int]]] = field(default_factory=dict)


@dataclass
class ItemText:
    """One item as the index sees it: its prompt and, for arithmetic, its problem."""

    prompt: str
    problem: tuple[str, str, str] | None = None


@dataclass
class TaskStats:
    """Per task and size: items with at least one n-gram left, n-grams kept and dropped."""

    checkable: dict[int, int]
    ngrams: dict[int, int]
    template_ngrams: dict[int, int]
    arithmetic: int


def build_index(tasks: list[list[ItemText]], sizes: tuple[int, ...] = NGRAM_SIZES) -> tuple[Index, list[TaskStats]]:
    """The index of every task's items, and per task what could be checked."""
    vocab: dict[str, int] = {}
    hashes = [0]
    toks_of: list[list[list[int]]] = []
    norm_of: list[list[str]] = []
    for items in tasks:
        ids_t, norm_t = [], []
        for it in items:
            toks = tokens(it.prompt)
            ids = []
            for t in toks:
                if len(t) > MAX_TOKEN_CHARS:
                    ids.append(0)
                    continue
                if t not in vocab:
                    vocab[t] = len(hashes)
                    hashes.append(token_hash(t))
                ids.append(vocab[t])
            ids_t.append(ids)
            norm_t.append(" ".join(toks))
        toks_of.append(ids_t)
        norm_of.append(norm_t)
    index = Index(vocab=vocab, token_hashes=np.array(hashes, dtype=np.uint64), sizes=tuple(sizes))
    stats = [TaskStats({}, {}, {}, 0) for _ in tasks]
    for n in sizes:
        grams: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        for t, ids_t in enumerate(toks_of):
            for i, ids in enumerate(ids_t):
                seen = set()
                for j in range(len(ids) - n + 1):
                    g = tuple(ids[j : j + n])
                    if 0 in g or g in seen:
                        continue
                    seen.add(g)
                    grams.setdefault(g, []).append((t, i))
        table: dict[int, list] = {}
        checkable: list[set[int]] = [set() for _ in tasks]
        for t in range(len(tasks)):
            stats[t].ngrams[n] = 0
            stats[t].template_ngrams[n] = 0
        for g, owners in grams.items():
            by_task: dict[int, list[int]] = {}
            for t, i in owners:
                by_task.setdefault(t, []).append(i)
            kept = []
            for t, items in by_task.items():
                if len({norm_of[t][i] for i in items}) > 1:
                    stats[t].template_ngrams[n] += 1
                    continue
                stats[t].ngrams[n] += 1
                checkable[t].update(items)
                kept += [(t, i) for i in items]
            if kept:
                h = ngram_hash([int(index.token_hashes[x]) for x in g])
                table.setdefault(h, []).append((g, kept))
        index.table[n] = table
        index.sorted_hashes[n] = np.array(sorted(table), dtype=np.uint64)
        bits = np.zeros(1 << FILTER_BITS, dtype=bool)
        bits[index.sorted_hashes[n] >> np.uint64(64 - FILTER_BITS)] = True
        index.filters[n] = bits
        for t in range(len(tasks)):
            stats[t].checkable[n] = len(checkable[t])
    for t, items in enumerate(tasks):
        for i, it in enumerate(items):
            if it.problem is not None:
                index.problems.setdefault(it.problem, []).append((t, i))
                stats[t].arithmetic += 1
    return index, stats
