"""Reading the answer out of a generated text: a letter (``letters``) or a number (``free``).

Pure functions, no model. Every call returns an :class:`Extraction` that keeps the raw text,
the parsed answer, and the rule that found it, or ``rule = "unparsed"`` with the reason, so a
results file shows exactly why an item was scored as it was. The rules are tried in order and
the first that finds an answer wins:

``strict``
    the fixed answer line the prompt asks for, ``ANSWER: X`` on a line of its own (any case,
    markdown emphasis, ``$X$``, ``(X)``, ``X.`` around the value allowed); when the text holds
    several such lines the **last** one counts (a model that corrects itself ends with its final
    answer; taking the first is the published simple-evals bug). The letter may be lower case
    (``Answer:  d`` is option D): the line holds nothing else.
``lax``
    a text that is nothing but the answer with decoration (``(C)``, ``**B**``, ``$B$``, ``B.``;
    ``$312``, ``312 dollars.``); else ``answer is X`` / ``answer is: X`` / ``Answer: X``
    anywhere, even followed by more text (the last occurrence); else a text that opens with an
    option label and the option (``A. $312``; a model that lists the options first and then
    says which one is right is read by the previous pattern). After an answer cue, and as the
    whole text, a lower-case letter is the answer too (``(c)``, ``the answer is d.``) where only a
    closing mark or the line's end follows it; ``the answer is a number`` names no option.
``last``
    letters: the lettered options mentioned as standalone capitals (``A`` followed by a
    lower-case word is the article, not an option): if exactly one distinct letter is mentioned
    it is the answer, two or more different letters are ``unparsed`` ("ambiguous").
    numbers: the last number in the text (with the item's unit preferred when one is written).
``value``
    letters only: no letter at all, but exactly one option's value is written (a model that
    answers ``$327`` instead of ``B``) -> that option's letter.

An answer is read, and then judged: its ``outcome`` is one of :data:`OUTCOMES`.

``answered``
    an answer, credited when it is right.
``unparsed``
    nothing was read (``rule == "unparsed"``, with the reason).
``inconsistent`` (letters)
    the letter and the value written with it name different options: ``A. $6966`` where $6966 is
    option B's value, or ``B. 500 litres`` where no option is 500 litres. Such an answer is never
    credited by default; :func:`resolve` credits it by its letter (``letter-first``) or by its
    value (``value-first``) when a run asks for that, and the record says so.
``echo`` (free)
    the number read only repeats the question: it sits in a run of at least
    :data:`ECHO_WORDS` words copied from the question (``A water tank held 376 litres`` when the
    question says so). An answer stated as such (``ANSWER: 376``, ``The answer is 376``, a text
    that is only ``376 litres``) is an answer even when the question holds that number: 12 of the
    release's 1,000 answers are also numbers of their question (``... packed into punnets of 17``
    and 17 full punnets), so the number alone cannot tell.
``cut_off``
    the text ran into the token budget (``cut_off=True``) before it stated its answer: the answer
    was read only by ``last`` or ``value`` (or by the weak ``is`` / ``=`` patterns of ``lax``), or
    the number read is the text's last characters and may be incomplete (``... at $1`` cut from
    ``$18``).

Numbers are compared as numbers: ``$1,312``, ``1312 dollars``, ``1312.00`` and ``1 312`` are
1312; a clock time (``5:17 p.m.``, ``5:17pm``, ``17:17``) is minutes after midnight, the way
Deep Arithmark stores clock answers (``option_values``). A 12-hour time written without a.m./p.m.
reads as p.m. when the item's answer is p.m. (``clock_pm``), since the question fixes the half
of the day.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

LETTERS = "ABCDEFGHIJ"
RULES = ("strict", "lax", "last", "value", "unparsed")
OUTCOMES = ("answered", "unparsed", "inconsistent", "echo", "cut_off")
#: The outcomes each protocol's answers can have (a free answer writes no letter to contradict,
#: a letter is no number to echo).
PROTOCOL_OUTCOMES = {
    "letters": ("answered", "unparsed", "inconsistent", "cut_off"),
    "free": ("answered", "unparsed", "echo", "cut_off"),
}
#: How an inconsistent letter answer may be credited (``--resolve``); ``none`` credits nothing.
RESOLVE = ("none", "letter-first", "value-first")
#: An answer number inside a run of this many words (the number included) copied from the
#: question is an echo of it.
ECHO_WORDS = 3


@dataclass(frozen=True)
class Extraction:
    """What was read from one generated text."""

    raw: str
    #: A letter ("A".."J") for letters, a number (int, or float when not whole) for free; None if unparsed.
    answer: Any
    rule: str
    #: Why nothing was read (``rule == "unparsed"``); None otherwise.
    reason: str | None = None
    #: What the answer counts as (:data:`OUTCOMES`).
    outcome: str = "answered"
    #: letters: the index of the option whose value is written with the letter (``A. $327`` ->
    #: that of $327), None when no option's value is written; free: None.
    written_option: int | None = None
    #: Why the outcome is not ``answered`` (inconsistent, echo, cut off), in words; None otherwise.
    note: str | None = None

    @property
    def parsed(self) -> bool:
        """Something was read (it may still be inconsistent, an echo or cut off)."""
        return self.rule != "unparsed"

    @property
    def counts(self) -> bool:
        """The answer is one to credit when right: read, and neither inconsistent, an echo nor cut off."""
        return self.outcome == "answered"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- letters ---------------------------------------------------------------------------------------

_DECOR = r"[\s*_`$\\(\[{\"'“]*"
_DECOR_AFTER = r"[\s*_`$\\)\]}\"'”]*"


def _letter_set(n_options: int) -> str:
    return LETTERS[:n_options]


def _strict_letter(text: str, letters: str) -> tuple[str, int] | None:
    pat = re.compile(
        rf"^\s*{_DECOR}answer{_DECOR_AFTER}\s*[:：]\s*{_DECOR}([{letters}]){_DECOR_AFTER}[.!]?{_DECOR_AFTER}$",
        re.IGNORECASE | re.MULTILINE,
    )
    # an answer line says what it answers: "Answer: d" is option D (the line holds nothing else)
    found = [(m.group(1).upper(), m.end(1)) for m in pat.finditer(text)]
    return found[-1] if found else None


#: What may follow a lower-case letter after an answer cue for it to be the answer ("the answer is
#: (c)", "the answer is d." at a line's end), not an article ("the answer is a number").
_LOWER_ENDS = re.compile(r"[)\]}*_`$\\\"'”]|[.!]?[ \t]*(?:\n|$)")


def _lax_letter(text: str, letters: str) -> tuple[str, int] | None:
    """The letter and where it ends in ``text`` (what follows it on its line is the value
    written with it)."""
    whole = re.fullmatch(
        rf"{_DECOR}(?:option\s+)?([{letters}]){_DECOR_AFTER}[.!]?{_DECOR_AFTER}", text.strip(), re.IGNORECASE
    )
    if whole:  # the whole answer is one letter, "(c)" as much as "(C)"
        return whole.group(1).upper(), len(text)
    # "the answer is D", "Answer: B. because ...", "The answer is: (C)": the last one counts; a
    # lower-case letter only where nothing but a closing mark or the line's end follows it
    pat = re.compile(
        rf"answer{_DECOR_AFTER}\s*(?:is|would be)?\s*[:：]?\s*(?:option\s+)?{_DECOR}([{letters}])(?![A-Za-z])",
        re.IGNORECASE,
    )
    found = [
        (m.group(1).upper(), m.end(1))
        for m in pat.finditer(text)
        if m.group(1).isupper() or _LOWER_ENDS.match(text, m.end(1))
    ]
    if found:
        return found[-1]
    # the answer opens with an option label and (part of) the option: "A. $312", "(B) 446 litres"
    lead = len(text) - len(text.lstrip())
    head = re.match(rf"{_DECOR}([{letters}])[.):]\s+\S", text.strip())
    return (head.group(1), lead + head.end(1)) if head else None


#: Words after which a standalone "A" is still an option letter ("A or B", "A is right").
_LINK_WORDS = {"and", "or", "nor", "is", "was", "are", "but", "then", "seems", "looks", "would", "could"}


def _mentioned_letters(text: str, letters: str) -> list[tuple[str, int]]:
    """Standalone capitals among ``letters`` and where each ends; an "A" before a lower-case word
    is the article ("A farmer ...") unless that word links options ("A or B", "A is wrong")."""
    out = []
    for m in re.finditer(rf"(?<![A-Za-z0-9'’])([{letters}])(?![A-Za-z0-9'’])", text):
        if m.group(1) == "A":
            nxt = re.match(r"\s+([a-z]+)", text[m.end() :])
            if nxt and nxt.group(1) not in _LINK_WORDS:
                continue
        out.append((m.group(1), m.end()))
    return out


def _plain(s: str) -> str:
    return " ".join(re.sub(r"[^\w:%]+", " ", s.lower()).split())


def _written_with(
    text: str,
    end: int,
    letter: int,
    *,
    option_values: Sequence[Any] | None,
    options: Sequence[str] | None,
    clock: bool,
    clock_pm: bool,
    cut_off: bool,
) -> tuple[int | None, str | None]:
    """What the rest of the letter's line writes: (the option whose value it is, or None; why the
    letter and that value disagree, or None when they agree or nothing is written)."""
    rest = text[end:].split("\n", 1)[0]
    label = LETTERS[letter]
    if option_values is not None:
        spans = _value_spans(rest, clock=clock, clock_pm=clock_pm)
        if cut_off and spans and not rest[spans[-1][2] :].strip():
            spans = spans[:-1]  # the budget may have cut the last number short ("$69" of "$6966")
        written = {v for v, _, _ in spans}
        if not written:
            return None, None
        named = [i for i, v in enumerate(option_values) if _num_eq(v, written)]
        if letter in named:
            return letter, None
        shown = ", ".join(_show(v) for v, _, _ in spans)
        if len(named) == 1:
            return named[0], f"letter {label}, but the value written ({shown}) is option {LETTERS[named[0]]}'s"
        if named:
            return None, (
                f"letter {label}, but the values written ({shown}) are options {', '.join(LETTERS[i] for i in named)}'"
            )
        return None, f"letter {label}, but the value written ({shown}) is no option's"
    if options is not None and _plain(rest):
        said = _plain(rest)
        named = [i for i, o in enumerate(options) if _plain(o) == said]
        if named and letter not in named:
            return named[0], f"letter {label}, but the text written is option {LETTERS[named[0]]}'s"
        if letter in named:
            return letter, None
    return None, None


def _show(v: int | float) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:g}"


def extract_letter(
    text: str,
    *,
    n_options: int = 4,
    option_values: Sequence[Any] | None = None,
    options: Sequence[str] | None = None,
    clock: bool = False,
    clock_pm: bool = False,
    cut_off: bool = False,
) -> Extraction:
    """The option letter a generated text answers (see the module docstring for the rules and
    the outcomes). ``option_values``: the options' numbers (Deep Arithmark), ``options``: their
    texts (read when there are no values, as for SAT), both used to check the value written
    beside a letter; ``cut_off``: the text ran into the token budget."""
    letters = _letter_set(n_options)
    if not text.strip():
        return Extraction(text, None, "unparsed", "empty answer", outcome="unparsed")
    got: tuple[str, int] | None = None
    rule = None
    for rule, find in (("strict", _strict_letter), ("lax", _lax_letter)):  # noqa: B007 - read after the loop
        got = find(text, letters)
        if got is not None:
            break
    if got is None:
        mentioned = _mentioned_letters(text, letters)
        distinct = sorted({m for m, _ in mentioned})
        if len(distinct) > 1:
            return Extraction(
                text, None, "unparsed", f"ambiguous: several letters ({', '.join(distinct)})", outcome="unparsed"
            )
        if distinct:
            got, rule = mentioned[-1], "last"
    if got is not None:
        letter = letters.index(got[0])
        option, note = _written_with(
            text,
            got[1],
            letter,
            option_values=option_values,
            options=options,
            clock=clock,
            clock_pm=clock_pm,
            cut_off=cut_off,
        )
        if note is not None:
            return Extraction(text, got[0], rule, outcome="inconsistent", written_option=option, note=note)
        if cut_off and rule == "last":
            return Extraction(
                text,
                got[0],
                rule,
                outcome="cut_off",
                written_option=option,
                note="cut off by the token budget before it stated an answer",
            )
        return Extraction(text, got[0], rule, written_option=option)
    if option_values is not None:
        spans = _value_spans(text, clock=clock, clock_pm=clock_pm)
        written = {v for v, _, _ in spans}
        hits = [i for i, v in enumerate(option_values) if _num_eq(v, written)]
        if len(hits) == 1:
            if cut_off:
                return Extraction(
                    text,
                    letters[hits[0]],
                    "value",
                    outcome="cut_off",
                    written_option=hits[0],
                    note="cut off by the token budget before it stated an answer",
                )
            return Extraction(text, letters[hits[0]], "value", written_option=hits[0])
        if len(hits) > 1:
            return Extraction(
                text, None, "unparsed", "ambiguous: the values of several options are written", outcome="unparsed"
            )
    return Extraction(text, None, "unparsed", "no option letter found", outcome="unparsed")


def resolve(ex: Extraction, how: str, *, n_options: int = 4) -> tuple[str | None, str | None]:
    """The letter an :func:`extract_letter` result is credited with under ``how``
    (:data:`RESOLVE`), and the rule that decided it (None when the answer needed none): an
    answered one by its letter; an inconsistent one by nothing (``none``), its letter
    (``letter-first``) or the option its value names (``value-first``; None when the value is
    no option's); anything else (unparsed, cut off) by nothing."""
    if how not in RESOLVE:
        raise ValueError(f"no resolution {how!r}; expected one of {', '.join(RESOLVE)}")
    if ex.outcome == "answered":
        return ex.answer, None
    if ex.outcome != "inconsistent" or how == "none":
        return None, None
    if how == "letter-first":
        return ex.answer, how
    return (_letter_set(n_options)[ex.written_option] if ex.written_option is not None else None), how


# -- numbers ---------------------------------------------------------------------------------------

# 1,234,567.89 | 1 234 | 1234.5 ; a leading minus sign allowed
_NUM = r"-?(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+(?!\d)|\d+)(?:\.\d+)?"
_CLOCK = r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)(?:\s*([ap])\.?\s*m\b\.?)?"


def _to_number(s: str) -> int | float:
    v = float(s.replace(",", "").replace(" ", ""))
    return int(v) if v == int(v) else v


def _clock_value(h: str, m: str, ampm: str | None, clock_pm: bool) -> int | None:
    hour, minute = int(h), int(m)
    if minute > 59 or hour > 23:
        return None
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
    elif clock_pm and 1 <= hour <= 11:
        hour += 12
    return hour * 60 + minute


def _value_spans(text: str, *, clock: bool, clock_pm: bool) -> list[tuple[int | float, int, int]]:
    """Every number (or clock time, in minutes after midnight) written in ``text``, with its
    start and end; outside clock items a clock time is not read as two numbers."""
    if clock:
        return [
            (v, m.start(), m.end())
            for m in re.finditer(_CLOCK, text, re.IGNORECASE)
            if (v := _clock_value(m.group(1), m.group(2), m.group(3), clock_pm)) is not None
        ]
    return [(_to_number(m.group(0)), m.start(), m.end()) for m in re.finditer(_NUM, _strip_clock(text))]


def _all_values(text: str, *, clock: bool, clock_pm: bool) -> list[int | float]:
    return [v for v, _, _ in _value_spans(text, clock=clock, clock_pm=clock_pm)]


def _strip_clock(text: str) -> str:
    """``text`` with every clock time blanked out, character for character (positions stay)."""
    return re.sub(_CLOCK, lambda m: " " * len(m.group(0)), text, flags=re.IGNORECASE)


def _num_eq(v: Any, written: set) -> bool:
    try:
        return any(float(v) == float(w) for w in written)
    except (TypeError, ValueError):
        return False


def _unit_words(unit: str) -> list[str]:
    words = {
        "$": ["dollars", "dollar", "usd"],
        "mL": ["ml", "millilitres", "milliliters"],
        "cm": ["centimetres", "centimeters"],
        "litres": ["liters", "l"],
    }.get(unit, [])
    return [unit.lower(), *words] if unit else []


_WORD = re.compile(r"\d[\d,.:]*\d|\d|[^\W\d_]+(?:['’][^\W\d_]+)?")


def _words(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0).lower().replace(",", ""), m.start(), m.end()) for m in _WORD.finditer(text)]


def _copied_run(text: str, start: int, end: int, question: list[tuple[str, int, int]]) -> int:
    """The longest run of words around ``text[start:end]`` (a number) that the question holds
    word for word, in words (0 when the question lacks the number)."""
    words = _words(text)
    at = next((i for i, (_, s, e) in enumerate(words) if s < end and e > start), None)
    if at is None:
        return 0
    q = [w for w, _, _ in question]
    t = [w for w, _, _ in words]
    best = 0
    for j, w in enumerate(q):
        if w != t[at]:
            continue
        left = 0
        while at - left - 1 >= 0 and j - left - 1 >= 0 and t[at - left - 1] == q[j - left - 1]:
            left += 1
        right = 0
        while at + right + 1 < len(t) and j + right + 1 < len(q) and t[at + right + 1] == q[j + right + 1]:
            right += 1
        best = max(best, left + 1 + right)
    return best


_CUT_NOTE = "cut off by the token budget before it stated an answer"


def extract_number(
    text: str,
    *,
    unit: str = "",
    clock: bool = False,
    clock_pm: bool = False,
    question: str | None = None,
    cut_off: bool = False,
) -> Extraction:
    """The number (or clock time, in minutes after midnight) a generated text answers, and its
    outcome (module docstring): ``question`` is the text the model was asked, whose copied
    numbers are echoes, not answers; ``cut_off``: the text ran into the token budget."""
    raw = text
    if not text.strip():
        return Extraction(raw, None, "unparsed", "empty answer", outcome="unparsed")
    if not clock:
        text = _strip_clock(text)  # "5:12" is a time, not the numbers 5 and 12
    one = _CLOCK if clock else rf"\$?\s*(?:{_NUM})"
    asked = _words(question) if question else []

    def spans_in(a: int, b: int) -> list[tuple[int | float, int, int]]:
        return [
            (v, a + s, a + e)
            for v, s, e in _value_spans(raw[a:b] if clock else text[a:b], clock=clock, clock_pm=clock_pm)
        ]

    def echo(span: tuple[int | float, int, int]) -> bool:
        return bool(asked) and _copied_run(raw, span[1], span[2], asked) >= ECHO_WORDS

    def at_end(span: tuple[int | float, int, int]) -> bool:
        return cut_off and not raw[span[2] :].strip()

    def answer(span, rule: str, stated: bool) -> Extraction:
        """``stated``: the text says this is its answer (an answer line, "the answer is", or a
        text that is only the number): never an echo, cut off only if it may be incomplete."""
        value = span[0]
        if not stated and echo(span):
            return Extraction(
                raw,
                value,
                rule,
                outcome="echo",
                note=f"{raw[span[1] : span[2]].strip()} only repeats the question (copied with the words around it)",
            )
        if at_end(span) or (cut_off and not stated):
            return Extraction(raw, value, rule, outcome="cut_off", note=_CUT_NOTE)
        return Extraction(raw, value, rule)

    strict = re.compile(rf"^\s*{_DECOR}answer{_DECOR_AFTER}\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
    for m in reversed(list(strict.finditer(text))):
        spans = spans_in(m.start(1), m.end(1))
        if len(spans) == 1 or (spans and len({v for v, _, _ in spans}) == 1):
            return answer(spans[0], "strict", True)
    if re.fullmatch(
        rf"{_DECOR}(?:{one}){_DECOR_AFTER}(?:\s*[A-Za-z]+)?{_DECOR_AFTER}[.!]?{_DECOR_AFTER}",
        text.strip(),
        re.IGNORECASE,
    ):
        spans = spans_in(0, len(text))
        if spans:
            return answer(spans[-1], "lax", True)
    lax = re.compile(
        rf"(?:(?P<stated>answer{_DECOR_AFTER}\s*(?:is|would be|:|：))|=|\bis|\bwas|\bcomes to|\btotal of)"
        rf"\s*{_DECOR}(?P<value>{one})",
        re.IGNORECASE,
    )
    for m in reversed(list(lax.finditer(text))):
        spans = spans_in(m.start("value"), m.end("value"))
        if not spans:
            continue
        got = answer(spans[-1], "lax", m.group("stated") is not None)
        if got.outcome == "echo":
            continue  # "The tank was 376 litres": the question's number; read on
        return got
    spans = spans_in(0, len(text))
    if not spans:
        return Extraction(
            raw, None, "unparsed", "no clock time found" if clock else "no number found", outcome="unparsed"
        )
    own = [s for s in spans if not echo(s)]
    pool = own or spans
    words = _unit_words(unit)
    if words and not clock:
        with_unit = []
        for m in re.finditer(rf"(\$\s*)?({_NUM})\s*([A-Za-z]+)?", text):
            if (m.group(1) and unit == "$") or (m.group(3) and m.group(3).lower() in words):
                with_unit.extend(s for s in pool if s[1] == m.start(2))
        if with_unit:
            pool = with_unit
    return answer(pool[-1], "last", False)
