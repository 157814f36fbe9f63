"""The GPT-3 synthetic-task table: one line per task × setting, one column per model (accuracy,
95 % Wilson interval, n), then GPT-3's published accuracy at every size. As rows of data for the
page and the figure, and as Markdown for ``leaderboard.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from synthprobe.benchmarks.gpt3.report.model import Gpt3Result, Gpt3Row, PaperFigure
from synthprobe.benchmarks.gpt3.report.read import size_params
from synthprobe.report.format import DASH, fmt_params, ordered
from synthprobe.report.stats import wilson

#: the paper the figures come from, as the scorer carries them
PAPER = "Brown et al. 2020, Table H.1"


@dataclass
class Gpt3Line:
    """One task × setting across every model."""

    task: str
    code: str
    family: str
    setting: str
    k: int
    #: one per model, in column order; None where that model's file lacks this task × setting
    cells: list[Gpt3Row | None]
    paper: dict[str, PaperFigure] = field(default_factory=dict)
    #: the files carry different paper figures for this line (the first file's are shown)
    paper_differs: bool = False
    notes: list[str] = field(default_factory=list)


def lines(results: Sequence[Gpt3Result]) -> list[Gpt3Line]:
    """Lines in the files' task order (first file first), settings by number of demonstrations."""
    results = list(results)
    first_seen: dict[tuple[str, str, int], int] = {}
    task_order: dict[str, int] = {}
    family_order: dict[str, int] = {}
    for r in results:
        for row in r.rows:
            family_order.setdefault(row.family, len(family_order))
            task_order.setdefault(row.task, len(task_order))
            first_seen.setdefault(row.key, len(first_seen))
    out: dict[tuple[str, str, int], Gpt3Line] = {}
    for j, r in enumerate(results):
        for row in r.rows:
            line = out.get(row.key)
            if line is None:
                line = out[row.key] = Gpt3Line(
                    row.task, row.code, row.family, row.setting, row.k, cells=[None] * len(results)
                )
            line.cells[j] = row
            if row.paper:
                if not line.paper:
                    line.paper = dict(row.paper)
                elif row.paper != line.paper:
                    line.paper_differs = True
            if row.paper_note and row.paper_note not in line.notes:
                line.notes.append(row.paper_note)
    return sorted(
        out.values(),
        key=lambda ln: (family_order[ln.family], task_order[ln.task], ln.k, first_seen[(ln.task, ln.setting, ln.k)]),
    )


#: the words the scorer puts in ``paper_note`` of a SAT row scored on its shipped sample
SAT_SAMPLE_MARK = "self-written sample"


def from_sat_sample(row: Gpt3Row) -> bool:
    """The row is SAT scored on synthprobe's self-written sample, not on the SAT set."""
    return row.family == "sat" and SAT_SAMPLE_MARK in (row.paper_note or "")


def sizes(table: Sequence[Gpt3Line]) -> list[str]:
    """Every GPT-3 size any line has a figure for, smallest first."""
    labels = {s for ln in table for s in ln.paper}
    return sorted(labels, key=lambda s: size_params(s) or 0.0)


def fmt_paper(fig: PaperFigure | None) -> str:
    """As the paper prints it: one decimal from 10 %, two below; † marks a doubtful cell."""
    if fig is None:
        return DASH
    text = f"{fig.value:.1f}" if fig.value >= 10 else f"{fig.value:.2f}"
    return text + ("†" if fig.doubtful else "")


def interval(row: Gpt3Row) -> tuple[float, float, float]:
    """Accuracy and its 95 % Wilson interval, in percent."""
    lo, hi = wilson(row.count)
    return 100 * row.rate, 100 * lo, 100 * hi


def fmt_score(row: Gpt3Row | None) -> str:
    """``5.0 [0.9, 23.6] n=20; lands ≥ 1.3B`` (percent, 95 % Wilson interval, items, and
    where the score places the model among the GPT-3 sizes)."""
    if row is None:
        return DASH
    acc, lo, hi = interval(row)
    text = f"{acc:.1f} [{lo:.1f}, {hi:.1f}] n={row.count.n}"
    text = f"{text}; lands {row.lands}" if row.lands else text
    counted = not_counted_note(row)
    return f"{text}; {counted}" if counted else text


def not_counted_note(row: Gpt3Row) -> str | None:
    """``unparsed 5, inconsistent 0, cut off 0`` for a row of answers read from generated text
    (each counted wrong); None for a row scored otherwise."""
    if not row.not_counted:
        return None
    return ", ".join(f"{key.replace('_', ' ')} {count}" for key, count in row.not_counted.items())


def shots_note(row: Gpt3Row) -> str | None:
    """Says when the items got fewer demonstrations than the setting asks for."""
    if row.shots_mean == row.k and not row.shots_reduced:
        return None
    text = f"K used: mean {row.shots_mean:g}"
    if row.shots_min != row.shots_max:
        text += f", {row.shots_min}–{row.shots_max}"
    return text


def column_names(results: Sequence[Gpt3Result]) -> list[str]:
    return [f"{r.model} ({fmt_params(r.params)})" if r.params else r.model for r in results]


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_body(results: Sequence[Gpt3Result]) -> str:
    """The GPT-3 table in Markdown, without a title."""
    results = ordered(results)
    table = lines(results)
    size_cols = sizes(table)
    head = ["Task", "Setting", "K"] + column_names(results) + [f"GPT-3 {s}" for s in size_cols] + ["Note"]
    align = ["---", "---", "---:"] + ["---:"] * (len(results) + len(size_cols)) + ["---"]
    out = [
        f"Accuracy in % with its 95 % Wilson interval and the number of items (n), per task and "
        f"setting; GPT-3 columns: the paper's accuracy at each model size ({PAPER}; few-shot K: "
        "arithmetic 50, word tasks 100, SAT 20). † marks a doubtful paper cell (text versions of the "
        "table disagree). lands: where the score places the model among the GPT-3 sizes. Few-shot rows "
        "often score only a few items: read their intervals.",
        "",
        "| " + " | ".join(_md(h) for h in head) + " |",
        "| " + " | ".join(align) + " |",
    ]
    for ln in table:
        notes = list(ln.notes)
        for name, row in zip(column_names(results), ln.cells):
            shots = shots_note(row) if row is not None else None
            if shots:
                notes.append(f"{name}: {shots}" if len(results) > 1 else shots)
        if ln.paper_differs:
            notes.append("the files carry different paper figures; the first file's are shown")
        cells = (
            [ln.code, ln.setting, str(ln.k)]
            + [fmt_score(c) for c in ln.cells]
            + [fmt_paper(ln.paper.get(s)) for s in size_cols]
            + ["; ".join(notes)]
        )
        out.append("| " + " | ".join(_md(c) for c in cells) + " |")
    return "\n".join(out) + "\n"
