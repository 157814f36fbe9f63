"""The twins section of the report page and of leaderboard.md: per model and protocol, one row
per twin kind (pairs, original and twin accuracy, the paired difference with its 95 % interval,
McNemar and Holm p, the four consistency counts, the irrelevant-number uptake), then the
difference and McNemar p per depth and per family. Every percentage goes through
:func:`synthprobe.results.fmt_pct` / :func:`~synthprobe.results.fmt_pct_ci`, every p through
:func:`~synthprobe.results.fmt_p`; HTML through the report's autoescaping table macro."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.deeparithmark.twins.metrics import answers_read
from synthprobe.report import html
from synthprobe.report.format import DASH, fmt_p, fmt_pct, fmt_pct_ci
from synthprobe.templating import escape

DIGITS = 1
HEAD = [
    "Kind",
    "Pairs",
    "Original",
    "Twin",
    "Twin − original [95 % CI]",
    "McNemar p",
    "Holm p",
    "Both right",
    "Both wrong",
    "Right → wrong",
    "Wrong → right",
    "Uptake of the irrelevant number",
]
INTRO = (
    "Each original item is paired with its perturbation twins (built by `synthprobe build twins`, scored by "
    "`synthprobe probe twins`) and both are scored under the same protocol: **irrelevant_clause** adds a "
    "sentence with a number that plays no part (same answer), **one_step_more** one more dependent operation "
    "(depth + 1, new answer), **reordered** tells the same operations in another order, **unit_change** the "
    "same quantities in another unit. Twin − original is the paired difference in accuracy with its 95 % "
    "interval; McNemar p is the exact two-sided test on the pairs that changed, Holm p adjusts it across the "
    "kinds of one protocol. The uptake is the share of the twins' wrong picks that are the irrelevant-number "
    "decoy, against the 1/3 a uniform wrong pick gives (one-sided exact binomial p). The A/A check, when "
    "run, pairs the originals with the items of an independent build in their place: nothing changed, so "
    "its McNemar test should reject no more often than stated."
)


def signed(x: float | None, ci: Sequence[float] | None = None) -> str:
    """A difference in percent, signed, with its interval when given: ``+3.3 % [−1.2, 7.9]``."""
    if x is None:
        return DASH
    sign = "+" if x > 0 else ""
    return sign + (fmt_pct_ci(x, ci, DIGITS) if ci is not None else fmt_pct(x, DIGITS, " %"))


def uptake_text(cell: dict) -> str:
    up = cell.get("uptake")
    if not up or not up["wrong_picks"]:
        return DASH
    return (
        f"{up['irrelevant']}/{up['wrong_picks']} = {fmt_pct(up['share'], DIGITS, ' %')} "
        f"vs {fmt_pct(up['expected'], DIGITS, ' %')} (p {fmt_p(up['p'])})"
    )


def kind_row(kind: str, c: dict) -> list[str]:
    return [
        kind,
        str(c["n"]),
        fmt_pct(c.get("original"), DIGITS, " %"),
        fmt_pct(c.get("twin"), DIGITS, " %"),
        signed(c.get("difference"), c.get("ci")),
        fmt_p(c.get("p_mcnemar")),
        fmt_p(c.get("p_holm")),
        str(c["both_right"]),
        str(c["both_wrong"]),
        str(c["right_to_wrong"]),
        str(c["wrong_to_right"]),
        uptake_text(c),
    ]


def compact(c: dict | None) -> str:
    """A by-depth or by-family cell: the difference, McNemar p and the pairs."""
    if not c or not c.get("n"):
        return DASH
    return f"{signed(c.get('difference'))} (p {fmt_p(c.get('p_mcnemar'))}, n={c['n']})"


def _keys(cells: dict, group: str) -> list[str]:
    """The depths (numeric order) or families (name order) any kind of one protocol has."""
    keys = {k for c in cells.values() for k in c.get(group, {})}
    return sorted(keys, key=lambda k: (0, int(k), "") if k.lstrip("-").isdigit() else (1, 0, k))


def breakdown(cells: dict, group: str) -> tuple[list[str], list[list[str]]]:
    """``(head, rows)``: one row per depth or family, one column per kind."""
    label = "Depth" if group == "by_depth" else "Family"
    head = [label] + list(cells)
    rows = [
        [f"d{k}" if group == "by_depth" else k] + [compact(c.get(group, {}).get(k)) for c in cells.values()]
        for k in _keys(cells, group)
    ]
    return head, rows


def metric_line(r, protocol: str) -> str:
    """What the accuracies of one protocol count: right picks over the pairs, the pick being
    what the block's settings say (``probe twins``'s PICK)."""
    pick = r.block.get("settings", {}).get("pick", {}).get(protocol)
    return f"Accuracy: right picks over the pairs of each row (n = Pairs); the pick is {pick}." if pick else ""


def _protocols(r) -> list[tuple[str, dict]]:
    return list(r.summary.items())


def kind_rows(r, protocol: str, cells: dict) -> list[list[str]]:
    """One row per kind, then the A/A check's (``probe twins --aa``) when the block has one."""
    rows = [kind_row(k, c) for k, c in cells.items()]
    aa = r.block.get("aa")
    if aa and protocol in aa["summary"]:
        rows.append(kind_row(f"A/A check (seed {aa['seed']})", aa["summary"][protocol]["aa"]))
    return rows


def section(results: Sequence, figures: dict) -> str:
    from synthprobe.benchmarks.deeparithmark.twins.report.figures import UPTAKE

    parts = [f"<p>{_intro_html()}</p>"]
    png = figures.get("twins")
    if png:
        parts.append(
            html.img(
                png,
                "Perturbation twins: twin − original accuracy per kind and per depth",
                "Per model and protocol: the paired difference in accuracy (twin − original) with its 95 % "
                "interval, per twin kind (left) and per kind and the original's depth (right); the dashed "
                "line is no difference.",
            )
        )
    png = figures.get(UPTAKE)
    if png:
        parts.append(
            html.img(
                png,
                "Irrelevant-number uptake",
                "Per model and protocol: the share of the irrelevant_clause twins' wrong picks that are the "
                "irrelevant-number decoy, with its 95 % Wilson interval; the dashed line is 1/3, a uniform "
                "choice among the three decoys.",
            )
        )
    for r in results:
        originals = r.block.get("originals", {})
        parts.append(f"<h3>{escape(r.model)}</h3>")
        parts.append(f'<p class="note">{originals.get("n")} originals scored · <code>{escape(r.source)}</code></p>')
        for protocol, cells in _protocols(r):
            parts.append(f"<h4>{escape(r.model)} · {escape(protocol)}</h4>")
            if metric_line(r, protocol):
                parts.append(f'<p class="note">{escape(metric_line(r, protocol))}</p>')
            parts.append(html.table(HEAD, kind_rows(r, protocol, cells), left=1))
            for line in answers_read([run for run in r.block.get("runs", []) if run["protocol"] == protocol]):
                parts.append(f'<p class="note">{escape(line)}</p>')
            for group, title in (("by_depth", "by the original's depth"), ("by_family", "by family")):
                head, rows = breakdown(cells, group)
                if rows:
                    parts.append(f'<p class="note">Twin − original {title} (McNemar p, pairs)</p>')
                    parts.append(html.table(head, rows, left=1))
    return "".join(parts)


def _intro_html() -> str:
    """The intro with its **bold** and `code` spans as HTML (every other character escaped)."""
    import re

    text = str(escape(INTRO))
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def settings_table(results: Sequence) -> str:
    keys = html.setting_keys(results)
    head = ["Model"] + keys
    body = [[r.model] + [DASH if r.settings.get(k) is None else str(r.settings.get(k)) for k in keys] for r in results]
    return html.table(head, body, left=len(head))


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(x: str) -> str:
        return x.replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, head)) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def markdown_body(results: Sequence) -> str:
    """Per model and protocol, the kinds' table and the difference per depth and per family."""
    out = [INTRO + "\n"]
    for r in results:
        for protocol, cells in _protocols(r):
            out.append(f"### {r.model} · {protocol}\n")
            if metric_line(r, protocol):
                out.append(metric_line(r, protocol) + "\n")
            out.append(_md_table(HEAD, kind_rows(r, protocol, cells)))
            for line in answers_read([run for run in r.block.get("runs", []) if run["protocol"] == protocol]):
                out.append(line + "\n")
            for group, title in (("by_depth", "by the original's depth"), ("by_family", "by family")):
                head, rows = breakdown(cells, group)
                if rows:
                    out.append(f"Twin − original {title} (McNemar p, pairs):\n")
                    out.append(_md_table(head, rows))
    return "\n".join(out)


__all__ = ["HEAD", "breakdown", "compact", "kind_row", "markdown_body", "section", "settings_table", "signed"]
