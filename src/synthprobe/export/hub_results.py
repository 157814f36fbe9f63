"""``synthprobe export hub-results``: one Hugging Face Hub-ready folder per scored model.

Each folder holds ``README.md``, a model card whose YAML header is written by
``huggingface_hub``'s own :class:`~huggingface_hub.ModelCardData` with one
:class:`~huggingface_hub.EvalResult` per score (Deep Arithmark acc_norm overall and per depth,
GPT-3 accuracy per task and setting), so the header is the ``model-index`` the Hub's metadata
check reads; and ``results.json``, the model's entry as one results document. Nothing is
uploaded (that needs the network); the upload command is returned, one per folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from synthprobe.io.paths import slug
from synthprobe.io.write import write_tree
from synthprobe.results import Entry, Results, dumps_results, read_results, results_document

DEEP_DATASET = ("synthprobe/deeparithmark-1", "Deep Arithmark-1")
GPT3_DATASET = ("synthprobe/gpt3-synthetic", "GPT-3 synthetic tasks (synthprobe)")


def eval_results(results: Results, entry: Entry) -> list:
    """The model's scores as ``huggingface_hub.EvalResult``s (percentages)."""
    from huggingface_hub import EvalResult

    out = []
    deep = entry.results.get("deeparithmark")
    if deep is not None:
        summary = deep.data["summary"]
        sha = (deep.data.get("dataset") or {}).get("sha256") or results.dataset_sha256("deeparithmark")
        common = {"task_type": "multiple-choice", "dataset_type": DEEP_DATASET[0], "dataset_split": "test",
                  "dataset_revision": sha}
        acc = summary["metrics"]["acc_norm"]
        out.append(EvalResult(task_name="Deep Arithmark (zero-shot)", dataset_name=DEEP_DATASET[1],
                              metric_type="acc_norm", metric_name="acc_norm (per-token, %)",
                              metric_value=round(100 * acc["correct"] / acc["total"], 2), **common))
        for d, block in sorted(summary["by_depth"].items(), key=lambda kv: int(kv[0])):
            if block.get("n"):
                out.append(EvalResult(task_name=f"Deep Arithmark depth {d}", dataset_name=DEEP_DATASET[1],
                                      dataset_config=f"depth{d}", metric_type="acc_norm",
                                      metric_name=f"acc_norm depth {d} (%)",
                                      metric_value=round(100 * block["correct"] / block["n"], 2), **common))
    gpt3 = entry.results.get("gpt3")
    if gpt3 is not None:
        for row in gpt3.data["rows"]:
            out.append(EvalResult(task_type="text-generation", dataset_type=GPT3_DATASET[0],
                                  dataset_name=GPT3_DATASET[1], dataset_config=str(row["task"]),
                                  dataset_split="test", task_name=f"{row['code']} {row['setting']}-shot",
                                  metric_type="accuracy", metric_name=f"accuracy {row['code']} {row['setting']} (%)",
                                  metric_value=round(float(row["accuracy"]), 2)))
    return out


def card(name: str, parts: Sequence[tuple[Results, Entry]]) -> str:
    """README.md: the YAML header from ModelCardData (every file's scores of the model), then a
    short body."""
    from huggingface_hub import ModelCard, ModelCardData

    found = [r for doc, entry in parts for r in eval_results(doc, entry)]
    data = ModelCardData(model_name=name, eval_results=found, tags=["synthprobe", "evaluation"])
    entry = parts[0][1]
    spec = entry.model.get("spec") or entry.model.get("engine_name") or name
    files = ", ".join(f"`{results_name(doc)}`" for doc, _ in parts)
    body = (f"\n# {name}: synthprobe scores\n\nScores of `{name}` (model `{spec}`, dtype "
            f"{entry.model.get('dtype')}) measured by synthprobe. {files} hold the full results "
            "(settings, per-depth and per-template counts, intervals) as synthprobe results documents "
            "(`synthprobe report` reads them).\n")
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n{body}"))


def results_name(doc: Results) -> str:
    return f"results_{slug(doc.path.stem)}.json"


def export_hub_results(paths: Sequence[str | Path], out: str | Path, *, repo_prefix: str = "YOUR-USER/",
                       overwrite: bool = False) -> tuple[list[Path], list[str]]:
    """Write one folder per model name (its scores from every file); returns the written paths
    and the upload commands."""
    from synthprobe.errors import InputError

    out = Path(out)
    docs = [read_results(p) for p in paths]
    by_name: dict[str, list[tuple[Results, Entry]]] = {}
    for doc in docs:
        for entry in doc.models:
            if {"deeparithmark", "gpt3"} & set(entry.results):
                by_name.setdefault(str(entry.model.get("name")), []).append((doc, entry))
    if not by_name:
        raise InputError("no Deep Arithmark or GPT-3 scores in the given files", field="RESULTS.json")
    files: dict[str, bytes] = {}
    commands: list[str] = []
    for name, parts in by_name.items():
        folder = slug(name)
        if f"{folder}/README.md" in files:
            raise InputError(f"two models would share the folder {folder!r}; name them apart "
                             "(--model NAME=SPEC when scoring)", path=parts[0][0].path)
        if len({results_name(doc) for doc, _ in parts}) != len(parts):
            raise InputError(f"{name!r} is in two files of the same name; give the files distinct names",
                             path=parts[0][0].path)
        files[f"{folder}/README.md"] = card(name, parts).encode("utf-8")
        for doc, entry in parts:
            one = results_document(synthprobe=doc.synthprobe, datasets=doc.datasets or None, models=[entry.data])
            files[f"{folder}/{results_name(doc)}"] = dumps_results(json.loads(json.dumps(one))).encode("utf-8")
        commands.append(f"hf upload {repo_prefix}{folder}-synthprobe-results {out / folder} . --repo-type model")
    written = write_tree(out, files, inputs=[(p, "RESULTS.json") for p in paths], overwrite=overwrite)
    return written, commands
