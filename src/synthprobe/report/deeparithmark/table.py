"""The leaderboard with the release card's columns, as rows of strings and as Markdown.

Model, Params, Deep (acc_norm), soft, d2 … d5 (acc_norm per depth tier), ArithMark-3
(acc_norm on the same weights), Δ = Deep − ArithMark-3, and p: the exact two-sided binomial
p-value of Deep against chance. Rows are ordered by parameter count, largest first.
"""

from __future__ import annotations

from typing import Sequence

from synthprobe.report.format import ordered
from synthprobe.report.model import ModelResult
from synthprobe.results import card_cells, card_header

DEFAULT_TITLE = "Deep Arithmark leaderboard"


def depths(results: Sequence[ModelResult]) -> list[int]:
    return sorted({d for r in results for d in r.by_depth})


def header(results: Sequence[ModelResult]) -> list[str]:
    return card_header(depths(results))


def _pct(x: float | None) -> float | None:
    return None if x is None or x != x else 100 * x


def card_row(r: ModelResult, ds: Sequence[int]) -> dict:
    """One model's card row in percentages, for :func:`synthprobe.results.card_cells`."""
    return {"model": r.model, "params": r.params, "deep": _pct(r.acc_norm), "soft": _pct(r.soft),
            **{f"d{d}": _pct(r.by_depth[d].rate) if d in r.by_depth else None for d in ds},
            "arithmark3": _pct(r.arithmark3), "delta": None if r.delta is None else 100 * r.delta,
            "p_vs_chance": r.p_value}


def rows(results: Sequence[ModelResult]) -> list[list[str]]:
    ds = depths(results)
    return [card_cells(card_row(r, ds), ds) for r in ordered(results)]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(results: Sequence[ModelResult], *, title: str = DEFAULT_TITLE) -> str:
    return f"# {title}\n\n" + markdown_body(results)


def markdown_body(results: Sequence[ModelResult]) -> str:
    """The Deep Arithmark leaderboard in Markdown, without a title."""
    head = header(results)
    align = ["---", "---:"] + ["---:"] * (len(head) - 2)
    chance = results[0].chance
    n_items = sorted({r.overall.n for r in results})
    lines = [
        f"Zero-shot, acc_norm (per-token length-normalised log-likelihood), chance "
        f"{100 * chance:.0f} %, {', '.join(f'{n:,}' for n in n_items)} items. soft is the mean "
        "probability of the correct option after a softmax over the normalised scores; "
        "d2–d5 are acc_norm per depth tier; Δ is Deep minus ArithMark-3 on the same weights; "
        "p is the exact two-sided binomial test of Deep against chance.",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(align) + " |",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows(results)]
    return "\n".join(lines) + "\n"
