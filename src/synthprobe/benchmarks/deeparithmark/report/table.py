"""The leaderboard with the release card's columns, as rows of strings and as Markdown.

Model, Params, Deep (acc_norm), soft, d2 … d5 (acc_norm per depth tier), ArithMark-3
(acc_norm on the same weights), Δ = Deep − ArithMark-3, and p: the exact two-sided binomial
p-value of Deep against chance, with n (items scored) after Params. Rows are ordered by the
primary score (Deep), highest first; ArithMark-3 and Δ appear only when some row has them, and
rows scored on different items carry a letter in the n column
(:func:`~synthprobe.benchmarks.deeparithmark.report.order.test_set_letters`).

Each metric has its own table (:func:`groups`): rows scored by log-likelihood (acc_norm) and rows
of generated answers (accuracy of the answers read back, letters and free apart, each protocol
under its own metric line) are never ranked together. A table of generated answers has no
log-likelihood column (soft); it shows the accuracy over the answered items beside the headline
accuracy, and the shares of unparsed, inconsistent, echoed and cut-off answers (as the scorer
prints them; a dash where the protocol has no such outcome). A free answer has no chance level,
so no p-value.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.benchmarks.deeparithmark.card import card_cells, card_header
from synthprobe.benchmarks.deeparithmark.report.model import ModelResult
from synthprobe.benchmarks.deeparithmark.report.order import NOT_COMPARABLE_NOTE, ordered, test_set_letters
from synthprobe.benchmarks.deeparithmark.report.read import APPLIES
from synthprobe.report.format import percent
from synthprobe.results import DASH, MINUS, fmt_p, fmt_params

DEFAULT_TITLE = "Deep Arithmark leaderboard"


def depths(results: Sequence[ModelResult]) -> list[int]:
    return sorted({d for r in results for d in r.by_depth})


def has_compare(results: Sequence[ModelResult]) -> bool:
    """Whether any model was scored on ArithMark 3.0 too (else no ArithMark-3 and Δ columns)."""
    return any(r.arithmark3 is not None for r in results)


#: the outcomes each generated protocol can have (the others are a dash, as the scorer prints them)
OUTCOME_COLUMNS = (("unparsed", "unparsed"), ("inconsistent", "inconsistent"), ("echo", "echo"), ("cut_off", "cut off"))
#: the order of the tables: log-likelihood first, then the generated protocols
PROTOCOL_ORDER = {"loglik": 0, "letters": 1, "letterprob": 2, "free": 3}


def groups(results: Sequence[ModelResult]) -> list[list[ModelResult]]:
    """The rows per metric (one table each), log-likelihood first; rows keep their order."""
    keyed: dict[tuple, list[ModelResult]] = {}
    for r in results:
        keyed.setdefault(
            (r.generated, r.protocol if r.generated else "loglik", r.metric_label if r.generated else ""), []
        ).append(r)
    return [rs for _, rs in sorted(keyed.items(), key=lambda kv: (kv[0][0], PROTOCOL_ORDER.get(kv[0][1], 9)))]


def generated(results: Sequence[ModelResult]) -> bool:
    """Whether the rows (of one :func:`groups` table) are generated answers."""
    return bool(results) and results[0].generated


def metric_name(results: Sequence[ModelResult]) -> str:
    """``acc_norm``, ``accuracy``, or both names when the rows mix them (a plot's axis)."""
    names = list(dict.fromkeys(r.metric for r in results))
    return " / ".join(names)


def header(results: Sequence[ModelResult]) -> list[str]:
    if not generated(results):
        return card_header(depths(results), compare=has_compare(results), n=True)
    return (
        ["Model", "Params", "n", "Deep", "answered"]
        + [f"d{d} %" for d in depths(results)]
        + (["ArithMark-3", "Δ"] if has_compare(results) else [])
        + ["p vs chance"]
        + [label for _, label in OUTCOME_COLUMNS]
    )


#: the index of the Deep column in :func:`header` / :func:`rows`
DEEP_COLUMN = 3


def card_row(r: ModelResult, ds: Sequence[int], letter: str = "") -> dict:
    """One model's card row in percentages, for :func:`synthprobe.benchmarks.deeparithmark.card.card_cells`."""
    return {
        "model": r.model,
        "params": r.params,
        "n": f"{r.overall.n:,}" + (f" · {letter}" if letter else ""),
        "deep": percent(r.acc_norm),
        "soft": percent(r.soft),
        **{f"d{d}": percent(r.by_depth[d].rate) if d in r.by_depth else None for d in ds},
        "arithmark3": percent(r.arithmark3),
        "delta": None if r.delta is None else 100 * r.delta,
        "p_vs_chance": r.p_value,
    }


def outcome_share(r: ModelResult, key: str) -> float | None:
    """The share (percent of all items) of a generated answer's outcome; None where the protocol
    has no such outcome or the file does not record it."""
    if r.outcomes is None or key not in APPLIES.get(r.protocol, {key}) or key not in r.outcomes:
        return None
    return 100 * r.outcomes[key] / r.overall.n


def _text(x: float | None, digits: int = 2, unit: str = " %") -> str:
    return DASH if x is None or x != x else f"{x:.{digits}f}{unit}"


def generated_cells(r: ModelResult, ds: Sequence[int], letter: str = "", *, compare: bool) -> list[str]:
    """One generated run's row: accuracy over all items, over the answered ones, per depth, the
    p-value against chance (none for free) and the outcome shares."""
    row = card_row(r, ds, letter)
    answered = r.answered.rate * 100 if r.answered is not None and r.answered.n else None
    delta = row["delta"]
    return (
        [row["model"], fmt_params(r.params), row["n"], _text(row["deep"]), _text(answered)]
        + [_text(row[f"d{d}"], 1, "") for d in ds]
        + (
            [_text(row["arithmark3"]), DASH if delta is None else f"{delta:+.2f}".replace("-", MINUS)]
            if compare
            else []
        )
        + [fmt_p(r.p_value)]
        + [_text(outcome_share(r, key), 1) for key, _ in OUTCOME_COLUMNS]
    )


def rows(results: Sequence[ModelResult]) -> list[list[str]]:
    """The cells of one :func:`groups` table, in its order."""
    ds = depths(results)
    letters = test_set_letters(results)
    compare = has_compare(results)
    if generated(results):
        return [generated_cells(r, ds, letters.get(r.test_set, ""), compare=compare) for r in ordered(results)]
    return [
        card_cells(card_row(r, ds, letters.get(r.test_set, "")), ds, compare=compare, n=True) for r in ordered(results)
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(results: Sequence[ModelResult], *, title: str = DEFAULT_TITLE) -> str:
    return f"# {title}\n\n" + markdown_body(results)


def markdown_body(results: Sequence[ModelResult]) -> str:
    """The Deep Arithmark leaderboard in Markdown, without a title: one table per metric."""
    parts = groups(results)
    if len(parts) == 1:
        return _markdown_table(parts[0])
    return "\n".join(f"### {rs[0].metric_label}\n\n" + _markdown_table(rs) for rs in parts)


def lead_words(results: Sequence[ModelResult]) -> str:
    """What a table's Deep is, in a sentence (its metric line, chance, how rows are ordered)."""
    chance = results[0].chance
    n_items = sorted({r.overall.n for r in results})
    items = f"{', '.join(f'{n:,}' for n in n_items)} items"
    if not generated(results):
        return (
            f"Zero-shot, acc_norm (per-token length-normalised log-likelihood), chance "
            f"{100 * chance:.0f} %, {items}; highest Deep first. soft is the mean "
            "probability of the correct option after a softmax over the normalised scores; "
            "d2–d5 are acc_norm per depth tier; "
        )
    free = all(r.protocol == "free" for r in results)
    return (
        f"Zero-shot, generated answers, Deep = {results[0].metric_label}; "
        + (
            "no chance level (a free answer is not one of a few options); "
            if free
            else f"chance {100 * chance:.0f} %; "
        )
        + f"{items}; highest Deep first. answered is the accuracy over the answered items only; "
        "d2–d5 are accuracy per depth tier; unparsed, inconsistent, echo and cut off are shares of "
        "all items (a dash: the protocol has no such outcome); "
    )


def checkpoint_text(r: ModelResult) -> str:
    """Which checkpoint a row is, as text: its path or hub id (when the row's name does not
    already say it) and the first 12 hex digits of the weights' fingerprint; "" if neither is
    recorded."""
    parts = []
    if r.checkpoint and r.checkpoint not in r.model:
        parts.append(r.checkpoint)
    if r.fingerprint:
        parts.append(f"weights {r.fingerprint[:12]}")
    return " · ".join(parts)


def _markdown_table(results: Sequence[ModelResult]) -> str:
    head = header(results)
    align = ["---", "---:"] + ["---:"] * (len(head) - 2)
    lines = [
        lead_words(results)
        + ("Δ is Deep minus ArithMark-3 on the same weights; " if has_compare(results) else "")
        + (
            "p: none, a free answer has no chance level to test against."
            if all(r.protocol == "free" for r in results)
            else "p is the exact two-sided binomial test of Deep against chance."
        )
        + (" " + NOT_COMPARABLE_NOTE if test_set_letters(results) else ""),
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(align) + " |",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows(results)]
    # which checkpoint each row is, under the card's table (whose columns stay the card's)
    named = [(r.model, checkpoint_text(r)) for r in ordered(results) if checkpoint_text(r)]
    if named:
        lines += ["", "Checkpoints: " + "; ".join(f"{_md_cell(m)}: `{c}`" for m, c in named) + "."]
    # a one-pass letter run: how far its letter is the letters answer (its run table's figures)
    one_pass = [(r.model, letterprob_text(r)) for r in ordered(results) if r.protocol == "letterprob"]
    one_pass = [(m, t) for m, t in one_pass if t]
    if one_pass:
        lines += ["", "One pass (letterprob): " + "; ".join(f"{_md_cell(m)}: {t}" for m, t in one_pass) + "."]
    return "\n".join(lines) + "\n"


#: the run-table figures of a letterprob row the leaderboard repeats under its table
LETTERPROB_FIGURES = (
    "certified (one pass)",
    "fell back to letters",
    "letter mass",
    "letters read as",
    "agrees with its letters answer",
)


def letterprob_text(r: ModelResult) -> str:
    """A letterprob row's certified share, fallbacks, letter mass, tokenisation read and agreement
    with its letters-equivalent answers, as one line ("" where the file records none)."""
    return ", ".join(f"{k} {r.settings[k]}" for k in LETTERPROB_FIGURES if k in r.settings)
