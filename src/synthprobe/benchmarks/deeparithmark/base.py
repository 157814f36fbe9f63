"""The contract every Deep Arithmark family follows.

A family is a pure function ``generate(rng) -> Problem``: the story, ``depth`` dependent
operations written as machine-checkable steps (see :mod:`.steps`), the exact answer, and a
pool of named plausible mistakes, each the exact wrong value that mistake produces.
Arithmetic is exact (``int``/``Fraction``), never float.

The builder (:mod:`.build`) picks three mistakes per item so that the answer's numeric rank,
its slot and the options' roundness class are balanced; a family therefore offers more than
three mistakes, on both sides of the answer, and the builder redraws when the pool cannot
serve the rank it needs.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

Number = int | Fraction

#: Difficulty word in ``activity_label`` per depth tier.
DIFFICULTY = {2: "easy", 3: "medium", 4: "hard", 5: "expert"}


class GenerationError(ValueError):
    """A family drew parameters it cannot use (non-integer result, …): the builder redraws."""


def require(condition: bool, why: str) -> None:
    """Reject a draw (not an ``assert``: ``python -O`` must not change the data)."""
    if not condition:
        raise GenerationError(why)


# ---------------------------------------------------------------------------------------
# Number formatting shared by stories, steps and endings
# ---------------------------------------------------------------------------------------


def fmt_num(x: Number, *, money: bool = False, commas: bool = False) -> str:
    """Exact decimal rendering of an int or terminating Fraction ("12", "12.5", "$1,250")."""
    if type(x) is int:  # the common case, without building a Fraction (same text)
        if x >= 0:
            text = f"{x:,}" if commas else str(x)
            return "$" + text if money else text
        text = f"{-x:,}" if commas else str(-x)
        return "-$" + text if money else "-" + text
    if type(x) is not Fraction:  # an equal Fraction is already normalised: no need to rebuild it
        x = Fraction(x)
    # on the numerator and denominator as ints (the denominator of a Fraction is positive):
    # the same text as the Fraction arithmetic of |x|, without building Fractions
    num, denominator = x.numerator, x.denominator
    sign = "-" if num < 0 else ""
    num = abs(num)
    whole, rest = divmod(num, denominator)
    text = f"{whole:,}" if commas else str(whole)
    if rest:
        den = denominator
        twos = fives = 0
        while den % 2 == 0:
            den //= 2
            twos += 1
        while den % 5 == 0:
            den //= 5
            fives += 1
        if den != 1:
            raise GenerationError(f"{num}/{denominator} has no terminating decimal form")
        places = max(twos, fives)
        frac = (rest * 10**places) // denominator
        text += "." + str(frac).rjust(places, "0").rstrip("0")
        if money and len(text.split(".")[1]) == 1:
            text += "0"
    return f"{sign}${text}" if money else sign + text


def fmt_clock(minutes: int) -> str:
    """Minutes after midnight (0 ≤ m < 1440) as ``H:MM a.m.``/``H:MM p.m.``."""
    if not 0 <= minutes < 24 * 60:
        raise GenerationError(f"clock value {minutes} outside one day")
    h, m = divmod(minutes, 60)
    half = "a.m." if h < 12 else "p.m."
    h12 = h % 12 or 12
    return f"{h12}:{m:02d} {half}"


def as_int(x: Number, why: str = "result must be a whole number") -> int:
    if type(x) is int:
        return x
    if type(x) is not Fraction:
        x = Fraction(x)
    require(x.denominator == 1, why)
    return x.numerator  # int(x) of a whole Fraction


# ---------------------------------------------------------------------------------------
# Solution steps: each call performs one binary operation exactly and records its line.
# ---------------------------------------------------------------------------------------


class Steps:
    """Accumulates ``<what>: <a> <op> <b> = <c>`` lines while computing the values.

    Use one method per step; every method returns the exact result so later steps consume
    earlier results. ``money=True`` renders amounts with ``$``.

    A step whose numbers are all whole (nearly every one) keeps its values and is written out
    only when the lines are read (:attr:`lines`, or the lines of :meth:`solution` once the
    builder needs them): whole numbers always have a rendering, so this changes no text and no
    error, and the draws the builder discards before it looks at the steps (most of them)
    never pay for the text. Any other step is written at once, so a value with no decimal
    form still rejects the draw where it did.
    """

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: list = []  # a written line (str) or the values of one to write (tuple)

    @property
    def lines(self) -> list[str]:
        """The solution lines so far, written out."""
        return _written(self._rows)

    def solution(self) -> StepLines:
        """The lines so far as a read-only sequence that writes them when first read: what a
        family passes as ``Problem.steps``."""
        return StepLines(self._rows[:])

    def keep(self, lines: Sequence[str]) -> None:
        """Start from the lines of an earlier solution (a twin that adds a step to its original's)."""
        self._rows.extend(lines)

    def op(self, what: str, a: Number, op: str, b: Number, *, money: bool = False) -> Number:
        """``a + b``, ``a - b``, ``a × b`` or an exact ``a / b`` (must terminate as a decimal)."""
        c = exact_op(a, op, b)
        row = (_op_line, what, a, op, b, c, money)
        self._rows.append(row if type(a) is int and type(b) is int and type(c) is int else _op_line(*row[1:]))
        return c

    def divmod(self, what: str, a: int, b: int) -> tuple[int, int]:
        """Whole-unit division: ``<what>: a / b = q (remainder r)``; returns ``(q, r)``."""
        a, b = as_int(a), as_int(b)
        require(b > 0 and a >= 0, "whole-unit division needs a >= 0 and b > 0")
        q, r = divmod(a, b)
        self._rows.append((_divmod_line, what, a, b, q, r))
        return q, r

    def pct(self, what: str, p: Number, a: Number, *, money: bool = False) -> Number:
        """``<what>: p% of a = c`` with c = a·p/100 exactly."""
        c = exact_pct(p, a)
        row = (_pct_line, what, p, a, c, money)
        self._rows.append(row if type(p) is int and type(a) is int and type(c) is int else _pct_line(*row[1:]))
        return c

    def clock(self, what: str, start: int, minutes: int) -> int:
        """``<what>: H:MM a.m. + m min = H:MM p.m.`` on minutes after midnight."""
        end = start + as_int(minutes)
        self._rows.append(_clock_line(what, start, minutes, end))
        return end

    def __len__(self) -> int:
        return len(self._rows)


def _op_line(what: str, a: Number, op: str, b: Number, c: Number, money: bool) -> str:
    return f"{what}: {fmt_num(a, money=money)} {op} {fmt_num(b, money=money)} = {fmt_num(c, money=money)}"


def _divmod_line(what: str, a: int, b: int, q: int, r: int) -> str:
    return f"{what}: {a} / {b} = {q} (remainder {r})"


def _pct_line(what: str, p: Number, a: Number, c: Number, money: bool) -> str:
    return f"{what}: {fmt_num(p)}% of {fmt_num(a, money=money)} = {fmt_num(c, money=money)}"


def _clock_line(what: str, start: int, minutes: int, end: int) -> str:
    return f"{what}: {fmt_clock(start)} + {as_int(minutes)} min = {fmt_clock(end)}"


def _written(rows: list) -> list:
    """``rows`` with every pending line written out, in place (and returned)."""
    for i, row in enumerate(rows):
        if type(row) is not str:
            rows[i] = row[0](*row[1:])
    return rows


class StepLines(Sequence[str]):
    """A problem's solution lines (:meth:`Steps.solution`): a read-only sequence of strings,
    equal to the tuple of the same lines, written out when first read."""

    __slots__ = ("_rows", "_lines")

    def __init__(self, rows: list) -> None:
        self._rows: list | None = rows
        self._lines: tuple[str, ...] | None = None

    def _get(self) -> tuple[str, ...]:
        if self._lines is None:
            self._lines, self._rows = tuple(_written(self._rows)), None
        return self._lines

    def __getitem__(self, i):
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._rows) if self._lines is None else len(self._lines)

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StepLines, tuple, list)):
            return self._get() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        return repr(self._get())


def _norm(x: Fraction) -> Number:
    return x.numerator if x.denominator == 1 else x  # int(x) of a whole Fraction


def exact_op(a: Number, op: str, b: Number) -> Number:
    """``a op b`` exactly: an ``int`` when the result is whole, else a ``Fraction``.

    Plain ints (the common case) are computed as ints, which gives the same value and type
    as the ``Fraction`` route at a fraction of the cost."""
    if type(a) is int and type(b) is int:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "×" or op == "*":
            return a * b
        if op == "/":
            require(b != 0, "division by zero")
            q, r = divmod(a, b)
            return q if r == 0 else Fraction(a, b)
        raise ValueError(f"unknown operator {op!r}")
    # (a Fraction operand is used as it is: rebuilding it gives an equal one)
    if type(a) is not Fraction:
        a = Fraction(a)
    if type(b) is not Fraction:
        b = Fraction(b)
    if op == "+":
        c = a + b
    elif op == "-":
        c = a - b
    elif op in ("×", "*"):
        c = a * b
    elif op == "/":
        require(b != 0, "division by zero")
        c = a / b
    else:
        raise ValueError(f"unknown operator {op!r}")
    return _norm(c)


def exact_pct(p: Number, a: Number) -> Number:
    """``p`` % of ``a`` exactly (``a·p/100``), typed as :func:`exact_op` types its results."""
    if type(a) is int and type(p) is int:
        q, r = divmod(a * p, 100)
        return q if r == 0 else Fraction(a * p, 100)
    return _norm((a if type(a) is Fraction else Fraction(a)) * (p if type(p) is Fraction else Fraction(p)) / 100)


# ---------------------------------------------------------------------------------------
# What a family returns
# ---------------------------------------------------------------------------------------

VALUE_KINDS = ("count", "money", "clock")


@dataclass(frozen=True)
class Problem:
    """One generated problem, before the builder picks decoys and slots.

    ``ending`` is a ``str.format`` template with one ``{}`` for the rendered value, e.g.
    ``" {} crates."`` or ``" ${}."``; the four endings differ only in that value.
    ``mistakes`` maps a human-readable mistake name ("forgot the damaged units") to the exact
    value it produces; invalid ones (non-positive, equal to the answer, ±1, …) are filtered
    by the builder, so families need not pre-filter.

    ``extra_mistakes``: more named mistakes (often compound ones, "forgot the fee and doubled
    the discount") that only the role-balanced builder (:mod:`.groups`) draws on. They widen the
    pool so that the same four values can be the options of four items, each value the key of
    one; the legacy selection (the positive control, and the release until it is re-rendered)
    reads ``mistakes`` alone, so adding them changes none of its bytes. A family computes them
    without drawing from the generator.
    """

    family: str
    topic: str
    depth: int
    ctx: str
    answer: int
    unit: str
    ending: str
    steps: Sequence[str]  # a tuple, or Steps.solution() (written when first read)
    mistakes: Mapping[str, int]
    kind: str = "count"
    params: Mapping[str, object] = field(default_factory=dict)
    extra_mistakes: Mapping[str, int] = field(default_factory=dict)

    def render(self, value: int) -> str:
        return self.ending.format(render_value(value, self.kind))


def render_value(value: int, kind: str) -> str:
    if kind == "clock":
        text = fmt_clock(value)
        return text
    return fmt_num(value)


@dataclass(frozen=True)
class Family:
    """A registered family: its name, topic label, depth and generator."""

    name: str
    topic: str
    depth: int
    generate: Callable[[random.Random], Problem]
    summary: str = ""


FAMILIES: dict[str, Family] = {}


def register(name: str, *, topic: str, depth: int, summary: str = ""):
    """Decorator: ``@register("tank_fill", topic="tank_fill", depth=4)`` on ``generate(rng)``."""

    def deco(fn: Callable[[random.Random], Problem]) -> Callable[[random.Random], Problem]:
        if name in FAMILIES:
            raise ValueError(f"family {name!r} registered twice")
        FAMILIES[name] = Family(
            name=name,
            topic=topic,
            depth=depth,
            generate=fn,
            summary=summary or (fn.__doc__ or "").strip().splitlines()[0],
        )
        return fn

    return deco


# ---------------------------------------------------------------------------------------
# Perturbation twins: the same problem told another way (see synthprobe.benchmarks.deeparithmark.twins)
# ---------------------------------------------------------------------------------------

#: The twin kinds, in display order → what the transform does to the original problem.
TWIN_KINDS = {
    "irrelevant_clause": "a sentence with a number that plays no part in the answer",
    "one_step_more": "the same story with one extra dependent operation (depth + 1)",
    "reordered": "the same operations, told in another order",
    "unit_change": "the same quantities in another unit, the answer converted",
}

#: How a twin kind moves the depth (every other kind keeps it).
TWIN_DEPTH_STEP = {"one_step_more": 1}

#: The mistake an ``irrelevant_clause`` twin must offer, under exactly this name: the value
#: obtained by using the irrelevant number. The twin builder always puts it among the decoys,
#: so a wrong pick of it is the *uptake* the twin probe reports.
IRRELEVANT = "used the irrelevant number"

#: ``(family, kind)`` → the registered transform ``twin(problem, rng) -> Problem``.
TWINS: dict[tuple[str, str], Callable[[Problem, random.Random], Problem]] = {}


class NoTwin(GenerationError):
    """This original has no twin of the kind at all (not a draw to retry): the builder leaves it
    out of that kind's file and counts it with the originals whose family lacks the kind."""


def no_twin(why: str) -> None:
    """Say that the original has no twin of this kind (raises :class:`NoTwin`)."""
    raise NoTwin(why)


def twin(family: str, kind: str):
    """Decorator: ``@twin("tank_fill", "irrelevant_clause")`` on ``make(problem, rng) -> Problem``.

    The transform gets the family's drawn original (its ``params`` carry what the story was
    made of) and a seeded stream of its own; it returns the twin. It must keep the family,
    topic and (but for ``one_step_more``, depth + 1) depth; ``irrelevant_clause`` and
    ``reordered`` keep the answer; ``irrelevant_clause`` adds the mistake :data:`IRRELEVANT`.
    Like ``generate``, it calls :func:`require` to reject a draw (the builder draws again from
    the twin's stream, with the same original), and :func:`no_twin` when no draw could serve
    this original (it is left out and counted). A family offers only the kinds it registers."""
    if kind not in TWIN_KINDS:
        raise ValueError(f"unknown twin kind {kind!r}; expected one of {', '.join(TWIN_KINDS)}")

    def deco(fn: Callable[[Problem, random.Random], Problem]) -> Callable[[Problem, random.Random], Problem]:
        if (family, kind) in TWINS:
            raise ValueError(f"twin {kind!r} of family {family!r} registered twice")
        TWINS[family, kind] = fn
        return fn

    return deco


def last_sentence_start(ctx: str) -> int:
    """Where the prompt's closing stem starts: after the last ". " (0 when it is one sentence)."""
    cut = ctx.rfind(". ")
    return 0 if cut < 0 else cut + 2


def insert_sentence(ctx: str, sentence: str) -> str:
    """``ctx`` with ``sentence`` (a whole sentence, ending in a full stop) placed just before
    its closing stem — where GSM-NoOp puts its clause."""
    at = last_sentence_start(ctx)
    return f"{ctx[:at]}{sentence} {ctx[at:]}"


def irrelevant_twin(problem: Problem, ctx: str, number: int, value: int) -> Problem:
    """The ``irrelevant_clause`` twin of ``problem`` told as ``ctx`` (its story with the sentence
    placed, e.g. by :func:`insert_sentence`): the same answer, ``number`` (the irrelevant number
    the sentence shows) kept in its params as ``"irrelevant"``, and ``value`` (what a solver who
    uses it answers) added as the mistake :data:`IRRELEVANT`."""
    from dataclasses import replace

    return replace(
        problem,
        ctx=ctx,
        mistakes={**problem.mistakes, IRRELEVANT: value},
        params={**problem.params, "irrelevant": number},
    )


# ---------------------------------------------------------------------------------------
# Option rules shared by the builder, the selftest and the family tests
# ---------------------------------------------------------------------------------------

#: Roundness classes, roundest last. Counts and money use the value; clock times use the
#: minute-of-hour, so 9:00 is as round as 300 and 9:45 as round as 45.
ROUNDNESS_NAMES = (
    "not a multiple of 5",
    "multiple of 5, not of 10",
    "multiple of 10, not of 100",
    "multiple of 100 / on the hour",
)


def roundness_class(value: int, kind: str = "count") -> int:
    """0 = not a multiple of 5, 1 = of 5 not 10, 2 = of 10 not 100, 3 = of 100.

    For clock values (minutes after midnight) the class is that of the minute-of-hour,
    with ``:00`` in class 3.
    """
    n = value % 60 if kind == "clock" else value
    if kind == "clock" and n == 0:
        return 3
    if n % 100 == 0:
        return 3
    if n % 10 == 0:
        return 2
    if n % 5 == 0:
        return 1
    return 0


def decoy_problem(answer: int, value: int, kind: str = "count", *, roundness: bool = True) -> str | None:
    """Why ``value`` cannot be a decoy for ``answer`` (``None`` if it can).

    ``roundness=False`` drops the one-roundness-class rule (the ``roundness-off`` positive
    control, :mod:`.controls`; never the release)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "not a whole number"
    if value <= 0:
        return "not positive"
    if value == answer:
        return "equals the answer"
    if abs(value - answer) == 1:
        return "answer ± 1"
    if roundness and roundness_class(value, kind) != roundness_class(answer, kind):
        return "different roundness class"
    if kind == "clock":
        if not 0 <= value < 1440:
            return "outside the day"
        if (value < 720) != (answer < 720):
            return "other half of the day"
    return None


def usable_mistakes(problem: Problem, *, roundness: bool = True, extra: bool = False) -> dict[str, int]:
    """The problem's mistakes that may serve as decoys, first name kept per distinct value.

    ``roundness=False``: whatever their roundness class (:func:`decoy_problem`). ``extra``: the
    family's ``extra_mistakes`` too, after its ``mistakes`` (the role-balanced builder's pool)."""
    # decoy_problem(answer, value, kind, roundness=roundness) is None, with the answer's side
    # computed once
    answer, kind = problem.answer, problem.kind
    clock = kind == "clock"
    answer_class, answer_am = roundness_class(answer, kind), answer < 720
    out: dict[str, int] = {}
    seen: set[int] = set()
    named = problem.mistakes.items() if not extra else [*problem.mistakes.items(), *problem.extra_mistakes.items()]
    for name, value in named:
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and value > 0
            and value != answer
            and abs(value - answer) != 1
            and value not in seen
            and (not roundness or roundness_class(value, kind) == answer_class)
            and (not clock or (value < 1440 and (value < 720) == answer_am))
        ):
            out[name] = value
            seen.add(value)
    return out


def feasible_ranks(problem: Problem, usable: Mapping[str, int] | None = None) -> set[int]:
    """Answer ranks (0 = smallest of the four) that the usable mistakes can realise.

    ``usable``: :func:`usable_mistakes` of ``problem`` when the caller already has it."""
    answer = problem.answer
    below = above = 0
    for v in (usable_mistakes(problem) if usable is None else usable).values():
        if v < answer:
            below += 1
        elif v > answer:
            above += 1
    return {r for r in range(4) if below >= r and above >= 3 - r}
