"""The GPT-3 synthetic-tasks figure: each model's accuracy against the paper's curves
(drawn on :mod:`synthprobe.report.figures`)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.style
from matplotlib.figure import Figure

from synthprobe.benchmarks.gpt3.report import table as gpt3_table
from synthprobe.benchmarks.gpt3.report.read import size_params
from synthprobe.report.figures import RC, palette, png_bytes

SETTING_COLORS = {"zero": "tab:blue", "one": "tab:orange", "few": "tab:green"}
MODEL_MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "<", ">")
#: where a model of unknown size is drawn on the parameter axis
UNKNOWN_SIZE_X = 2.5e7
#: log10 distance between neighbouring points around one size (a setting, or a model of the same size)
SLOT_DECADES = 0.1
TITLE = (
    "GPT-3 synthetic tasks: the paper's accuracy over GPT-3 sizes (lines, one per setting) and each "
    "model's, with 95 % Wilson intervals, at its own size (points, same colour; models of the same size "
    "side by side)"
)
TITLE_NOTE = "▲ = the interval runs past the top of the panel"
#: inches one legend column needs (marker and a model name such as "SmolLM2-135M (135 M)")
LEGEND_COL_INCHES = 1.75
#: characters of the 9.5 pt title per inch of figure width (a safe under-estimate)
TITLE_CHARS_PER_INCH = 11


def gpt3_curves(results: Sequence) -> bytes | None:
    """:func:`gpt3_figure` as PNG bytes."""
    with mpl.style.context("default"), mpl.rc_context({**RC, "font.size": 8}):
        fig = gpt3_figure(results)
        return None if fig is None else png_bytes(fig)


#: written inside a panel whose model points were scored on synthprobe's own SAT sample
SAT_SAMPLE_CAVEAT = "points: synthprobe's self-written\nSAT sample, not the SAT set;\nnot comparable with these curves"


def gpt3_figure(results: Sequence) -> Figure | None:
    """One panel per GPT-3 synthetic task: the paper's accuracy over GPT-3 sizes as a line per
    setting (zero / one / few), and each model's accuracy with its 95 % Wilson interval as a
    point at the model's own parameter count, in the same setting's colour. Where the model's
    point sits against the lines is where it lands among the GPT-3 sizes."""
    if not results:
        return None
    table = gpt3_table.lines(results)
    tasks: list[str] = []
    for ln in table:
        if ln.task not in tasks:
            tasks.append(ln.task)
    by_task = {t: [ln for ln in table if ln.task == t] for t in tasks}
    settings = sorted(
        {ln.setting for ln in table},
        key=lambda s: (s not in SETTING_COLORS, list(SETTING_COLORS).index(s) if s in SETTING_COLORS else 0, s),
    )
    extra = palette(10)[4:]
    colors = {s: SETTING_COLORS.get(s) or extra[i % len(extra)] for i, s in enumerate(settings)}
    names = gpt3_table.column_names(results)
    unknown = any(r.params is None for r in results)
    xs_all = [size_params(s) for s in gpt3_table.sizes(table)] + [float(r.params) for r in results if r.params]
    xs_all = xs_all or [1.25e8, 1.75e11]  # no paper figures and no known sizes: GPT-3's range
    x_lo = min(xs_all + [UNKNOWN_SIZE_X if unknown else float("inf")]) / 1.8
    x_hi = max(xs_all) * 1.8
    ncols = min(4, len(tasks))
    nrows = -(-len(tasks) // ncols)
    panel_w, panel_h = 2.9, 2.05
    left, right, gap_w, gap_h = 0.55, 0.15, 0.45, 0.75
    width = left + right + ncols * panel_w + (ncols - 1) * gap_w
    # the legend (settings, the doubtful ring, one entry per model) in as many columns as the
    # width holds, and the bottom margin as tall as its rows: a narrow figure never cuts it off
    legend_cols = max(1, min(4, int(width // LEGEND_COL_INCHES)))
    legend_rows = -(-(len(settings) + 1 + len(results)) // legend_cols)
    bottom = 0.75 + 0.2 * legend_rows
    # the title wraps to the figure's width (one or two tasks make a narrow figure) and the
    # top margin grows with its lines, so it is never cut off
    title = "\n".join(textwrap.wrap(TITLE, max(30, int(width * TITLE_CHARS_PER_INCH))) + [TITLE_NOTE])
    top = 0.35 + 0.19 * title.count("\n") + 0.3
    height = top + bottom + nrows * panel_h + (nrows - 1) * gap_h
    # models of the same size would sit on top of each other: each gets its own slot around
    # that size (per setting), a marker's width or more apart
    same_size: dict[object, list[int]] = {}
    for j, r in enumerate(results):
        same_size.setdefault(r.params, []).append(j)
    slot_of = {j: (group.index(j), len(group)) for group in same_size.values() for j in group}
    with mpl.style.context("default"), mpl.rc_context({**RC, "font.size": 8}):
        # a fixed grid: the panel sizes are known, and the layout engine is slow on many panels
        fig = Figure(figsize=(width, height))
        axes = fig.subplots(
            nrows,
            ncols,
            squeeze=False,
            sharex=True,
            gridspec_kw={
                "left": left / width,
                "right": 1 - right / width,
                "top": 1 - top / height,
                "bottom": bottom / height,
                "wspace": gap_w / panel_w,
                "hspace": gap_h / panel_h,
            },
        )
        for p, task in enumerate(tasks):
            ax = axes[p // ncols][p % ncols]
            _panel(ax, task, by_task[task], results, settings, colors, slot_of)
            ax.set_xlim(x_lo, x_hi)
            if p % ncols == 0:
                ax.set_ylabel("accuracy (%)")
        ticks = [size_params(s) for s in gpt3_table.sizes(table)]
        labels = gpt3_table.sizes(table)
        if unknown:
            ticks, labels = [UNKNOWN_SIZE_X] + ticks, ["size ?"] + labels
        for k in range(nrows * ncols):
            ax = axes[k // ncols][k % ncols]
            if k >= len(tasks):
                ax.set_visible(False)
                continue
            ax.set_xticks(ticks, labels, rotation=60, ha="right", rotation_mode="anchor", fontsize=7)
            ax.xaxis.set_minor_locator(mpl.ticker.NullLocator())
            ax.tick_params(axis="x", labelbottom=True)
        handles = _legend_handles(settings, colors, names)
        fig.legend(
            handles=handles,
            loc="lower center",
            bbox_to_anchor=(0.5, 0.08 / height),
            ncols=min(len(handles), legend_cols),
            fontsize=8,
        )
        fig.suptitle(title, fontsize=9.5, y=1 - 0.1 / height, va="top")
        return fig


def _panel(ax, task: str, lines: list, results: Sequence, settings: list[str], colors: dict, slot_of: dict) -> None:
    """One task's panel: the paper's line per setting and each model's points, the y range, a ▲
    where an interval runs past the top, the SAT sample's caveat where it applies, the title."""
    # the y range follows the paper's figures and the models' scores, not the intervals:
    # a few-shot row of 2 items has an interval of half the axis and would flatten the
    # curves; an interval that runs past the top is cut there and marked with a ▲
    top_y = 8.0
    marks: list[tuple[float, float, str]] = []
    for ln in lines:
        color = colors[ln.setting]
        if ln.paper:
            top_y = max(top_y, _paper_line(ax, ln, color))
        for x, acc, hi in _model_points(ax, ln, results, settings, color, slot_of):
            top_y = max(top_y, acc)
            marks.append((x, hi, color))
    y_top = min(100.0, top_y * 1.15 + 1)
    ax.set_ylim(0, y_top)
    for x, hi, color in marks:
        if hi > y_top + 1e-9:
            ax.plot([x], [y_top], linestyle="none", marker="^", markersize=4.5, color=color, clip_on=False, zorder=4)
    first = lines[0]
    if any(gpt3_table.from_sat_sample(row) for ln in lines for row in ln.cells if row):
        # lower right: the paper's SAT curves run high there, the model's points sit left
        _sat_caveat(ax)
    ax.set_title(f"{first.code} — {task}", fontsize=8.5)
    ax.set_xscale("log")


def _paper_line(ax, ln, color: str) -> float:
    """The paper's accuracy over GPT-3 sizes for one setting (doubtful cells as hollow rings);
    returns its highest value."""
    px = [size_params(s) for s in ln.paper]
    py = [f.value for f in ln.paper.values()]
    ax.plot(px, py, color=color, linewidth=1.3, marker="o", markersize=2.5)
    dx = [x for x, f in zip(px, ln.paper.values()) if f.doubtful]
    dy = [f.value for f in ln.paper.values() if f.doubtful]
    if dx:  # doubtful cells: hollow rings
        ax.plot(
            dx,
            dy,
            linestyle="none",
            marker="o",
            markersize=5,
            markerfacecolor="white",
            markeredgecolor=color,
            markeredgewidth=1.0,
        )
    return max(py)


def _model_points(
    ax, ln, results: Sequence, settings: list[str], color: str, slot_of: dict
) -> list[tuple[float, float, float]]:
    """Each model's accuracy in ``ln``'s setting with its 95 % interval, beside the others of its
    size; returns (x, accuracy, interval top) of each point drawn."""
    drawn = []
    for j, (r, row) in enumerate(zip(results, ln.cells)):
        if row is None:
            continue
        acc, lo, hi = gpt3_table.interval(row)
        # settings and same-size models side by side around the model's size
        slot, group = slot_of[j]
        k, n_slots = settings.index(ln.setting) * group + slot, len(settings) * group
        shift = 10 ** (SLOT_DECADES * (k - (n_slots - 1) / 2))
        x = (r.params or UNKNOWN_SIZE_X) * shift
        ax.errorbar(
            [x],
            [acc],
            yerr=[[acc - lo], [hi - acc]],
            color=color,
            marker=MODEL_MARKERS[j % len(MODEL_MARKERS)],
            markersize=5,
            markeredgecolor="black",
            markeredgewidth=0.7,
            capsize=2,
            linewidth=1.2,
            zorder=3,
        )
        drawn.append((x, acc, hi))
    return drawn


def _sat_caveat(ax) -> None:
    """The SAT sample's caveat, lower right (the paper's SAT curves run high there, the points sit left)."""
    ax.text(
        0.97,
        0.04,
        SAT_SAMPLE_CAVEAT,
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=6.5,
        color="#8a1c00",
        gid="sat-sample-caveat",
        zorder=5,
        bbox={
            "boxstyle": "round,pad=0.25",
            "facecolor": "#fff7e6",
            "edgecolor": "#c77c02",
            "linewidth": 0.8,
        },
    )


def _legend_handles(settings: list[str], colors: dict, names: list[str]) -> list:
    """The legend: a line per setting, the doubtful ring, a marker per model."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            color=colors[s],
            linewidth=1.5,
            marker="o",
            markersize=3,
            label=f"GPT-3 {s}-shot" if s in SETTING_COLORS else f"GPT-3 ({s})",
        )
        for s in settings
    ]
    handles.append(
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o",
            markersize=5,
            markerfacecolor="white",
            markeredgecolor="0.3",
            label="doubtful paper cell",
        )
    )
    handles += [
        Line2D(
            [],
            [],
            linestyle="none",
            color="0.6",
            marker=MODEL_MARKERS[j % len(MODEL_MARKERS)],
            markeredgecolor="black",
            markersize=6,
            label=name,
        )
        for j, name in enumerate(names)
    ]
    return handles
