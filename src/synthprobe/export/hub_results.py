"""``synthprobe export hub-results``: one Hugging Face Hub-ready folder per scored model.

Each folder holds ``README.md``, a model card whose YAML header is written by
``huggingface_hub``'s own :class:`~huggingface_hub.ModelCardData` with one
:class:`~huggingface_hub.EvalResult` per score (each benchmark's ``hub_results`` part gives its
own: Deep Arithmark acc_norm overall and per depth, GPT-3 accuracy per task and setting), so the header is the
``model-index`` the Hub's metadata
check reads; and ``results.json``, the model's entry as one results document. Nothing is
uploaded (that needs the network); the upload command is returned, one per folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from synthprobe.export.parts import having
from synthprobe.io.paths import slug
from synthprobe.io.write import write_tree
from synthprobe.results import Entry, Results, dumps_results, read_results, results_document


def eval_results(results: Results, entry: Entry) -> list:
    """The model's scores as ``huggingface_hub.EvalResult``s (percentages): those of each
    benchmark in the entry that has a ``hub_results`` part, in registry order."""
    return [
        r
        for bench in having("hub_results")
        if bench.name in entry.results
        for r in bench.part("hub_results")(results, entry)
    ]


def card(name: str, parts: Sequence[tuple[Results, Entry]]) -> str:
    """README.md: the YAML header from ModelCardData (every file's scores of the model), then a
    short body."""
    from huggingface_hub import ModelCard, ModelCardData

    found = [r for doc, entry in parts for r in eval_results(doc, entry)]
    data = ModelCardData(model_name=name, eval_results=found, tags=["synthprobe", "evaluation"])
    entry = parts[0][1]
    spec = entry.model.get("spec") or entry.model.get("engine_name") or name
    files = ", ".join(f"`{results_name(doc)}`" for doc, _ in parts)
    body = (
        f"\n# {name}: synthprobe scores\n\nScores of `{name}` (model `{spec}`, dtype "
        f"{entry.model.get('dtype')}) measured by synthprobe. {files} hold the full results "
        "(settings, per-depth and per-template counts, intervals) as synthprobe results documents "
        "(`synthprobe report` reads them).\n"
    )
    return str(ModelCard(f"---\n{data.to_yaml()}\n---\n{body}"))


def results_name(doc: Results) -> str:
    return f"results_{slug(doc.path.stem)}.json"


def export_hub_results(
    paths: Sequence[str | Path], out: str | Path, *, repo_prefix: str = "YOUR-USER/", overwrite: bool = False
) -> tuple[list[Path], list[str]]:
    """Write one folder per model name (its scores from every file); returns the written paths
    and the upload commands."""
    from synthprobe.errors import InputError

    out = Path(out)
    docs = [read_results(p) for p in paths]
    scored = having("hub_results")
    by_name: dict[str, list[tuple[Results, Entry]]] = {}
    for doc in docs:
        for entry in doc.models:
            if {bench.name for bench in scored} & set(entry.results):
                by_name.setdefault(str(entry.model.get("name")), []).append((doc, entry))
    if not by_name:
        raise InputError(
            f"no {' or '.join(bench.title for bench in scored)} scores in the given files", field="RESULTS.json"
        )
    files: dict[str, bytes] = {}
    commands: list[str] = []
    for name, parts in by_name.items():
        folder = slug(name)
        if f"{folder}/README.md" in files:
            raise InputError(
                f"two models would share the folder {folder!r}; name them apart (--model NAME=SPEC when scoring)",
                path=parts[0][0].path,
            )
        if len({results_name(doc) for doc, _ in parts}) != len(parts):
            raise InputError(
                f"{name!r} is in two files of the same name; give the files distinct names", path=parts[0][0].path
            )
        files[f"{folder}/README.md"] = card(name, parts).encode("utf-8")
        for doc, entry in parts:
            one = results_document(synthprobe=doc.synthprobe, datasets=doc.datasets or None, models=[entry.data])
            files[f"{folder}/{results_name(doc)}"] = dumps_results(json.loads(json.dumps(one))).encode("utf-8")
        commands.append(f"hf upload {repo_prefix}{folder}-synthprobe-results {out / folder} . --repo-type model")
    written = write_tree(out, files, inputs=[(p, "RESULTS.json") for p in paths], overwrite=overwrite)
    return written, commands
