"""Seed-to-seed spread of a sweep: per model the mean and standard deviation of a score across
seeds, and whether the models' rank order holds from seed to seed.

Rank agreement is Kendall's coefficient of concordance W over the seeds every model was scored
on (the seeds are the "raters", the models the ranked objects; ties get average ranks and the
usual tie correction), with Friedman's chi-square test of W = 0, and, more plainly, the share of
seeds whose ranking of the models equals the ranking by the mean. Pure numbers: imports nothing
from scoring, tasks or report.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _ranks(values) -> Any:
    """Rank 1 = highest score; ties share their average rank."""
    import numpy as np
    from scipy.stats import rankdata

    return rankdata(-np.asarray(values, dtype=float), method="average")


def kendalls_w(table) -> tuple[float | None, float | None]:
    """Kendall's W (tie-corrected) and Friedman's p-value for a seeds × models score table.

    None, None with fewer than two seeds or two models, or when every seed ties every model."""
    import numpy as np
    from scipy.stats import chi2

    scores = np.asarray(table, dtype=float)
    if scores.ndim != 2 or scores.shape[0] < 2 or scores.shape[1] < 2:
        return None, None
    m, n = scores.shape
    ranks = np.vstack([_ranks(row) for row in scores])
    totals = ranks.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts**3 - counts).sum())
    denominator = m**2 * (n**3 - n) - m * ties
    if denominator <= 0:
        return None, None
    w = 12.0 * s / denominator
    return w, float(chi2.sf(m * (n - 1) * w, n - 1))


def seed_spread(scores: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """``scores``: model label → seed label → score (a fraction). Returns::

        {"models": {label: {"n_seeds", "mean", "sd" (None for one seed), "min", "max",
                            "rank_by_mean", "seeds_at_rank_by_mean"}},
         "seeds_compared": [seed labels every model has, in the first model's order],
         "kendalls_w": W or None, "friedman_p": p or None,
         "seeds_matching_mean_ranking": k, "share_matching_mean_ranking": k / seeds or None}

    Models keep the order of ``scores``; the mean ranking and W use only the compared seeds."""
    import numpy as np

    labels = list(scores)
    out: dict[str, Any] = {"models": {}}
    for label in labels:
        values = np.asarray(list(scores[label].values()), dtype=float)
        out["models"][label] = {
            "n_seeds": int(values.size),
            "mean": float(values.mean()) if values.size else None,
            "sd": float(values.std(ddof=1)) if values.size > 1 else None,
            "min": float(values.min()) if values.size else None,
            "max": float(values.max()) if values.size else None,
        }
    first = list(scores[labels[0]]) if labels else []
    common = [s for s in first if all(s in scores[m] for m in labels)]
    out["seeds_compared"] = common
    table = np.asarray([[scores[m][s] for m in labels] for s in common], dtype=float).reshape(len(common), len(labels))
    if common and labels:
        by_mean = _ranks(table.mean(axis=0))
        per_seed = [_ranks(row) for row in table]
        for j, label in enumerate(labels):
            out["models"][label]["rank_by_mean"] = float(by_mean[j])
            out["models"][label]["seeds_at_rank_by_mean"] = int(sum(r[j] == by_mean[j] for r in per_seed))
        matching = sum(bool(np.array_equal(r, by_mean)) for r in per_seed)
    else:
        matching = 0
    w, p = kendalls_w(table)
    out["kendalls_w"] = w
    out["friedman_p"] = p
    out["seeds_matching_mean_ranking"] = int(matching)
    out["share_matching_mean_ranking"] = matching / len(common) if common else None
    return out
