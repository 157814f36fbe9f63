"""The GPT-3 synthetic-tasks section of the report page: the task × setting table beside the
paper's figures, its figure, and its runs table."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.gpt3.report import table as gt
from synthprobe.benchmarks.gpt3.report.model import Gpt3Result, Gpt3Row, PaperFigure
from synthprobe.report import html
from synthprobe.report.format import DASH
from synthprobe.templating import escape


def _gpt3_cell(row: Gpt3Row | None) -> str:
    if row is None:
        return DASH
    acc, lo, hi = gt.interval(row)
    notes = [f"{row.count.correct}/{row.count.n}"]
    if row.lands:
        notes.append(f"lands {escape(row.lands)}")
    shots = gt.shots_note(row)
    if shots:
        notes.append(escape(shots))
    counted = gt.not_counted_note(row)
    if counted:
        notes.append(escape(f"{counted} (counted wrong)"))
    return f'<b>{acc:.1f}</b> [{lo:.1f}, {hi:.1f}]<br><span class="note">{" · ".join(notes)}</span>'


def _paper_cell(fig: PaperFigure | None) -> str:
    text = escape(gt.fmt_paper(fig))
    if fig is not None and fig.doubtful:
        other = (
            "another reading not given" if fig.alt is None else f"other reading: {gt.fmt_paper(PaperFigure(fig.alt))}"
        )
        return f'<span title="doubtful cell; {escape(other)}">{text}</span>'
    return text


def _gpt3_table(results: Sequence[Gpt3Result]) -> str:
    table = gt.lines(results)
    size_cols = gt.sizes(table)
    names = gt.column_names(results)
    paper_head = (
        f'<th colspan="{len(size_cols)}" style="text-align:center">GPT-3 paper ({escape(gt.PAPER)})</th>'
        if size_cols
        else ""
    )
    head1 = (
        '<tr><th class="l" rowspan="2">Task</th><th class="l" rowspan="2">Setting</th>'
        '<th rowspan="2">K</th>'
        f'<th colspan="{len(results)}" style="text-align:center">accuracy % [95 % CI]</th>'
        f'{paper_head}<th class="l" rowspan="2">Note</th></tr>'
    )
    head2 = (
        "<tr>"
        + "".join(f'<th style="white-space:normal">{escape(n)}</th>' for n in names)
        + "".join(f"<th>{escape(s)}</th>" for s in size_cols)
        + "</tr>"
    )
    trs = []
    for ln in table:
        notes = [escape(n) for n in ln.notes]
        if ln.paper_differs:
            notes.append("the files carry different paper figures; the first file's are shown")
        cells = (
            [
                f'<td class="l">{escape(ln.code)} <span class="note">{escape(ln.task)}</span></td>',
                f'<td class="l">{escape(ln.setting)}</td>',
                f"<td>{ln.k}</td>",
            ]
            + [f"<td>{_gpt3_cell(c)}</td>" for c in ln.cells]
            + [f"<td>{_paper_cell(ln.paper.get(sz))}</td>" for sz in size_cols]
            + [f'<td class="l note">{"; ".join(notes)}</td>']
        )
        trs.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table class="gpt3"><thead>{head1}{head2}</thead>'
        f"<tbody>{''.join(trs)}</tbody></table></div>"
    )


def section(results: Sequence[Gpt3Result], figure: bytes | None) -> str:
    parts = [
        "<p>The GPT-3 paper's synthetic tasks (arithmetic, word unscrambling, SAT analogies), scored "
        "as the paper did: greedy generation with exact match for arithmetic and word tasks, the "
        "choice with the highest mean log-likelihood per token for SAT. Each model's accuracy is "
        "given with its 95 % Wilson interval from the items scored (correct/n below it), beside "
        f"GPT-3's published accuracy at every model size ({escape(gt.PAPER)}; few-shot K: arithmetic "
        "50, word tasks 100, SAT 20). <b>lands</b> places the score among the GPT-3 sizes. "
        "† marks a doubtful paper cell (text versions of the table disagree; hover for the other "
        "reading). Rows scored on few items have wide intervals: read them, not the point.</p>"
    ]
    keys = {r.test_set for r in results}
    if len(keys) > 1:
        parts.append(
            '<p class="warn"><b>Not one test set.</b> These GPT-3 results were scored with '
            "different seeds, formats, checks or item limits (see Runs); their columns are not "
            "directly comparable.</p>"
        )
    if figure:
        parts.append(
            html.img(
                figure,
                "GPT-3 synthetic tasks: model accuracy against the paper's curves",
                "Per task: the paper's accuracy over GPT-3 sizes (lines: zero-, one-, few-shot) "
                "and each model's accuracy with its 95 % Wilson interval at its own parameter "
                "count (points in the setting's colour). Hollow rings: doubtful paper cells; "
                "▲: the interval runs past the top of the panel. A SAT panel scored on synthprobe's "
                "self-written sample says so inside the panel: those points do not compare with "
                "the paper's SAT curves.",
            )
        )
    parts.append(_gpt3_table(results))
    return "".join(parts)


def settings_table(results: Sequence[Gpt3Result]) -> str:
    keys = html.setting_keys(results)
    head = ["Model"] + keys
    body = [[r.model] + [r.settings.get(k, DASH) for k in keys] for r in results]
    return html.table(head, body, left=len(head))
