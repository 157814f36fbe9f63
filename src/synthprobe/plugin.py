"""The stable import for plug-in authors: everything a family or a benchmark written outside
synthprobe uses, from one module whose names stay put when the package's folders move.

A Deep Arithmark family (docs/write-a-family.md)::

    from synthprobe.plugin import Problem, Steps, register, require

A whole benchmark (docs/write-a-benchmark.md)::

    from synthprobe.plugin import Benchmark

The names are the contract's own objects, re-exported: a family registered through
``synthprobe.plugin.register`` is the family the builder reads. Earlier import paths of these
names keep working for a release, with a DeprecationWarning that names this module.
"""

from __future__ import annotations

from synthprobe.benchmarks.deeparithmark.base import (
    IRRELEVANT,
    GenerationError,
    NoTwin,
    Problem,
    Steps,
    as_int,
    exact_op,
    exact_pct,
    fmt_clock,
    fmt_num,
    insert_sentence,
    irrelevant_twin,
    no_twin,
    register,
    render_value,
    require,
    twin,
)
from synthprobe.registry import Benchmark

__all__ = [
    "IRRELEVANT",
    "Benchmark",
    "GenerationError",
    "NoTwin",
    "Problem",
    "Steps",
    "as_int",
    "exact_op",
    "exact_pct",
    "fmt_clock",
    "fmt_num",
    "insert_sentence",
    "irrelevant_twin",
    "no_twin",
    "register",
    "render_value",
    "require",
    "twin",
]
