"""Seed variance: how much a model's score moves from one build of the benchmark to the next.

The model is scored (the release protocol: log-likelihood, ``acc_norm``, through the score
command's own scorer and cache, :func:`synthprobe.benchmarks.deeparithmark.scoring.workloads.score_dataset`) on
K fresh full-size builds at seeds derived from the run's ``--seed``
(:func:`synthprobe.validity.sources.fresh_seed`, purpose ``"seeds"``), and on the file under test.
The ``seeds`` block of the validity section::

    "seeds": {
      "protocol": "loglik acc_norm", "k", "n",
      "per_seed": [{"seed", "n", "correct", "accuracy", "by_depth": {d: acc}, "by_template": {t: acc}}],
      "overall": {"mean", "sd", "min", "max", "ci95": [lo, hi]},     # ci95: t interval of the mean
      "by_depth": {d: {"mean", "sd", "min", "max"}}, "by_template": {t: {...}},
      "release": {"accuracy", "z", "share_below", "verdict"}        # the file under test in that spread
    }

Two models across the same seeds: :func:`paired` (a paired t-test of the per-seed accuracies).
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from synthprobe.errors import InputError
from synthprobe.items import MCItem
from synthprobe.metrics.stats import mean_ci, paired_over_seeds
from synthprobe.validity import sources
from synthprobe.validity.curve import grouped


def seed_list(seed: int, k: int) -> list[int]:
    if k < 2:
        raise InputError(f"a variance needs at least two builds, got {k}", field="--seeds")
    return [sources.fresh_seed(seed, "seeds", i) for i in range(k)]


def _score(backend, items: Sequence[MCItem], info: dict, *, batch_size: int, progress: bool) -> list[bool]:
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset, score_dataset
    from synthprobe.scoring.records import record_correct

    config = ScoreConfig(batch_size=batch_size, progress=progress)
    block = score_dataset(backend, Dataset("deeparithmark", list(items), info), config, echo=lambda _: None)
    return [bool(record_correct(r)) for r in block["predictions"]]


def _one(items: Sequence[MCItem], correct: Sequence[bool], seed: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seed": seed,
        "n": len(items),
        "correct": sum(correct),
        "accuracy": round(sum(correct) / len(items), 6),
    }
    for name, groups in grouped(items, correct).items():
        out[name] = {g: round(sum(v) / len(v), 6) for g, v in groups.items()}
    return out


def spread(values: Sequence[float]) -> dict[str, Any]:
    m, lo, hi = mean_ci(values)
    return {
        "mean": round(m, 6),
        "sd": round(statistics.stdev(values), 6) if len(values) > 1 else None,
        "min": min(values),
        "max": max(values),
        "ci95": None if lo is None else [round(lo, 6), round(hi, 6)],
    }


def summarise(per_seed: Sequence[Mapping[str, Any]], release: Mapping[str, Any] | None) -> dict[str, Any]:
    accs = [p["accuracy"] for p in per_seed]
    out: dict[str, Any] = {
        "k": len(per_seed),
        "n": per_seed[0]["n"],
        "per_seed": list(per_seed),
        "overall": spread(accs),
    }
    for name in ("by_depth", "by_template"):
        keys = sorted({g for p in per_seed for g in p[name]})
        out[name] = {g: spread([p[name][g] for p in per_seed if g in p[name]]) for g in keys}
    if release is not None:
        sd = out["overall"]["sd"]
        z = (release["accuracy"] - out["overall"]["mean"]) / sd if sd else None
        below = sum(a < release["accuracy"] for a in accs) / len(accs)
        out["release"] = {
            "accuracy": release["accuracy"],
            "z": None if z is None else round(z, 3),
            "share_below": round(below, 6),
            "verdict": (
                f"the file's {100 * release['accuracy']:.1f} % lies "
                + ("at the mean" if z is None else f"{abs(z):.2f} sd {'above' if z > 0 else 'below'} the mean")
                + f" of {len(accs)} fresh builds ({100 * out['overall']['mean']:.1f} %, range "
                f"{100 * min(accs):.1f}-{100 * max(accs):.1f} %)"
            ),
        }
    return out


def seed_variance(
    backend,
    test: Sequence[MCItem],
    test_info: dict,
    *,
    k: int,
    n: int | None,
    seed: int,
    data,
    batch_size: int = 32,
    progress: bool = True,
) -> dict[str, Any]:
    """Score ``backend`` on ``k`` fresh builds of ``n`` items (default: as many as ``test``) of the
    families of ``data``, and on ``test``; the ``seeds`` block."""
    n = n or len(test)
    make = sources.deeparithmark_builder(data)
    per_seed = []
    for s in seed_list(seed, k):
        records = make(s, n)
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in records)
        items = [sources.item_from_record(r, path=f"fresh build seed {s}", line=i + 1) for i, r in enumerate(records)]
        info = {"path": f"fresh build seed {s}", "sha256": hashlib.sha256(text.encode()).hexdigest(), "n_items": n}
        per_seed.append(_one(items, _score(backend, items, info, batch_size=batch_size, progress=progress), s))
    release = _one(test, _score(backend, test, test_info, batch_size=batch_size, progress=progress), None)
    out = {"protocol": "loglik acc_norm", **summarise(per_seed, release)}
    return out


def for_validate(
    backend, config, test: Sequence[MCItem], *, k: int, n: int | None, progress: bool, file: Mapping[str, Any]
) -> dict[str, Any]:
    """``file``: the validity section's ``file`` block (path and SHA-256, already computed); the
    file was checked to be Deep Arithmark before the model loaded (:func:`synthprobe.validity.run.check`)."""
    info = {"path": file["path"], "sha256": file["sha256"], "n_items": len(test)}
    return seed_variance(
        backend,
        test,
        info,
        k=k,
        n=n,
        seed=config.seed,
        data=config.data,
        batch_size=config.batch_size,
        progress=progress,
    )


def paired(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two models' ``seeds`` blocks over the same seeds: the mean per-seed difference b − a and a
    paired t-test (scipy's ``ttest_rel``)."""
    out = paired_over_seeds(
        {p["seed"]: p["accuracy"] for p in a["per_seed"]}, {p["seed"]: p["accuracy"] for p in b["per_seed"]}
    )
    if out["seeds"] < 2:
        raise InputError("the two runs share fewer than two seeds; score both with the same --seed and --seeds")
    return {**out, "mean_difference": round(out["mean_difference"], 6)}
