"""The design doc's §6 and the card's measured rows, written from a results JSON.

Pure functions of a results file as :func:`synthprobe.results.read_results` reads it (any
layout): nothing here reads a model or the data, so the text always matches the committed figures.
"""

from __future__ import annotations

from synthprobe.benchmarks.deeparithmark.card import card_cells, card_header
from synthprobe.results import Results


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}"


def describe(results: Results) -> str:
    """Markdown for the first model with Deep Arithmark results in a results file."""
    entry = results.blocks("deeparithmark")[0][0].data
    res = entry["results"]["deeparithmark"]
    s = res["summary"]
    m = s["metrics"]["acc_norm"]
    name = entry["model"].get("name") or entry["model"]["spec"]
    settings = entry["settings"]
    lines = [
        f"Model: **{name}** ({entry['row']['params_label']}), {entry['model']['dtype']} on "
        f"{entry['model']['device']}, batch {settings['batch_size']}, max context "
        f"{settings['max_context']}, {s['n']:,} items (`{settings.get('command', 'make demo')}`).",
        "",
        f"- **Total.** acc_norm {_pct(m['acc'])} ({m['correct']}/{m['total']}; Wilson 95 % CI "
        f"{_pct(m['ci95'][0])}–{_pct(m['ci95'][1])}; two-sided exact binomial p = {_p(m['p_vs_chance'])} "
        f"against 25 %); soft {_pct(s['metrics']['soft'])}; acc {_pct(s['metrics']['acc']['acc'])}; "
        f"acc_char {_pct(s['metrics']['acc_char']['acc'])}.",
    ]
    depth = s["by_depth"]
    lines.append(
        "- **Depth curve.** "
        + " → ".join(f"d{d} {_pct(b['acc_norm'])} (p = {_p(b['p_vs_chance'])})" for d, b in depth.items())
        + "."
    )
    tmpl = s["by_template"]
    lo = min(tmpl.items(), key=lambda kv: kv[1]["acc_norm"])
    hi = max(tmpl.items(), key=lambda kv: kv[1]["acc_norm"])
    h = s["template_homogeneity"]
    lines.append(
        f"- **Per template** accuracy spans {_pct(lo[1]['acc_norm'])} (`{lo[0]}`, {lo[1]['n']} items) to "
        f"{_pct(hi[1]['acc_norm'])} (`{hi[0]}`, {hi[1]['n']} items); χ² homogeneity = {h['chi2']:.1f}, "
        f"df = {h['df']}, p = {_p(h['p'])}."
    )
    rp = s.get("rank_preference")
    if rp:
        counts = " / ".join(str(c) for c in rp["chosen_rank_counts"])
        lines.append(
            f"- **Rank preference.** It picks the smallest option {_pct(rp['pick_smallest'])} of the time and "
            f"the largest {_pct(rp['pick_largest'])} (chosen rank counts, smallest → largest: {counts}; "
            f"the answer's rank is balanced, so a rank preference alone scores about 25 %)."
        )
    prof = s.get("mistake_profile") or {}
    fav = []
    for t, block in prof.items():
        wrong = [(src, v) for src, v in block["sources"].items() if src != "correct" and v["offered"] >= 10]
        if wrong:
            src, v = max(wrong, key=lambda kv: (kv[1]["rate"], kv[0]))
            fav.append((v["rate"], t, src, v))
    fav.sort(reverse=True)
    if fav:
        lines.append(
            "- **Mistake profile** (the named mistake chosen most often when offered, top five "
            "templates): "
            + "; ".join(f"`{t}` — “{src}” {v['chosen']}/{v['offered']} ({_pct(rate)})" for rate, t, src, v in fav[:5])
            + "."
        )
    lines += ["", _reading(m, h)]
    return "\n".join(lines) + "\n"


def _reading(m: dict, h: dict) -> str:
    """One paragraph that says only what the statistics above support."""
    significant = m["p_vs_chance"] < 0.05
    below = m["acc"] < 0.25
    uneven = h["p"] < 0.05
    if not significant:
        text = "Reading: the total is indistinguishable from chance"
    elif below:
        text = (
            "Reading: the total is significantly *below* chance. A guesser cannot do that; a model "
            "drawn to the decoys can, because every decoy is the exact value of a named mistake"
        )
    else:
        text = "Reading: the total is significantly above chance"
    if uneven:
        text += (
            ", and accuracy is far from uniform across templates (χ² p < 0.05): read the "
            "per-template rows as stable paths through each family — preferences, not partial skill."
        )
    else:
        text += (
            ". The spread across templates is compatible with noise (χ² p ≥ 0.05), so single "
            "template rows say little on their own; the signal to look at is which options the "
            "model prefers — the named mistakes it picks when they are offered, and its rank prior."
        )
    text += " Report the depth curve with its intervals, not the single number."
    return text


def scores_table(results_files: list[Results]) -> str:
    """The card's columns (cells from :func:`synthprobe.benchmarks.deeparithmark.card.card_cells`, as the scorer's
    table and the report's leaderboard show them), plus dtype and device, for every model row
    in the given results files."""
    head = card_header() + ["dtype", "device"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for res in results_files:
        for entry, _ in res.blocks("deeparithmark"):
            e = entry.data
            out.append("| " + " | ".join(card_cells(e["row"]) + [e["model"]["dtype"], e["model"]["device"]]) + " |")
    return "\n".join(out) + "\n"
