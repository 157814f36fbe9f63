"""How numbers are written in a rendered item: plain digits, comma groups or spaced groups.

GPT-3's notes warn that arithmetic scores move with how numbers are written, and tokenisers
split digit strings differently (GPT-2's BPE merges up to several digits, Llama-style
tokenisers split every digit). ``--number-format`` renders the *same* items three ways so a
model can be scored on each and the paired difference tested:

* ``plain`` — ``12345`` (today's rendering; a plain build is byte-identical to a build without
  the option);
* ``comma`` — ``12,345``: comma thousands separators, as English prose writes them;
* ``space`` — ``12 345``: digit groups separated by an ordinary space (U+0020).

Why an ordinary space and not a thin or narrow no-break space (U+2009 / U+202F, the SI
recommendation): those are three UTF-8 bytes that most tokenisers hold no token for, so a
byte-level BPE would split them into rare byte tokens and the probe would measure reactions
to unfamiliar bytes rather than to digit grouping. An ordinary space is one byte that every
tokeniser knows and that starts a new pre-token, so each group of three digits reaches the
model as its own word — the contrast with ``plain`` (one digit run) that the probe is after.

Only whole-number runs of four or more digits are grouped (``1250`` → ``1,250``), in prose
and in answers alike. Digits after a decimal point (``12.5000`` stays ``12.5000``) and around a
clock colon (``10:30``) are never touched, so money (``$1250.50`` → ``$1,250.50``), percents
and times keep their own punctuation. Values below 1,000 read the same in every format.
"""

from __future__ import annotations

import re

from synthprobe.errors import InputError

#: The formats, ``plain`` first (the reference every other format is compared with).
NUMBER_FORMATS = ("plain", "comma", "space")
PLAIN = "plain"

#: The group separator of each grouped format.
SEPARATORS = {"comma": ",", "space": " "}

#: A run of 4+ digits that is a whole number: not the fraction of a decimal ("12.5000"), not
#: next to a clock colon, and not already grouped ("1,250" is not re-grouped).
_WHOLE = re.compile(r"(?<![\d.:,])\d{4,}(?![\d:]|,\d)")


def check_number_format(fmt: object, *, field: str = "--number-format") -> str:
    """``fmt`` if it names a format; otherwise :class:`InputError`."""
    if fmt not in NUMBER_FORMATS:
        raise InputError(f"expected one of {', '.join(NUMBER_FORMATS)}, got {fmt!r}", field=field)
    return fmt  # type: ignore[return-value]


def group_digits(digits: str, fmt: str) -> str:
    """A run of digits (no sign) in ``fmt``: ``group_digits("12345", "comma") == "12,345"``."""
    if fmt == PLAIN or len(digits) < 4:
        return digits
    sep = SEPARATORS[fmt]
    head = len(digits) % 3 or 3
    return sep.join([digits[:head]] + [digits[i : i + 3] for i in range(head, len(digits), 3)])


def format_int(value: int, fmt: str) -> str:
    """A whole number in ``fmt`` (``-1234`` → ``-1,234``); ``plain`` is ``str(value)``."""
    text = str(value)
    if value < 0:
        return "-" + group_digits(text[1:], fmt)
    return group_digits(text, fmt)


def format_numbers(text: str, fmt: str) -> str:
    """Every whole number of four or more digits in ``text`` written in ``fmt``."""
    if fmt == PLAIN:
        return text
    return _WHOLE.sub(lambda m: group_digits(m.group(0), fmt), text)


def join_groups(text: str, fmt: str) -> str:
    """``text`` with the group separators of ``fmt`` between digit groups removed: each grouped
    number becomes one digit run again (used to count a prompt's words in every format alike)."""
    if fmt == PLAIN:
        return text
    sep = re.escape(SEPARATORS[fmt])
    return re.sub(rf"(?<=\d){sep}(?=\d{{3}}(?!\d))", "", text)
