"""The self-contained HTML page: inline CSS, figures embedded as base64 PNG, no scripts,
nothing fetched from the network, no time stamps."""

from __future__ import annotations

import base64
from typing import Sequence

from synthprobe.templating import Markup, environment, escape
from synthprobe.templating import render as render_template

from synthprobe import __version__
from synthprobe.report.deeparithmark import table as lb
from synthprobe.report.gpt3 import table as gt
from synthprobe.report.model import Gpt3Result, Gpt3Row, MistakeCount, ModelResult, PaperFigure
from synthprobe.report.deeparithmark.figures import rank_balance_note, rank_balanced, rank_names
from synthprobe.analysis.stats import CORRECTION, CORRECTION_NAME
from synthprobe.report.stats import adjusted, contains_chance, wilson

CSS = """
:root { --fg: #1d2430; --muted: #5b6573; --line: #d9dee5; --band: #f5f7fa; --accent: #2a5db0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Roboto, Arial, sans-serif;
       color: var(--fg); background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 12px; border-top: 1px solid var(--line); }
p { margin: 6px 0 10px; max-width: 90ch; }
.sub { color: var(--muted); margin: 0 0 18px; }
nav { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 10px 0 4px; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; }
.note { color: var(--muted); font-size: 13.5px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13.5px; margin: 8px 0 6px; }
th, td { padding: 4px 9px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; position: sticky; top: 0; }
td:first-child, th:first-child { text-align: left; }
td.l, th.l { text-align: left; white-space: normal; }
tbody tr:nth-child(even) { background: #fafbfc; }
.warn { border-left: 4px solid #c77c02; background: #fff7e6; padding: 8px 12px; max-width: 90ch; }
.above { color: #1b6e33; font-weight: 600; }
.below { color: #a3281b; font-weight: 600; }
figure { margin: 10px 0 4px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
h3 { font-size: 16px; margin: 18px 0 4px; }
table.gpt3 td { vertical-align: top; }
code { font-size: 13px; background: var(--band); padding: 1px 4px; border-radius: 3px; }
""".strip()

DEFAULT_TITLE = "Deep Arithmark report"

#: a wrong option offered fewer times than this is never called "preferred".
MIN_OFFERS = 10

#: p-values below this are called significant in the page's colouring.
ALPHA = 0.05


def _parts():
    """The page's Jinja2 macros (``resources/templates/report_parts.html``)."""
    return environment().get_template("report_parts.html").module


def _img(png: bytes, alt: str, caption: str) -> str:
    """The figure macro (alt text and caption escaped by the template), as plain HTML text."""
    data = base64.b64encode(png).decode("ascii")
    return str(_parts().figure(data, alt, caption))


def _table(head: Sequence[str], body: Sequence[Sequence[str]], *, left: int = 1, raw: bool = False) -> str:
    """The table macro; its template escapes every cell. ``raw``: body cells are HTML already,
    built from :func:`markupsafe.escape`-d pieces, and pass as :class:`~markupsafe.Markup`."""
    cells = [[Markup(c) if raw else c for c in row] for row in body]
    return str(_parts().table(list(head), cells, left))


def _sig_class(rate: float, chance: float, p: float) -> str:
    if p != p or p >= ALPHA:
        return ""
    return "above" if rate > chance else "below"


def _depth_table(results: Sequence[ModelResult]) -> str:
    ds = lb.depths(results)
    head = ["Model"] + [f"depth {d}" for d in ds]
    body = []
    for r in lb.ordered(results):
        row = [escape(r.model)]
        tests = adjusted(r.by_depth, r.chance)
        for d in ds:
            c = r.by_depth.get(d)
            if c is None or not c.n:
                row.append(lb.DASH)
                continue
            lo, hi = wilson(c)
            p, p_holm = tests[d]
            cls = _sig_class(c.rate, r.chance, p_holm)
            cell = (f"{100 * c.rate:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] "
                    f"<span class=\"note\">n {c.n} · p {escape(lb.fmt_p(p))} · "
                    f"{CORRECTION_NAME} p {escape(lb.fmt_p(p_holm))}</span>")
            row.append(f'<span class="{cls}">{cell}</span>' if cls else cell)
        body.append(row)
    return _table(head, body, raw=True)


def _leaderboard_table(results: Sequence[ModelResult]) -> str:
    head = lb.header(results)
    body = []
    for r, cells in zip(lb.ordered(results), lb.rows(results)):
        cls = _sig_class(r.acc_norm, r.chance, r.p_value if r.p_value is not None else float("nan"))
        html_cells = [escape(c) for c in cells]
        if cls:
            html_cells[2] = f'<span class="{cls}">{html_cells[2]}</span>'
        body.append(html_cells)
    return _table(head, body, raw=True)


def preferred_mistake(rows: Sequence[MistakeCount]) -> tuple[MistakeCount | None, bool]:
    """The wrong option picked most often when offered, and whether it may be called preferred.

    Only options offered at least :data:`MIN_OFFERS` times compete for "preferred" (a 2-of-3 pick
    rate says little). When none was offered that often, the most picked one is returned with
    ``False``; ``(None, False)`` when no wrong option was offered at all.
    """
    wrong = [mc for mc in rows if mc.source != "correct" and mc.offered]
    if not wrong:
        return None, False
    enough = [mc for mc in wrong if mc.offered >= MIN_OFFERS]
    pool = enough or wrong
    return max(pool, key=lambda mc: (mc.rate, mc.chosen, mc.source)), bool(enough)


def _mistake_table(results: Sequence[ModelResult]) -> str | None:
    with_m = [r for r in lb.ordered(results) if r.mistakes]
    if not with_m:
        return None
    depth_of: dict[str, int] = {}
    for r in with_m:
        depth_of.update(r.template_depth)
    templates = sorted({t for r in with_m for t in r.mistakes}, key=lambda t: (depth_of.get(t, 0), t))
    head = ["Template"] + [r.model for r in with_m]
    body = []
    for t in templates:
        row = [f"{escape(t)} <span class=\"note\">(d{depth_of.get(t, '?')})</span>"]
        for r in with_m:
            top, enough = preferred_mistake(r.mistakes.get(t, ()))
            if top is None:
                row.append(lb.DASH)
                continue
            counts = f"chosen {top.chosen} of {top.offered} times offered ({100 * top.rate:.0f} %)"
            if enough:
                row.append(f"{escape(top.source)}<br><span class=\"note\">{counts}</span>")
            else:
                row.append(f'<span class="note">too few offers to name a preference (no wrong option '
                           f"offered {MIN_OFFERS} times); most picked: {escape(top.source)}, {counts}</span>")
        body.append(row)
    return _table(head, body, left=len(head), raw=True)


def _rank_table(results: Sequence[ModelResult]) -> str | None:
    with_r = [r for r in lb.ordered(results) if r.rank_picks]
    if not with_r:
        return None
    names = rank_names(len(with_r[0].rank_picks))
    head = ["Model"] + list(names) + ["correct answer at each rank", "balanced"]
    body = []
    for r in with_r:
        total = sum(r.rank_picks) or 1
        answers = r.answer_ranks
        shares = (" / ".join(f"{100 * c / (sum(answers) or 1):.1f}" for c in answers) + " %"
                  if answers else "not recorded")
        balanced = {True: "yes", False: "no", None: lb.DASH}[rank_balanced(r)]
        body.append([r.model] + [f"{100 * c / total:.1f} %" for c in r.rank_picks] + [shares, balanced])
    return _table(head, body)


def _setting_keys(results: Sequence) -> list[str]:
    """Every settings key of the given results, in first-seen order."""
    return list(dict.fromkeys(k for r in results for k in r.settings))


def _settings_table(results: Sequence[ModelResult]) -> str:
    keys = _setting_keys(results)
    head = ["Model"] + keys
    body = []
    for r in lb.ordered(results):
        cells = [escape(r.model)]
        for k in keys:
            v = r.settings.get(k, lb.DASH)
            if k == "dataset SHA-256" and len(v) > 16:
                cells.append(f'<span title="{escape(v)}">{escape(v[:12])}…</span>')
            else:
                cells.append(escape(v))
        body.append(cells)
    return _table(head, body, left=len(head), raw=True)


def _deep_sections(results: Sequence[ModelResult], figures: dict[str, bytes | None]) -> list[tuple[str, str, str]]:
    chance = results[0].chance
    sections: list[tuple[str, str, str]] = []

    lead = (f"<p>Zero-shot multiple choice; the primary metric is <b>acc_norm</b>: the ending with the "
            f"highest mean log-likelihood per <i>token</i> (ArithMark 3.0's protocol). Chance is "
            f"{100 * chance:.0f} %. <b>soft</b> is the mean probability of the correct option after a "
            "softmax over the normalised scores. <b>p</b> is the exact two-sided binomial test against "
            "chance; green/red marks a score significantly above/below chance (p &lt; 0.05; the per-depth "
            f"and per-template marks below use {CORRECTION_NAME}-adjusted p). "
            "<b>Δ</b> = Deep Arithmark − ArithMark-3 on the same weights, in points.</p>")
    sections.append(("leaderboard", "Leaderboard", lead + _leaderboard_table(results)))

    body = []
    if figures.get("depth_curve"):
        body.append(_img(figures["depth_curve"], "acc_norm by depth per model",
                         "acc_norm per depth tier with 95 % Wilson intervals; dashed line: chance."))
    body.append(_depth_table(results))
    body.append('<p class="note">Cells: acc_norm % [95 % Wilson interval], items n, the exact binomial p '
                f"against chance, and that p after {CORRECTION_NAME}'s correction for the tiers of each model "
                f"(statsmodels' multipletests, method '{CORRECTION}'). Green/red marks a tier whose "
                f"{CORRECTION_NAME}-adjusted p is below {ALPHA:g}. Only a tier below chance after the "
                "correction suggests a stable wrong path rather than guessing.</p>")
    sections.append(("depth", "Accuracy by depth", "".join(body)))

    if figures.get("template_heatmap"):
        sections.append(("templates", "Accuracy by template", _img(
            figures["template_heatmap"], "template by model heat-map of acc_norm",
            "acc_norm per template (rows, with depth) and model (columns); white is chance, "
            "blue above, red below. Each cell gives its number of items n; a hatched cell's 95 % "
            "Wilson interval contains chance (it cannot be told from guessing); * marks a cell whose "
            f"exact binomial p against chance stays below {ALPHA:g} after {CORRECTION_NAME}'s correction "
            "for the templates of that model.")
            + '<p class="note">Answer rank is balanced globally, not per template: read per-template '
              "rows as preference, not partial skill.</p>"))

    mt = _mistake_table(results)
    if figures.get("mistake_profile") or mt:
        parts = []
        if figures.get("mistake_profile"):
            parts.append(_img(figures["mistake_profile"], "pick rate of each option source per template",
                              "How often each option is picked when it is offered, by the mistake that "
                              "produces it ('correct' is the answer). Dashed line: chance. Each bar is labelled 'k/N': "
                              "picked k of the N times it was offered. '0 of N' marks an option "
                              "offered N times and never picked; 'not offered' one that no item offered."))
        if mt:
            parts.append("<p>The wrong option each model prefers most, per template (pick rate when "
                         "offered, and how many items offered it). Only options offered at least "
                         f"{MIN_OFFERS} times are called preferred; a cell with none says so.</p>" + mt)
        sections.append(("mistakes", "Mistake profile", "".join(parts)))

    rt = _rank_table(results)
    if figures.get("rank_preference") or rt:
        parts = []
        if figures.get("rank_preference"):
            note = rank_balance_note([r for r in results if r.rank_picks])
            if note == "answers are rank-balanced":
                why = ("The correct answer's rank is balanced in these results, so a skill-free model that "
                       "prefers a rank shows a bar far from chance while scoring chance overall.")
            elif note.startswith("answer ranks are NOT"):
                why = ("The correct answer's rank is not balanced in these results (see the table): a "
                       "preferred rank can raise or lower the score by itself.")
            else:
                why = ("The results do not record the correct answer's rank, so this page cannot say "
                       "whether a preferred rank moves the score.")
            parts.append(_img(figures["rank_preference"], "share of picks by numeric rank",
                              f"Share of answers at each numeric rank of the options. {why}"))
        if rt:
            parts.append(rt)
        sections.append(("ranks", "Rank preference", "".join(parts)))
    return sections


def _gpt3_cell(row: Gpt3Row | None) -> str:
    if row is None:
        return lb.DASH
    acc, lo, hi = gt.interval(row)
    notes = [f"{row.count.correct}/{row.count.n}"]
    if row.lands:
        notes.append(f"lands {escape(row.lands)}")
    shots = gt.shots_note(row)
    if shots:
        notes.append(escape(shots))
    return (f"<b>{acc:.1f}</b> [{lo:.1f}, {hi:.1f}]<br>"
            f'<span class="note">{" · ".join(notes)}</span>')


def _paper_cell(fig: PaperFigure | None) -> str:
    text = escape(gt.fmt_paper(fig))
    if fig is not None and fig.doubtful:
        other = "another reading not given" if fig.alt is None else f"other reading: {gt.fmt_paper(PaperFigure(fig.alt))}"
        return f'<span title="doubtful cell; {escape(other)}">{text}</span>'
    return text


def _gpt3_table(results: Sequence[Gpt3Result]) -> str:
    table = gt.lines(results)
    size_cols = gt.sizes(table)
    names = gt.column_names(results)
    paper_head = (f'<th colspan="{len(size_cols)}" style="text-align:center">GPT-3 paper '
                  f"({escape(gt.PAPER)})</th>" if size_cols else "")
    head1 = ('<tr><th class="l" rowspan="2">Task</th><th class="l" rowspan="2">Setting</th>'
             '<th rowspan="2">K</th>'
             f'<th colspan="{len(results)}" style="text-align:center">accuracy % [95 % CI]</th>'
             f'{paper_head}<th class="l" rowspan="2">Note</th></tr>')
    head2 = ("<tr>" + "".join(f'<th style="white-space:normal">{escape(n)}</th>' for n in names)
             + "".join(f"<th>{escape(s)}</th>" for s in size_cols) + "</tr>")
    trs = []
    for ln in table:
        notes = [escape(n) for n in ln.notes]
        if ln.paper_differs:
            notes.append("the files carry different paper figures; the first file's are shown")
        cells = ([f'<td class="l">{escape(ln.code)} <span class="note">{escape(ln.task)}</span></td>',
                  f'<td class="l">{escape(ln.setting)}</td>', f"<td>{ln.k}</td>"]
                 + [f"<td>{_gpt3_cell(c)}</td>" for c in ln.cells]
                 + [f"<td>{_paper_cell(ln.paper.get(sz))}</td>" for sz in size_cols]
                 + [f'<td class="l note">{"; ".join(notes)}</td>'])
        trs.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="scroll"><table class="gpt3"><thead>{head1}{head2}</thead>'
            f'<tbody>{"".join(trs)}</tbody></table></div>')


def _gpt3_section(results: Sequence[Gpt3Result], figure: bytes | None) -> str:
    parts = ["<p>The GPT-3 paper's synthetic tasks (arithmetic, word unscrambling, SAT analogies), scored "
             "as the paper did: greedy generation with exact match for arithmetic and word tasks, the "
             "choice with the highest mean log-likelihood per token for SAT. Each model's accuracy is "
             "given with its 95 % Wilson interval from the items scored (correct/n below it), beside "
             f"GPT-3's published accuracy at every model size ({escape(gt.PAPER)}; few-shot K: arithmetic "
             "50, word tasks 100, SAT 20). <b>lands</b> places the score among the GPT-3 sizes. "
             "† marks a doubtful paper cell (text versions of the table disagree; hover for the other "
             "reading). Rows scored on few items have wide intervals: read them, not the point.</p>"]
    keys = {r.test_set for r in results}
    if len(keys) > 1:
        parts.append('<p class="warn"><b>Not one test set.</b> These GPT-3 results were scored with '
                     "different seeds, formats, checks or item limits (see Runs); their columns are not "
                     "directly comparable.</p>")
    if figure:
        parts.append(_img(figure, "GPT-3 synthetic tasks: model accuracy against the paper's curves",
                          "Per task: the paper's accuracy over GPT-3 sizes (lines: zero-, one-, few-shot) "
                          "and each model's accuracy with its 95 % Wilson interval at its own parameter "
                          "count (points in the setting's colour). Hollow rings: doubtful paper cells; "
                          "▲: the interval runs past the top of the panel. A SAT panel scored on synthprobe's "
                          "self-written sample says so inside the panel: those points do not compare with "
                          "the paper's SAT curves."))
    parts.append(_gpt3_table(results))
    return "".join(parts)


def _gpt3_settings_table(results: Sequence[Gpt3Result]) -> str:
    keys = _setting_keys(results)
    head = ["Model"] + keys
    body = [[r.model] + [r.settings.get(k, lb.DASH) for k in keys] for r in results]
    return _table(head, body, left=len(head))


def default_title(results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result]) -> str:
    if results and gpt3:
        return "Deep Arithmark and GPT-3 synthetic tasks report"
    return DEFAULT_TITLE if results else "GPT-3 synthetic tasks report"


def render(results: Sequence[ModelResult], figures: dict[str, bytes | None], *,
           sources: Sequence[str], title: str | None = None, gpt3: Sequence[Gpt3Result] = ()) -> str:
    """The page: Deep Arithmark sections when ``results`` has models, a GPT-3 section when
    ``gpt3`` has files (its figure is ``figures["gpt3_curves"]``), then the runs."""
    if not results and not gpt3:
        raise ValueError("nothing to report")
    title = title or default_title(results, gpt3)
    sections = _deep_sections(results, figures) if results else []
    if sections and gpt3:
        sections[0] = (sections[0][0], "Deep Arithmark leaderboard", sections[0][2])
    sub_parts: list[str] = []
    datasets: list[str] = []
    n_items: list[int] = []
    if results:
        chance = results[0].chance
        n_items = sorted({r.overall.n for r in results})
        datasets = sorted({r.settings.get("dataset SHA-256", "") for r in results} - {""})
        sub = (("Deep Arithmark: " if gpt3 else "") + f"{len(results)} model{'s' if len(results) != 1 else ''} · "
               f"{', '.join(f'{n:,}' for n in n_items)} items · chance {100 * chance:.0f} %")
        if datasets:
            sub += " · data SHA-256 " + ", ".join(f"{d[:12]}…" for d in datasets)
        sub_parts.append(sub)
    if gpt3:
        rows = len(gt.lines(gpt3))
        sub_parts.append(f"GPT-3 synthetic tasks: {len(gpt3)} model{'s' if len(gpt3) != 1 else ''} · "
                         f"{rows} task × setting row{'s' if rows != 1 else ''}")
        sections.append(("gpt3", "GPT-3 synthetic tasks", _gpt3_section(gpt3, figures.get("gpt3_curves"))))

    runs = []
    if results:
        runs.append(("<h3>Deep Arithmark</h3>" if gpt3 else "") + _settings_table(results))
    if gpt3:
        runs.append(("<h3>GPT-3 synthetic tasks</h3>" if results else "") + _gpt3_settings_table(gpt3))
    sections.append(("runs", "Runs", "".join(runs)
                     + "<p class=\"note\">Read from: " + ", ".join(f"<code>{escape(s)}</code>" for s in sources)
                     + "</p>"))

    return render_template("report.html", title=title, css=Markup(CSS), sub=" · ".join(sub_parts),
                  sections=[(sid, name, Markup(html)) for sid, name, html in sections],
                  not_one_test_set=len(datasets) > 1 or len(n_items) > 1, version=__version__)
