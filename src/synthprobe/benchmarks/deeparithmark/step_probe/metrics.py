"""Figures of the per-step probe (``synthprobe probe steps``) from its per-probe records.

A record is one step of one item, scored two ways (``isolation``: the operation alone;
``chain``: inside the problem, earlier steps given) by two methods (``choice``: the option with
the highest log-likelihood; ``generation``: greedy decoding, exact match)::

    {"id", "item", "depth", "step", "n_steps", "op", "operation", "digits",
     "isolation": {"choice": bool, "generation": bool, ...}, "chain": {...}}

Every accuracy is a cell ``{"correct", "n", "acc", "ci95": [lo, hi]}`` (fractions; the exact
Clopper–Pearson 95 % interval). Pure numbers: imports nothing from scoring, tasks or report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from synthprobe.metrics.stats import binom_p, exact_ci

MODES = ("isolation", "chain")
METHODS = ("choice", "generation")


def cell(flags: Sequence[bool]) -> dict[str, Any]:
    n, k = len(flags), sum(bool(f) for f in flags)
    lo, hi = exact_ci(k, n) if n else (None, None)
    return {
        "correct": k,
        "n": n,
        "acc": round(k / n, 6) if n else None,
        "ci95": [round(lo, 6), round(hi, 6)] if n else None,
    }


def _cells(recs: Sequence[dict]) -> dict[str, dict[str, Any]]:
    return {mode: {m: cell([r[mode][m] for r in recs]) for m in METHODS} for mode in MODES}


def _group(records: Iterable[dict], key: Callable[[dict], tuple]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(key(r), []).append(r)
    return dict(sorted(groups.items()))


def first_broken_step(recs: Sequence[dict], method: str) -> str:
    """One item's first probed step (``"1"``, ``"2"``, …) whose chain probe is wrong by
    ``method``, or ``"none"`` when every probed step is right."""
    broken = next((r["step"] for r in sorted(recs, key=lambda r: r["step"]) if not r["chain"][method]), None)
    return "none" if broken is None else str(broken)


def first_broken(records: Sequence[dict], method: str) -> dict[str, Any]:
    """Per depth: how many items first fail (in the chain, teacher-forced) at step 1, 2, …, or
    never (``none``), by ``method``. Steps that were not probed are passed over."""
    by_item = _group(records, lambda r: (r["depth"], r["item"]))
    out: dict[str, Any] = {}
    for (depth, _), recs in by_item.items():
        counts = {str(k): 0 for k in range(1, depth + 1)} | {"none": 0}
        row = out.setdefault(str(depth), {"items": 0, "counts": counts})
        row["items"] += 1
        key = first_broken_step(recs, method)
        row["counts"][key] = row["counts"].get(key, 0) + 1
    return out


def gap(recs: Sequence[dict], method: str) -> dict[str, Any]:
    """Isolation against chain on the same steps: both accuracies, the difference (chain minus
    isolation, in points of a fraction) and the exact McNemar test on the discordant steps."""
    iso = [r["isolation"][method] for r in recs]
    chain = [r["chain"][method] for r in recs]
    iso_only = sum(a and not b for a, b in zip(iso, chain))
    chain_only = sum(b and not a for a, b in zip(iso, chain))
    disc = iso_only + chain_only
    return {
        "isolation": cell(iso),
        "chain": cell(chain),
        "difference": round((sum(chain) - sum(iso)) / len(recs), 6) if recs else None,
        "isolation_only": iso_only,
        "chain_only": chain_only,
        "p_mcnemar": round(binom_p(iso_only, disc, 0.5), 6) if disc else None,
    }


def summarise_steps(records: Sequence[dict], ops: Sequence[str]) -> dict[str, Any]:
    """The results block's ``summary`` (see the module docstring); ``ops``: the step forms
    (``op``) in the order the operation rows are listed."""
    by_sd = _group(records, lambda r: (r["depth"], r["step"]))
    by_od = _group(records, lambda r: (ops.index(r["op"]), r["digits"]))
    by_op = _group(records, lambda r: (ops.index(r["op"]),))
    return {
        "probes": len(records),
        "items": len({r["item"] for r in records}),
        "overall": _cells(records),
        "by_step_depth": [{"depth": d, "step": s, **_cells(recs)} for (d, s), recs in by_sd.items()],
        "by_operation_digits": [
            {"operation": recs[0]["operation"], "op": recs[0]["op"], "digits": dg, **_cells(recs)}
            for (_, dg), recs in by_od.items()
        ],
        "first_broken": {m: first_broken(records, m) for m in METHODS},
        "gap": {m: gap(records, m) for m in METHODS},
        "gap_by_operation": [
            {"operation": recs[0]["operation"], "op": recs[0]["op"], **{m: gap(recs, m) for m in METHODS}}
            for _, recs in by_op.items()
        ],
    }


def step_depth_markdown(summary: dict[str, Any], method: str = "choice") -> str:
    """The step × depth table as Markdown: chain accuracy in %, isolation in brackets, and the
    number of probes per cell."""
    rows = summary["by_step_depth"]
    depths = sorted({r["depth"] for r in rows})
    steps = sorted({r["step"] for r in rows})
    at = {(r["depth"], r["step"]): r for r in rows}
    lines = ["| depth | " + " | ".join(f"step {s}" for s in steps) + " |", "|---" * (len(steps) + 1) + "|"]
    for d in depths:
        cells = []
        for s in steps:
            r = at.get((d, s))
            if r is None or not r["chain"][method]["n"]:
                cells.append("")
                continue
            c, i = r["chain"][method], r["isolation"][method]
            cells.append(f"{100 * c['correct'] / c['n']:.0f} ({100 * i['correct'] / i['n']:.0f}) n={c['n']}")
        lines.append(f"| d{d} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
