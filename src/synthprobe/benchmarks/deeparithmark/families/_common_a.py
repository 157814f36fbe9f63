"""Small helpers shared by the depth-2 and depth-3 Deep Arithmark families.

Nothing here draws randomness on its own: every helper that picks something takes the
family's ``random.Random`` so a family stays a pure function of the generator it is given.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import lru_cache
from itertools import accumulate
from typing import TypeVar

from ..base import GenerationError, Number, require

T = TypeVar("T")

#: First names for the people in the stories (short, common, varied in origin).
NAMES: tuple[str, ...] = (
    "Maya",
    "Omar",
    "Lena",
    "Ravi",
    "Sofia",
    "Jonas",
    "Aisha",
    "Diego",
    "Mei",
    "Tomas",
    "Priya",
    "Kofi",
    "Hannah",
    "Yusuf",
    "Clara",
    "Mateo",
    "Nadia",
    "Ethan",
    "Amara",
    "Felix",
    "Ines",
    "Kenji",
    "Zara",
    "Lucas",
    "Leila",
    "Noah",
    "Ana",
    "Samir",
    "Freya",
    "Tariq",
    "Elif",
    "Owen",
    "Rosa",
    "Idris",
    "Julia",
    "Hugo",
    "Nia",
    "Arjun",
    "Greta",
    "Malik",
)

#: Minimum number of plausible mistakes a family must still offer after cleaning.
MIN_MISTAKES = 5


def pick(rng: random.Random, options: Sequence[T]) -> T:
    """One element of ``options``; an empty list rejects the draw.

    ``rng.choice(options)`` draws exactly as ``options[rng.randrange(len(options))]`` (both
    take one ``_randbelow(len(options))``), with less work per call."""
    if not options:
        raise GenerationError("no admissible value to draw")
    return rng.choice(options)


def pick_log_uniform(rng: random.Random, values: Sequence[int], power: float = 1.0) -> int:
    """One of the positive ``values``, each with probability proportional to ``value ** -power``.

    Decoys sit at roughly fixed ratios to the answer (a forgotten step doubles it, a skipped
    block halves it), so they spread evenly on a log scale (``power`` 1); an answer drawn the
    same way covers the low leading digits as often as they do instead of bunching in the
    middle of its range. A ``power`` above 1 leans further to the small values, for a family
    whose smallest answers can only take the lowest answer ranks (no same-length decoy fits
    below them) and so are drawn for fewer items than the decoys that land there.
    """
    require(len(values) > 0, "no admissible value to draw")
    return rng.choices(
        values, cum_weights=_log_cum_weights(values if isinstance(values, range) else tuple(values), power)
    )[0]


@lru_cache(maxsize=4096)
def _log_cum_weights(values: Sequence[int], power: float) -> list[float]:
    """The running sums of ``value ** -power``: what ``rng.choices(values, weights=...)``
    computes on every call, kept per value list (the same floats, so the same draws)."""
    return list(accumulate(v**-power for v in values))


#: Draws a family makes at most to land an answer of the wanted parity (see :func:`parity_kept`).
PARITY_REDRAWS = 6


def parity_kept(rng: random.Random, answer: int, odd_share: float) -> bool:
    """Whether a family keeps a draw whose answer is ``answer``: always when it is even, with
    probability ``odd_share`` when it is odd.

    Many decoys are products (hours × a rate, the whole bill over the head count), which come
    out even more often than the sums and differences that give the answer, so a family whose
    decoys lean even redraws some odd answers, in a loop of at most :data:`PARITY_REDRAWS`
    draws of its own, until its answers lean even as much; a family never rejects a draw for
    its parity.
    """
    return answer % 2 == 0 or rng.random() < odd_share


def whole(x: Number | None) -> int | None:
    """``x`` as an ``int`` when it is a whole number, else ``None``."""
    if x is None:
        return None
    if type(x) is int:
        return x
    if type(x) is not Fraction:  # a Fraction is already normalised: no need to rebuild it
        x = Fraction(x)
    return x.numerator if x.denominator == 1 else None  # int(x) of a whole Fraction


def exact_div(a: Number, b: Number) -> int | None:
    """``a / b`` when it is a whole number (and ``b`` is not zero), else ``None``."""
    if b == 0:
        return None
    if type(a) is int and type(b) is int:
        q, r = divmod(a, b)
        return q if r == 0 else None
    return whole((a if type(a) is Fraction else Fraction(a)) / (b if type(b) is Fraction else Fraction(b)))


def clean_mistakes(answer: int, candidates: Mapping[str, Number | None]) -> dict[str, int]:
    """Keep the mistakes that yield a positive whole number different from the answer.

    A mistake whose wrong chain would not end in a whole number (a non-integer share, a
    negative length, …) is not a value a solver would write down as the answer, so it is left
    out rather than rounded. Rejects the draw when fewer than :data:`MIN_MISTAKES` remain.
    """
    out: dict[str, int] = {}
    for name, value in candidates.items():
        v = whole(value)
        if v is not None and v > 0 and v != answer:
            out[name] = v
    require(len(out) >= MIN_MISTAKES, f"only {len(out)} usable mistakes")
    return out


def hours_minutes(hours: int, minutes: int) -> str:
    """``1 hour 47 minutes`` / ``2 hours 5 minutes`` / ``3 hours``."""
    text = f"{hours} hour" + ("" if hours == 1 else "s")
    if minutes:
        text += f" {minutes} minute" + ("" if minutes == 1 else "s")
    return text


def hhmm_as_number(total_minutes: int) -> int:
    """A duration written as hours and minutes run together: 133 min → 2 h 13 → ``213``."""
    h, m = divmod(total_minutes, 60)
    return h * 100 + m
