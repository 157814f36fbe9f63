"""Helpers shared by the depth-4 and depth-5 families.

Each of those families writes its story's arithmetic once, as a *chain* function
``chain(calc, mistake) -> value`` that performs every operation through ``calc`` and applies
the named ``mistake`` (``None`` for the correct solution) where that error would happen.
The correct run uses :class:`~synthprobe.benchmarks.deeparithmark.base.Steps`, which records the
solution lines; every mistake is the same chain re-run on :class:`Exact`, which computes the
same operations exactly and records nothing. A mistake's value is therefore the exact wrong
result of redoing the whole problem with that one error, never the answer nudged by a
constant.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from fractions import Fraction
from math import lcm

from ..base import GenerationError, Number, StepLines, Steps, as_int, decoy_problem, exact_op, exact_pct, require

#: The longest prompt the release allows, in words.
MAX_CTX_WORDS = 45


class Exact:
    """The arithmetic of :class:`Steps` (same methods and results) without recording lines."""

    def op(self, what: str, a: Number, op: str, b: Number, *, money: bool = False) -> Number:
        return exact_op(a, op, b)

    def divmod(self, what: str, a: Number, b: Number) -> tuple[int, int]:
        a, b = as_int(a), as_int(b)
        require(b > 0 and a >= 0, "whole-unit division needs a >= 0 and b > 0")
        return divmod(a, b)

    def pct(self, what: str, p: Number, a: Number, *, money: bool = False) -> Number:
        return exact_pct(p, a)


Calc = Steps | Exact
Chain = Callable[[Calc, "str | None"], Number]


def solve(chain: Chain) -> tuple[int, StepLines]:
    """Run the correct chain; return the whole, positive answer and its solution lines
    (written when first read, see :class:`Steps`)."""
    steps = Steps()
    value = chain(steps, None)
    answer = as_int(value, "the answer must be a whole number")
    require(answer > 0, "the answer must be positive")
    return answer, steps.solution()


def mistakes(chain: Chain, names: Iterable[str], answer: int) -> Mapping[str, int]:
    """Each named mistake's exact value, by re-running ``chain`` with that error.

    A mistake whose re-run is impossible (a negative amount to pack, a division that does not
    come out whole, a value of zero or less) offers no option and is left out, and so is one
    that happens to land on the answer for these numbers.

    The re-runs happen when the mapping is first read, not here: they use no randomness and
    cannot reject the draw, and the builder discards about half of its draws (answer-shape
    thinning) before it looks at the mistakes, so those draws never pay for them. Call this
    last in ``generate``, once every value the chain reads is final.
    """
    return _Mistakes(chain, tuple(names), answer)


class _Mistakes(Mapping[str, int]):
    """The read-only mapping :func:`mistakes` returns, filled on first access."""

    __slots__ = ("_chain", "_names", "_answer", "_values")

    def __init__(self, chain: Chain, names: tuple[str, ...], answer: int) -> None:
        self._chain: Chain | None = chain
        self._names, self._answer = names, answer
        self._values: dict[str, int] | None = None

    def _get(self) -> dict[str, int]:
        if self._values is None:
            out: dict[str, int] = {}
            calc = Exact()  # records nothing, so one serves every re-run
            chain, answer = self._chain, self._answer
            for name in self._names:
                try:
                    value = chain(calc, name)
                except GenerationError:
                    continue
                if type(value) is not int:
                    if type(value) is not Fraction:
                        value = Fraction(value)
                    if value.denominator != 1:
                        continue
                    value = value.numerator  # int(value) of a whole Fraction
                if value > 0 and value != answer:
                    out[name] = value
            self._values, self._chain = out, None  # the closure is no longer needed
        return self._values

    def __getitem__(self, name: str) -> int:
        return self._get()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def items(self):  # the dict's own view: what the builder iterates
        return self._get().items()

    def __repr__(self) -> str:
        return repr(self._get())


def sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def finish_ctx(*sentences: str) -> str:
    """Join the story's sentences with single spaces and check the prompt's length.

    The last sentence is the unfinished one: no final period, no trailing space.
    """
    ctx = " ".join(s.strip() for s in sentences if s.strip())
    require(not ctx.endswith("."), "the prompt must end in an unfinished sentence")
    n = len(ctx.split())
    require(n <= MAX_CTX_WORDS, f"prompt of {n} words is longer than {MAX_CTX_WORDS}")
    return ctx


def lcm_of_denominators(values: Iterable[Fraction]) -> int:
    """The least common multiple of the denominators of ``values``."""
    out = 1
    for v in values:
        out = lcm(out, Fraction(v).denominator)
    return out


#: First names used by the stories.
NAMES = (
    "Ava",
    "Ben",
    "Chloe",
    "Dev",
    "Elena",
    "Farid",
    "Grace",
    "Hugo",
    "Isla",
    "Jonas",
    "Kemi",
    "Leo",
    "Maya",
    "Nina",
    "Omar",
    "Priya",
    "Quinn",
    "Rosa",
    "Sam",
    "Tariq",
    "Uma",
    "Victor",
    "Wen",
    "Yusuf",
    "Zoe",
)

#: Small whole numbers as words, for phrases like "three times as much".
NUMBER_WORDS = {
    2: "two",
    3: "three",
    4: "four",
    5: "five",
    6: "six",
    7: "seven",
    8: "eight",
    9: "nine",
    10: "ten",
    11: "eleven",
    12: "twelve",
}


# ---------------------------------------------------------------------------------------
# Helpers for the perturbation twins (synthprobe.benchmarks.deeparithmark.twins)
# ---------------------------------------------------------------------------------------


def choose(rng, p: dict, key: str, options: tuple[str, ...]) -> str:
    """``rng.choice(options)`` (the same draw), with the chosen option's index kept in
    ``p[key]`` so that a twin can retell the story in the wording the original used."""
    text = rng.choice(options)
    p[key] = options.index(text)
    return text


def numbers_in(ctx: str) -> set[int]:
    """The whole numbers written in a prompt ("$1,250" counts as 1250)."""
    return {int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\d|\d", ctx)}


def fresh_number(rng, lo: int, hi: int, ctx: str, step: int = 1) -> int:
    """A multiple of ``step`` in [lo, hi] that the prompt does not already mention (an
    irrelevant number must be told apart from the story's own)."""
    taken = numbers_in(ctx)
    choices = [v for v in range(step * -(-lo // step), hi + 1, step) if v not in taken]
    require(bool(choices), "no fresh number in range")
    return rng.choice(choices)


def irrelevant_number(
    rng, problem, lo: int, hi: int, value_of: Callable[[int], int | None], step: int = 1
) -> tuple[int, int]:
    """An irrelevant number for an ``irrelevant_clause`` twin of ``problem`` and the value a
    solver who uses it gets (``value_of(n)``): ``(n, value)``.

    Drawn among the multiples of ``step`` in [lo, hi] that the prompt does not mention and whose
    value could be a decoy of its own (:func:`..base.decoy_problem`: the answer's roundness
    class, not the answer ± 1, no other mistake's value), preferring values written as long as
    the answer (the builder's decoys are), then numbers that are not the answer or a mistake's
    value (an option that echoes a number of the prompt). A round answer thus gets a round
    irrelevant number, as its other decoys are round too; without this most draws would be
    discarded."""
    taken = numbers_in(problem.ctx)
    others = set(problem.mistakes.values())
    answer, kind = problem.answer, problem.kind
    width = len(problem.render(answer))
    found: list[tuple[tuple[bool, bool, bool], int, int]] = []
    for n in range(step * -(-lo // step), hi + 1, step):
        if n in taken:
            continue
        v = value_of(n)
        if v is None or v in others or decoy_problem(answer, v, kind) is not None:
            continue
        found.append(((len(problem.render(v)) != width, n == answer, n in others), n, v))
    require(bool(found), "no irrelevant number whose value could be a decoy")
    best = min(key for key, _, _ in found)
    _, n, v = rng.choice([x for x in found if x[0] == best])
    return n, v
