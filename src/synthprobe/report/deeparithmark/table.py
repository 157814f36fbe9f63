"""The leaderboard with the release card's columns, as rows of strings and as Markdown.

Model, Params, Deep (acc_norm), soft, d2 … d5 (acc_norm per depth tier), ArithMark-3
(acc_norm on the same weights), Δ = Deep − ArithMark-3, and p: the exact two-sided binomial
p-value of Deep against chance, with n (items scored) after Params. Rows are ordered by the
primary score (Deep), highest first; ArithMark-3 and Δ appear only when some row has them, and
rows scored on different items carry a letter in the n column (:func:`~synthprobe.report.format.test_set_letters`).
"""

from __future__ import annotations

from typing import Sequence

from synthprobe.report.format import NOT_COMPARABLE_NOTE, ordered, test_set_letters
from synthprobe.report.model import ModelResult
from synthprobe.results import card_cells, card_header

DEFAULT_TITLE = "Deep Arithmark leaderboard"


def depths(results: Sequence[ModelResult]) -> list[int]:
    return sorted({d for r in results for d in r.by_depth})


def has_compare(results: Sequence[ModelResult]) -> bool:
    """Whether any model was scored on ArithMark 3.0 too (else no ArithMark-3 and Δ columns)."""
    return any(r.arithmark3 is not None for r in results)


def header(results: Sequence[ModelResult]) -> list[str]:
    return card_header(depths(results), compare=has_compare(results), n=True)


#: the index of the Deep column in :func:`header` / :func:`rows`
DEEP_COLUMN = 3


def _pct(x: float | None) -> float | None:
    return None if x is None or x != x else 100 * x


def card_row(r: ModelResult, ds: Sequence[int], letter: str = "") -> dict:
    """One model's card row in percentages, for :func:`synthprobe.results.card_cells`."""
    return {"model": r.model, "params": r.params, "n": f"{r.overall.n:,}" + (f" · {letter}" if letter else ""),
            "deep": _pct(r.acc_norm), "soft": _pct(r.soft),
            **{f"d{d}": _pct(r.by_depth[d].rate) if d in r.by_depth else None for d in ds},
            "arithmark3": _pct(r.arithmark3), "delta": None if r.delta is None else 100 * r.delta,
            "p_vs_chance": r.p_value}


def rows(results: Sequence[ModelResult]) -> list[list[str]]:
    ds = depths(results)
    letters = test_set_letters(results)
    compare = has_compare(results)
    return [card_cells(card_row(r, ds, letters.get(r.test_set, "")), ds, compare=compare, n=True)
            for r in ordered(results)]


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
        f"{100 * chance:.0f} %, {', '.join(f'{n:,}' for n in n_items)} items; highest Deep first. soft is the mean "
        "probability of the correct option after a softmax over the normalised scores; "
        "d2–d5 are acc_norm per depth tier; "
        + ("Δ is Deep minus ArithMark-3 on the same weights; " if has_compare(results) else "")
        + "p is the exact two-sided binomial test of Deep against chance."
        + (" " + NOT_COMPARABLE_NOTE if test_set_letters(results) else ""),
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(align) + " |",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows(results)]
    return "\n".join(lines) + "\n"
