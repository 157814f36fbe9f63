"""Parse and re-check solution steps, so anyone can verify every line of every item.

Grammar (one binary operation per line, ``<what>: <body>``):

* ``a + b = c``, ``a - b = c``, ``a × b = c`` (or ``*``), ``a / b = c`` (exact division)
* ``a / b = q (remainder r)`` — whole-unit division
* ``p% of a = c``
* ``H:MM a.m. + m min = H:MM p.m.`` — clock arithmetic (a.m./p.m. optional)

Numbers may carry ``$``, a decimal part and thousands commas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

_NUM = r"-?\$?[0-9][0-9,]*(?:\.[0-9]+)?"
_CLOCK = r"[0-9]{1,2}:[0-9]{2}(?: [ap]\.m\.)?"

_PCT = re.compile(rf"^(?P<p>{_NUM})% of (?P<a>{_NUM}) = (?P<c>{_NUM})$")
_CLK = re.compile(rf"^(?P<t>{_CLOCK}) \+ (?P<m>[0-9]+) min = (?P<u>{_CLOCK})$")
_DIVMOD = re.compile(rf"^(?P<a>{_NUM}) / (?P<b>{_NUM}) = (?P<q>{_NUM}) \(remainder (?P<r>{_NUM})\)$")
_BIN = re.compile(rf"^(?P<a>{_NUM}) (?P<op>[-+×*/]) (?P<b>{_NUM}) = (?P<c>{_NUM})$")


class StepError(ValueError):
    """A step that does not parse or whose arithmetic is wrong."""


#: The step forms :func:`check_step` recognises (``CheckedStep.op``).
OPS = ("+", "-", "×", "/", "divmod", "%", "clock")


@dataclass(frozen=True)
class CheckedStep:
    what: str
    operands: tuple[Fraction, ...]
    result: Fraction
    #: Which form the step has: one of :data:`OPS` (``*`` is read as ``×``).
    op: str = ""
    #: The calculation's text left of `` = `` and right of it, as written in the step.
    lhs: str = ""
    rhs: str = ""
    #: Whole-unit division only: the remainder.
    remainder: Fraction | None = None


#: ``Fraction(n)`` for a whole ``n``, shared: Fractions are immutable, and the same numbers
#: come back in step after step, so the re-check of a large build builds each one once.
_whole = lru_cache(maxsize=1 << 16)(Fraction)


def parse_number(text: str) -> Fraction:
    t = text.replace("$", "").replace(",", "")
    if t.isdigit():  # a plain whole number: the same Fraction without parsing the string as one
        return _whole(int(t))
    return Fraction(t)


def parse_clock(text: str) -> int:
    hm, _, half = text.partition(" ")
    h, m = (int(x) for x in hm.split(":"))
    if m >= 60:
        raise StepError(f"minutes {m} >= 60 in {text!r}")
    if half:
        if not 1 <= h <= 12:
            raise StepError(f"hour {h} outside 1–12 in {text!r}")
        h = h % 12 + (12 if half == "p.m." else 0)
    elif h >= 24:
        raise StepError(f"hour {h} >= 24 in {text!r}")
    return h * 60 + m


def _sides(body: str) -> tuple[str, str]:
    lhs, _, rhs = body.partition(" = ")
    return lhs, rhs


def check_step(line: str) -> CheckedStep:
    """Parse one step and re-evaluate it; raise :class:`StepError` if it is wrong."""
    what, sep, body = line.partition(": ")
    if not sep or not what.strip():
        raise StepError(f"step {line!r} does not read '<what>: <calculation>'")
    # the four forms are mutually exclusive; the commonest is tried first
    for form, check in ((_BIN, _binary_step), (_PCT, _percent_step), (_CLK, _clock_step), (_DIVMOD, _divmod_step)):
        if m := form.match(body):
            return check(m, line, what, body)
    raise StepError(f"step {line!r}: calculation does not match any step form")


def _plain_whole(*texts: str) -> list[int] | None:
    """The numbers as ints when each is a whole non-negative number (``$`` and commas dropped),
    else None: most steps, tested in int arithmetic."""
    bare = [t.replace("$", "").replace(",", "") for t in texts]
    return [int(t) for t in bare] if all(t.isdigit() for t in bare) else None


def _binary_step(m: re.Match, line: str, what: str, body: str) -> CheckedStep:
    """``a op b = c`` for + - × * /."""
    op = m["op"]
    sign = "×" if op == "*" else op
    whole = _plain_whole(m["a"], m["b"], m["c"])
    if whole is not None:
        a, b, c = whole
        if op == "/":
            if b == 0:
                raise StepError(f"{line!r}: division by zero")
            ok = a == b * c
        else:
            ok = (a + b if op == "+" else a - b if op == "-" else a * b) == c
        if ok:
            return CheckedStep(what, (_whole(a), _whole(b)), _whole(c), sign, *_sides(body))
    a, b, c = (parse_number(m[k]) for k in "abc")
    if op == "/" and b == 0:
        raise StepError(f"{line!r}: division by zero")
    v = a + b if op == "+" else a - b if op == "-" else a * b if op in "×*" else a / b
    if v != c:
        raise StepError(f"{line!r}: {m['a']} {op} {m['b']} is {v}, not {m['c']}")
    return CheckedStep(what, (a, b), c, sign, *_sides(body))


def _percent_step(m: re.Match, line: str, what: str, body: str) -> CheckedStep:
    """``p% of a = c``."""
    whole = _plain_whole(m["p"], m["a"], m["c"])
    if whole is not None:
        p, a, c = whole
        if a * p == 100 * c:  # a·p/100 = c in int arithmetic
            return CheckedStep(what, (_whole(p), _whole(a)), _whole(c), "%", *_sides(body))
    p, a, c = (parse_number(m[k]) for k in "pac")
    if a * p / 100 != c:
        raise StepError(f"{line!r}: {m['p']}% of {m['a']} is {a * p / 100}, not {m['c']}")
    return CheckedStep(what, (p, a), c, "%", *_sides(body))


def _clock_step(m: re.Match, line: str, what: str, body: str) -> CheckedStep:
    """A time of day plus minutes is a time of day."""
    t, u, mins = parse_clock(m["t"]), parse_clock(m["u"]), int(m["m"])
    if (t + mins) % 1440 != u:
        raise StepError(f"{line!r}: clock sum is wrong")
    return CheckedStep(what, (Fraction(t), Fraction(mins)), Fraction(t + mins), "clock", *_sides(body))


def _divmod_step(m: re.Match, line: str, what: str, body: str) -> CheckedStep:
    """``a / b = q remainder r``."""
    a, b, q, r = (parse_number(m[k]) for k in "abqr")
    if b <= 0 or not (0 <= r < b) or q * b + r != a or q.denominator != 1:
        raise StepError(f"{line!r}: {m['a']} / {m['b']} is not {m['q']} remainder {m['r']}")
    return CheckedStep(what, (a, b), q, "divmod", *_sides(body), remainder=r)


def check_chain(
    lines: list[str] | tuple[str, ...], answer: Fraction | int | None = None, *, clock: bool = False
) -> list[CheckedStep]:
    """Check every step, that each non-final result is used by a later step, and that the
    last result is ``answer`` (minutes after midnight for clock items)."""
    steps = [check_step(line) for line in lines]
    if not steps:
        raise StepError("no solution steps")
    for i, s in enumerate(steps[:-1]):
        if not any(s.result in later.operands for later in steps[i + 1 :]):
            raise StepError(f"step {i + 1} ({lines[i]!r}) is never used by a later step")
    if answer is not None and steps[-1].result != Fraction(answer):
        raise StepError(f"last step gives {steps[-1].result}, answer is {answer}")
    return steps
