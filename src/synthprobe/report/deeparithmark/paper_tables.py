"""Deep Arithmark's paper-ready tables (``synthprobe report --table``, rendered by
:mod:`synthprobe.report.tables`): the leaderboard and accuracy per depth, as numbers."""

from __future__ import annotations

from typing import Sequence

from synthprobe.report.deeparithmark.table import depths, has_compare
from synthprobe.report.format import ordered, test_set_letters
from synthprobe.report.model import ModelResult
from synthprobe.report.stats import adjusted, wilson
from synthprobe.report.tables import Table, pct


def leaderboard(results: Sequence[ModelResult]) -> Table:
    ds = depths(results)
    letters = test_set_letters(results)
    compare = has_compare(results)
    head = (["Model", "Params", "n"] + (["items"] if letters else []) + ["Deep", "Deep CI low", "Deep CI high", "soft"]
            + [f"d{d}" for d in ds] + (["ArithMark-3", "Delta"] if compare else []) + ["p vs chance"])
    rows = []
    for r in ordered(results):
        lo, hi = wilson(r.overall)
        rows.append([r.model, r.params, r.overall.n] + ([letters[r.test_set]] if letters else [])
                    + [pct(r.acc_norm), pct(lo), pct(hi), pct(r.soft)]
                    + [pct(r.by_depth[d].rate) if d in r.by_depth else None for d in ds]
                    + ([pct(r.arithmark3), None if r.delta is None else round(100 * r.delta, 2)] if compare else [])
                    + [r.p_value])
    return head, rows


def per_depth(results: Sequence[ModelResult]) -> Table:
    head = ["Model", "depth", "n", "correct", "acc_norm", "CI low", "CI high", "p vs chance", "Holm p"]
    rows = []
    for r in ordered(results):
        tests = adjusted(r.by_depth, r.chance)
        for d, c in r.by_depth.items():
            lo, hi = wilson(c) if c.n else (None, None)
            rows.append([r.model, d, c.n, c.correct, pct(c.rate) if c.n else None, pct(lo), pct(hi),
                         tests[d][0], tests[d][1]])
    return head, rows


def tables(results: Sequence[ModelResult]) -> dict[str, Table]:
    """The benchmark's ``tables`` part (:data:`synthprobe.benchmarks.PARTS`)."""
    return {"leaderboard": leaderboard(results), "per_depth": per_depth(results)}
