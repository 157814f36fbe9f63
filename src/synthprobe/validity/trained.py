"""The trained choices-only audit as a part of ``synthprobe validate`` (``trained``).

Model-free and minutes long, it runs before the LoRA adversary: the adversaries of
:mod:`synthprobe.metrics.choices_only` (relation-feature trees, k nearest neighbours, a DeepSets
network, a gap-order lookup) trained on the options of fresh builds, scored on a fresh audit build
and on the file, with positive controls that must fail and a label-permuted null that must pass.
The part is :func:`synthprobe.benchmarks.deeparithmark.trained_audit.run`'s report, unchanged (the
same figures ``python deeparithmark.py audit`` prints), at the budget asked for; its seeds are the
audit's own (the release seed), not ``--seed``, so the two commands agree.

Its verdict is the report's ``verdict`` (``passes`` / ``fails`` / ``inconclusive`` / ``no
power``); its power (every planted leak found, the null at chance) joins the LoRA adversary's in
the document's ``power`` (:func:`combined_power`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from synthprobe.errors import CommandFailed, InputError
from synthprobe.items import MCItem

#: the budgets of ``--trained-budget`` (names of :data:`.trained_audit.BUDGETS`)
BUDGETS = ("small", "full")
DEFAULT_BUDGET = "full"


def decoys_of(test: Sequence[MCItem]) -> str:
    """The decoy mode the file was built with, so the audit's fresh builds are made the same way."""
    from synthprobe.benchmarks.deeparithmark.selftest import file_decoys

    return file_decoys(test)


def refusal(path: Path, deep: bool) -> str | None:
    """Why the trained audit cannot run on ``path`` (None when it can)."""
    if not deep:
        return "the trained audit builds fresh Deep Arithmark items: Deep Arithmark files only"
    return None


def check(path: Path, budget: str) -> None:
    """Refuse a budget that is not one of :data:`BUDGETS`."""
    if budget not in BUDGETS:
        raise InputError(f"expected one of {', '.join(BUDGETS)}, got {budget!r}", field="--trained-budget")


def plan_line(budget: str, test: Sequence[MCItem]) -> str:
    from synthprobe.benchmarks.deeparithmark.trained_audit import BUDGETS as SIZES
    from synthprobe.benchmarks.deeparithmark.trained_audit import CONTROL_NAMES

    b = SIZES[budget]
    return (
        f"trained audit ({budget}): 4 adversaries trained on {b.train:,} fresh items' options "
        f"({decoys_of(test)} decoys), scored on a {b.audit:,}-item audit build and on FILE; controls "
        f"{', '.join(CONTROL_NAMES)} ({b.control_train:,} / {b.control_test:,} items); no model"
    )


def run(
    path: Path, test: Sequence[MCItem], *, budget: str = DEFAULT_BUDGET, step: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """The trained audit's report of ``path`` at ``budget``; a fresh build that fails ends the
    command (:class:`CommandFailed`, nothing written) with a pointer to ``--no-trained``."""
    from synthprobe.benchmarks.deeparithmark import trained_audit as ta
    from synthprobe.benchmarks.deeparithmark.build import BuildError

    decoys = decoys_of(test)
    try:
        return ta.run(path, budget=budget, decoys=decoys, step=step)
    except BuildError as exc:
        raise CommandFailed(
            f"the trained audit's fresh {decoys} build failed: {exc}; --no-trained skips the trained audit"
        ) from None


def planned_steps() -> int:
    """How many steps :func:`run` announces (a progress bar's total)."""
    from synthprobe.benchmarks.deeparithmark.trained_audit import planned_steps
    from synthprobe.metrics.choices_only import NUMERIC_ADVERSARIES

    return planned_steps(len(NUMERIC_ADVERSARIES), True)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def power(report: Mapping[str, Any]) -> dict[str, Any]:
    """The trained audit's power, in the layout of the document's ``power``: every control that
    must fail fails and the null passes (``has_power``), None when no control ran."""
    controls = report["controls"]
    if not controls:
        return {"has_power": None, "verdict": "unchecked: the trained audit ran no control"}
    leaks = [c for c in controls if c["expect"] == "fail"]
    nulls = [c for c in controls if c["expect"] == "pass"]
    missed = [c for c in controls if not c["as_expected"]]
    if missed:
        unseen = [c["name"] for c in missed if c["expect"] == "fail"]
        failed = [c["name"] for c in missed if c["expect"] == "pass"]
        why = ([f"the planted leak(s) {', '.join(unseen)} went unseen"] if unseen else []) + (
            [f"the null control(s) {', '.join(failed)} beat chance"] if failed else []
        )
        return {
            "has_power": False,
            "verdict": f"no power: in the trained audit {' and '.join(why)}, so its verdict on the file means nothing",
        }
    found = ", ".join(f"{c['name']} {_pct(c['best_accuracy'])} ({c['best_adversary']})" for c in leaks)
    null = ", ".join(f"{_pct(c['best_accuracy'])} at best" for c in nulls)
    return {
        "has_power": True,
        "verdict": f"has power: the trained audit finds every planted leak ({found})"
        + (f" and its label-permuted null stays at chance ({null})" if nulls else ""),
    }


def _word(has_power: bool | None) -> str:
    return {True: "has power", False: "no power", None: "unchecked"}[has_power]


def _body(verdict: str) -> str:
    for word in ("has power", "no power", "unchecked"):
        if verdict.startswith(word + ":"):
            return verdict[len(word) + 1 :].strip()
    return verdict


def combined_power(adversary: Mapping[str, Any] | None, trained: Mapping[str, Any] | None) -> dict[str, Any]:
    """The document's ``power`` from the LoRA adversary's (:func:`.adversary.power`; None when
    the adversary and its controls did not run) and the trained audit's (:func:`power`; None when
    it did not run). One part alone is returned as it is; with both, ``has_power`` is false when
    either has none, None (unchecked) when either is unchecked, else true, and ``parts`` keeps each."""
    parts = {k: dict(v) for k, v in (("trained", trained), ("adversary", adversary)) if v is not None}
    if not parts:
        from synthprobe.validity.adversary import power as adversary_power

        return adversary_power([])
    if len(parts) == 1:
        return next(iter(parts.values()))
    flags = [p["has_power"] for p in parts.values()]
    has = False if False in flags else None if None in flags else True
    names = {"trained": "trained audit", "adversary": "LoRA adversary"}
    text = "; ".join(f"{names[k]}: {_word(p['has_power'])}: {_body(p['verdict'])}" for k, p in parts.items())
    return {"has_power": has, "verdict": f"{_word(has)}: {text}", "parts": parts}
