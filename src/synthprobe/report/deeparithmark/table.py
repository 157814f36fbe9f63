"""The leaderboard with the release card's columns, as rows of strings and as Markdown.

Model, Params, Deep (acc_norm), soft, d2 … d5 (acc_norm per depth tier), ArithMark-3
(acc_norm on the same weights), Δ = Deep − ArithMark-3, and p: the exact two-sided binomial
p-value of Deep against chance. Rows are ordered by parameter count, largest first.
"""

from __future__ import annotations

from typing import Sequence

from synthprobe.report.model import ModelResult

DASH = "—"
DEFAULT_TITLE = "Deep Arithmark leaderboard"
MINUS = "−"


def fmt_params(n: int | None) -> str:
    if n is None:
        return DASH
    if n >= 1e9:
        return f"{n / 1e9:.2f} B"
    if n >= 1e6:
        return f"{n / 1e6:.0f} M"
    if n >= 1e3:
        return f"{n / 1e3:.0f} K"
    return str(n)


def fmt_pct(x: float | None, digits: int = 2, unit: bool = True) -> str:
    if x is None or x != x:
        return DASH
    text = f"{100 * x:.{digits}f}"
    return f"{text} %" if unit else text


def fmt_delta(x: float | None) -> str:
    if x is None:
        return DASH
    return f"{100 * x:+.2f}".replace("-", MINUS)


def fmt_p(p: float | None) -> str:
    if p is None or p != p:
        return DASH
    if p >= 1e-3:
        return f"{p:.2g}"
    mant, exp = f"{p:.1e}".split("e")
    return f"{mant}e{MINUS}{int(exp[1:])}" if exp.startswith("-") else f"{mant}e{int(exp)}"


def ordered(results: Sequence[ModelResult]) -> list[ModelResult]:
    """Largest model first; unknown sizes last; ties by name."""
    return sorted(results, key=lambda r: (r.params is None, -(r.params or 0), r.model))


def depths(results: Sequence[ModelResult]) -> list[int]:
    return sorted({d for r in results for d in r.by_depth})


def header(results: Sequence[ModelResult]) -> list[str]:
    return (["Model", "Params", "Deep", "soft"] + [f"d{d}" for d in depths(results)]
            + ["ArithMark-3", "Δ", "p vs chance"])


def rows(results: Sequence[ModelResult]) -> list[list[str]]:
    ds = depths(results)
    out = []
    for r in ordered(results):
        out.append(
            [r.model, fmt_params(r.params), fmt_pct(r.acc_norm), fmt_pct(r.soft)]
            + [fmt_pct(r.by_depth[d].rate, 1, unit=False) if d in r.by_depth else DASH for d in ds]
            + [fmt_pct(r.arithmark3), fmt_delta(r.delta), fmt_p(r.p_value)]
        )
    return out


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
