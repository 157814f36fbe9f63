"""Per-item decision rules: which ending a model picked, and whether a generation is right.

One home for the argmax (ties to the lowest index), the softmax over ending scores and GPT-3's
exact-match check; every scorer (Deep Arithmark records, GPT-3 tasks, the benchmarks) calls these.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def argmax_first(values: Sequence[float]) -> int:
    """Index of the largest value; ties go to the lowest index. Raises ValueError when empty."""
    if not values:
        raise ValueError("no choices to pick from")
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    return best


#: GPT-3's name for the same rule: the choice with the highest score, ties to the lowest index.
pick_choice = argmax_first


def softmax(values: Sequence[float]) -> list[float]:
    """Softmax of ``values`` (shifted by their maximum for stability)."""
    m = max(values)
    ex = [math.exp(v - m) for v in values]
    s = sum(ex)
    return [e / s for e in ex]


def exact_match(prediction: str, gold: str) -> bool:
    """GPT-3's arithmetic/word check: the stripped generation equals the stripped gold."""
    return prediction.strip() == gold.strip()
