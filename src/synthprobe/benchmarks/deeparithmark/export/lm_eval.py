"""Deep Arithmark's ``lm_eval`` part (:mod:`synthprobe.registry`): its tasks for ``synthprobe
export lm-eval`` and its results block as lm-eval's output files.

**Tasks.** A ``multiple_choice`` task ``deeparithmark`` over a byte-identical copy of the release
(``DIR/data/``), one task per depth tier (``deeparithmark_depth2`` …) and a group
``deeparithmark_depths`` averaging them by size:

* ``doc_to_text: "{{ctx}}"``, ``doc_to_choice: endings``, ``doc_to_target: "{{label}}"``
  (the label is a stringified int; rendered through the template lm-eval turns the digit
  string back into the int index — ``doc_to_target: label`` would hand it the string and
  lm-eval would look that string up among the endings);
* ``target_delimiter: ""`` because every ending carries its own leading space — lm-eval's
  default delimiter ``" "`` would score ``"was  26 crates."`` with a double space;
* metrics ``acc`` and ``acc_norm``. The protocols differ (each YAML says how): lm-eval's
  ``acc_norm`` divides by the ending's length in *characters*, ArithMark 3.0's (and
  ``synthprobe score``'s) by its number of *tokens*; lm-eval adds BOS when the tokenizer does
  by default and tokenises context and ending as one string, ArithMark 3.0 adds no BOS and
  tokenises them separately. ``acc`` has the same definition in both.

**Results.** A scored block with per-item predictions becomes the task ``deeparithmark`` of the
zero-shot run: one lm-eval multiple-choice sample per item of the data file it was scored on
(``--data``, else the path the document records, checked against its SHA-256).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.export.release import DEFAULT_RELEASE, Release, load_release
from synthprobe.errors import InputError
from synthprobe.export.lm_eval.files import EntryTasks, TaskRun, mc_sample, model_args, task_config, task_yaml
from synthprobe.export.lm_eval.tasks import TaskFiles
from synthprobe.export.lm_eval.yaml import MC_METRICS, data_source, dump
from synthprobe.results import Entry, Results

#: the keyword options of ``export_lm_eval`` / ``export_lm_eval_results`` this part takes
OPTIONS = ("data",)
#: what of its results lm-eval's files have a task for (said when an entry has none)
SCORED = "Deep Arithmark with --save-predictions"

TASK = "deeparithmark"
GROUP_BY_DEPTH = "deeparithmark_depths"

# -- what `synthprobe export lm-eval --help` says of it (the command puts the parts' lines together)

#: its rows in the description's list of the files written (each line ends with a newline)
HELP_FILES = (
    "  deeparithmark.yaml           multiple_choice over the release (0-shot)\n"
    "  deeparithmark_depth<N>.yaml  one task per depth tier\n"
    "  deeparithmark_depths.yaml    group of the depth tasks\n"
)
#: its paragraph after that list
HELP_NOTES = (
    'Deep Arithmark: endings keep their leading space, so target_delimiter is "".\n'
    "Metrics are acc and acc_norm; lm-eval's acc_norm divides by characters,\n"
    "ArithMark 3.0's by tokens, so only acc is comparable with `synthprobe score`\n"
    "(BOS and tokenisation differences are listed at the top of each YAML).\n"
)
#: the ``lm_eval --tasks`` name that runs its exported tasks (the help's example)
RUN_TASK = TASK
#: how `synthprobe export lm-eval-results` names its tasks (that command's description)
RESULT_TASKS = TASK


def run_task(tasks: list[str]) -> str | None:
    """The ``lm_eval --tasks`` name that runs what an export wrote (``tasks``: the names of the
    task YAMLs written), or ``None`` when it wrote none of its tasks."""
    return TASK if TASK in tasks else None


_MC_COMMENT = """\
# Deep Arithmark-1 ({what}) for lm-evaluation-harness, exported by synthprobe.
# Release file SHA-256: {sha}
#
# Endings carry their own leading space, hence target_delimiter "" (lm-eval's default " "
# would insert a second space before every ending).
#
# How lm-eval (--model hf) scores this task, against ArithMark 3.0 (bencharithmark-3.py,
# the protocol `synthprobe score` follows):
# acc       argmax of the summed log-likelihood of each ending: the same definition in both.
# acc_norm  lm-eval: summed log-likelihood / number of CHARACTERS in the ending.
#           ArithMark 3.0 and synthprobe's acc_norm divide by the number of TOKENS in the
#           ending, so the two acc_norm figures are not comparable; compare acc.
# BOS       lm-eval prepends BOS whenever the tokenizer adds it by default (Llama- and
#           Gemma-style tokenizers do, GPT-2-style ones such as SmolLM2's do not).
#           ArithMark 3.0 adds no BOS and no EOS (synthprobe only with --bos). Pass
#           add_bos_token=False in --model_args to match.
# tokens    lm-eval tokenises context + ending as one string and takes the tokens past those
#           of the context alone as the ending (moving trailing context whitespace into the
#           ending first); ArithMark 3.0 tokenises ctx and each ending separately
#           (add_special_tokens=False) and concatenates the ids. Where a token straddles
#           the join the two score different tokens (lm-eval stops with an assertion when
#           the ending comes out empty).
# tokenizer lm-eval loads the fast tokenizer by default, ArithMark 3.0 the slow one
#           (use_fast=False); pass use_fast_tokenizer=False to match.
# dtype     lm-eval's default is the checkpoint's dtype (dtype=auto), ArithMark 3.0's
#           bfloat16 (float32 on CPU); pin dtype=float32 in both when comparing.
"""


def _mc_task(name: str, data_file: str, what: str, sha: str, n: int) -> bytes:
    body = {
        "task": name,
        **data_source(data_file),
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{ctx}}",
        "doc_to_choice": "endings",
        "doc_to_target": "{{label}}",
        "target_delimiter": "",
        "num_fewshot": 0,
        "metric_list": MC_METRICS,
        "metadata": {"version": 1.0, "items": n},
    }
    return dump(_MC_COMMENT.format(what=what, sha=sha), body)


def _release_lines(release: Release) -> list[bytes]:
    """The file's non-blank lines, byte for byte, in item order (with their newline)."""
    lines = [ln if ln.endswith(b"\n") else ln + b"\n" for ln in release.data.splitlines(keepends=True)]
    lines = [ln for ln in lines if ln.strip()]
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    if len(lines) != len(release.items):
        raise InputError(f"{len(lines)} non-blank lines but {len(release.items)} items", path=release.path)
    return lines


def deeparithmark_files(release: Release, out: Path) -> dict[str, bytes]:
    """Relative path → bytes for the Deep Arithmark tasks, data copies included."""
    stem = release.path.stem
    files: dict[str, bytes] = {}
    data_rel = f"data/{release.name}"
    files[data_rel] = release.data
    files[f"{TASK}.yaml"] = _mc_task(
        TASK, data_rel, f"all {len(release.items)} items", release.sha256, len(release.items)
    )
    by_depth: dict[int, list[bytes]] = defaultdict(list)
    for item, line in zip(release.items, _release_lines(release)):
        by_depth[item.metadata["depth"]].append(line)
    depth_tasks = []
    for depth in sorted(by_depth):
        name = f"{TASK}_depth{depth}"
        rel = f"data/{stem}.depth{depth}.jsonl"
        files[rel] = b"".join(by_depth[depth])
        files[f"{name}.yaml"] = _mc_task(name, rel, f"depth-{depth} items only", release.sha256, len(by_depth[depth]))
        depth_tasks.append(name)
    group = {
        "group": GROUP_BY_DEPTH,
        "task": depth_tasks,
        "aggregate_metric_list": [{"metric": m, "weight_by_size": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    files[f"{GROUP_BY_DEPTH}.yaml"] = dump(
        "# Deep Arithmark-1 by depth tier: one sub-task per depth, averaged by size.\n", group
    )
    return files


def inputs(data: str | Path | None = None) -> list[tuple[Any, str]]:
    """The data file named by the options, never written over."""
    return [(data, "--data")] if data is not None else []


def task_files(out: Path, *, data: str | Path = DEFAULT_RELEASE, progress: bool = False) -> TaskFiles:
    """The Deep Arithmark tasks of ``data`` for the folder ``out``."""
    release = load_release(data)
    where = out.resolve()
    run = [
        "```bash",
        "lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 \\",
        f"    --include_path {where} --tasks {TASK} --log_samples --output_path results/",
        "```",
        "",
    ]
    notes = [
        "`acc_norm` here is lm-eval's per-character normalisation; ArithMark 3.0 and",
        "`synthprobe score` normalise per token. `acc` is defined the same way under both",
        "protocols; BOS and tokenisation differences are listed in each YAML's header.",
    ]
    return TaskFiles(deeparithmark_files(release, out), run=run, notes=notes, inputs=[(data, "--data")])


def _release_for(results: Results, data: Path | None) -> Release:
    """The Deep Arithmark data file the document was scored on, checked against its SHA-256."""
    info = results.datasets.get("deeparithmark") or {}
    want = info.get("sha256") if isinstance(info, dict) else None
    if data is None:
        recorded = info.get("path") if isinstance(info, dict) else None
        if not isinstance(recorded, str):
            raise results.reader.fail(
                "datasets.deeparithmark.path", "missing; pass the data file the models were scored on with --data"
            )
        candidates = [Path(recorded), results.path.parent / recorded]
        data = next((p for p in candidates if p.is_file()), None)
        if data is None:
            raise results.reader.fail(
                "datasets.deeparithmark.path",
                f"{recorded!r} is not found (here or beside the results file); pass it with --data",
            )
    release = load_release(data)
    if want and release.sha256 != want:
        raise InputError(
            f"SHA-256 {release.sha256} differs from the {want} the models were scored on "
            "(datasets.deeparithmark.sha256)",
            path=data,
            field="--data",
        )
    return release


def result_tasks(results: Results, entry: Entry, *, shared: dict, data: str | Path | None = None) -> EntryTasks:
    """The entry's Deep Arithmark block as the task ``deeparithmark`` (K=0). ``shared`` keeps the
    data file, read once per document."""
    if "release" not in shared:
        shared["release"] = _release_for(results, Path(data) if data is not None else None)
    release = shared["release"]
    block = entry.results["deeparithmark"]
    preds = block.data.get("predictions")
    if not isinstance(preds, list) or not preds:
        raise results.reader.fail(
            f"{block.where}.predictions",
            "missing; lm-eval's samples need every item's log-likelihoods: score "
            "with --save-predictions (or --output-format lm-eval)",
        )
    index = {str(item.id): i for i, item in enumerate(release.items)}
    samples = []
    for j, rec in enumerate(preds):
        where = f"{block.where}.predictions[{j}]"
        if not isinstance(rec, dict) or str(rec.get("id")) not in index:
            raise results.reader.fail(where, f"expected the record of an item of {release.name}")
        i = index[str(rec["id"])]
        item = release.items[i]
        if len(rec.get("logprob") or []) != len(item.endings):
            raise results.reader.fail(f"{where}.logprob", f"expected {len(item.endings)} log-likelihoods")
        samples.append(mc_sample(i, item.raw, item.ctx, item.endings, int(item.label), rec))
    samples.sort(key=lambda s: s["doc_id"])
    body = task_yaml(deeparithmark_files(release, release.path.parent)[f"{TASK}.yaml"])
    body["dataset_kwargs"] = {"data_files": {"test": str(release.path.resolve())}}
    cfg = task_config(body, sampler="default", metadata_extra=model_args(entry), config_source=f"{TASK}.yaml")
    task = TaskRun(
        TASK,
        cfg,
        0,
        len(release.items),
        samples,
        "none",
        ("acc", "acc_norm"),
        key="deeparithmark",
        where=block.where,
        drop=("deeparithmark", "predictions"),
    )
    limit = entry.settings.get("limit")
    timing = block.data.get("timing")
    seconds = sum(float(timing.get(k) or 0.0) for k in ("tokenize_s", "eval_s")) if isinstance(timing, dict) else 0.0
    return EntryTasks([task], config=lambda k: {"limit": limit}, seconds=seconds)
