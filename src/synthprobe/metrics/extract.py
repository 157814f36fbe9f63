"""Reading the answer out of a generated text: a letter (``letters``) or a number (``free``).

Pure functions, no model. Every call returns an :class:`Extraction` that keeps the raw text,
the parsed answer, and the rule that found it, or ``rule = "unparsed"`` with the reason, so a
results file shows exactly why an item was scored as it was. The rules are tried in order and
the first that finds an answer wins:

``strict``
    the fixed answer line the prompt asks for, ``ANSWER: X`` on a line of its own (any case,
    markdown emphasis, ``$X$``, ``(X)``, ``X.`` around the value allowed); when the text holds
    several such lines the **last** one counts (a model that corrects itself ends with its final
    answer; taking the first is the published simple-evals bug).
``lax``
    a text that is nothing but the answer with decoration (``(C)``, ``**B**``, ``$B$``, ``B.``;
    ``$312``, ``312 dollars.``); else ``answer is X`` / ``answer is: X`` / ``Answer: X``
    anywhere, even followed by more text (the last occurrence); else a text that opens with an
    option label and the option (``A. $312``; a model that lists the options first and then
    says which one is right is read by the previous pattern).
``last``
    letters: the lettered options mentioned as standalone capitals (``A`` followed by a
    lower-case word is the article, not an option): if exactly one distinct letter is mentioned
    it is the answer, two or more different letters are ``unparsed`` ("ambiguous").
    numbers: the last number in the text (with the item's unit preferred when one is written).
``value``
    letters only: no letter at all, but exactly one option's value is written (a model that
    answers ``$327`` instead of ``B``) -> that option's letter.

Numbers are compared as numbers: ``$1,312``, ``1312 dollars``, ``1312.00`` and ``1 312`` are
1312; a clock time (``5:17 p.m.``, ``5:17pm``, ``17:17``) is minutes after midnight, the way
Deep Arithmark stores clock answers (``option_values``). A 12-hour time written without a.m./p.m.
reads as p.m. when the item's answer is p.m. (``clock_pm``), since the question fixes the half
of the day.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any, Sequence

LETTERS = "ABCDEFGHIJ"
RULES = ("strict", "lax", "last", "value", "unparsed")


@dataclass(frozen=True)
class Extraction:
    """What was read from one generated text."""

    raw: str
    #: A letter ("A".."J") for letters, a number (int, or float when not whole) for free; None if unparsed.
    answer: Any
    rule: str
    #: Why nothing was read (``rule == "unparsed"``); None otherwise.
    reason: str | None = None

    @property
    def parsed(self) -> bool:
        return self.rule != "unparsed"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- letters ---------------------------------------------------------------------------------------

_DECOR = r"[\s*_`$\\(\[{\"'“]*"
_DECOR_AFTER = r"[\s*_`$\\)\]}\"'”]*"


def _letter_set(n_options: int) -> str:
    return LETTERS[:n_options]


def _strict_letter(text: str, letters: str) -> str | None:
    pat = re.compile(rf"^\s*{_DECOR}answer{_DECOR_AFTER}\s*[:：]\s*{_DECOR}([{letters}]){_DECOR_AFTER}[.!]?{_DECOR_AFTER}$",
                     re.IGNORECASE | re.MULTILINE)
    found = [m.group(1) for m in pat.finditer(text) if m.group(1).isupper()]
    return found[-1] if found else None


def _lax_letter(text: str, letters: str) -> str | None:
    whole = re.fullmatch(rf"{_DECOR}(?:option\s+)?([{letters}]){_DECOR_AFTER}[.!]?{_DECOR_AFTER}", text.strip(),
                         re.IGNORECASE)
    if whole and whole.group(1).isupper():
        return whole.group(1)
    # "the answer is D", "Answer: B. because ...", "The answer is: (C)": the last one counts
    pat = re.compile(rf"answer{_DECOR_AFTER}\s*(?:is|would be)?\s*[:：]?\s*(?:option\s+)?{_DECOR}([{letters}])(?![A-Za-z])",
                     re.IGNORECASE)
    found = [m.group(1) for m in pat.finditer(text) if m.group(1).isupper()]
    if found:
        return found[-1]
    # the answer opens with an option label and (part of) the option: "A. $312", "(B) 446 litres"
    head = re.match(rf"{_DECOR}([{letters}])[.):]\s+\S", text.strip())
    return head.group(1) if head else None


#: Words after which a standalone "A" is still an option letter ("A or B", "A is right").
_LINK_WORDS = {"and", "or", "nor", "is", "was", "are", "but", "then", "seems", "looks", "would", "could"}


def _mentioned_letters(text: str, letters: str) -> list[str]:
    """Standalone capitals among ``letters``; an "A" before a lower-case word is the article
    ("A farmer ...") unless that word links options ("A or B", "A is wrong")."""
    out = []
    for m in re.finditer(rf"(?<![A-Za-z0-9'’])([{letters}])(?![A-Za-z0-9'’])", text):
        if m.group(1) == "A":
            nxt = re.match(r"\s+([a-z]+)", text[m.end():])
            if nxt and nxt.group(1) not in _LINK_WORDS:
                continue
        out.append(m.group(1))
    return out


def extract_letter(text: str, *, n_options: int = 4, option_values: Sequence[Any] | None = None,
                   clock: bool = False, clock_pm: bool = False) -> Extraction:
    """The option letter a generated text answers (see the module docstring for the rules)."""
    letters = _letter_set(n_options)
    if not text.strip():
        return Extraction(text, None, "unparsed", "empty answer")
    got = _strict_letter(text, letters)
    if got is not None:
        return Extraction(text, got, "strict")
    got = _lax_letter(text, letters)
    if got is not None:
        return Extraction(text, got, "lax")
    mentioned = _mentioned_letters(text, letters)
    distinct = sorted(set(mentioned))
    if len(distinct) == 1:
        return Extraction(text, distinct[0], "last")
    if len(distinct) > 1:
        return Extraction(text, None, "unparsed", f"ambiguous: several letters ({', '.join(distinct)})")
    if option_values is not None:
        written = {v for v in _all_values(text, clock=clock, clock_pm=clock_pm)}
        hits = [i for i, v in enumerate(option_values) if _num_eq(v, written)]
        if len(hits) == 1:
            return Extraction(text, letters[hits[0]], "value")
        if len(hits) > 1:
            return Extraction(text, None, "unparsed", "ambiguous: the values of several options are written")
    return Extraction(text, None, "unparsed", "no option letter found")


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


def _all_values(text: str, *, clock: bool, clock_pm: bool) -> list[int | float]:
    if clock:
        return [v for m in re.finditer(_CLOCK, text, re.IGNORECASE)
                if (v := _clock_value(m.group(1), m.group(2), m.group(3), clock_pm)) is not None]
    return [_to_number(m.group(0)) for m in re.finditer(_NUM, _strip_clock(text))]


def _strip_clock(text: str) -> str:
    return re.sub(_CLOCK, " ", text, flags=re.IGNORECASE)


def _num_eq(v: Any, written: set) -> bool:
    try:
        return any(float(v) == float(w) for w in written)
    except (TypeError, ValueError):
        return False


def _unit_words(unit: str) -> list[str]:
    words = {"$": ["dollars", "dollar", "usd"], "mL": ["ml", "millilitres", "milliliters"],
             "cm": ["centimetres", "centimeters"], "litres": ["liters", "l"]}.get(unit, [])
    return [unit.lower(), *words] if unit else []


def extract_number(text: str, *, unit: str = "", clock: bool = False, clock_pm: bool = False) -> Extraction:
    """The number (or clock time, in minutes after midnight) a generated text answers."""
    raw = text
    if not text.strip():
        return Extraction(raw, None, "unparsed", "empty answer")
    if not clock:
        text = _strip_clock(text)  # "5:12" is a time, not the numbers 5 and 12
    one = _CLOCK if clock else rf"\$?\s*({_NUM})"

    def read(fragment: str) -> list[int | float]:
        return _all_values(fragment, clock=clock, clock_pm=clock_pm)

    strict = re.compile(rf"^\s*{_DECOR}answer{_DECOR_AFTER}\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
    lines = [m.group(1) for m in strict.finditer(text)]
    for line in reversed(lines):
        vals = read(line)
        if len(vals) == 1 or (vals and len(set(vals)) == 1):
            return Extraction(raw, vals[0], "strict")
    lax = re.compile(rf"(?:answer{_DECOR_AFTER}\s*(?:is|would be|:|：)|=|\bis|\bwas|\bcomes to|\btotal of)\s*{_DECOR}({one})",
                     re.IGNORECASE)
    found = [m.group(1) for m in lax.finditer(text)]
    if re.fullmatch(rf"{_DECOR}(?:{one}){_DECOR_AFTER}(?:\s*[A-Za-z]+)?{_DECOR_AFTER}[.!]?{_DECOR_AFTER}", text.strip(),
                    re.IGNORECASE):
        found = [text.strip()]
    for frag in reversed(found):
        vals = read(frag)
        if vals:
            return Extraction(raw, vals[-1], "lax")
    vals = read(text)
    if not vals:
        return Extraction(raw, None, "unparsed", "no clock time found" if clock else "no number found")
    words = _unit_words(unit)
    if words and not clock:
        with_unit = []
        for m in re.finditer(rf"(\$\s*)?({_NUM})\s*([A-Za-z]+)?", _strip_clock(text)):
            if (m.group(1) and unit == "$") or (m.group(3) and m.group(3).lower() in words):
                with_unit.append(_to_number(m.group(2)))
        if with_unit:
            return Extraction(raw, with_unit[-1], "last")
    return Extraction(raw, vals[-1], "last")
