"""Deep Arithmark's ``hub_results`` part (:mod:`synthprobe.registry`): its scores on a Hub model
card (``synthprobe export hub-results``), overall and per depth, under the entry's own metric:
acc_norm for log-likelihood, accuracy (named with its protocol) for generated answers."""

from __future__ import annotations

from synthprobe.results import Entry, Results, primary_metric

#: the Hub dataset id and name the scores are reported against
DATASET = ("synthprobe/deeparithmark-1", "Deep Arithmark-1")


def eval_results(results: Results, entry: Entry) -> list:
    """The entry's Deep Arithmark scores as ``huggingface_hub.EvalResult``s (percentages)."""
    from huggingface_hub import EvalResult

    deep = entry.results["deeparithmark"]
    summary = deep.data["summary"]
    sha = (deep.data.get("dataset") or {}).get("sha256") or results.dataset_sha256("deeparithmark")
    common = {
        "task_type": "multiple-choice",
        "dataset_type": DATASET[0],
        "dataset_split": "test",
        "dataset_revision": sha,
    }
    metric = primary_metric(summary)
    acc = summary["metrics"][metric]
    name = "acc_norm (per-token" if metric == "acc_norm" else f"accuracy ({deep.data.get('protocol')}, generated"
    out = [
        EvalResult(
            task_name="Deep Arithmark (zero-shot)",
            dataset_name=DATASET[1],
            metric_type=metric,
            metric_name=f"{name}, %)",
            metric_value=round(100 * acc["correct"] / acc["total"], 2),
            **common,
        )
    ]
    for d, block in sorted(summary["by_depth"].items(), key=lambda kv: int(kv[0])):
        if block.get("n"):
            out.append(
                EvalResult(
                    task_name=f"Deep Arithmark depth {d}",
                    dataset_name=DATASET[1],
                    dataset_config=f"depth{d}",
                    metric_type=metric,
                    metric_name=f"{name.split(' (')[0]} depth {d} (%)",
                    metric_value=round(100 * block["correct"] / block["n"], 2),
                    **common,
                )
            )
    return out
