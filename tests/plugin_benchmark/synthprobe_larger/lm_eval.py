"""The benchmark's ``lm_eval`` part: its results block as an lm-eval ``multiple_choice`` task in
the files of ``synthprobe export lm-eval-results`` (it writes no task YAML, so it has no
``task_files``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.export.lm_eval.files import EntryTasks, TaskRun, mc_sample, model_args, task_config
from synthprobe_larger import NAME, load, prompt

#: keyword options of the lm-eval exports this part takes: none
OPTIONS = ()
#: what of its results lm-eval's files have a task for
SCORED = "Which is larger with its records"


def result_tasks(results, entry, *, shared: dict) -> EntryTasks:
    """The block's records as the zero-shot task ``larger``, read against the data file it names."""
    block = entry.results[NAME]
    dataset = block.data.get("dataset") or {}
    path = Path(str(dataset.get("path")))
    if not path.is_absolute() and not path.is_file():
        path = results.path.parent / path
    if not path.is_file():
        raise results.reader.fail(f"{block.where}.dataset.path", f"{dataset.get('path')!r} is not found")
    if hashlib.sha256(path.read_bytes()).hexdigest() != dataset.get("sha256"):
        raise InputError("is not the file the model was scored on (SHA-256 differs)", path=path)
    items = load(path)
    index = {item["id"]: i for i, item in enumerate(items)}
    samples = []
    for rec in block.data["records"]:
        i = index[rec["id"]]
        item = items[i]
        samples.append(
            mc_sample(
                i, item, prompt(item), [f" {c}" for c in item["choices"]], item["label"], rec, logprob=rec["logprobs"]
            )
        )
    body = {
        "task": NAME,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(path.resolve())}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "Question: {{question}}\nAnswer:",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "{{label}}",
        "num_fewshot": 0,
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    cfg = task_config(body, sampler="default", metadata_extra=model_args(entry), config_source=f"{NAME}.yaml")
    task = TaskRun(
        NAME,
        cfg,
        0,
        len(items),
        samples,
        "none",
        ("acc", "acc_norm"),
        key=NAME,
        where=block.where,
        drop=(NAME, "records"),
    )
    return EntryTasks([task])
