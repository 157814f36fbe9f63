"""Deep Arithmark's card row, formatted once: the scorer's printed table, the report's leaderboard
and the scores tables in the docs all show these columns; each builds a row of percentages
(``deep``, ``soft``, ``d2`` … ``d5``, ``arithmark3``, ``delta``, ``p_vs_chance``) and formats it
here with the generic number formats of :mod:`synthprobe.results`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synthprobe.benchmarks.deeparithmark.composition import DEPTHS
from synthprobe.results import DASH, MINUS, fmt_p, fmt_params, fmt_pct

__all__ = ["ANSWER_COLUMNS", "DEPTHS", "card_cells", "card_has_answers", "card_has_compare", "card_header"]


#: The outcomes of generated answers that do not count, as the card's extra columns name them
#: (the row's keys: percentages of all items).
ANSWER_COLUMNS = (("unparsed", "unparsed"), ("inconsistent", "inconsistent"), ("echo", "echo"), ("cut_off", "cut off"))


def card_header(
    depths: Sequence[int] = DEPTHS, *, compare: bool = True, n: bool = False, answers: bool = False
) -> list[str]:
    """The card's columns; ``compare``: with ArithMark-3 and Δ (leave them out when no row has
    them); ``n``: with the number of scored items after Params; ``answers``: with the metric
    each row's Deep is (``acc_norm`` or ``accuracy``) and the shares of generated answers that do
    not count (:data:`ANSWER_COLUMNS`), for a table that holds generated answers."""
    return (
        ["Model", "Params"]
        + (["n"] if n else [])
        + (["metric"] if answers else [])
        + ["Deep", "soft"]
        + [f"d{d} %" for d in depths]
        + (["ArithMark-3", "Δ"] if compare else [])
        + ["p vs chance"]
        + ([label for _, label in ANSWER_COLUMNS] if answers else [])
    )


def card_has_compare(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row has an ArithMark-3 score (else the card drops ArithMark-3 and Δ)."""
    return any(r.get("arithmark3") is not None for r in rows)


def card_has_answers(rows: Sequence[Mapping[str, Any]]) -> bool:
    """Whether any row is of generated answers (its ``metric`` is not acc_norm)."""
    return any(r.get("metric", "acc_norm") != "acc_norm" for r in rows)


def card_cells(
    row: Mapping[str, Any],
    depths: Sequence[int] = DEPTHS,
    *,
    compare: bool = True,
    n: bool = False,
    answers: bool = False,
) -> list[str]:
    """The card's cells for one model. ``row`` holds percentages (``deep``, ``soft``, ``d<n>``,
    ``arithmark3``; ``delta`` in points; ``unparsed`` … ``cut_off``), ``model``, ``params``,
    ``metric`` and ``p_vs_chance`` (``n``: the item count, text); None: not measured (shown as a
    dash). ``compare``/``n``/``answers`` as in :func:`card_header`."""

    def pct(key: str, digits: int = 2, unit: str = " %") -> str:
        return fmt_pct(row.get(key), digits, unit, in_percent=True)

    delta = row.get("delta")
    return (
        [row["model"], fmt_params(row.get("params"))]
        + ([str(row.get("n", DASH))] if n else [])
        + ([str(row.get("metric", "acc_norm"))] if answers else [])
        + [pct("deep"), pct("soft")]
        + [pct(f"d{d}", 1, "") for d in depths]
        + ([pct("arithmark3"), DASH if delta is None else f"{delta:+.2f}".replace("-", MINUS)] if compare else [])
        + [fmt_p(row.get("p_vs_chance"))]
        + ([pct(key, 1) for key, _ in ANSWER_COLUMNS] if answers else [])
    )
