"""The report's paired comparison of models scored on the same items: for every pair, the
difference in accuracy (B − A, points) with its 95 % interval, the discordant items and the
exact McNemar p, Holm-corrected across the pairs; overall and per group of items (a depth, a
task and setting). The numbers are :mod:`synthprobe.metrics.compare`'s.

Two sources, both shown:

* a results file's own ``comparisons`` block (``synthprobe score`` with several models writes it);
* models from *different* files whose items the files keep, paired here when they were scored
  on the same data (the same items key: data SHA-256, settings; and the same item ids).

What is a benchmark's is its ``outcomes`` part in the registry (:mod:`synthprobe.registry`), a
module with ``BLOCKS`` (results block → title: the blocks it reads, and the titles of stored
comparisons of those blocks), ``METRIC`` and ``GROUP_BY`` (how a comparison of its models is
labelled), ``LEAD`` (its metric, for the section's lead) and ``outcomes(results) -> list of
Outcomes`` (each model's per-item right/wrong in one read results file). This module names no
benchmark: Deep Arithmark's part is :mod:`synthprobe.benchmarks.deeparithmark.report.outcomes`, the GPT-3
synthetic tasks' :mod:`synthprobe.benchmarks.gpt3.report.outcomes`.

A name that appears in more than one input file is shown with its file name, so two runs
called ``final`` are never merged or confused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from synthprobe import registry
from synthprobe.metrics.compare import compare_models
from synthprobe.report import html
from synthprobe.results import MINUS, Results, fmt_p
from synthprobe.templating import escape

KEY = "comparison"
TITLE = "Paired comparison"


@dataclass(frozen=True)
class Stored:
    """A results file's own ``comparisons.<benchmark>`` block."""

    benchmark: str
    source: str
    block: dict


@dataclass(frozen=True)
class Outcomes:
    """One model's per-item outcomes on one results block in one file."""

    #: the results block (its key under the model entry's ``results``)
    benchmark: str
    #: what must agree for two models to be paired (the data SHA-256; the settings that decide the items)
    items_key: tuple
    name: str
    source: str
    outcomes: dict = field(default_factory=dict)
    groups: dict | None = None
    #: what right/wrong means for these outcomes (the comparison's metric; default: the part's ``METRIC``)
    metric: str | None = None


@lru_cache(maxsize=1)
def _parts() -> tuple[tuple[str, ModuleType], ...]:
    """(benchmark name, ``outcomes`` part) of every benchmark of the registry that has one; read
    once per process, as the registry reads each benchmark once (every item of a report asks)."""
    found = (registry.get(name) for name in registry.names())
    return tuple((bench.name, bench.part("outcomes")) for bench in found if bench.has("outcomes"))


def _owner(block: str) -> tuple[str, ModuleType | None]:
    """The benchmark whose ``outcomes`` part reads the results block ``block``, and that part
    (the block's own name and None when no part does)."""
    return next(((name, part) for name, part in _parts() if block in part.BLOCKS), (block, None))


def _title(block: str) -> str:
    part = _owner(block)[1]
    return part.BLOCKS[block] if part is not None else block


_NUM = (int, float)
#: the fields of a pair (and of each of its groups) the section shows, with their types
_PAIR_KEYS = {
    "n": (int,),
    "a_accuracy": _NUM,
    "b_accuracy": _NUM,
    "delta": _NUM,
    "a_only": (int,),
    "b_only": (int,),
    "p_mcnemar": _NUM,
}


def _check_stats(r, s: Any, where: str) -> None:
    if not isinstance(s, dict):
        raise r.fail(where, f"expected an object, got {type(s).__name__}")
    for key, types in _PAIR_KEYS.items():
        v = s.get(key)
        if isinstance(v, bool) or not isinstance(v, types):
            raise r.fail(f"{where}.{key}", f"missing or of the wrong type: {v!r}")
    ci = s.get("ci95")
    if ci is not None and not (isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, _NUM) for x in ci)):
        raise r.fail(f"{where}.ci95", f"expected [low, high], got {ci!r}")


def _checked(results: Results, benchmark: str, block: Any) -> dict:
    """A stored ``comparisons.<benchmark>`` block, every field the section shows type-checked."""
    r = results.reader
    where = f"comparisons.{benchmark}"
    if not isinstance(block, dict):
        raise r.fail(where, f"expected an object, got {type(block).__name__}")
    pairs = r.get(block, "pairs", where, list)
    r.get(block, "models", where, list)
    for i, p in enumerate(pairs):
        here = f"{where}.pairs[{i}]"
        _check_stats(r, p, here)
        for key in ("a", "b"):
            r.get(p, key, here, str)
        groups = r.get(p, "groups", here, dict, required=False) or {}
        for g, s in groups.items():
            _check_stats(r, s, f"{here}.groups.{g}")
    return block


def parse(results: Results) -> list:
    """The file's stored comparison blocks (checked, located errors) and every model's per-item
    outcomes."""
    raw = getattr(results, "comparisons", None) or {}
    doc_blocks = [Stored(b, str(results.path), _checked(results, b, block)) for b, block in raw.items()]
    return doc_blocks + [o for _, part in _parts() for o in part.outcomes(results)]


def _family(block: str) -> str:
    """Whose model names are told apart together: the benchmark that reads the block."""
    return _owner(block)[0]


def display_names(items: Sequence) -> dict[tuple[str, str, str], str]:
    """(benchmark family, name, source) → the name shown: with the file's name when the name is in
    several files for the same benchmark (with its path when the file names agree too)."""
    keys = {(_family(it.benchmark), n, s) for it in items for n, s in _names(it)}
    sources: dict[tuple[str, str], set[str]] = {}
    for f, n, s in keys:
        sources.setdefault((f, n), set()).add(s)
    out = {}
    for f, n, s in keys:
        others = sources[(f, n)]
        if len(others) == 1:
            out[(f, n, s)] = n
        else:
            files = [Path(x).name for x in others]
            out[(f, n, s)] = f"{n} ({Path(s).name if files.count(Path(s).name) == 1 else s})"
    return out


def _names(item) -> list[tuple[str, str]]:
    if isinstance(item, Stored):
        return [(str(n), item.source) for n in item.block.get("models", [])]
    return [(item.name, item.source)]


def cross_file(items: Sequence) -> list[tuple[str, dict, dict[str, str]]]:
    """Comparisons of models from different files on the same items: (benchmark, block, name
    → source) per set of items."""
    shown = display_names(items)
    sets: dict[tuple, list[Outcomes]] = {}
    for it in items:
        if isinstance(it, Outcomes):
            sets.setdefault((it.benchmark, it.items_key), []).append(it)
    out = []
    for (benchmark, _), models in sets.items():
        if len({m.source for m in models}) < 2:
            continue
        names = {shown[(_family(benchmark), m.name, m.source)]: m for m in models}
        groups: dict = {}
        for m in models:
            groups.update(m.groups or {})
        source_of = {n: m.source for n, m in names.items()}
        part = _owner(benchmark)[1]
        block = compare_models(
            {n: m.outcomes for n, m in names.items()},
            groups if all(m.groups for m in models) else None,
            metric=models[0].metric or part.METRIC,
            group_by=part.GROUP_BY,
            keep=lambda a, b: source_of[a] != source_of[b],  # noqa: B023
        )
        if block["pairs"] or block.get("not_paired"):
            out.append((benchmark, block, source_of))
    return out


def _delta(x: float | None) -> str:
    return "—" if x is None else f"{x:+.2f}".replace("-", MINUS)


def _ci(ci) -> str:
    return "—" if not ci else f"[{_delta(ci[0])}, {_delta(ci[1])}]"


def rows(block: dict, rename=lambda n: n) -> list[list[str]]:
    """One row per pair (then one per group of it): B − A, group, n, A %, B %, Δ, 95 % CI,
    A only / B only, McNemar p, Holm p."""
    out = []
    for p in block["pairs"]:
        label = f"{rename(p['b'])} − {rename(p['a'])}" + (" (the same weights)" if p.get("same_weights") else "")
        for group, s in [("all", p), *((g, s) for g, s in (p.get("groups") or {}).items())]:
            out.append(
                [
                    label if group == "all" else "",
                    group if group == "all" else (f"depth {group}" if block.get("group_by") == "depth" else group),
                    f"{s['n']:,}",
                    f"{s['a_accuracy']:.1f}",
                    f"{s['b_accuracy']:.1f}",
                    _delta(s["delta"]),
                    _ci(s.get("ci95")),
                    f"{s['a_only']} / {s['b_only']}",
                    fmt_p(s["p_mcnemar"]),
                    fmt_p(s.get("p_holm")),
                ]
            )
    return out


HEAD = ["B − A", "items", "n", "A %", "B %", "Δ (points)", "95 % CI", "A only / B only", "McNemar p", "Holm p"]


def lead() -> str:
    """The section's first paragraph, each benchmark's metric named (its part's ``LEAD``)."""
    metrics = ", ".join(part.LEAD for _, part in _parts())
    return (
        "Paired tests of models scored on the same items. Δ = B − A in accuracy points"
        + (f" ({metrics})" if metrics else "")
        + " with its 95 % interval (Newcombe's score interval for paired "
        "proportions); <i>A only / B only</i> counts the items only A (only B) got right; the exact two-sided "
        "McNemar test asks whether those two counts differ by more than chance; <i>Holm p</i> corrects it for "
        "the number of pairs (overall, and within each depth or task). A pair is tested only on identical "
        "items; a name in several files carries its file's name."
    )


def _blocks(items: Sequence) -> list[tuple[str, dict, Any, str]]:
    """(heading, comparison block, name shown for a block's name, where from) for every stored
    block and every cross-file comparison."""
    shown = display_names(items)
    out = []
    for it in items:
        if isinstance(it, Stored):
            fam = _family(it.benchmark)
            out.append(
                (
                    f"{_title(it.benchmark)}: the models of one run",
                    it.block,
                    lambda n, s=it.source, f=fam: shown.get((f, n, s), n),
                    f"from {it.source}",
                )
            )
    for benchmark, block, source_of in cross_file(items):
        not_paired = "; ".join(f"{q['a']} / {q['b']}: {q['reason']}" for q in block.get("not_paired", []))
        out.append(
            (
                f"{_title(benchmark)}: models from different files",
                block,
                lambda n: n,
                "from "
                + ", ".join(sorted(set(source_of.values())))
                + (f"; not paired: {not_paired}" if not_paired else ""),
            )
        )
    return [b for b in out if b[1].get("pairs")]


def _tables(items: Sequence) -> list[tuple[str, list[list[str]], str]]:
    """(heading, rows, where from) for every stored block and every cross-file comparison."""
    out = [(heading, rows(block, rename), where) for heading, block, rename, where in _blocks(items)]
    return [t for t in out if t[1]]


#: a pair's label in the differences plot is wrapped at this many characters
LABEL_WRAP = 44


def figure(items: Sequence) -> bytes | None:
    """The differences plot: per pair, Δ = B − A in points with its 95 % interval, overall (bold)
    and per group (depth or task) below it; a line at 0. None when nothing was paired."""
    import textwrap

    import matplotlib as mpl
    import matplotlib.style

    from synthprobe.report.figures import RC, new_figure, png_bytes

    lines: list[tuple[str, float, list | None, bool]] = []
    pairs = [(block, rename, p) for _, block, rename, _ in _blocks(items) for p in block["pairs"]]
    # one pair: its names in the title (long checkpoint names get the whole width), "all items" on
    # its line; several: each pair's line names it
    title = "Paired differences on the same items"
    if len(pairs) == 1:
        _, rename, p = pairs[0]
        title += "\n" + "\n".join(
            textwrap.wrap(f"B: {rename(p['b'])}", 2 * LABEL_WRAP)
            + textwrap.wrap(f"A: {rename(p['a'])}", 2 * LABEL_WRAP)
        )
    for block, rename, p in pairs:
        label = (
            f"all items (n {p['n']:,})"
            if len(pairs) == 1
            else textwrap.fill(f"{rename(p['b'])} − {rename(p['a'])}", LABEL_WRAP)
        )
        lines.append((label, p["delta"], p.get("ci95"), True))
        for g, st in (p.get("groups") or {}).items():
            name = f"depth {g}" if block.get("group_by") == "depth" else str(g)
            lines.append((f"{name} (n {st['n']:,})", st["delta"], st.get("ci95"), False))
    if not lines:
        return None
    height = 1.1 + 0.16 * title.count("\n") + sum(0.22 * (text.count("\n") + 1) + 0.06 for text, *_ in lines)
    with mpl.style.context("default"), mpl.rc_context({**RC, "axes.grid": False}):
        fig = new_figure(8.0, max(2.4, height))
        ax = fig.add_subplot()
        ys = list(range(len(lines)))
        for y, (_, delta, ci, overall) in zip(ys, lines):
            color = "#2a5db0" if overall else "0.35"
            err = None if not ci else [[delta - ci[0]], [ci[1] - delta]]
            ax.errorbar(
                [delta],
                [y],
                xerr=err,
                fmt="o" if overall else "s",
                color=color,
                markersize=6 if overall else 4,
                capsize=3,
                linewidth=1.6 if overall else 1.0,
            )
        ax.axvline(0, color="0.35", linestyle="--", linewidth=1.0)
        ax.set_yticks(ys, [text for text, *_ in lines])
        for tick, (*_, overall) in zip(ax.get_yticklabels(), lines):
            tick.set_fontweight("bold" if overall else "normal")
        ax.invert_yaxis()
        ax.set_xlabel("Δ = B − A (accuracy points), 95 % interval")
        ax.set_title(title, loc="left", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        return png_bytes(fig)


def tables(items: Sequence) -> dict[str, tuple[list[str], list[list[Any]]]]:
    """The paired comparison as a paper-ready table (``report --table``): one row per pair and
    group, numbers rather than formatted cells."""
    head = [
        "comparison",
        "B - A",
        "items",
        "n",
        "A %",
        "B %",
        "Delta (points)",
        "CI low",
        "CI high",
        "A only",
        "B only",
        "McNemar p",
        "Holm p",
    ]
    body: list[list[Any]] = []
    for heading, block, rename, _ in _blocks(items):
        for p in block["pairs"]:
            label = f"{rename(p['b'])} - {rename(p['a'])}"
            for group, st in [("all", p), *((g, st) for g, st in (p.get("groups") or {}).items())]:
                ci = st.get("ci95") or [None, None]
                body.append(
                    [
                        heading,
                        label,
                        group if group == "all" or block.get("group_by") != "depth" else f"depth {group}",
                        st["n"],
                        round(st["a_accuracy"], 2),
                        round(st["b_accuracy"], 2),
                        round(st["delta"], 2),
                        None if ci[0] is None else round(ci[0], 2),
                        None if ci[1] is None else round(ci[1], 2),
                        st["a_only"],
                        st["b_only"],
                        st["p_mcnemar"],
                        st.get("p_holm"),
                    ]
                )
    return {"paired_comparison": (head, body)} if body else {}


def section(items: Sequence, png: bytes | None = None) -> str:
    parts = [f"<p>{lead()}</p>"]
    if png is not None:
        parts.append(
            html.img(
                png,
                "paired differences with 95 % intervals",
                "Δ = B − A in accuracy points per pair (bold: all items) and per group, with its "
                "95 % interval; a pair whose interval crosses the dashed line at 0 is not told "
                "apart on these items.",
            )
        )
    for heading, body, where in _tables(items):
        parts.append(
            f"<h3>{escape(heading)}</h3>" + html.table(HEAD, body, left=2) + f'<p class="note">{escape(where)}</p>'
        )
    if len(parts) == 1:
        parts.append(
            '<p class="note">No two models here were scored on the same items with their per-item '
            "outcomes kept (score them in one run, or with --save-predictions).</p>"
        )
    return "".join(parts)


def summary(items: Sequence) -> str | None:
    n = sum(len(t[1]) and sum(1 for r in t[1] if r[0]) for t in _tables(items))
    return f"{n} paired comparison{'s' if n != 1 else ''}" if n else None


def markdown_body(items: Sequence) -> str:
    lines = []
    for heading, body, where in _tables(items):
        lines += [
            f"### {heading}",
            "",
            "| " + " | ".join(HEAD) + " |",
            "| " + " | ".join(["---", "---"] + ["---:"] * (len(HEAD) - 2)) + " |",
        ]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
        lines += ["", where, ""]
    return "\n".join(lines) + ("\n" if lines else "")


def present(items: Sequence) -> bool:
    return bool(_tables(items))
