"""Strict loaders for the probe item files (novel words, grammar correction).

Both files are JSONL. Demonstrations come first and carry the human-written answer
(``sentence`` for novel words, ``output`` for grammar); the items after them are the ones the
model answers. The shipped sets live in ``synthprobe/resources``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.paths import resource_path
from synthprobe.io.read import read_jsonl

NOVEL_WORDS_FILE = "novel_words.jsonl"
GRAMMAR_FILE = "grammar.jsonl"
POS_KINDS = ("noun", "verb", "verb-object")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'-]{0,39}$")
MAX_TEXT = 2000
#: Shortest made-up word (letters): the word-use proxy is meaningless for "a" or "is".
MIN_LETTERS = 3


def _text(obj: dict, key: str, path, line: int, *, required: bool = True) -> str | None:
    if key not in obj:
        if required:
            raise InputError("missing; expected a non-empty string", path=path, line=line, field=key)
        return None
    v = obj[key]
    if not isinstance(v, str) or not v.strip():
        raise InputError(f"expected a non-empty string, got {v!r:.60}", path=path, line=line, field=key)
    if len(v) > MAX_TEXT:
        raise InputError(f"is {len(v)} characters; at most {MAX_TEXT} expected", path=path, line=line, field=key)
    if "\n" in v or "\r" in v:
        raise InputError("must be a single line (no newline characters)", path=path, line=line, field=key)
    return v.strip()


def _check_keys(obj: dict, allowed: set[str], path, line: int) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise InputError(
            f"unknown field; expected only {', '.join(sorted(allowed))}", path=path, line=line, field=extra[0]
        )


@dataclass(frozen=True)
class NovelWord:
    word: str
    pos: str
    definition: str
    #: Human-written example sentence: present only on the leading demonstration items.
    sentence: str | None
    line: int


def load_novel_words(path: str | Path | None = None) -> list[NovelWord]:
    """Read a novel-words file: ``{word, pos, definition[, sentence]}`` per line; ``word`` is a single
    made-up word of at least 3 letters.

    ``pos`` is ``noun`` (``A "w" is …``), ``verb`` (``To do a "w" means to …``) or
    ``verb-object`` (``To "w" something is to …``). The first item must carry a human-written
    ``sentence``; items with a sentence must all come before the items without one, and at
    least one item must be left for the model.
    """
    path = Path(path) if path is not None else resource_path(NOVEL_WORDS_FILE)
    out: list[NovelWord] = []
    seen: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        _check_keys(obj, {"word", "pos", "definition", "sentence"}, path, line)
        word = _text(obj, "word", path, line)
        if not _WORD.match(word):
            raise InputError(
                f"{word!r} is not a single word of letters (hyphen/apostrophe allowed, at most 40 characters)",
                path=path,
                line=line,
                field="word",
            )
        if sum(c.isalpha() for c in word) < MIN_LETTERS:
            raise InputError(
                f"{word!r} is shorter than {MIN_LETTERS} letters; a made-up word that short turns up "
                "inside ordinary text, so whether a sentence uses it cannot be judged",
                path=path,
                line=line,
                field="word",
            )
        if word.lower() in seen:
            raise InputError(
                f"word {word!r} already appears on line {seen[word.lower()]}", path=path, line=line, field="word"
            )
        seen[word.lower()] = line
        pos = obj.get("pos")
        if pos not in POS_KINDS:
            raise InputError(
                f"expected one of {', '.join(POS_KINDS)}, got {pos!r:.40}", path=path, line=line, field="pos"
            )
        definition = _text(obj, "definition", path, line)
        sentence = _text(obj, "sentence", path, line, required=False)
        if not out and sentence is None:
            raise InputError(
                "the first item is the worked example and needs a human-written 'sentence'",
                path=path,
                line=line,
                field="sentence",
            )
        if sentence is not None and out and out[-1].sentence is None:
            raise InputError(
                "items with a human-written sentence (demonstrations) must all come first",
                path=path,
                line=line,
                field="sentence",
            )
        out.append(NovelWord(word, pos, definition, sentence, line))
    if all(w.sentence is not None for w in out):
        raise InputError(
            "every item has a human-written sentence; at least one item without "
            "'sentence' is needed for the model to answer",
            path=path,
        )
    return out


@dataclass(frozen=True)
class GrammarItem:
    input: str
    #: Human-written correction shown in the prompt (demonstrations only).
    output: str | None
    #: Gold correction used for scoring (items the model answers; optional).
    reference: str | None
    line: int


def load_grammar(path: str | Path | None = None) -> list[GrammarItem]:
    """Read a grammar file: demonstrations ``{input, output}`` first, then ``{input[, reference]}``."""
    path = Path(path) if path is not None else resource_path(GRAMMAR_FILE)
    out: list[GrammarItem] = []
    for line, obj in read_jsonl(path):
        _check_keys(obj, {"input", "output", "reference"}, path, line)
        inp = _text(obj, "input", path, line)
        output = _text(obj, "output", path, line, required=False)
        ref = _text(obj, "reference", path, line, required=False)
        if output is not None and ref is not None:
            raise InputError(
                "give 'output' (a demonstration shown in the prompt) or 'reference' "
                "(the gold answer for scoring), not both",
                path=path,
                line=line,
                field="reference",
            )
        if output is not None and out and out[-1].output is None:
            raise InputError(
                "demonstrations (items with 'output') must all come first", path=path, line=line, field="output"
            )
        out.append(GrammarItem(inp, output, ref, line))
    if not any(g.output is not None for g in out):
        raise InputError("no demonstration: the first item(s) need a human-written 'output'", path=path)
    if all(g.output is not None for g in out):
        raise InputError(
            "every item is a demonstration; at least one item without 'output' is needed for the model to answer",
            path=path,
        )
    return out
