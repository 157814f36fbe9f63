"""What every benchmark's report rows share: a count of correct answers out of items.

Each benchmark's report part reads its own rows from the results document (Deep Arithmark's
:mod:`synthprobe.benchmarks.deeparithmark.report.model`, the GPT-3 synthetic tasks'
:mod:`synthprobe.benchmarks.gpt3.report.model`); the generic report reads none of them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Count:
    """``correct`` out of ``n``."""

    correct: int
    n: int

    @property
    def rate(self) -> float:
        return self.correct / self.n if self.n else float("nan")
