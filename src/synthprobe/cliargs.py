"""Argument types shared by every command line: whole numbers with bounds.

argparse turns the :class:`argparse.ArgumentTypeError` into ``argument --n: expected ...``
and exit status 2, so a bad value never reaches the code that would use it. Only ASCII digits
count: ``int()`` alone would also take ``"٣٠"``, ``"５"``, ``"1_000"`` and surrounding spaces.
"""

from __future__ import annotations

import argparse
import re
from typing import Callable

_WHOLE = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 100


def _parse_whole(text: str, wanted: str) -> int:
    if not _WHOLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected {wanted} (ASCII digits), got {text!r}")
    if len(text) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"expected {wanted}, got a number of {len(text):,} digits")
    return int(text)


def int_in_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` accepting whole numbers ``minimum <= n <= maximum`` in ASCII digits."""
    if maximum is not None:
        wanted = f"a whole number from {minimum} to {maximum:,}"
    else:
        wanted = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"

    def parse(text: str) -> int:
        value = _parse_whole(text, wanted)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    parse.__name__ = f"int_in_range_{minimum}_{maximum}"
    return parse


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting whole numbers ``>= minimum``."""
    parse = int_in_range(minimum)
    parse.__name__ = f"int_at_least_{minimum}"
    return parse


def any_int(text: str) -> int:
    """An argparse ``type`` for any whole number in ASCII digits (the command checks the range)."""
    return _parse_whole(text, "a whole number")


#: ``--n``, ``--limit``, ``--batch-size`` and the like.
positive_int = int_at_least(1)

#: Seeds.
nonneg_int = int_at_least(0)
