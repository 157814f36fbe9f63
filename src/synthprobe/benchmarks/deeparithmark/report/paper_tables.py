"""Deep Arithmark's paper-ready tables (``synthprobe report --table``, rendered by
:mod:`synthprobe.report.tables`): the leaderboard and accuracy per depth, as numbers."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.deeparithmark.report.model import ModelResult
from synthprobe.benchmarks.deeparithmark.report.order import ordered, test_set_letters
from synthprobe.benchmarks.deeparithmark.report.table import OUTCOME_COLUMNS, depths, has_compare, outcome_share
from synthprobe.report.format import percent
from synthprobe.report.stats import adjusted, wilson
from synthprobe.report.tables import Table


def leaderboard(results: Sequence[ModelResult]) -> Table:
    """The leaderboard as numbers; with generated answers among the rows, each row's metric,
    the accuracy over answered items and the outcome shares (percent of all items) too."""
    ds = depths(results)
    letters = test_set_letters(results)
    compare = has_compare(results)
    answers = any(r.generated for r in results)
    head = (
        ["Model", "Params", "n"]
        + (["items"] if letters else [])
        + (["metric"] if answers else [])
        + ["Deep", "Deep CI low", "Deep CI high", "soft"]
        + (["answered"] if answers else [])
        + [f"d{d}" for d in ds]
        + (["ArithMark-3", "Delta"] if compare else [])
        + ["p vs chance"]
        + ([label for _, label in OUTCOME_COLUMNS] if answers else [])
        + ["checkpoint", "weights sha256"]
    )
    rows = []
    for r in ordered(results):
        lo, hi = wilson(r.overall)
        answered = r.answered.rate if r.answered is not None and r.answered.n else None
        rows.append(
            [r.model, r.params, r.overall.n]
            + ([letters[r.test_set]] if letters else [])
            + ([r.metric] if answers else [])
            + [percent(r.acc_norm, 2), percent(lo, 2), percent(hi, 2), percent(r.soft, 2)]
            + ([percent(answered, 2)] if answers else [])
            + [percent(r.by_depth[d].rate, 2) if d in r.by_depth else None for d in ds]
            + ([percent(r.arithmark3, 2), None if r.delta is None else round(100 * r.delta, 2)] if compare else [])
            + [r.p_value]
            + ([_share(outcome_share(r, key)) for key, _ in OUTCOME_COLUMNS] if answers else [])
            + [r.checkpoint or None, r.fingerprint]
        )
    return head, rows


def _share(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def per_depth(results: Sequence[ModelResult]) -> Table:
    metrics = list(dict.fromkeys(r.metric for r in results))
    head = (
        ["Model", "depth", "n", "correct"]
        + (["metric", "score"] if len(metrics) > 1 else metrics)
        + ["CI low", "CI high", "p vs chance", "Holm p"]
    )
    rows = []
    for r in ordered(results):
        tests = adjusted(r.by_depth, r.chance) if r.has_chance else {}
        for d, c in r.by_depth.items():
            lo, hi = wilson(c) if c.n else (None, None)
            p, p_holm = tests.get(d, (None, None))
            rows.append(
                [r.model, d, c.n, c.correct]
                + ([r.metric] if len(metrics) > 1 else [])
                + [percent(c.rate, 2) if c.n else None, percent(lo, 2), percent(hi, 2), p, p_holm]
            )
    return head, rows


def tables(results: Sequence[ModelResult]) -> dict[str, Table]:
    """The benchmark's ``tables`` part (:data:`synthprobe.registry.PARTS`)."""
    return {"leaderboard": leaderboard(results), "per_depth": per_depth(results)}
