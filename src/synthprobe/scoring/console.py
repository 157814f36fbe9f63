"""What a scoring command prints beside its table, whatever the benchmark: a server's token
accounting (:func:`format_usage`) and the paired comparison of models (:func:`format_comparisons`)."""

from __future__ import annotations

from typing import Any

from synthprobe.results import fmt_p


def format_usage(name: str, usage: dict[str, Any]) -> str:
    """The final line about what a server-backed run spent: "tokens (NAME): 1,234 prompt + 56
    completion = 1,290 in 40 requests" (plus the budget and the lowest concurrency when set)."""
    line = (
        f"tokens ({name}): {usage['prompt_tokens']:,} prompt + {usage['completion_tokens']:,} completion = "
        f"{usage['total_tokens']:,} in {usage['requests']:,} requests"
    )
    if usage.get("max_tokens_total") is not None:
        line += f" (budget {usage['max_tokens_total']:,})"
    if usage.get("lowest_concurrency") is not None:
        line += f"; the server pushed back, requests in flight went down to {usage['lowest_concurrency']}"
    return line


def format_comparisons(compared: dict[str, Any]) -> str:
    """The printed paired comparison: one line per pair and data set."""
    lines = ["paired comparison (delta = B - A in points, 95 % CI, exact McNemar p, Holm across pairs):"]
    for key, block in compared.items():
        for p in block["pairs"]:
            lo, hi = p["ci95"] or (float("nan"), float("nan"))
            lines.append(
                f"  {key}: {p['b']} - {p['a']}: {p['delta']:+.2f} [{lo:+.2f}, {hi:+.2f}]  "
                f"n={p['n']}  discordant {p['a_only']}/{p['b_only']}  p={fmt_p(p['p_mcnemar'])}  "
                f"Holm p={fmt_p(p['p_holm'])}"
            )
            if p.get("same_weights"):
                lines.append(f"    {p['a']} and {p['b']} are the same weights: the difference is their settings'")
        for q in block.get("not_paired", []):
            lines.append(f"  {key}: {q['b']} vs {q['a']}: not paired, {q['reason']}")
    return "\n".join(lines)
