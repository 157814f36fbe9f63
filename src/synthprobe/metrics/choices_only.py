"""Trained choices-only adversaries: can the key be picked from the options alone?

A multiple-choice set is fair to its options when nothing about the options — their values, how
they relate, how they are written — tells which one is the key. Fixed strategies ("pick the
largest") test single cues; a *trained* adversary learns whatever combination of cues the data
holds. This module trains several classes of such adversaries on items of one distribution and
scores them on independent items, with the statistics of :mod:`synthprobe.metrics.equivalence`
(the accuracy must be shown to lie within chance ± a margin, not merely fail to exceed chance).

**Items.** :class:`ChoiceItem`: ``endings`` (the option texts), ``values`` (the number each
option carries, or None where an ending has none), ``label`` (the key's index), ``group`` (the
template or stratum the item was drawn from: every adversary may condition on it), optional
``depth`` (a stratum of the per-stratum screen) and optional ``cluster`` (items built together,
e.g. the four items sharing one set of values, counted as one cluster in intervals). Every item
of one run has the same number of options.

**Adversaries** (``fit(train_items)``, ``predict(test_items) -> list[int]``; deterministic: fixed
random states, BLAS and OpenMP held to one thread while they run, ties to the lowest index):

``trees``
    Gradient-boosted trees (``HistGradientBoostingClassifier``), pointwise: one row per option,
    target "is the key", the option with the highest probability picked per item. Features of an
    option relative to its set (:data:`FEATURES`, in this order):

    - *order*: rank among the options (how many are strictly smaller), is the smallest, is the
      largest; the gaps to the nearest value below and above, raw, over the set's range and over
      the option's own magnitude; the z-score in the set; the distance to the nearest other option
      over the range and over the magnitude;
    - *pairs*: the differences to each other option over the range, sorted; the log-ratios to
      each other option, sorted;
    - *relations* (a generic "one follows from the other" set): how many other options equal this
      one ×10, ×2, ×60, ×100 (out) and how many this one equals ×10, ×2, ×60, ×100 of (in; so
      ÷10 and ÷2 are the in-counts); how many pairs of others it is the midpoint of; how many
      pairs it extends as an arithmetic progression (it equals 2·b − c); for how many partners its
      gap equals the gap between two of the remaining options (symmetric pairs, "± the difference
      of two others"), and for how many of those it is the upper member;
    - *digits*: trailing zeros, a multiple of 5, digit count, last digit, leading digit,
      log10 of the magnitude, the value over the set's largest magnitude, has a fraction;
    - *text*: the ending's length in characters, its length minus the set's mean, how many other
      endings have the same text once digits are masked (an ending written differently from the
      others: a changed word or mark);
    - *missing*: the option carries no number (its value features are then 0);
    - *group*: the group code, a categorical feature (one-hot for the set network).
``knn``
    k nearest neighbours (k = 25) on the values sorted ascending over the largest magnitude, plus a
    one-hot group code weighted so heavily that only same-group neighbours count; it predicts the
    sorted position of the key and maps it back to the slot.
``deepsets``
    A permutation-equivariant set model: each option's features (those above, group one-hot)
    concatenated with their mean and maximum over the item's options (DeepSets-style pooled
    context), standardised, and one shared ``MLPClassifier`` scoring every option "is the key".
``gap_order``
    A lookup: per group, the order of the gaps between neighbouring sorted values (for four
    options, which of three gaps is smallest, middle, largest: 6 orders) → the sorted position
    that held the key most often in training; an unseen order → the group's most frequent
    position; an unseen group → the overall one; ties → the lowest position.
``embedding``
    A linear probe (logistic regression) pointwise on ``[e_i, e_i − mean_j e_j]`` over frozen
    embeddings of the endings' text. This module loads no model: the caller passes
    ``embed(texts) -> array``; only run when one is given (:func:`char_ngram_embedder` is a
    model-free stand-in).

Values that are None count as 0 in the sorted vectors of ``knn`` and ``gap_order`` and give 0 value
features plus the *missing* flag in the others; equal values give equal value features.

:func:`run_audit` trains the adversaries once, scores every test set, screens strata and runs the
controls (builds that must fail, and a null that must pass); it returns a plain JSON-ready dict.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import combinations, permutations
from typing import Any

import numpy as np

from synthprobe.errors import InputError
from synthprobe.metrics.equivalence import MARGIN, above_chance_p, equivalence_block, holm_screen

# ---------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChoiceItem:
    """One multiple-choice item as the adversaries see it (never its question)."""

    endings: tuple[str, ...]
    values: tuple[float | None, ...]
    label: int
    group: str = ""
    depth: int | None = None
    cluster: str | None = None


def choice_item(obj: ChoiceItem | Mapping[str, Any]) -> ChoiceItem:
    """A :class:`ChoiceItem` from itself or a mapping with the same keys (checked)."""
    if isinstance(obj, ChoiceItem):
        item = obj
    else:
        item = ChoiceItem(
            endings=tuple(obj["endings"]),
            values=tuple(obj.get("values") or (None,) * len(obj["endings"])),
            label=int(obj["label"]),
            group=str(obj.get("group", "")),
            depth=obj.get("depth"),
            cluster=None if obj.get("cluster") is None else str(obj.get("cluster")),
        )
    if len(item.values) != len(item.endings):
        raise InputError(f"{len(item.values)} values for {len(item.endings)} endings", field="values")
    if not 0 <= item.label < len(item.endings):
        raise InputError(f"label {item.label} outside 0..{len(item.endings) - 1}", field="label")
    return item


def as_items(items: Sequence[ChoiceItem | Mapping[str, Any]]) -> list[ChoiceItem]:
    """The items as :class:`ChoiceItem` s, all with the same number of options (else InputError)."""
    out = [choice_item(it) for it in items]
    if not out:
        raise InputError("no items")
    k = len(out[0].endings)
    if k < 2 or any(len(it.endings) != k for it in out):
        raise InputError(f"every item needs the same number (≥ 2) of options; the first has {k}", field="endings")
    return out


def option_count(items: Sequence[ChoiceItem]) -> int:
    return len(items[0].endings)


def value_matrix(items: Sequence[ChoiceItem]) -> np.ndarray:
    """The values as an ``(items, options)`` float array, NaN where an option has no number."""
    return np.array([[np.nan if v is None else float(v) for v in it.values] for it in items], dtype=float)


def filled_values(items: Sequence[ChoiceItem]) -> np.ndarray:
    """:func:`value_matrix` with the missing values as 0 (the sorted-vector adversaries)."""
    return np.nan_to_num(value_matrix(items), nan=0.0)


def labels(items: Sequence[ChoiceItem]) -> np.ndarray:
    return np.array([it.label for it in items], dtype=int)


# ---------------------------------------------------------------------------------------
# Features of each option relative to its set
# ---------------------------------------------------------------------------------------

#: the multiplicative maps of the relation features ("another option is this one × f")
FACTORS = (10, 2, 60, 100)

#: the trailing-zero count is capped here
MAX_ZEROS = 9

#: per-option features, in the order of :func:`option_features` (the group code comes apart)
FEATURES: tuple[str, ...] = (
    *("rank", "is_min", "is_max", "gap_below", "gap_above", "gap_below_range", "gap_above_range"),
    *("gap_below_value", "gap_above_value", "z", "nearest_range", "nearest_value"),
    "diffs_range_sorted",  # k − 1 columns
    "log_ratios_sorted",  # k − 1 columns
    *(f"times{f}_out" for f in FACTORS),
    *(f"times{f}_in" for f in FACTORS),
    *("ap_mid", "ap_end", "pair_gap_match", "pair_gap_top"),
    *("trailing_zeros", "multiple_of_5", "digits", "last_digit", "leading_digit", "log10", "over_max", "fraction"),
    *("length", "length_minus_mean", "same_shape"),
    "missing",
)


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality up to float noise; False where either side is NaN."""
    with np.errstate(invalid="ignore"):
        return np.abs(a - b) <= 1e-9 * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))


def _set_stats(v: np.ndarray) -> dict[str, np.ndarray]:
    """Per item (as ``(n, 1)`` columns): range, mean, std, largest magnitude; each safe to divide by."""
    present = ~np.isnan(v)
    count = np.maximum(present.sum(1, keepdims=True), 1)
    hi = np.where(present, v, -np.inf).max(1, keepdims=True)
    lo = np.where(present, v, np.inf).min(1, keepdims=True)
    rng = np.where(np.isfinite(hi - lo) & (hi - lo > 0), hi - lo, 1.0)
    mean = np.where(present, v, 0.0).sum(1, keepdims=True) / count
    std = np.sqrt(np.where(present, (v - mean) ** 2, 0.0).sum(1, keepdims=True) / count)
    big = np.where(present, np.abs(v), 0.0).max(1, keepdims=True)
    return {"range": rng, "mean": mean, "std": np.where(std > 0, std, 1.0), "max": np.where(big > 0, big, 1.0)}


def _order_features(v: np.ndarray, stats: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Rank, ends, gaps below / above (raw, over range, over magnitude), z, nearest other."""
    k = v.shape[1]
    d = v[:, :, None] - v[:, None, :]  # d[n, i, j] = v_i − v_j
    off = ~np.eye(k, dtype=bool)[None]
    with np.errstate(invalid="ignore"):
        rank = (d > 0).sum(-1)
        above = ((d < 0) & off).sum(-1)
        below_gap = np.where(d > 0, d, np.inf).min(-1)
        above_gap = np.where(-d > 0, -d, np.inf).min(-1)
        nearest = np.where(off & ~np.isnan(d), np.abs(d), np.inf).min(-1)
    present = ~np.isnan(v)
    below_gap, above_gap, nearest = (np.where(np.isfinite(x), x, 0.0) for x in (below_gap, above_gap, nearest))
    mag = np.where(present & (np.abs(v) > 0), np.abs(v), 1.0)
    rng = stats["range"]
    return [
        rank,
        present & (rank == 0),
        present & (above == 0),
        below_gap,
        above_gap,
        below_gap / rng,
        above_gap / rng,
        below_gap / mag,
        above_gap / mag,
        (v - stats["mean"]) / stats["std"],
        nearest / rng,
        nearest / mag,
    ]


def _others(m: np.ndarray) -> np.ndarray:
    """``m[n, i, j]`` without its diagonal, as ``(n, k, k − 1)``."""
    n, k, _ = m.shape
    return m[:, ~np.eye(k, dtype=bool)].reshape(n, k, k - 1)


def _pair_features(v: np.ndarray, stats: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Differences to each other option over the range, and log-ratios to each, both sorted."""
    with np.errstate(invalid="ignore", divide="ignore"):
        diffs = _others(v[:, :, None] - v[:, None, :]) / stats["range"][:, :, None]
        logs = np.log(np.where(np.abs(v) > 0, np.abs(v), np.nan))
        ratios = _others(logs[:, :, None] - logs[:, None, :])
    # NaN sorts last; as features they become 0 (with the missing flag beside them)
    return [np.sort(diffs, axis=-1), np.sort(ratios, axis=-1)]


def _map_features(v: np.ndarray) -> list[np.ndarray]:
    """Per factor f: how many others equal this × f (out), and how many this equals × f of (in)."""
    k = v.shape[1]
    off = ~np.eye(k, dtype=bool)[None]
    outs, ins = [], []
    for f in FACTORS:
        outs.append((_close(v[:, None, :], f * v[:, :, None]) & off).sum(-1))
        ins.append((_close(v[:, :, None], f * v[:, None, :]) & off).sum(-1))
    return outs + ins


def _progression_features(v: np.ndarray) -> list[np.ndarray]:
    """Midpoint of a pair, end of a progression, and matched pair gaps (with the upper member)."""
    n, k = v.shape
    mid, end, match, top = (np.zeros((n, k)) for _ in range(4))
    for i in range(k):
        others = [j for j in range(k) if j != i]
        for a, b in combinations(others, 2):
            mid[:, i] += _close(v[:, i] - v[:, a], v[:, b] - v[:, i])
        for a, b in permutations(others, 2):
            end[:, i] += _close(v[:, i], 2 * v[:, a] - v[:, b])
        for p in others:
            rest = [j for j in others if j != p]
            for a, b in combinations(rest, 2):
                hit = _close(np.abs(v[:, i] - v[:, p]), np.abs(v[:, a] - v[:, b]))
                match[:, i] += hit
                with np.errstate(invalid="ignore"):
                    top[:, i] += hit & (v[:, i] > v[:, p])
    return [mid, end, match, top]


def _digit_features(v: np.ndarray, stats: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """Roundness and written form: trailing zeros, ×5, digits, last and leading digit, size."""
    present = ~np.isnan(v)
    mag = np.where(present, np.abs(v), 0.0)
    whole = np.floor(mag)
    fraction = present & (whole != mag)
    zeros = np.zeros_like(mag)
    for d in range(1, MAX_ZEROS + 1):
        zeros += (whole > 0) & ~fraction & (np.fmod(whole, 10.0**d) == 0)
    digits = np.where(whole > 0, np.floor(np.log10(np.maximum(whole, 1.0))) + 1, 1.0)
    return [
        zeros,
        present & ~fraction & (np.fmod(whole, 5.0) == 0),
        digits,
        np.fmod(whole, 10.0),
        np.floor(whole / 10.0 ** (digits - 1)),
        np.log10(np.where(mag > 0, mag, 1.0)),
        np.where(present, v, 0.0) / stats["max"],
        fraction,
    ]


def _text_features(items: Sequence[ChoiceItem]) -> list[np.ndarray]:
    """Ending length, length minus the set's mean, and how many others share its digit-masked form."""
    lengths = np.array([[len(e) for e in it.endings] for it in items], dtype=float)
    shapes = [[re.sub(r"\d+", "#", e) for e in it.endings] for it in items]
    same = np.array([[sum(s == t for t in row) - 1 for s in row] for row in shapes], dtype=float)
    return [lengths, lengths - lengths.mean(1, keepdims=True), same]


def option_features(items: Sequence[ChoiceItem]) -> np.ndarray:
    """The ``(items, options, features)`` array of :data:`FEATURES` (group code not included)."""
    v = value_matrix(items)
    stats = _set_stats(v)
    cols: list[np.ndarray] = [
        *_order_features(v, stats),
        *_pair_features(v, stats),
        *_map_features(v),
        *_progression_features(v),
        *_digit_features(v, stats),
        *_text_features(items),
        np.isnan(v),
    ]
    parts = [c.astype(float) if c.ndim == 3 else c.astype(float)[:, :, None] for c in cols]
    out = np.concatenate(parts, axis=-1)
    missing = np.isnan(v)[:, :, None]
    out = np.where(missing & (np.arange(out.shape[-1]) < out.shape[-1] - 4)[None, None], 0.0, out)
    return np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)


# ---------------------------------------------------------------------------------------
# Shared machinery of the adversaries
# ---------------------------------------------------------------------------------------


@contextmanager
def one_thread():
    """BLAS and OpenMP held to one thread: sums then run in one order, so a fit gives the same
    model on any machine whatever its core count."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


class GroupCodes:
    """The groups seen in training, in sorted order; an unseen group has no code."""

    def __init__(self, items: Sequence[ChoiceItem]):
        self.names = sorted({it.group for it in items})
        self.index = {g: i for i, g in enumerate(self.names)}

    def ordinal(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        """One code per item; NaN for an unseen group (a tree model's missing category)."""
        return np.array([self.index.get(it.group, np.nan) for it in items], dtype=float)

    def one_hot(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        """``(items, groups)`` 0/1; an unseen group is all zeros."""
        out = np.zeros((len(items), len(self.names)))
        for row, it in enumerate(items):
            if it.group in self.index:
                out[row, self.index[it.group]] = 1.0
        return out


def pick_rows(scores: np.ndarray) -> list[int]:
    """Per item (row), the option with the highest score; ties to the lowest index."""
    return [int(i) for i in np.argmax(scores, axis=1)]


def key_targets(items: Sequence[ChoiceItem]) -> np.ndarray:
    """The pointwise targets: ``(items · options,)``, 1 for the key's row."""
    k = option_count(items)
    return (np.arange(k)[None, :] == labels(items)[:, None]).reshape(-1).astype(int)


def sorted_order(items: Sequence[ChoiceItem]) -> np.ndarray:
    """Per item, the slots in ascending order of value (missing as 0; equal values by slot)."""
    return np.argsort(filled_values(items), axis=1, kind="stable")


def sorted_key_position(items: Sequence[ChoiceItem]) -> np.ndarray:
    """Per item, where the key sits among the values sorted ascending (:func:`sorted_order`)."""
    order = sorted_order(items)
    return np.argmax(order == labels(items)[:, None], axis=1)


def slots_from_positions(items: Sequence[ChoiceItem], positions: Sequence[int]) -> list[int]:
    """Sorted positions mapped back to slots."""
    order = sorted_order(items)
    return [int(order[r, int(p)]) for r, p in enumerate(positions)]


class Adversary:
    """Base class: ``fit`` and ``predict`` take items (or mappings), hold the thread pools to one
    thread and delegate to ``_fit`` / ``_predict``."""

    name = "adversary"

    def fit(self, items: Sequence[ChoiceItem | Mapping[str, Any]]) -> Adversary:
        items = as_items(items)
        self.k = option_count(items)
        with one_thread():
            self._fit(items)
        return self

    def predict(self, items: Sequence[ChoiceItem | Mapping[str, Any]]) -> list[int]:
        items = as_items(items)
        if option_count(items) != self.k:
            raise InputError(f"trained on items with {self.k} options, asked about {option_count(items)}")
        with one_thread():
            return self._predict(items)

    def _fit(self, items: list[ChoiceItem]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict(self, items: list[ChoiceItem]) -> list[int]:  # pragma: no cover - abstract
        raise NotImplementedError


# ---------------------------------------------------------------------------------------
# The adversaries
# ---------------------------------------------------------------------------------------


class TreesAdversary(Adversary):
    """Gradient-boosted trees over :data:`FEATURES` plus the group code, one row per option."""

    name = "trees"

    def __init__(self, *, max_iter: int = 300, random_state: int = 0):
        self.max_iter = max_iter
        self.random_state = random_state

    def _rows(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        feats = option_features(items)
        n, k, f = feats.shape
        codes = np.repeat(self.codes.ordinal(items), k)[:, None]
        return np.concatenate([feats.reshape(n * k, f), codes], axis=1)

    def _fit(self, items: list[ChoiceItem]) -> None:
        from sklearn.ensemble import HistGradientBoostingClassifier

        self.codes = GroupCodes(items)
        x = self._rows(items)
        categorical = [x.shape[1] - 1] if len(self.codes.names) < 250 else None
        self.model = HistGradientBoostingClassifier(
            max_iter=self.max_iter,
            learning_rate=0.1,
            max_leaf_nodes=31,
            categorical_features=categorical,
            early_stopping=True,
            validation_fraction=0.1,
            n_iter_no_change=15,
            random_state=self.random_state,
        ).fit(x, key_targets(items))

    def _predict(self, items: list[ChoiceItem]) -> list[int]:
        proba = self.model.predict_proba(self._rows(items))[:, 1]
        return pick_rows(proba.reshape(len(items), self.k))


class KnnAdversary(Adversary):
    """k nearest neighbours on the sorted values over the largest, within the item's group."""

    name = "knn"

    #: the weight of the one-hot group code: far above any distance between scaled value vectors
    GROUP_WEIGHT = 1000.0

    def __init__(self, *, n_neighbors: int = 25):
        self.n_neighbors = n_neighbors

    def _points(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        v = np.sort(filled_values(items), axis=1)
        big = np.abs(v).max(1, keepdims=True)
        scaled = v / np.where(big > 0, big, 1.0)
        return np.concatenate([scaled, self.GROUP_WEIGHT * self.codes.one_hot(items)], axis=1)

    def _fit(self, items: list[ChoiceItem]) -> None:
        from sklearn.neighbors import KNeighborsClassifier

        self.codes = GroupCodes(items)
        self.model = KNeighborsClassifier(n_neighbors=min(self.n_neighbors, len(items)), algorithm="brute")
        self.model.fit(self._points(items), sorted_key_position(items))

    def _predict(self, items: list[ChoiceItem]) -> list[int]:
        return slots_from_positions(items, self.model.predict(self._points(items)))


class GapOrderAdversary(Adversary):
    """Per group, the order of the gaps between sorted values → the most frequent key position."""

    name = "gap_order"

    @staticmethod
    def _orders(items: Sequence[ChoiceItem]) -> list[tuple[int, ...]]:
        gaps = np.diff(np.sort(filled_values(items), axis=1), axis=1)
        return [tuple(int(i) for i in np.argsort(row, kind="stable")) for row in gaps]

    @staticmethod
    def _best(counts: Counter) -> int:
        """The most frequent position; ties to the lowest."""
        return min(counts, key=lambda pos: (-counts[pos], pos))

    def _fit(self, items: list[ChoiceItem]) -> None:
        self.by_order: dict[tuple, Counter] = {}
        self.by_group: dict[str, Counter] = {}
        self.overall: Counter = Counter()
        for it, order, pos in zip(items, self._orders(items), sorted_key_position(items)):
            self.by_order.setdefault((it.group, order), Counter())[int(pos)] += 1
            self.by_group.setdefault(it.group, Counter())[int(pos)] += 1
            self.overall[int(pos)] += 1

    def _predict(self, items: list[ChoiceItem]) -> list[int]:
        positions = []
        for it, order in zip(items, self._orders(items)):
            counts = self.by_order.get((it.group, order)) or self.by_group.get(it.group) or self.overall
            positions.append(self._best(counts))
        return slots_from_positions(items, positions)


class DeepSetsAdversary(Adversary):
    """A shared MLP over each option's features joined with the set's mean and max (DeepSets)."""

    name = "deepsets"

    def __init__(self, *, hidden: tuple[int, ...] = (64,), max_iter: int = 60, random_state: int = 0):
        self.hidden = hidden
        self.max_iter = max_iter
        self.random_state = random_state

    def _rows(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        feats = option_features(items)
        n, k, _ = feats.shape
        groups = np.repeat(self.codes.one_hot(items)[:, None, :], k, axis=1)
        own = np.concatenate([feats, groups], axis=-1)
        pooled = [np.repeat(f(feats, axis=1, keepdims=True), k, axis=1) for f in (np.mean, np.max)]
        rows = np.concatenate([own, *pooled], axis=-1)
        return rows.reshape(n * k, rows.shape[-1])

    def _fit(self, items: list[ChoiceItem]) -> None:
        import warnings

        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.codes = GroupCodes(items)
        mlp = MLPClassifier(
            hidden_layer_sizes=self.hidden,
            alpha=1e-4,
            batch_size=256,
            learning_rate_init=1e-3,
            max_iter=self.max_iter,
            early_stopping=True,
            n_iter_no_change=6,
            random_state=self.random_state,
        )
        self.model = make_pipeline(StandardScaler(), mlp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model.fit(self._rows(items), key_targets(items))

    def _predict(self, items: list[ChoiceItem]) -> list[int]:
        proba = self.model.predict_proba(self._rows(items))[:, 1]
        return pick_rows(proba.reshape(len(items), self.k))


Embedder = Callable[[Sequence[str]], np.ndarray]


class EmbeddingAdversary(Adversary):
    """A logistic-regression probe on frozen embeddings of the endings, ``[e_i, d_i, |d_i|]`` with
    ``d_i = e_i − mean_j e_j``: what an ending says, how it differs from the set, and how far (the
    last makes "the one unlike the others" linear, whichever way it differs)."""

    name = "embedding"

    def __init__(self, embed: Embedder, *, c: float = 1.0):
        self.embed = embed
        self.c = c

    def _rows(self, items: Sequence[ChoiceItem]) -> np.ndarray:
        texts = sorted({e for it in items for e in it.endings})
        vectors = np.asarray(self.embed(texts), dtype=float)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise InputError(f"embed() returned shape {vectors.shape} for {len(texts)} texts; expected (texts, dims)")
        where = {t: i for i, t in enumerate(texts)}
        e = vectors[[[where[x] for x in it.endings] for it in items]]  # (n, k, d)
        d = e - e.mean(1, keepdims=True)
        rows = np.concatenate([e, d, np.abs(d)], axis=-1)
        return rows.reshape(-1, rows.shape[-1])

    def _fit(self, items: list[ChoiceItem]) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        self.model = make_pipeline(StandardScaler(), LogisticRegression(C=self.c, max_iter=2000))
        self.model.fit(self._rows(items), key_targets(items))

    def _predict(self, items: list[ChoiceItem]) -> list[int]:
        proba = self.model.predict_proba(self._rows(items))[:, 1]
        return pick_rows(proba.reshape(len(items), self.k))


def char_ngram_embedder(dims: int = 256) -> Embedder:
    """A model-free text embedding: hashed character 2–4-grams, L2-normalised (deterministic).
    A stand-in where no model embedder is at hand; it sees how endings are written, not meaning."""
    from sklearn.feature_extraction.text import HashingVectorizer

    vec = HashingVectorizer(analyzer="char", ngram_range=(2, 4), n_features=dims, alternate_sign=True, norm="l2")

    def embed(texts: Sequence[str]) -> np.ndarray:
        return vec.transform(list(texts)).toarray()

    return embed


#: the numeric adversaries, run by default
NUMERIC_ADVERSARIES = ("trees", "knn", "deepsets", "gap_order")

#: every adversary name (``embedding`` needs an embedder)
ADVERSARIES = (*NUMERIC_ADVERSARIES, "embedding")


def make_adversary(name: str, *, embed: Embedder | None = None) -> Adversary:
    """A fresh adversary of class ``name`` (:data:`ADVERSARIES`)."""
    simple = {
        "trees": TreesAdversary,
        "knn": KnnAdversary,
        "deepsets": DeepSetsAdversary,
        "gap_order": GapOrderAdversary,
    }
    if name in simple:
        return simple[name]()
    if name == "embedding":
        if embed is None:
            raise InputError("the embedding adversary needs an embedder (embed=...)", field="adversaries")
        return EmbeddingAdversary(embed)
    raise InputError(f"no adversary {name!r}; expected some of {', '.join(ADVERSARIES)}", field="adversaries")


# ---------------------------------------------------------------------------------------
# The audit: fit, score, screen, controls, verdict
# ---------------------------------------------------------------------------------------

#: a control expected to fail fails when an adversary is above chance at this level (one-sided
#: exact binomial, Bonferroni across the adversaries); the null must stay below it
CONTROL_ALPHA = 0.01

#: the per-stratum screen's family-wise level (Holm across strata and adversaries of a test set)
SCREEN_ALPHA = 0.05


@dataclass(frozen=True)
class Control:
    """A build the audit must judge as expected: ``expect="fail"`` (a planted leak the adversaries
    must find) or ``"pass"`` (a null: labels independent of the options). ``train`` None reuses
    the adversaries fitted on the audit's own training items (a null needs no training of its own)."""

    name: str
    train: Sequence[ChoiceItem | Mapping[str, Any]] | None
    test: Sequence[ChoiceItem | Mapping[str, Any]]
    expect: str = "fail"
    note: str = ""


Step = Callable[[str], None]


def _clock(step: Step | None, what: str, fn: Callable[[], Any]) -> tuple[Any, float]:
    """Run ``fn`` after announcing ``what``; its result and the seconds it took."""
    if step is not None:
        step(what)
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def fit_adversaries(
    names: Sequence[str], train: Sequence[ChoiceItem], *, embed: Embedder | None = None, step: Step | None = None
) -> dict[str, tuple[Adversary, float]]:
    """Each adversary fitted on ``train``, with its fit seconds."""
    out = {}
    for name in names:
        adv = make_adversary(name, embed=embed)
        out[name] = _clock(step, f"fit {name}", lambda adv=adv: adv.fit(train))
    return out


def cluster_counts(items: Sequence[ChoiceItem], hits: Sequence[bool]) -> list[tuple[int, int]] | None:
    """``(correct, items)`` per cluster, or None when no item names a cluster (an item without
    one is a cluster of its own)."""
    if all(it.cluster is None for it in items):
        return None
    counts: dict[str, list[int]] = {}
    for row, (it, hit) in enumerate(zip(items, hits)):
        key = it.cluster if it.cluster is not None else f"\x00item{row}"
        c = counts.setdefault(key, [0, 0])
        c[0] += int(hit)
        c[1] += 1
    return [(k, m) for k, m in counts.values()]


def strata_rows(items: Sequence[ChoiceItem], hits: Sequence[bool], adversary: str) -> list[dict[str, Any]]:
    """The screen's strata of one adversary on one test set: all items, each depth, each group."""
    keys: dict[tuple[str, str], list[int]] = {("all", "all"): [0, 0]}
    for it, hit in zip(items, hits):
        for key in (("all", "all"), ("depth", str(it.depth)), ("group", it.group)):
            if key[0] == "depth" and it.depth is None:
                continue
            c = keys.setdefault(key, [0, 0])
            c[0] += int(hit)
            c[1] += 1
    return [
        {"adversary": adversary, "kind": kind, "stratum": value, "correct": c, "n": n}
        for (kind, value), (c, n) in sorted(keys.items(), key=lambda kv: (kv[0][0] != "all", kv[0]))
    ]


def score_test_set(
    fitted: Mapping[str, tuple[Adversary, float]],
    items: Sequence[ChoiceItem],
    *,
    chance: float,
    margin: float,
    step: Step | None = None,
    label: str = "",
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each adversary's equivalence block on ``items``, and the screen's strata rows."""
    blocks, strata = {}, []
    truth = labels(items)
    for name, (adv, _) in fitted.items():
        picks, seconds = _clock(step, f"predict {name} on {label}", lambda adv=adv: adv.predict(items))
        hits = [bool(p == t) for p, t in zip(picks, truth)]
        block = equivalence_block(sum(hits), len(hits), chance, margin=margin, clusters=cluster_counts(items, hits))
        block["predict_seconds"] = seconds
        blocks[name] = block
        strata.extend(strata_rows(items, hits, name))
    return blocks, strata


def set_status(blocks: Mapping[str, Mapping[str, Any]], screen: Sequence[Mapping[str, Any]]) -> str:
    """``fails`` (an adversary outside the margin or a stratum flagged), ``passes`` (the
    equivalence shown for every adversary) or ``screen only`` (too few items to show it)."""
    if any(b["passes"] is False for b in blocks.values()) or any(r["flagged"] for r in screen):
        return "fails"
    if all(b["applies"] for b in blocks.values()):
        return "passes"
    return "screen only"


def run_control(
    control: Control,
    names: Sequence[str],
    fitted: Mapping[str, tuple[Adversary, float]],
    *,
    chance: float,
    embed: Embedder | None = None,
    alpha: float = CONTROL_ALPHA,
    step: Step | None = None,
) -> dict[str, Any]:
    """One control: the adversaries (fitted on its own training items, or the audit's when it has
    none) scored on its test items. It *fails* when the best adversary's one-sided exact p-value,
    Bonferroni-corrected across the adversaries, is below ``alpha``."""
    start = time.perf_counter()
    test = as_items(control.test)
    models = fitted
    if control.train is not None:
        models = fit_adversaries(names, as_items(control.train), embed=embed, step=step)
    truth = labels(test)
    per: dict[str, Any] = {}
    for name, (adv, fit_seconds) in models.items():
        picks, seconds = _clock(step, f"predict {name} on {control.name}", lambda adv=adv: adv.predict(test))
        correct = int(sum(p == t for p, t in zip(picks, truth)))
        per[name] = {
            "correct": correct,
            "n": len(test),
            "accuracy": correct / len(test),
            "p_above_chance": above_chance_p(correct, len(test), chance),
            "fit_seconds": fit_seconds if control.train is not None else 0.0,
            "predict_seconds": seconds,
        }
    best = min(per, key=lambda n: (per[n]["p_above_chance"], -per[n]["accuracy"], n))
    p_best = min(1.0, per[best]["p_above_chance"] * len(per))
    outcome = "fail" if p_best < alpha else "pass"
    return {
        "name": control.name,
        "note": control.note,
        "expect": control.expect,
        "train_n": None if control.train is None else len(control.train),
        "test_n": len(test),
        "best_adversary": best,
        "best_accuracy": per[best]["accuracy"],
        "best_p_bonferroni": p_best,
        "outcome": outcome,
        "as_expected": outcome == control.expect,
        "adversaries": per,
        "seconds": time.perf_counter() - start,
    }


def verdict(test_sets: Mapping[str, Mapping[str, Any]], controls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The audit's verdict from the test sets' statuses and the controls.

    ``no power`` when the null control failed (the statistics cannot be trusted, whatever else
    they say); else ``fails`` when a test set fails (a leak found needs no power to be believed);
    else ``no power`` when a control expected to fail passed; else ``inconclusive`` when no test
    set was large enough to show the equivalence; else ``passes``."""
    nulls_ok = all(c["as_expected"] for c in controls if c["expect"] == "pass")
    leaks_ok = all(c["as_expected"] for c in controls if c["expect"] == "fail")
    failing = [name for name, t in test_sets.items() if t["status"] == "fails"]
    shown = [name for name, t in test_sets.items() if t["status"] == "passes"]
    missed = [c["name"] for c in controls if not c["as_expected"]]
    if not nulls_ok:
        status, text = "no power", f"no power: the null control(s) {', '.join(missed)} failed"
    elif failing:
        status, text = "fails", f"fails: the options give the key away on {', '.join(failing)}"
    elif not leaks_ok:
        status, text = "no power", f"no power: the planted leak(s) {', '.join(missed)} went unseen"
    elif not shown:
        status, text = "inconclusive", "inconclusive: no test set was large enough to show the accuracy at chance"
    else:
        status, text = "passes", f"passes: every adversary within the margin on {', '.join(shown)}"
    if failing and not leaks_ok:
        text += f"; and the planted leak(s) {', '.join(missed)} went unseen (no power)"
    return {
        "status": status,
        "passes": status == "passes",
        "power": None if not controls else nulls_ok and leaks_ok,
        "failing": failing,
        "controls_missed": missed,
        "text": text,
    }


def _plain(obj: Any) -> Any:
    """``obj`` with numpy scalars as Python numbers and NaN / infinity as None (strict JSON)."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def count_steps(n_adversaries: int, n_test_sets: int, controls: Sequence[Control]) -> int:
    """How many times :func:`run_audit` calls its ``step`` (for a progress bar's total)."""
    own = sum(c.train is not None for c in controls)
    return n_adversaries * (1 + n_test_sets + len(controls) + own)


def run_audit(
    train_items: Sequence[ChoiceItem | Mapping[str, Any]],
    test_sets: Mapping[str, Sequence[ChoiceItem | Mapping[str, Any]]],
    adversaries: Sequence[str] = NUMERIC_ADVERSARIES,
    controls: Sequence[Control] = (),
    *,
    embed: Embedder | None = None,
    margin: float = MARGIN,
    screen_alpha: float = SCREEN_ALPHA,
    control_alpha: float = CONTROL_ALPHA,
    step: Step | None = None,
) -> dict[str, Any]:
    """Train each adversary on ``train_items``, score it on every test set (equivalence block,
    clusters where items name them), screen each test set's strata (Holm across strata and
    adversaries), run the controls and give the verdict (:func:`verdict`). A plain dict, ready
    for JSON. ``step(what)`` is called before every fit and prediction (a progress bar)."""
    train = as_items(train_items)
    k = option_count(train)
    chance = 1.0 / k
    names = list(dict.fromkeys(adversaries))
    for name in names:
        make_adversary(name, embed=embed)  # an unknown name fails before any work
    fitted = fit_adversaries(names, train, embed=embed, step=step)
    sets: dict[str, Any] = {}
    for label, raw in test_sets.items():
        items = as_items(raw)
        blocks, strata = score_test_set(fitted, items, chance=chance, margin=margin, step=step, label=label)
        screen = holm_screen(strata, chance, screen_alpha)
        sets[label] = {"n": len(items), "adversaries": blocks, "screen": screen}
        sets[label]["status"] = set_status(blocks, screen)
    done = [run_control(c, names, fitted, chance=chance, embed=embed, alpha=control_alpha, step=step) for c in controls]
    report = {
        "chance": chance,
        "margin": margin,
        "bounds": [chance - margin, chance + margin],
        "confidence": 0.90,
        "screen_alpha": screen_alpha,
        "control_alpha": control_alpha,
        "options": k,
        "train_n": len(train),
        "adversaries": {n: {"fit_seconds": fitted[n][1]} for n in names},
        "test_sets": sets,
        "controls": done,
        "verdict": verdict(sets, done),
    }
    return _plain(report)
