"""The GPT-3 synthetic tasks' ``hub_results`` part (:mod:`synthprobe.registry`): their scores on
a Hub model card (``synthprobe export hub-results``), accuracy per task and setting."""

from __future__ import annotations

from synthprobe.results import Entry, Results

#: the Hub dataset id and name the scores are reported against
DATASET = ("synthprobe/gpt3-synthetic", "GPT-3 synthetic tasks (synthprobe)")


def eval_results(results: Results, entry: Entry) -> list:
    """The entry's GPT-3 rows as ``huggingface_hub.EvalResult``s (percentages)."""
    from huggingface_hub import EvalResult

    return [
        EvalResult(
            task_type="text-generation",
            dataset_type=DATASET[0],
            dataset_name=DATASET[1],
            dataset_config=str(row["task"]),
            dataset_split="test",
            task_name=f"{row['code']} {row['setting']}-shot",
            metric_type="accuracy",
            metric_name=f"accuracy {row['code']} {row['setting']} (%)",
            metric_value=round(float(row["accuracy"]), 2),
        )
        for row in entry.results["gpt3"].data["rows"]
    ]
