"""The per-step probe's section of the report page: figure, step × depth table, operation ×
operand-digits table, first broken step, the isolation-vs-chain gap and the balance audit."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.report import html
from synthprobe.report.format import DASH, fmt_pct
from synthprobe.templating import escape

METHOD_NAMES = {"choice": "log-likelihood choice", "generation": "greedy generation, exact match"}


def _pct(c: dict | None) -> str:
    if not c or not c.get("n"):
        return DASH
    lo, hi = (fmt_pct(x, 0) for x in c["ci95"])
    return f'<b>{fmt_pct(c["correct"], 0, of=c["n"])}</b> <span class="note">[{lo}, {hi}] n={c["n"]}</span>'


def _step_depth(s: dict) -> str:
    head = ["Depth", "Step"] + [f"{mode} · {m}" for m in METHOD_NAMES for mode in ("isolation", "chain")]
    body = [
        [f"d{r['depth']}", str(r["step"])] + [_pct(r[mode][m]) for m in METHOD_NAMES for mode in ("isolation", "chain")]
        for r in s["by_step_depth"]
    ]
    return html.table(head, body, left=2, raw=True)


def _op_digits(s: dict) -> str:
    head = ["Operation", "Digits"] + [f"{mode} · {m}" for m in METHOD_NAMES for mode in ("isolation", "chain")]
    body = [
        [escape(r["operation"]), str(r["digits"])]
        + [_pct(r[mode][m]) for m in METHOD_NAMES for mode in ("isolation", "chain")]
        for r in s["by_operation_digits"]
    ]
    return html.table(head, body, left=2, raw=True)


def _first_broken(s: dict) -> str:
    per = s["first_broken"]["choice"]
    depths = sorted(per, key=int)
    width = max((int(d) for d in depths), default=1)
    head = ["Depth", "Items"] + [f"step {k}" for k in range(1, width + 1)] + ["never"]
    body = [
        [f"d{d}", str(per[d]["items"])]
        + [str(per[d]["counts"].get(str(k), DASH if k > int(d) else 0)) for k in range(1, width + 1)]
        + [str(per[d]["counts"].get("none", 0))]
        for d in depths
    ]
    return html.table(head, body, left=1)


def _gap(s: dict) -> str:
    head = [
        "Operation",
        "Method",
        "Isolation",
        "Chain",
        "Chain − isolation",
        "Only isolation right",
        "Only chain right",
        "McNemar p",
    ]
    body = []
    rows = [("all", s["gap"])] + [(r["operation"], r) for r in s["gap_by_operation"]]
    for name, r in rows:
        for m in METHOD_NAMES:
            g = r[m]
            diff = DASH if g.get("difference") is None else f"{100 * g['difference']:+.1f}"
            p = DASH if g.get("p_mcnemar") is None else f"{g['p_mcnemar']:.2g}"
            body.append(
                [
                    escape(name),
                    escape(m),
                    _pct(g["isolation"]),
                    _pct(g["chain"]),
                    diff,
                    str(g["isolation_only"]),
                    str(g["chain_only"]),
                    p,
                ]
            )
    return html.table(head, body, left=2, raw=True)


def _audit(block: dict) -> str:
    rows = block.get("audit") or []
    if not rows:
        return ""
    head = ["Shortcut strategy on the probes' options", "Correct", "Score", "At chance"]
    body = [
        [
            escape(a["strategy"]),
            f"{a['correct']}/{a['n']}",
            f"{a['percent']:.2f} %",
            "yes" if a["within_chance"] else "no",
        ]
        for a in rows
    ]
    return html.table(head, body, left=1, raw=True)


def section(results: Sequence, figure: bytes | None) -> str:
    parts = [
        "<p>Every solution step of every item, asked twice with the same four options: the operation "
        "<b>in isolation</b> (<code>a op b =</code>) and <b>in the chain</b>, teacher-forced (the problem, "
        "the earlier steps with their correct results, then the step up to <code>=</code>). Wrong options "
        "are values of named mistakes at that step. Scored by the option with the highest log-likelihood "
        "and by greedy generation with exact match; chance is 25 % for the choice. Cells: accuracy % "
        "[exact Clopper–Pearson 95 % interval] and the number of probes. A model that is right in "
        "isolation but wrong in the chain breaks on composition, not on the arithmetic.</p>"
    ]
    if figure:
        parts.append(
            html.img(
                figure,
                "Per-step probe: step × depth, isolation vs chain, first broken step",
                "Per model: chain accuracy by step and depth (log-likelihood choice); isolation "
                "against chain accuracy per operation with exact 95 % intervals (dashed: chance); "
                "the share of items whose first wrong chain step is step k, per depth.",
            )
        )
    for r in results:
        s = r.summary
        parts.append(f"<h3>{escape(r.model)}</h3>")
        parts.append(
            f'<p class="note">{s["probes"]} probes from {s["items"]} items · <code>{escape(r.source)}</code></p>'
        )
        parts.append("<h3>Step × depth</h3>" + _step_depth(s))
        parts.append("<h3>Operation × operand digits</h3>" + _op_digits(s))
        parts.append("<h3>First broken step (chain, log-likelihood choice)</h3>" + _first_broken(s))
        parts.append("<h3>Isolation against chain</h3>" + _gap(s))
        parts.append("<h3>Balance audit of the options</h3>" + _audit(r.block))
    return "".join(parts)


def settings_table(results: Sequence) -> str:
    keys = html.setting_keys(results)
    head = ["Model"] + keys
    body = [[r.model] + [str(r.settings.get(k, DASH)) for k in keys] for r in results]
    return html.table(head, body, left=len(head))
