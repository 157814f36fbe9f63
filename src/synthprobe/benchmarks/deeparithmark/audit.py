"""Shortcut audit: how well do strategies that skip the arithmetic score?

Each strategy picks one option per item without reading the question:

* **pick largest / smallest value** — the option with the largest / smallest numeric value.
* **pick the roundest number** — the option with the highest :func:`roundness_class`, ties
  to the lowest index. Deep Arithmark puts all four options of an item in one roundness
  class, so every item is a four-way tie and this strategy always picks slot 0: its score
  equals the "fixed slot 0" row by construction, which is the point.
* **fixed slot 0 / 1 / 2 / 3** — always the same position.
* **longest / shortest ending text** — by character count, ties to the lowest index.
* **char-3-gram classifier over option text** — a bag of character trigrams of each ending
  (scikit-learn ``CountVectorizer(analyzer="char", ngram_range=(3, 3))``) and a logistic
  regression trained to tell correct from wrong endings, cross-validated with
  ``GroupKFold`` so that an item's four endings are always in the same fold (the model
  never sees the item it predicts), and the items of one role-balanced group too (it never
  sees the same four values in another item: learnt as decoys there, they would steer it off
  the key); per item it picks the ending with the highest
  probability of being correct, ties to the lowest index. Deterministic: no shuffling, a
  deterministic solver.

A fair file keeps every strategy at chance (25 %) within the 95 % interval of a guesser on
that many items — ±2.7 points at 1,000 items (:func:`tolerance`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import roundness_class
from synthprobe.benchmarks.deeparithmark.checks import value_kind
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3

CHANCE = 100.0 / N_OPTIONS

#: The card's bound at 1,000 items (1.96 · √(0.25 · 0.75 / 1000) = 2.68, rounded up).
RELEASE_TOLERANCE = 2.7

#: Folds of the classifier's cross-validation (fewer when the file has fewer items).
CV_FOLDS = 5

#: Fewest items on which the classifier row is computed.
MIN_CLASSIFIER_ITEMS = 10


def tolerance(n: int) -> float:
    """Allowed distance from chance, in points: the 95 % half-width of a chance-level
    scorer on ``n`` items, never tighter than the card's 2.7 points."""
    p = 1.0 / N_OPTIONS
    return max(RELEASE_TOLERANCE, 100.0 * 1.96 * math.sqrt(p * (1 - p) / n))


@dataclass(frozen=True)
class AuditItem:
    """What the audit needs from one item."""

    endings: tuple[str, ...]
    values: tuple[int, ...]
    label: int
    kind: str
    template: str = ""
    #: the role-balanced group the item belongs to (``metadata.group``); "" for none
    group: str = ""


@dataclass(frozen=True)
class StrategyScore:
    name: str
    correct: int
    n: int

    @property
    def percent(self) -> float:
        return 100.0 * self.correct / self.n if self.n else float("nan")

    def within(self, tol: float) -> bool:
        return abs(self.percent - CHANCE) <= tol


def load_audit_items(path: str | Path) -> list[AuditItem]:
    """Read a Deep Arithmark file under the ArithMark 3.0 contract plus ``metadata.option_values``."""
    out = []
    for it in load_arithmark3(path):
        md = it.metadata
        vals = md.get("option_values")
        if (
            not isinstance(vals, list)
            or len(vals) != len(it.endings)
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in vals)
        ):
            raise InputError(
                f"expected a list of {len(it.endings)} integers (one per ending), got {vals!r}",
                path=path,
                line=it.line,
                field="metadata.option_values",
            )
        answer = md.get("answer")
        if not isinstance(answer, str):
            raise InputError(
                f"expected the rendered answer as a string, got {answer!r}",
                path=path,
                line=it.line,
                field="metadata.answer",
            )
        out.append(audit_item(it.endings, it.label, md))
    return out


def audit_item(endings: Sequence[str], label: int, metadata: dict) -> AuditItem:
    """An :class:`AuditItem` from a release item's endings, label and (checked) metadata."""
    template = metadata.get("template")
    return AuditItem(
        endings=tuple(endings),
        values=tuple(metadata["option_values"]),
        label=int(label),
        kind=value_kind(metadata["answer"]),
        template=template if isinstance(template, str) else "",
        group=str(metadata.get("group") or ""),
    )


def argbest(keys: Sequence) -> int:
    """Index of the largest key, ties to the lowest index."""
    best = 0
    for i, k in enumerate(keys):
        if k > keys[best]:
            best = i
    return best


def classifier_pipeline():
    """The audit's classifier: char-trigram counts of an ending and a logistic regression."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        CountVectorizer(analyzer="char", ngram_range=(3, 3), lowercase=True), LogisticRegression(max_iter=5000)
    )


def option_rows(items: Sequence[AuditItem]) -> tuple[list[str], list[int], list[int]]:
    """One row per ending: its text, 1 if it is the correct one, and its fold group: the item's
    role-balanced group where it has one (the four items showing the same values fall in one
    fold: trained on three of them, the classifier would learn their values as decoys and avoid
    the fourth's key), else the item itself."""
    texts, y, groups = [], [], []
    ids: dict[str, int] = {}
    for g, it in enumerate(items):
        fold_group = ids.setdefault(it.group, len(ids)) if it.group else len(items) + g
        for i, e in enumerate(it.endings):
            texts.append(e)
            y.append(int(i == it.label))
            groups.append(fold_group)
    return texts, y, groups


def picks_from_proba(items: Sequence[AuditItem], proba: Sequence[float]) -> list[int]:
    """Per item, the ending with the highest probability of being correct (ties: lowest index)."""
    picks, pos = [], 0
    for it in items:
        k = len(it.endings)
        picks.append(argbest(list(proba[pos : pos + k])))
        pos += k
    return picks


def classifier_picks(items: Sequence[AuditItem]) -> list[int]:
    """Per item, the ending a cross-validated char-3-gram classifier rates most likely correct."""
    import numpy as np
    from sklearn.model_selection import GroupKFold, cross_val_predict

    texts, y, groups = option_rows(items)
    folds = GroupKFold(n_splits=min(CV_FOLDS, len(items)))
    proba = cross_val_predict(
        classifier_pipeline(), texts, np.array(y), groups=np.array(groups), cv=folds, method="predict_proba"
    )[:, 1]
    return picks_from_proba(items, proba)


CLASSIFIER = "char-3-gram classifier over option text"


def strategy_picks(items: Sequence[AuditItem], *, classifier: bool = True) -> dict[str, list[int]]:
    """Each strategy's pick per item; the classifier needs at least
    :data:`MIN_CLASSIFIER_ITEMS` items and is left out below that."""
    n = len(items)
    picks = {
        "pick largest value": [argbest(it.values) for it in items],
        "pick smallest value": [argbest([-v for v in it.values]) for it in items],
        "pick the roundest number": [argbest([roundness_class(v, it.kind) for v in it.values]) for it in items],
    }
    for s in range(N_OPTIONS):
        picks[f"fixed slot {s}"] = [s] * n
    picks["longest ending text"] = [argbest([len(e) for e in it.endings]) for it in items]
    picks["shortest ending text"] = [argbest([-len(e) for e in it.endings]) for it in items]
    if classifier and n >= MIN_CLASSIFIER_ITEMS:
        picks[CLASSIFIER] = classifier_picks(items)
    return picks


def score(name: str, picks: Sequence[int], items: Sequence[AuditItem]) -> StrategyScore:
    return StrategyScore(name, sum(p == it.label for p, it in zip(picks, items)), len(items))


def audit(items: Sequence[AuditItem], *, classifier: bool = True) -> list[StrategyScore]:
    """Score every strategy on ``items``."""
    return [score(name, p, items) for name, p in strategy_picks(items, classifier=classifier).items()]


def by_template(items: Sequence[AuditItem], picks: dict[str, list[int]]) -> str:
    """Per-template scores of the strategies that are not fixed by the balance plan — a
    diagnostic for generator authors (per-template rows are small samples; rank and slot are
    balanced globally, not per template)."""
    names = [k for k in picks if not k.startswith(("fixed slot", "pick the roundest"))]
    short = {
        "pick largest value": "largest",
        "pick smallest value": "smallest",
        "longest ending text": "longest",
        "shortest ending text": "shortest",
        CLASSIFIER: "char-3-gram",
    }
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it.template or "?", []).append(i)
    w = max(len("template"), *(len(g) for g in groups))
    head = f"{'template':<{w}}  {'items':>5}  " + "  ".join(f"{short.get(k, k):>11}" for k in names)
    lines = [head, "-" * len(head)]
    for g, idx in sorted(groups.items()):
        cells = []
        for k in names:
            c = sum(picks[k][i] == items[i].label for i in idx)
            cells.append(f"{100.0 * c / len(idx):9.1f} %")
        lines.append(f"{g:<{w}}  {len(idx):>5}  " + "  ".join(cells))
    return "\n".join(lines)


def format_table(rows: Sequence[StrategyScore], *, title: str) -> str:
    n = rows[0].n if rows else 0
    tol = tolerance(n) if n else RELEASE_TOLERANCE
    lines = [
        title,
        f"chance {CHANCE:.2f} %; a strategy passes within ±{tol:.1f} points ({CHANCE - tol:.2f}–{CHANCE + tol:.2f} %)",
        "",
    ]
    w = max([len("strategy")] + [len(r.name) for r in rows])
    cw = max(len("correct"), len(f"{n:,}/{n:,}"))
    lines.append(f"{'strategy':<{w}}  {'correct':>{cw}}  {'score':>8}  result")
    lines.append(f"{'-' * w}  {'-' * cw}  {'-' * 8}  ------")
    for r in rows:
        lines.append(
            f"{r.name:<{w}}  {f'{r.correct:,}/{r.n:,}':>{cw}}  {r.percent:6.2f} %  "
            f"{'PASS' if r.within(tol) else 'FAIL'}"
        )
    return "\n".join(lines)
