"""The report's plotting base: matplotlib's Agg canvas into deterministic PNG bytes.

No pyplot and no global backend switch: each figure is a :class:`matplotlib.figure.Figure`
drawn on its own Agg canvas, inside matplotlib's default style (a user's matplotlibrc does
not leak in). PNGs carry no ``Software`` or time stamp, so the same results give the same
bytes on every run. The sections' figures (:mod:`synthprobe.benchmarks.deeparithmark.report.figures`,
:mod:`synthprobe.benchmarks.gpt3.report.figures`) draw on this.
"""

from __future__ import annotations

import io

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 110

RC = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "svg.hashsalt": "synthprobe",
    "legend.frameon": False,
}

CHANCE_STYLE = {"color": "0.35", "linestyle": "--", "linewidth": 1.0}


def palette(n: int) -> list:
    cmap = mpl.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def luminance(color) -> float:
    """WCAG relative luminance of a matplotlib colour."""
    from matplotlib.colors import to_rgb

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(c) for c in to_rgb(color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG contrast ratio of two colours (1 = the same, 21 = black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_on(color) -> str:
    """Black or white, whichever reads better on ``color`` (for a label drawn on a bar)."""
    return "black" if contrast(color, "black") >= contrast(color, "white") else "white"


def png_bytes(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def side_legend(ax) -> None:
    """Beside the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
