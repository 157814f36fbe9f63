"""The twins section's figures (drawn on :mod:`synthprobe.report.figures`): ``twins.png``, per
model and protocol the paired difference (twin − original) with its 95 % interval per kind and
per kind × depth; ``twins_uptake.png``, the irrelevant-number uptake against 1/3."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.style

from synthprobe.report.figures import CHANCE_STYLE, RC, new_figure, palette, png_bytes, side_legend

#: the uptake figure's name (``twins_uptake.png``)
UPTAKE = "twins_uptake"
UPTAKE_KIND = "irrelevant_clause"


def _panels(results: Sequence) -> list[tuple[str, dict]]:
    """``(title, {kind: CELL})`` per model and protocol."""
    return [(f"{r.model} · {protocol}", cells) for r in results for protocol, cells in r.summary.items()]


def _errorbar(ax, x, c: dict, color, **kw) -> None:
    d = c["difference"]
    lo, hi = c["ci"]
    err = [[100 * max(0.0, d - lo)], [100 * max(0.0, hi - d)]]
    ax.errorbar([x], [100 * d], yerr=err, fmt="o", color=color, capsize=3, ms=5, **kw)


def _by_kind(ax, title: str, cells: dict, colors: dict) -> None:
    kinds = list(cells)
    for i, kind in enumerate(kinds):
        c = cells[kind]
        if c.get("n") and c.get("difference") is not None:
            _errorbar(ax, i, c, colors[kind])
    ax.axhline(0, **CHANCE_STYLE)
    ax.set_xticks(range(len(kinds)), kinds, rotation=20, ha="right")
    ax.set_xlim(-0.6, len(kinds) - 0.4)
    ax.set_ylabel("twin − original, points (95 % CI)")
    ax.set_title(f"{title}\nper kind", fontsize=9)


def _by_depth(ax, cells: dict, colors: dict) -> None:
    kinds = list(cells)
    depths = sorted({int(d) for c in cells.values() for d in c.get("by_depth", {})})
    width = 0.7 / max(len(kinds), 1)
    for k, kind in enumerate(kinds):
        first = True
        for j, d in enumerate(depths):
            c = cells[kind].get("by_depth", {}).get(str(d))
            if c and c.get("n") and c.get("difference") is not None:
                _errorbar(ax, j + (k - (len(kinds) - 1) / 2) * width, c, colors[kind], label=kind if first else None)
                first = False
    ax.axhline(0, **CHANCE_STYLE)
    ax.set_xlim(-0.6, len(depths) - 0.4)
    ax.set_xticks(range(len(depths)), [f"d{d}" for d in depths])
    ax.set_xlabel("the original's depth")
    ax.set_title("per kind and depth", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        side_legend(ax)


def difference_figure(results: Sequence):
    panels = _panels(results)
    if not panels:
        return None
    kinds = list(dict.fromkeys(k for _, cells in panels for k in cells))
    colors = dict(zip(kinds, palette(len(kinds))))
    fig = new_figure(11, 3.4 * len(panels))
    axes = fig.subplots(len(panels), 2, squeeze=False, width_ratios=[1, 1.6])
    for row, (title, cells) in zip(axes, panels):
        _by_kind(row[0], title, cells, colors)
        _by_depth(row[1], cells, colors)
    return fig


def has_uptake(results: Sequence) -> bool:
    return any((cells.get(UPTAKE_KIND) or {}).get("uptake", {}).get("wrong_picks") for _, cells in _panels(results))


def uptake_figure(results: Sequence):
    from synthprobe.benchmarks.deeparithmark.twins.metrics import UPTAKE_EXPECTED, wilson

    rows = [(t, c[UPTAKE_KIND]["uptake"]) for t, c in _panels(results) if UPTAKE_KIND in c]
    rows = [(t, u) for t, u in rows if u.get("wrong_picks")]
    if not rows:
        return None
    fig = new_figure(max(4.5, 1.1 * len(rows) + 2.5), 3.6)
    ax = fig.subplots()
    colors = palette(len(rows))
    for i, (_title, u) in enumerate(rows):
        lo, hi = wilson(u["irrelevant"], u["wrong_picks"])
        share = u["irrelevant"] / u["wrong_picks"]
        ax.bar(
            i,
            100 * share,
            color=colors[i],
            yerr=[[100 * max(0.0, share - lo)], [100 * max(0.0, hi - share)]],
            capsize=3,
            error_kw={"elinewidth": 0.8},
        )
    ax.axhline(100 * UPTAKE_EXPECTED, **CHANCE_STYLE)
    labels = [f"{t}\n{u['irrelevant']}/{u['wrong_picks']} wrong picks" for t, u in rows]
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right")
    ax.set_ylim(0, 100)
    ax.set_ylabel("irrelevant-number picks, % of wrong picks")
    ax.set_title("irrelevant_clause: uptake (dashed: 1/3)")
    return fig


def _png(make, results: Sequence) -> bytes | None:
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = make(results)
        return None if fig is None else png_bytes(fig)


def difference_plot(results: Sequence) -> bytes | None:
    return _png(difference_figure, results)


def uptake_plot(results: Sequence) -> bytes | None:
    return _png(uptake_figure, results)


__all__ = ["UPTAKE", "difference_plot", "has_uptake", "uptake_plot"]
