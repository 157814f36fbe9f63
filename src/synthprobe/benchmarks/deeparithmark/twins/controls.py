"""The controls of a twin build: do a kind's twins differ from their originals in anything but the
perturbation?

A model's score can move on twins for reasons that have nothing to do with the perturbation:
bigger numbers, another answer rank, another correct slot, rounder options. For each twin kind
the build compares the twins with *their* originals (the originals that have a twin of that
kind) on

* **number size**: the digits of the answer, and the digits of each of the four options, by a
  two-sided Mann–Whitney U test (``scipy.stats.mannwhitneyu``, the asymptotic p with ties);
* **answer rank** and **correct slot**: the four counts of each side, by a chi-square test of
  homogeneity on the 2 × 4 table (``scipy.stats.chi2_contingency``, empty columns left out).
  A twin keeps its original's slot and rank by construction, so these are identical: p = 1;
* **roundness class** of the options (all four share one, :func:`..base.roundness_class`): the
  same chi-square test on the class counts.

Each test is reported with its statistic, its p, whether it differs at :data:`ALPHA` and
whether the kind changes that quantity *by design* (:data:`BY_DESIGN`): ``unit_change`` rewrites
the quantities in a smaller unit (dollars as cents, hours as minutes ...), so its numbers are
longer and often rounder on purpose, and ``one_step_more`` computes a new answer. A difference
by design is reported as one, never hidden: read a twin effect on those kinds together with the
size shift shown here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from synthprobe.benchmarks.deeparithmark.base import ROUNDNESS_NAMES, TWIN_KINDS, roundness_class
from synthprobe.benchmarks.deeparithmark.checks import value_kind
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS

#: The level at which a control is said to differ.
ALPHA = 0.05

#: The controls, in display order → the test behind each.
TESTS = {
    "answer_digits": "digits of the answer: two-sided Mann–Whitney U (scipy.stats.mannwhitneyu)",
    "option_digits": "digits of each of the four options: two-sided Mann–Whitney U",
    "answer_rank": "answer rank 0-3 counts: chi-square test of homogeneity (scipy.stats.chi2_contingency)",
    "correct_slot": "correct slot 0-3 counts: chi-square test of homogeneity",
    "roundness": "roundness class of the options (0-3, all four share it): chi-square test of homogeneity",
}

#: What each kind changes on purpose (a difference there is the perturbation, not an imbalance).
BY_DESIGN: dict[str, tuple[str, ...]] = {
    "irrelevant_clause": (),
    "one_step_more": ("answer_digits", "option_digits", "roundness"),
    "reordered": (),
    "unit_change": ("answer_digits", "option_digits", "roundness"),
}

#: Why, in a sentence (printed under the table and written in the manifest).
DESIGN_NOTES = {
    "one_step_more": "a new answer, one operation further: its size may move",
    "unit_change": "the quantities in a smaller unit: longer (and often rounder) numbers by design",
}

_SHORT = {
    "answer_digits": "answer digits",
    "option_digits": "option digits",
    "answer_rank": "rank",
    "correct_slot": "slot",
    "roundness": "roundness",
}


def digits(text: str) -> int:
    """The digits a rendered value is written with (``$1250`` → 4, ``9:45 a.m.`` → 3)."""
    return sum(c.isdigit() for c in text)


def _option_texts(item: dict) -> list[str]:
    from synthprobe.benchmarks.deeparithmark.base import render_value

    md = item["metadata"]
    kind = value_kind(md["answer"])
    return [render_value(v, kind) for v in md["option_values"]]


@dataclass
class Side:
    """What the controls need from one side (originals or twins) of one kind."""

    answer_digits: list[int] = field(default_factory=list)
    option_digits: list[int] = field(default_factory=list)
    answer_rank: Counter = field(default_factory=Counter)
    correct_slot: Counter = field(default_factory=Counter)
    roundness: Counter = field(default_factory=Counter)

    def add(self, item: dict) -> None:
        md = item["metadata"]
        kind = value_kind(md["answer"])
        self.answer_digits.append(digits(md["answer"]))
        self.option_digits.extend(digits(t) for t in _option_texts(item))
        self.answer_rank[md["answer_rank"]] += 1
        self.correct_slot[int(item["label"])] += 1
        self.roundness[roundness_class(md["option_values"][int(item["label"])], kind)] += 1


@dataclass
class Tally:
    """One kind's originals and twins, pair by pair."""

    originals: Side = field(default_factory=Side)
    twins: Side = field(default_factory=Side)

    def add(self, original: dict, twin: dict) -> None:
        self.originals.add(original)
        self.twins.add(twin)

    @property
    def n(self) -> int:
        return len(self.twins.answer_digits)


def _sig(p: float) -> float:
    """``p`` to four significant digits (a tiny p stays readable as one)."""
    return float(f"{p:.4g}")


def _size_test(a: list[int], b: list[int]) -> dict[str, Any]:
    from scipy.stats import mannwhitneyu

    if not a or not b:
        return {"original_mean": None, "twin_mean": None, "statistic": None, "p": None}
    if len(set(a) | set(b)) == 1:  # every value the same: no difference to find
        stat, p = len(a) * len(b) / 2, 1.0
    else:
        res = mannwhitneyu(a, b, alternative="two-sided")
        stat, p = float(res.statistic), float(res.pvalue)
    return {
        "original_mean": round(fmean(a), 4),
        "twin_mean": round(fmean(b), 4),
        "statistic": round(stat, 4),
        "p": _sig(p),
    }


def _counts_test(a: Counter, b: Counter, categories: Iterable[int]) -> dict[str, Any]:
    from scipy.stats import chi2_contingency

    cats = list(categories)
    row_a, row_b = [a.get(c, 0) for c in cats], [b.get(c, 0) for c in cats]
    kept = [i for i, (x, y) in enumerate(zip(row_a, row_b)) if x or y]
    if not sum(row_a) or not sum(row_b):
        stat, p = None, None
    elif len(kept) < 2:  # one category on both sides: identical
        stat, p = 0.0, 1.0
    else:
        res = chi2_contingency([[row_a[i] for i in kept], [row_b[i] for i in kept]], correction=False)
        stat, p = float(res.statistic), float(res.pvalue)
    return {
        "original": row_a,
        "twin": row_b,
        "statistic": None if stat is None else round(stat, 4),
        "p": None if p is None else _sig(p),
    }


def kind_controls(kind: str, tally: Tally) -> dict[str, Any]:
    """The controls of one kind: ``{"n": pairs, <control>: {..., "p", "differs", "by_design"}}``."""
    o, t = tally.originals, tally.twins
    out: dict[str, Any] = {"n": tally.n}
    results = {
        "answer_digits": _size_test(o.answer_digits, t.answer_digits),
        "option_digits": _size_test(o.option_digits, t.option_digits),
        "answer_rank": _counts_test(o.answer_rank, t.answer_rank, range(N_OPTIONS)),
        "correct_slot": _counts_test(o.correct_slot, t.correct_slot, range(N_OPTIONS)),
        "roundness": _counts_test(o.roundness, t.roundness, range(len(ROUNDNESS_NAMES))),
    }
    for name, res in results.items():
        p = res["p"]
        res["differs"] = None if p is None else p < ALPHA
        res["by_design"] = name in BY_DESIGN.get(kind, ())
        out[name] = res
    if kind in DESIGN_NOTES:
        out["note"] = DESIGN_NOTES[kind]
    return out


def controls(tallies: Mapping[str, Tally]) -> dict[str, Any]:
    """The manifest's ``controls``: the tests, the level and each kind's results."""
    return {
        "alpha": ALPHA,
        "tests": dict(TESTS),
        "kinds": {k: kind_controls(k, tallies[k]) for k in TWIN_KINDS if k in tallies},
    }


def _cell(res: dict[str, Any]) -> str:
    p = res["p"]
    if p is None:
        return "—"
    mark = ""
    if res["differs"]:
        mark = " (by design)" if res["by_design"] else " DIFFERS"
    return f"p{'<1e-6' if p < 1e-6 else f'={p:.3g}'}{mark}"


def format_controls(doc: Mapping[str, Any]) -> str:
    """The controls as a short table: one row per kind, a p per control; sizes as mean digits."""
    kinds = doc.get("kinds", {})
    if not kinds:
        return "Controls: no twins"
    names = list(TESTS)
    head = ["kind", "pairs", *(_SHORT[n] for n in names)]
    rows = []
    for kind, res in kinds.items():
        cells = [kind, f"{res['n']:,}"]
        for name in names:
            r = res[name]
            cell = _cell(r)
            if name.endswith("_digits") and r["original_mean"] is not None:
                cell = f"{r['original_mean']:.2f}→{r['twin_mean']:.2f} {cell}"
            cells.append(cell)
        rows.append(cells)
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
    lines = [
        f"Controls: twins against their originals (p < {doc.get('alpha', ALPHA):g} marked; digits as "
        "mean original→twin)",
        "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    notes = [f"{k}: {res['note']}" for k, res in kinds.items() if res.get("note")]
    lines += [f"  {n}" for n in notes]
    return "\n".join(lines)
