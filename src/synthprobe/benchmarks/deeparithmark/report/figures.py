"""The Deep Arithmark figures: depth curve, template heatmap, mistake profile, rank preference
(drawn on :mod:`synthprobe.report.figures`)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib as mpl
import matplotlib.style
import matplotlib.ticker
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from synthprobe.benchmarks.deeparithmark.report.model import ModelResult, mistake_templates
from synthprobe.metrics.stats import CORRECTION_NAME
from synthprobe.report.figures import CHANCE_STYLE, RC, new_figure, palette, png_bytes, side_legend, text_on
from synthprobe.report.stats import adjusted, contains_chance, wilson

#: a legend entry is wrapped at this many characters (long checkpoint names squeeze no plot)
LEGEND_WRAP = 30


def metric_axis(results: Sequence[ModelResult]) -> str:
    """The axis label: the rows' metric(s), ``acc_norm (%)``, ``accuracy (%)`` or both."""
    return " / ".join(dict.fromkeys(r.metric for r in results)) + " (%)"


def legend_label(name: str) -> str:
    return _wrap(name, LEGEND_WRAP)


def depth_curve(results: Sequence[ModelResult]) -> bytes:
    """The depth curve (:func:`depth_figure`) as PNG bytes."""
    with mpl.style.context("default"), mpl.rc_context(RC):
        return png_bytes(depth_figure(results))


def depth_figure(results: Sequence[ModelResult]) -> Figure:
    """The primary metric per depth tier, one line per model, Wilson 95 % intervals, chance line
    (when some row has a chance level); legend entries wrapped at :data:`LEGEND_WRAP`."""
    depths = sorted({d for r in results for d in r.by_depth})
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = new_figure(8.0 if len(results) <= 6 else 10.0, 4.6)
        ax = fig.add_subplot()
        m = len(results)
        mixed = len({r.metric for r in results}) > 1
        width = min(0.5, 0.08 * m)
        for i, (r, color) in enumerate(zip(results, palette(m))):
            off = (i - (m - 1) / 2) * (width / max(m - 1, 1)) if m > 1 else 0.0
            xs, ys, lo, hi = [], [], [], []
            for d in depths:
                c = r.by_depth.get(d)
                if c is None or not c.n:
                    continue
                low, high = wilson(c)
                xs.append(d + off)
                ys.append(100 * c.rate)
                lo.append(100 * (c.rate - low))
                hi.append(100 * (high - c.rate))
            # a page that mixes metrics names each line's own (one axis, two kinds of score)
            name = f"{r.model} — {r.metric}" if mixed else r.model
            ax.errorbar(
                xs,
                ys,
                yerr=[lo, hi],
                marker="o",
                markersize=4,
                capsize=2.5,
                linewidth=1.4,
                color=color,
                label=legend_label(name),
            )
        chance = results[0].chance
        if any(r.has_chance for r in results):
            none = sorted({r.protocol for r in results if not r.has_chance})
            ax.axhline(
                100 * chance,
                **CHANCE_STYLE,
                label=f"chance ({100 * chance:.0f} %" + (f"; {', '.join(none)} has none)" if none else ")"),
            )
        ax.set_xticks(depths, [f"depth {d}" for d in depths])
        ax.set_ylabel(metric_axis(results))
        ax.set_title("Accuracy by depth (number of dependent operations),\n95 % Wilson intervals")
        ax.set_ylim(0, 100)
        side_legend(ax)
        return fig


#: inches per character and per text line at the figures' 9 pt font (DejaVu Sans), with room
CHAR_W, LINE_H = 0.075, 0.16


def heatmap_figure(results: Sequence[ModelResult]) -> Figure:
    """Template × model heat-map of acc_norm, coloured around chance.

    Column width follows the model names: up to four models stand upright in columns as wide
    as their wrapped names; more models are turned to read bottom-up, one column per name's
    line count, so long names never run into each other.
    """
    depth_of: dict[str, int] = {}
    for r in results:
        depth_of.update(r.template_depth)
    templates = sorted({t for r in results for t in r.by_template}, key=lambda t: (depth_of.get(t, 0), t))
    chance = 100 * results[0].chance
    m = len(results)
    upright = m <= 4
    labels = [_wrap(r.model, 18 if upright else 26) for r in results]
    longest = max(len(line) for text in labels for line in text.split("\n"))
    lines = max(text.count("\n") + 1 for text in labels)
    if upright:
        col_w = max(0.8, CHAR_W * longest + 0.25)
        label_h = LINE_H * lines
    else:
        col_w = max(0.45, LINE_H * lines + 0.14)
        label_h = CHAR_W * longest
    row_labels = [f"{t} (d{depth_of.get(t, '?')})" for t in templates]
    label_w = CHAR_W * max((len(x) for x in row_labels), default=10)
    width = max(5.5, label_w + m * col_w + 1.6)
    height = max(3.0, 1.0 + 0.34 * len(templates) + label_h)
    with mpl.style.context("default"), mpl.rc_context({**RC, "axes.grid": False}):
        fig = new_figure(width, height)
        ax = fig.add_subplot()
        cells = template_cells(results, templates)
        grid = [[100 * c.rate if c is not None else float("nan") for c in row] for row in cells]
        norm = TwoSlopeNorm(vmin=0, vcenter=chance, vmax=100)
        im = ax.imshow(grid, cmap="RdBu", norm=norm, aspect="auto")
        for i, row in enumerate(cells):
            for j, c in enumerate(row):
                if c is None:
                    continue
                shade = float(norm(100 * c.rate))
                ax.text(
                    j,
                    i,
                    f"{100 * c.rate:.0f}{'*' if c.significant else ''}\nn={c.n}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    linespacing=1.0,
                    color="white" if shade < 0.22 or shade > 0.78 else "black",
                )
                if c.contains_chance:
                    ax.add_patch(
                        Rectangle(
                            (j - 0.5, i - 0.5),
                            1,
                            1,
                            fill=False,
                            hatch="///",
                            edgecolor="0.55",
                            linewidth=0,
                            gid="contains-chance",
                        )
                    )
        if upright:
            ax.set_xticks(range(m), labels)
        else:
            ax.set_xticks(range(m), labels, rotation=90, ha="center", va="top", rotation_mode="default")
        ax.set_yticks(range(len(templates)), row_labels)
        ax.set_title(
            f"{metric_axis(results)} and n per template\nwhite = chance ({chance:.0f} %); hatched: the 95 %\n"
            f"interval holds chance; *: {CORRECTION_NAME} p < {ALPHA:g}"
        )
        fig.colorbar(im, ax=ax, shrink=0.8, label=metric_axis(results))
        return fig


#: a heat-map cell is starred when its Holm-adjusted p against chance is below this
ALPHA = 0.05


@dataclass(frozen=True)
class TemplateCell:
    """One template × model cell of the heat-map."""

    correct: int
    n: int
    rate: float
    low: float
    high: float
    #: exact binomial p against chance, and after Holm's correction over the model's templates
    p: float
    p_holm: float
    #: the 95 % Wilson interval holds chance
    contains_chance: bool

    @property
    def significant(self) -> bool:
        return self.p_holm == self.p_holm and self.p_holm < ALPHA


def template_cells(results: Sequence[ModelResult], templates: Sequence[str]) -> list[list[TemplateCell | None]]:
    """Rows of ``templates``, one cell per model (None where the model has no items there)."""
    # a free answer has no chance level: its cells are neither starred nor hatched
    tests = [
        adjusted({t: c for t, c in r.by_template.items() if c.n}, r.chance) if r.has_chance else {} for r in results
    ]
    rows = []
    for t in templates:
        row: list[TemplateCell | None] = []
        for r, test in zip(results, tests):
            c = r.by_template.get(t)
            if c is None or not c.n:
                row.append(None)
                continue
            lo, hi = wilson(c)
            p, p_holm = test.get(t, (float("nan"), float("nan")))
            row.append(
                TemplateCell(c.correct, c.n, c.rate, lo, hi, p, p_holm, r.has_chance and contains_chance(c, r.chance))
            )
        rows.append(row)
    return rows


def template_heatmap(results: Sequence[ModelResult]) -> bytes:
    """Template × model heat-map of acc_norm as PNG bytes."""
    with mpl.style.context("default"), mpl.rc_context({**RC, "axes.grid": False}):
        return png_bytes(heatmap_figure(results))


def _wrap(text: str, width: int = 32) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


#: a bar longer than this (percent) carries its k/N label inside its end: there is no room right of it
LABEL_INSIDE_FROM = 78.0


def mistake_profile(results: Sequence[ModelResult]) -> bytes | None:
    """Per template, how often each option source is picked when offered, per model (PNG)."""
    with mpl.style.context("default"), mpl.rc_context({**RC, "font.size": 7.5}):
        fig = mistake_figure(results)
        return None if fig is None else png_bytes(fig)


def mistake_figure(results: Sequence[ModelResult]) -> Figure | None:
    """The mistake profile as a figure: every bar labelled with its n (``k/N``); one panel per
    template where some wrong option was offered often enough to read (:data:`MIN_OFFERS`), the
    strongest preference first; None when no template has that many offers."""
    with_mistakes = [r for r in results if r.mistakes]
    templates, _few = mistake_templates(with_mistakes)
    if not templates:
        return None
    depth_of: dict[str, int] = {}
    for r in with_mistakes:
        depth_of.update(r.template_depth)
    sources: dict[str, list[str]] = {}
    for t in templates:
        names: list[str] = []
        for r in with_mistakes:
            for mc in r.mistakes.get(t, ()):
                if mc.source not in names:
                    names.append(mc.source)
        sources[t] = ["correct"] + sorted(n for n in names if n != "correct")
    m = len(with_mistakes)
    ncols = 3 if len(templates) >= 3 else len(templates)
    nrows = -(-len(templates) // ncols)
    per_panel = max(len(s) for s in sources.values())
    # room for a two-line label per source, and for one bar per model
    panel_h = 0.55 + per_panel * max(0.3, 0.1 + 0.07 * m)
    chance = 100 * with_mistakes[0].chance
    with mpl.style.context("default"), mpl.rc_context({**RC, "font.size": 7.5}):
        # A fixed grid instead of constrained layout: with 15 panels the layout engine costs
        # seconds, and the label column width is known (wrapped source names).
        label_w, col_w, top_h = 2.05, 2.45, 0.7
        width = ncols * (label_w + col_w) + 0.2
        # the legend: as many columns as the width holds of its longest (wrapped) name, and the
        # room its rows need below the panels
        names = [legend_label(r.model) for r in with_mistakes]
        longest = max(len(line) for name in names for line in name.split("\n"))
        legend_cols = min(m, 6, max(1, int(width / (CHAR_W * 8 / 9 * longest + 0.6))))
        lines = max(name.count("\n") + 1 for name in names)
        bottom_h = 0.45 + 0.16 * lines * -(-m // legend_cols)
        height = top_h + bottom_h + nrows * panel_h
        fig = Figure(figsize=(width, height))
        axes = fig.subplots(
            nrows,
            ncols,
            squeeze=False,
            gridspec_kw={
                "left": label_w / width,
                "right": 1 - 0.2 / width,
                "top": 1 - top_h / height,
                "bottom": bottom_h / height,
                "wspace": label_w / col_w,
                "hspace": 0.45 / (panel_h - 0.45),
            },
        )
        colors = palette(m)
        note_size = 6.5 if m <= 4 else 5.0
        for k, t in enumerate(templates):
            ax = axes[k // ncols][k % ncols]
            names = sources[t]
            bar_h = 0.8 / m
            for j, (r, color) in enumerate(zip(with_mistakes, colors)):
                _mistake_bars(ax, r, t, names, j, bar_h, color, note_size, legend=k == 0)
            ax.axvline(chance, **CHANCE_STYLE)
            ax.set_yticks(range(len(names)), [_wrap(n) for n in names])
            ax.invert_yaxis()
            ax.set_xlim(0, 100)
            ax.set_title(f"{t} (d{depth_of.get(t, '?')})", loc="center")
            ax.tick_params(axis="y", length=0)
        for k in range(len(templates), nrows * ncols):
            axes[k // ncols][k % ncols].set_visible(False)
        fig.suptitle(
            "Pick rate of each option source when offered (%); dashed = chance; "
            "'k/N' = chosen k of the N times offered;\n'0 of N' = offered N times, never chosen; "
            "'not offered' = no item offered it",
            fontsize=10,
            y=1 - 0.15 / height,
            va="top",
        )
        fig.legend(loc="lower center", bbox_to_anchor=(0.5, 0.05 / height), ncols=legend_cols, fontsize=8)
        return fig


def _mistake_bars(
    ax, r: ModelResult, t: str, names: Sequence[str], j: int, bar_h: float, color, note_size: float, *, legend: bool
) -> None:
    """Model ``r``'s bars in template ``t``'s panel (the ``j``-th model's slot in each row),
    each with its n; "0 of N" and "not offered" said in words, so that neither passes for the
    other (a 0-length bar is invisible)."""
    by_name = {mc.source: mc for mc in r.mistakes.get(t, ())}
    ys, xs, zeros, absent, counts = [], [], [], [], []
    for i, name in enumerate(names):
        mc = by_name.get(name)
        y = i - 0.4 + bar_h * (j + 0.5)
        if mc is None or not mc.offered:
            absent.append(y)
            continue
        ys.append(y)
        xs.append(100 * mc.rate)
        if not mc.chosen:
            zeros.append((y, mc.offered))
        else:
            counts.append((y, 100 * mc.rate, mc.chosen, mc.offered))
    ax.barh(ys, xs, height=bar_h, color=color, label=legend_label(r.model) if legend else None)
    for y, offered in zeros:
        ax.text(1.5, y, f"0 of {offered}", va="center", ha="left", fontsize=note_size, color=color, fontweight="bold")
    # every bar carries its n: picked k of the N items that offered the option; right of the bar
    # in its colour, or, where the bar runs too far right for that, inside its end in black or
    # white, whichever reads on the bar's colour
    for y, x, chosen, offered in counts:
        inside = x > LABEL_INSIDE_FROM
        ax.text(
            x - 1.5 if inside else x + 1.5,
            y,
            f"{chosen}/{offered}",
            va="center",
            ha="right" if inside else "left",
            fontsize=note_size,
            color=text_on(color) if inside else color,
            gid="count-label",
        )
    for y in absent:
        ax.text(1.5, y, "not offered", va="center", ha="left", fontsize=note_size, color="0.45", style="italic")


RANK_NAMES = {4: ("smallest", "2nd smallest", "2nd largest", "largest")}


def rank_names(k: int) -> tuple[str, ...]:
    return RANK_NAMES.get(k, tuple(f"rank {i}" for i in range(k)))


def rank_balanced(r: ModelResult) -> bool | None:
    """Whether the correct answer sits equally often at every numeric rank in ``r``'s file.

    Balanced: each rank holds the answer ``n / k`` times, give or take one item per depth
    tier (each tier rounds on its own) or 1 % of the items, whichever is more. ``None`` when
    the file does not record the answer's rank.
    """
    counts = r.answer_ranks
    if not counts or not sum(counts):
        return None
    n, k = sum(counts), len(counts)
    slack = max(len(r.by_depth), 1, math.ceil(0.01 * n))
    return all(abs(c - n / k) <= slack for c in counts)


def rank_balance_note(results: Sequence[ModelResult]) -> str:
    """Short words for the rank figure's title: whether the answers are rank-balanced."""
    states = [rank_balanced(r) for r in results if r.rank_picks]
    if states and all(s is True for s in states):
        return "answers are rank-balanced"
    if any(s is False for s in states):
        return "answer ranks are NOT balanced in these results"
    return "answer ranks not recorded"


def rank_preference(results: Sequence[ModelResult]) -> bytes | None:
    """Share of picks at each numeric rank of the options (smallest … largest), per model."""
    with_ranks = [r for r in results if r.rank_picks]
    if not with_ranks:
        return None
    k = len(with_ranks[0].rank_picks)
    m = len(with_ranks)
    chance = 100 * with_ranks[0].chance
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = new_figure(8.0 if m <= 6 else 10.0, 4.2)
        ax = fig.add_subplot()
        width = 0.8 / m
        for j, (r, color) in enumerate(zip(with_ranks, palette(m))):
            total = sum(r.rank_picks) or 1
            xs = [i - 0.4 + width * (j + 0.5) for i in range(k)]
            ax.bar(xs, [100 * c / total for c in r.rank_picks], width=width, color=color, label=legend_label(r.model))
        ax.axhline(chance, **CHANCE_STYLE, label=f"chance ({chance:.0f} %)")
        ax.set_xticks(range(k), rank_names(k))
        ax.set_ylim(0, max(50.0, 5 + max(100 * c / (sum(r.rank_picks) or 1) for r in with_ranks for c in r.rank_picks)))
        ax.set_ylabel("share of answers (%)")
        ax.set_title(f"Which option does the model pick, by numeric rank?\n({rank_balance_note(with_ranks)})")
        side_legend(ax)
        return png_bytes(fig)
