"""The benchmarks taking part in an export, found through the registry
(:mod:`synthprobe.registry`): the generic export modules name no benchmark and import none.

Each export asks for one part (``lm_eval``, ``hub_results``) of every benchmark that has it, in
registry order (the built-in ones, then the installed ones). Options meant for one benchmark
(``data=`` for Deep Arithmark's release, ``gpt3_tasks=`` for GPT-3's, ...) are passed through by
name: a part lists the keyword options it takes in ``OPTIONS`` and receives those the caller gave
(``None`` meaning "not given")."""

from __future__ import annotations

from typing import Any

from synthprobe import registry
from synthprobe.registry import Benchmark


def having(role: str) -> list[Benchmark]:
    """Every benchmark with the part ``role``, in registry order."""
    found = (registry.get(name) for name in registry.names())
    return [bench for bench in found if bench.has(role)]


def routed(role: str, options: dict[str, Any], what: str) -> list[tuple[Benchmark, Any, dict[str, Any]]]:
    """``(benchmark, part, its options)`` for every benchmark with the part ``role``; an option
    that no part takes is a :class:`TypeError` naming ``what``, as for any unknown keyword."""
    given = {k: v for k, v in options.items() if v is not None}
    out, taken = [], set()
    for bench in having(role):
        part = bench.part(role)
        names = tuple(getattr(part, "OPTIONS", ()))
        out.append((bench, part, {k: v for k, v in given.items() if k in names}))
        taken.update(names)
    unknown = sorted(set(options) - taken)
    if unknown:
        raise TypeError(
            f"{what}() got an unexpected keyword argument {unknown[0]!r} (no benchmark's {role!r} part takes it)"
        )
    return out
