"""The protocol-effect section of the report page: a model scored under several protocols
(``score deeparithmark --protocol loglik,letters,free``) in one results file, each protocol
against the first on the same items, per depth, with the exact McNemar p-value. Computed from
the entries' per-item predictions by
:func:`synthprobe.benchmarks.deeparithmark.scoring.protocols.protocol_effect`, the function that
writes the file's own ``protocol_effect`` block."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthprobe.benchmarks.deeparithmark.scoring.protocols import protocol_effect
from synthprobe.report.html import table
from synthprobe.results import Results, fmt_p, variant_label

KEY = "protocol-effect"
#: shown after the number-format probe (synthprobe.report.sections)
AFTER = "number-format"
TITLE = "Protocol effect (the same items asked another way)"
SHORT_TITLE = "Protocol effect"


@dataclass(frozen=True)
class Effect:
    model: str
    reference: str
    other: str
    rows: list[dict[str, Any]]
    source: str
    #: each side's metric (acc_norm for log-likelihood, accuracy for generated answers)
    reference_metric: str = "acc_norm"
    metric: str = "accuracy"
    #: letters against letterprob: on how many items the two answers name the same letter
    #: (:func:`~synthprobe.benchmarks.deeparithmark.scoring.protocols.letter_agreement`)
    agreement: dict[str, Any] | None = None


def parse(results: Results) -> list[Effect]:
    entries = [e.data for e in results.models if "deeparithmark" in e.results]
    try:
        blocks = protocol_effect(entries, label=variant_label)
    except (KeyError, TypeError, ValueError) as exc:
        raise results.reader.fail("models", f"per-item predictions that cannot be paired: {exc}") from None
    return [
        Effect(
            b["model"],
            b["reference"],
            b["other"],
            b["rows"],
            str(results.path),
            b["reference_metric"],
            b["metric"],
            b.get("agreement"),
        )
        for b in blocks
    ]


def summary(items: Sequence[Effect]) -> str:
    return f"protocol effect: {len(items)} pair{'s' if len(items) != 1 else ''}"


def section(items: Sequence[Effect]) -> str:
    parts = [
        "<p>Each block compares one model under two protocols on the same items: the reference's score "
        "under its own metric (acc_norm for log-likelihood) and the other protocol's (accuracy of the "
        "answers read back), the difference in points, the discordant pairs <i>b</i> (right "
        "under the reference only) and <i>c</i> (right under the other only), and the exact two-sided McNemar "
        "p-value. A generated answer that could not be read counts as wrong.</p>"
    ]
    for e in items:
        body = [
            [
                str(r["depth"]),
                f"{r['n']:,}",
                f"{r['reference_accuracy']:.1f} %",
                f"{r['accuracy']:.1f} %",
                f"{r['delta']:+.1f}".replace("-", "−"),
                f"{r['b']} / {r['c']}",
                fmt_p(r["p_mcnemar"]),
            ]
            for r in e.rows
        ]
        from html import escape

        parts.append(f"<h3>{escape(e.model)}: {escape(e.other)} against {escape(e.reference)}</h3>")
        parts.append(
            table(
                [
                    "depth",
                    "n",
                    f"reference ({e.reference_metric})",
                    f"other ({e.metric})",
                    "Δ (points)",
                    "b / c",
                    "McNemar p",
                ],
                body,
            )
        )
        if e.agreement:
            a, c = e.agreement, e.agreement["certified"]
            share = f" ({100 * a['share']:.1f} %)" if a["share"] is not None else ""
            parts.append(
                f"<p>The same letter in both on {a['agree']:,} of {a['n']:,} items{share} (the letters "
                f"answer wrote it, credited or not, on {a.get('written', a['agree']):,}); on the "
                f"{c['n']:,} items letterprob certified (its greedy answer is the letter alone) "
                f"{c['agree']:,}.</p>"
            )
        parts.append(f'<p class="note">From <code>{escape(e.source)}</code>.</p>')
    return "\n".join(parts)
