"""Answer-shape acceptance: make each family's answers look, digit for digit, like its decoys.

A reader that sees only the option text (the audit's char-3-gram classifier) learns which
numbers tend to be answers. Within a template the four endings differ only in the number, and
a three-character window sees a two-digit number whole and a longer one by its leading and
final digits, so the answers' numbers must be spread over those shapes as the decoys' are.

The decoys are functions of the answer (a forgotten step, a divisor off by one), so drawing
answers differently moves the decoys too: the answer distribution we want is the one that the
step *answer → one of its decoys* leaves unchanged. ``tools/deeparithmark_calibrate_shape.py`` finds it by
iteration on large calibration samples drawn exactly as the build draws (every rank equally
often) and stores, per family, an acceptance weight for each answer shape; the build keeps a
draw with that probability, with the item's own RNG. The table is a fixed part of the
generator — it never looks at the file being built (balancing a file against its own running
counts hides a leak from cross-validation without removing it).

A shape is the number of digits in the rendered answer and its first two digits
(``"3:12"`` for 127, ``"4:10"`` for ``10:45 a.m.``); a shape the table does not list is kept
with weight 1.
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Mapping
from functools import lru_cache

from synthprobe.benchmarks.deeparithmark.base import Problem, render_value
from synthprobe.io.read import loads_json

#: Where the calibrated table lives (inside the package, so an installed copy has it).
WEIGHTS_RESOURCE = "deeparithmark_answer_shape.json"

_NOT_DIGIT = re.compile(r"\D")


def shape_of(text: str) -> str:
    """The shape of a rendered number: ``"<digit count>:<first two digits>"``."""
    digits = _NOT_DIGIT.sub("", text)
    return f"{len(digits)}:{digits[:2]}"


def answer_shape(problem: Problem, value: int | None = None) -> str:
    """The shape of ``value`` (default: the answer) as the problem renders it."""
    return _rendered_shape(problem.ending, problem.kind, problem.answer if value is None else value)


@lru_cache(maxsize=1 << 16)
def _rendered_shape(ending: str, kind: str, value: int) -> str:
    """:func:`shape_of` ``Problem.render(value)`` for a problem with this ending and kind: the
    builder asks it for every draw, and answers repeat within a family."""
    return shape_of(ending.format(render_value(value, kind)))


@lru_cache(maxsize=1)
def load_table() -> dict[str, dict[str, float]]:
    """The calibrated table: family name → shape → acceptance weight in (0, 1]."""
    path = importlib.resources.files("synthprobe") / "resources" / WEIGHTS_RESOURCE
    data = loads_json(path.read_text(encoding="utf-8"), path=path)
    return {name: dict(row) for name, row in data["weights"].items()}


def acceptance(table: Mapping[str, Mapping[str, float]], problem: Problem) -> float:
    """Probability of keeping a draw of ``problem``'s family with this answer."""
    return table.get(problem.family, {}).get(answer_shape(problem), 1.0)
