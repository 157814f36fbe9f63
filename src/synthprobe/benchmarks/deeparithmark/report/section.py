"""The Deep Arithmark section of the report page: leaderboard, depth tiers, partial-input
baselines (when scored), templates, mistake profile, rank preference, and its runs table."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.deeparithmark.report import table as lb
from synthprobe.benchmarks.deeparithmark.report.figures import rank_balance_note, rank_balanced, rank_names
from synthprobe.benchmarks.deeparithmark.report.model import (
    MIN_OFFERS,
    ModelResult,
    mistake_templates,
    preferred_mistake,
)
from synthprobe.benchmarks.deeparithmark.report.order import NOT_COMPARABLE_NOTE, ordered, test_set_letters
from synthprobe.metrics.stats import CORRECTION, CORRECTION_NAME
from synthprobe.report import html
from synthprobe.report.format import DASH, fmt_p
from synthprobe.report.stats import adjusted, wilson
from synthprobe.templating import escape

#: p-values below this are called significant in the page's colouring.
ALPHA = 0.05


def _sig_class(rate: float, chance: float, p: float) -> str:
    """``sig-above`` / ``sig-below`` for a score significantly above / below chance, else "".
    Below chance is a finding about the model (it prefers a wrong option), never an error of the
    page, so it is marked blue with a ▼, not in the alarm red the validity verdicts use."""
    if p != p or p >= ALPHA:
        return ""
    return "sig-above" if rate > chance else "sig-below"


def checkpoint_line(r: ModelResult) -> str:
    """Which checkpoint a row is: its path or hub id and the first 12 hex digits of the weights'
    fingerprint (the full one on hover), as an HTML note; "" when the file records neither."""
    parts = []
    if r.checkpoint and r.checkpoint not in r.model:  # the name is not the spec (with its protocol)
        parts.append(escape(r.checkpoint))
    if r.fingerprint:
        parts.append(f'<span title="{escape(r.fingerprint)}">weights {escape(r.fingerprint[:12])}…</span>')
    return f'<br><span class="note ckpt">{" · ".join(parts)}</span>' if parts else ""


def model_cell(r: ModelResult) -> str:
    return f'<span class="model">{escape(r.model)}</span>{checkpoint_line(r)}'


def _depth_table(results: Sequence[ModelResult]) -> str:
    ds = lb.depths(results)
    head = ["Model"] + [f"depth {d}" for d in ds]
    body = []
    for r in ordered(results):
        row = [model_cell(r)]
        tests = adjusted(r.by_depth, r.chance) if r.has_chance else {}
        for d in ds:
            c = r.by_depth.get(d)
            if c is None or not c.n:
                row.append(DASH)
                continue
            lo, hi = wilson(c)
            # the counts go on lines of their own: one line per cell overflows a 1,300 px window
            cell = f"{100 * c.rate:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]<br>"
            if d in tests:
                p, p_holm = tests[d]
                cls = _sig_class(c.rate, r.chance, p_holm)
                cell += (
                    f'<span class="note">n {c.n} · p {escape(fmt_p(p))} · <br>'
                    f"{CORRECTION_NAME} p {escape(fmt_p(p_holm))}</span>"
                )
            else:  # no chance level to test against (a free answer)
                cls = ""
                cell += f'<span class="note">n {c.n} · no chance level</span>'
            row.append(f'<span class="{cls}">{cell}</span>' if cls else cell)
        body.append(row)
    return html.table(head, body, raw=True)


def _leaderboard_table(results: Sequence[ModelResult]) -> str:
    head = lb.header(results)
    body = []
    for r, cells in zip(ordered(results), lb.rows(results)):
        cls = _sig_class(r.acc_norm, r.chance, r.p_value if r.p_value is not None else float("nan"))
        html_cells = [escape(c) for c in cells]
        html_cells[0] = model_cell(r)
        if cls:
            html_cells[lb.DEEP_COLUMN] = f'<span class="{cls}">{html_cells[lb.DEEP_COLUMN]}</span>'
        body.append(html_cells)
    note = f'<p class="warn">{escape(NOT_COMPARABLE_NOTE)}</p>' if test_set_letters(results) else ""
    return note + html.table(head, body, raw=True)


def _partial_table(r: ModelResult) -> str:
    """One model's partial-input baselines: a row for all items, then one per depth; per baseline
    its acc_norm [95 % Wilson] with p against chance, and its agreement with the full pick."""
    assert r.partial is not None
    names = list(r.partial.rows[0].baselines)
    head = ["Items", "n", "full context"]
    for name in names:
        head += [f"{name}", f"{name} agreement"]
    head.append("question reliance")
    body = []
    for row in r.partial.rows:
        lo, hi = wilson(row.full)
        cells = [
            "all" if row.depth is None else f"depth {row.depth}",
            f"{row.full.n:,}",
            f"{100 * row.full.rate:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]",
        ]
        for name in names:
            b = row.baselines[name]
            lo, hi = wilson(b.accuracy)
            p = b.p_value if b.p_value is not None else float("nan")
            cls = _sig_class(b.accuracy.rate, r.chance, p)
            acc = (
                f"{100 * b.accuracy.rate:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]<br>"
                f'<span class="note">p {escape(fmt_p(b.p_value))}</span>'
            )
            cells.append(f'<span class="{cls}">{acc}</span>' if cls else acc)
            cells.append(f"{100 * b.agree.rate:.1f} %")
        cells.append(f'{100 * row.reliance:+.1f} pts<br><span class="note">vs {escape(row.best)}</span>')
        body.append(cells)
    return html.table(head, body, raw=True)


def _partial_section(results: Sequence[ModelResult]) -> str | None:
    with_p = [r for r in ordered(results) if r.partial is not None]
    if not with_p:
        return None
    designs: dict[str, str] = {}
    for r in with_p:
        designs.update({k: v for k, v in r.partial.designs.items() if k not in designs})
    lead = (
        "<p>Every item scored again by the same model with part of it removed (acc_norm, the same "
        "loglik protocol). A model that reads the question should fall to chance without it. "
        "<b>agreement</b>: the share of items whose partial pick is the full-context pick (about "
        f"{100 * with_p[0].chance:.0f} % when the two are independent); <b>question reliance</b>: the "
        "full-context accuracy minus the best baseline's, in points. Cells: acc_norm % [95 % Wilson "
        "interval] and the exact binomial p against chance (green ▲ / blue ▼: p &lt; 0.05, uncorrected).</p>"
    )
    if designs:
        lead += "<ul>" + "".join(f"<li><b>{escape(k)}</b>: {escape(v)}</li>" for k, v in designs.items()) + "</ul>"
    parts = [lead]
    for r in with_p:
        cross = r.partial.cross_template
        note = (
            f'<p class="note">other-context: {cross} item{"s" if cross != 1 else ""} had no other scored item '
            "of their template and took another template's question.</p>"
            if cross
            else ""
        )
        parts.append(f"<h3>{escape(r.model)}</h3>" + _partial_table(r) + note)
    return "".join(parts)


def _mistake_table(results: Sequence[ModelResult]) -> str | None:
    with_m = [r for r in ordered(results) if r.mistakes]
    if not with_m:
        return None
    depth_of: dict[str, int] = {}
    for r in with_m:
        depth_of.update(r.template_depth)
    readable, few = mistake_templates(with_m)
    templates = readable + few  # the preferred mistakes lead, strongest first
    head = ["Template"] + [r.model for r in with_m]
    body = []
    for t in templates:
        row = [f'{escape(t)} <span class="note">(d{depth_of.get(t, "?")})</span>']
        for r in with_m:
            top, enough = preferred_mistake(r.mistakes.get(t, ()))
            if top is None:
                row.append(DASH)
                continue
            counts = f"chosen {top.chosen} of {top.offered} times offered ({100 * top.rate:.0f} %)"
            if not top.chosen:  # a free answer, or a model that never fell for a named mistake here
                offered = sum(mc.offered for mc in r.mistakes.get(t, ()) if mc.source != "correct")
                row.append(f'<span class="note">no wrong option picked ({offered} offers)</span>')
            elif enough:
                row.append(f'{escape(top.source)}<br><span class="note">{counts}</span>')
            else:
                row.append(
                    f'<span class="note">too few offers to name a preference (no wrong option '
                    f"offered {MIN_OFFERS} times); most picked: {escape(top.source)}, {counts}</span>"
                )
        body.append(row)
    return html.table(head, body, left=len(head), raw=True)


def _rank_table(results: Sequence[ModelResult]) -> str | None:
    with_r = [r for r in ordered(results) if r.rank_picks]
    if not with_r:
        return None
    names = rank_names(len(with_r[0].rank_picks))
    head = ["Model"] + list(names) + ["correct answer at each rank", "balanced"]
    body = []
    for r in with_r:
        total = sum(r.rank_picks) or 1
        answers = r.answer_ranks
        shares = (
            " / ".join(f"{100 * c / (sum(answers) or 1):.1f}" for c in answers) + " %" if answers else "not recorded"
        )
        balanced = {True: "yes", False: "no", None: DASH}[rank_balanced(r)]
        body.append([r.model] + [f"{100 * c / total:.1f} %" for c in r.rank_picks] + [shares, balanced])
    return html.table(head, body)


#: settings shown shortened (the full value on hover): hashes
SHORTENED = ("dataset SHA-256", "weights fingerprint")


def settings_table(results: Sequence[ModelResult]) -> str:
    """The runs: one column per model (its name over it), one row per setting, so a long name
    or many settings never push a column off the page."""
    keys = html.setting_keys(results)
    runs = ordered(results)
    head = ["Setting"] + [r.model for r in runs]
    body = []
    for k in keys:
        cells = [escape(k)]
        for r in runs:
            v = r.settings.get(k, DASH)
            if k in SHORTENED and len(v) > 16:
                cells.append(f'<span title="{escape(v)}">{escape(v[:12])}…</span>')
            else:
                cells.append(escape(v))
        body.append(cells)
    return html.table(head, body, left=len(head), raw=True)


def _lead(results: Sequence[ModelResult]) -> str:
    """The paragraph over one metric's leaderboard: which metric Deep is, and its columns."""
    chance = results[0].chance
    significance = (
        "<b>p</b> is the exact two-sided binomial test against chance; a green ▲ / blue ▼ marks a "
        "score significantly above / below chance (p &lt; 0.05; the per-depth and per-template marks below "
        f"use {CORRECTION_NAME}-adjusted p). "
    )
    compare = "<b>Δ</b> = Deep − ArithMark-3 on the same weights, in points. " if lb.has_compare(results) else ""
    if not lb.generated(results):
        return (
            f"<p>Zero-shot multiple choice; the primary metric is <b>acc_norm</b>: the ending with the "
            f"highest mean log-likelihood per <i>token</i> (ArithMark 3.0's protocol). Chance is "
            f"{100 * chance:.0f} %. <b>soft</b> is the mean probability of the correct option after a "
            "softmax over the normalised scores. "
            + significance
            + compare
            + "<b>n</b> is the number of items scored; rows are ordered by acc_norm, highest first.</p>"
        )
    free = all(r.protocol == "free" for r in results)
    return (
        f"<p>Zero-shot, answers generated and read back; the primary metric is "
        f"<b>{escape(results[0].metric_label)}</b>. "
        + (
            "A free answer has no chance level (no p-value). "
            if free
            else f"Chance is {100 * chance:.0f} %. " + significance
        )
        + "<b>answered</b> is the accuracy over the answered items only (beside the headline, which "
        "counts every item); <b>unparsed</b>, <b>inconsistent</b>, <b>echo</b> and <b>cut off</b> are "
        "shares of all items (a dash: the protocol has no such outcome), and the run table says which "
        "rule read the answers. "
        + compare
        + "<b>n</b> is the number of items scored; rows are ordered by accuracy, highest first.</p>"
    )


#: below this many items per template (the median over templates and models) the per-template
#: rows and mistake panels say little: they are folded away under a summary line
FOLD_BELOW = 30


def few_per_template(results: Sequence[ModelResult]) -> int | None:
    """The median number of items per template and model when it is below :data:`FOLD_BELOW`
    (the sections per template then fold away), else None."""
    import statistics

    counts = [c.n for r in results for c in r.by_template.values() if c.n]
    if not counts:
        return None
    median = statistics.median(counts)
    return int(median) if median < FOLD_BELOW else None


def _folded(few: int | None, what: str, body: str) -> str:
    """``body`` inside a closed ``<details>`` when there are too few items per template."""
    if few is None:
        return body
    return (
        f"<details><summary>{escape(what.capitalize())}: about {few} item{'s' if few != 1 else ''} per template "
        f"and model (fewer than {FOLD_BELOW}), too few to read one template by itself; open to see "
        f"them</summary>{body}</details>"
    )


def sections(results: Sequence[ModelResult], figures: dict[str, bytes | None]) -> list[tuple[str, str, str]]:
    """The page's Deep Arithmark sections, in order, each (anchor, title, html): the leaderboard,
    accuracy by depth, then, where the results hold them, the partial-input baselines, accuracy by
    template, the mistake profile and the rank preference."""
    parts = lb.groups(results)
    sections = [_leaderboard_section(parts), _depth_section(results, figures, parts)]
    partial = _partial_section(results)
    if partial:
        sections.append(("partial", "Partial-input baselines", partial))
    fold = few_per_template(results)
    sections += _template_section(results, figures, fold)
    sections += _mistake_section(results, figures, fold)
    sections += _rank_section(results, figures)
    return sections


def _leaderboard_section(parts: list) -> tuple[str, str, str]:
    """The leaderboard: one table per metric group, each led by its sentence."""
    board = []
    for rs in parts:
        heading = f"<h3>{escape(rs[0].metric_label)}</h3>" if len(parts) > 1 else ""
        board.append(heading + _lead(rs) + _leaderboard_table(rs))
    return ("leaderboard", "Leaderboard", "".join(board))


def _depth_section(
    results: Sequence[ModelResult], figures: dict[str, bytes | None], parts: list
) -> tuple[str, str, str]:
    """Accuracy by depth: the curve, one table per metric group, and how to read a cell."""
    body = []
    if figures.get("depth_curve"):
        metric = lb.metric_name(results)
        body.append(
            html.img(
                figures["depth_curve"],
                f"{metric} by depth per model",
                f"{metric} per depth tier with 95 % Wilson intervals"
                + ("; dashed line: chance." if any(r.has_chance for r in results) else "."),
            )
        )
    for rs in parts:
        heading = f"<h3>{escape(rs[0].metric_label)}</h3>" if len(parts) > 1 else ""
        body.append(heading + _depth_table(rs))
    body.append(
        f'<p class="note">Cells: {escape(lb.metric_name(results))} % [95 % Wilson interval], items n, the exact '
        f"binomial p against chance, and that p after {CORRECTION_NAME}'s correction for the tiers of each "
        f"model (statsmodels' multipletests, method '{CORRECTION}'). A green ▲ / blue ▼ marks a tier whose "
        f"{CORRECTION_NAME}-adjusted p is below {ALPHA:g}. Only a tier below chance after the "
        "correction suggests a stable wrong path rather than guessing."
        + (
            " A free answer has no chance level: its cells give n only."
            if any(not r.has_chance for r in results)
            else ""
        )
        + "</p>"
    )
    return ("depth", "Accuracy by depth", "".join(body))


def _template_section(results: Sequence[ModelResult], figures: dict[str, bytes | None], fold: int | None) -> list:
    """Accuracy by template: the heat-map, folded away when templates hold few items (none without it)."""
    if not figures.get("template_heatmap"):
        return []
    metric = lb.metric_name(results)
    return [
        (
            "templates",
            "Accuracy by template",
            _folded(
                fold,
                "per-template rows",
                html.img(
                    figures["template_heatmap"],
                    f"template by model heat-map of {metric}",
                    f"{metric} per template (rows, with depth) and model (columns); white is chance, "
                    "blue above, red below. Each cell gives its number of items n; a hatched cell's 95 % "
                    "Wilson interval contains chance (it cannot be told from guessing); * marks a cell whose "
                    f"exact binomial p against chance stays below {ALPHA:g} after {CORRECTION_NAME}'s correction "
                    "for the templates of that model.",
                )
                + '<p class="note">Answer rank is balanced globally, not per template: read per-template '
                "rows as preference, not partial skill.</p>",
            ),
        )
    ]


def _mistake_section(results: Sequence[ModelResult], figures: dict[str, bytes | None], fold: int | None) -> list:
    """The mistake profile: the preferred-mistake table first, then the panels a reader can read."""
    mt = _mistake_table(results)
    if not (figures.get("mistake_profile") or mt):
        return []
    parts = []
    if mt:  # the table a reader can use leads; the panels follow
        parts.append(
            "<p>The wrong option each model prefers most, per template (pick rate when "
            "offered, and how many items offered it), strongest preference first. Only options "
            f"offered at least {MIN_OFFERS} times are called preferred; a cell with none says so, "
            "and those templates come last.</p>" + mt
        )
    if mt and not figures.get("mistake_profile"):
        parts.append(
            f'<p class="note">No mistake panels: no template offered a wrong option {MIN_OFFERS} '
            "times, too few to read a pick rate from a bar.</p>"
        )
    if figures.get("mistake_profile"):
        readable, few = mistake_templates(results)
        hidden = (
            f" The {len(few)} template{'s' if len(few) != 1 else ''} where no wrong option was "
            f"offered {MIN_OFFERS} times get no panel (too few offers to read; the table has them)."
            if few
            else ""
        )
        parts.append(
            html.img(
                figures["mistake_profile"],
                "pick rate of each option source per template",
                "How often each option is picked when it is offered, by the mistake that "
                "produces it ('correct' is the answer). Dashed line: chance. Each bar is labelled 'k/N': "
                "picked k of the N times it was offered. '0 of N' marks an option "
                "offered N times and never picked; 'not offered' one that no item offered." + hidden,
            )
        )
    return [("mistakes", "Mistake profile", _folded(fold, "mistake panels", "".join(parts)))]


def _rank_section(results: Sequence[ModelResult], figures: dict[str, bytes | None]) -> list:
    """Rank preference: the share of picks by numeric rank, with why it matters here, and its table."""
    rt = _rank_table(results)
    if not (figures.get("rank_preference") or rt):
        return []
    parts = []
    if figures.get("rank_preference"):
        note = rank_balance_note([r for r in results if r.rank_picks])
        if note == "answers are rank-balanced":
            why = (
                "The correct answer's rank is balanced in these results, so a skill-free model that "
                "prefers a rank shows a bar far from chance while scoring chance overall."
            )
        elif note.startswith("answer ranks are NOT"):
            why = (
                "The correct answer's rank is not balanced in these results (see the table): a "
                "preferred rank can raise or lower the score by itself."
            )
        else:
            why = (
                "The results do not record the correct answer's rank, so this page cannot say "
                "whether a preferred rank moves the score."
            )
        parts.append(
            html.img(
                figures["rank_preference"],
                "share of picks by numeric rank",
                f"Share of answers at each numeric rank of the options. {why}",
            )
        )
    if rt:
        parts.append(rt)
    return [("ranks", "Rank preference", "".join(parts))]
