"""The per-step probe's figure (drawn on :mod:`synthprobe.report.figures`): per model, the
chain accuracy by step × depth, isolation against chain per operation, and where items first
break."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.style

from synthprobe.report.figures import CHANCE_STYLE, RC, new_figure, png_bytes

CHANCE = 0.25


def _heatmap(ax, s: dict, method: str) -> None:
    rows = s["by_step_depth"]
    depths = sorted({r["depth"] for r in rows})
    steps = sorted({r["step"] for r in rows})
    grid = [[float("nan")] * len(steps) for _ in depths]
    for r in rows:
        c = r["chain"][method]
        if c["n"]:
            grid[depths.index(r["depth"])][steps.index(r["step"])] = c["correct"] / c["n"]
    im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:
                ax.text(
                    j, i, f"{100 * v:.0f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black"
                )
    ax.set_xticks(range(len(steps)), [str(x) for x in steps])
    ax.set_yticks(range(len(depths)), [f"d{d}" for d in depths])
    ax.set_xlabel("step")
    ax.set_ylabel("depth")
    ax.grid(False)
    ax.set_title("chain accuracy % (teacher-forced)")
    ax.figure.colorbar(im, ax=ax, shrink=0.8)


def _gap(ax, s: dict, method: str) -> None:
    rows = s["gap_by_operation"]
    names = [r["operation"] for r in rows]
    for k, (mode, color) in enumerate((("isolation", "tab:blue"), ("chain", "tab:orange"))):
        xs, ys, lo, hi = [], [], [], []
        for i, r in enumerate(rows):
            c = r[method][mode]
            if not c["n"]:
                continue
            acc = c["correct"] / c["n"]
            xs.append(i + (k - 0.5) * 0.36)
            ys.append(acc)
            lo.append(acc - c["ci95"][0])
            hi.append(c["ci95"][1] - acc)
        ax.bar(xs, ys, width=0.36, color=color, label=mode, yerr=[lo, hi], capsize=2, error_kw={"elinewidth": 0.8})
    ax.axhline(CHANCE, **CHANCE_STYLE)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy (exact 95 % CI)")
    ax.set_title("isolation vs chain per operation")
    ax.legend(fontsize=7)


def _first_broken(ax, s: dict, method: str) -> None:
    per = s["first_broken"][method]
    depths = sorted(per, key=int)
    keys = [str(k) for k in range(1, 1 + max((int(d) for d in depths), default=1))] + ["none"]
    cmap = mpl.colormaps["tab10"]
    bottom = [0.0] * len(depths)
    for j, key in enumerate(keys):
        vals = [per[d]["counts"].get(key, 0) / max(per[d]["items"], 1) for d in depths]
        ax.bar(
            [f"d{d}" for d in depths],
            vals,
            bottom=bottom,
            label="never" if key == "none" else f"step {key}",
            color="0.8" if key == "none" else cmap(j),
        )
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of items")
    ax.set_title("first broken step")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def steps_figure(results: Sequence, method: str = "choice"):
    if not results:
        return None
    fig = new_figure(13, 3.6 * len(results))
    axes = fig.subplots(len(results), 3, squeeze=False)
    for row, res in zip(axes, results):
        s = res.summary
        _heatmap(row[0], s, method)
        _gap(row[1], s, method)
        _first_broken(row[2], s, method)
        row[0].set_title(f"{res.model}\nchain accuracy % (teacher-forced)", fontsize=9)
    return fig


def steps_plots(results: Sequence) -> bytes | None:
    with mpl.style.context("default"), mpl.rc_context(RC):
        fig = steps_figure(results)
        return None if fig is None else png_bytes(fig)
