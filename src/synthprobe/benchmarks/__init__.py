"""The built-in benchmarks, one folder each: :mod:`.deeparithmark` (Deep Arithmark-1 and the
ArithMark 3.0 comparison) and :mod:`.gpt3` (the GPT-3 synthetic tasks).

A folder holds everything its benchmark owns — its build, items and checks, its scoring work and
metrics, its report section, figures and viewer items, its exports and its sweep part — and is
reached by the generic commands only through :mod:`synthprobe.registry`, exactly as a benchmark
installed through an entry point is. No folder imports another, and no generic module imports
one (the import-linter contracts in ``pyproject.toml``). See docs/write-a-benchmark.md.
"""

from synthprobe.registry import Benchmark  # plug-ins written against 0.x import it from here

__all__ = ["Benchmark"]
