"""Argument types shared by every command line: whole numbers with a lower bound.

argparse turns the :class:`argparse.ArgumentTypeError` into ``argument --n: expected ...``
and exit status 2, so a bad value never reaches the code that would use it.
"""

from __future__ import annotations

import argparse
from typing import Callable


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting whole numbers ``>= minimum``."""
    wanted = ("a positive whole number" if minimum == 1 else f"a whole number >= {minimum}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


#: ``--n``, ``--limit``, ``--batch-size`` and the like.
positive_int = int_at_least(1)

#: Seeds.
nonneg_int = int_at_least(0)
