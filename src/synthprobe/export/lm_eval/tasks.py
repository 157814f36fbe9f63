"""``synthprobe export lm-eval``: task YAMLs for EleutherAI's lm-evaluation-harness
(``lm_eval --include_path DIR``), one folder for every benchmark that has an ``lm_eval`` part.

The folder is put together here without naming a benchmark: each benchmark's ``lm_eval`` part
(:mod:`synthprobe.registry`, in registry order) gives its files as a :class:`TaskFiles` —
Deep Arithmark's ``multiple_choice`` tasks over a byte-identical copy of the release
(:mod:`synthprobe.benchmarks.deeparithmark.export.lm_eval`), GPT-3's synthetic tasks built as ``synthprobe
score gpt3`` builds them (:mod:`synthprobe.benchmarks.gpt3.export.lm_eval`). Their data sit under
``DIR/data/``, named relative to DIR and loaded by the generated ``synthprobe_data.py``
(:mod:`synthprobe.export.lm_eval.yaml`), so DIR can be moved or pushed as it is; ``README.md``
says how to run them.

Options meant for one benchmark (``data=``, ``gpt3_tasks=``, ...) are passed through to the part
that lists them in its ``OPTIONS`` (:mod:`synthprobe.export.parts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.errors import InputError
from synthprobe.export.lm_eval.yaml import DATA_MODULE, DATA_MODULE_SOURCE
from synthprobe.export.parts import routed
from synthprobe.io.write import check_out_dir, check_output_dir, write_tree


@dataclass
class TaskFiles:
    """One benchmark's share of the folder (the return of an ``lm_eval`` part's ``task_files``)."""

    #: relative path → bytes: its YAMLs, its data under ``data/``, any module its YAMLs name
    files: dict[str, bytes]
    #: README lines after "Run, for example:": how to run its tasks (each line without newline)
    run: list[str] = field(default_factory=list)
    #: README lines after the list of tasks: what to know when comparing its figures
    notes: list[str] = field(default_factory=list)
    #: the input files it read, ``(path, option)``: none of them is ever written over
    inputs: list[tuple[Any, str]] = field(default_factory=list)


def _readme(files: dict[str, bytes], shares: list[TaskFiles]) -> bytes:
    tasks = sorted(k[:-5] for k in files if k.endswith(".yaml"))
    lines = ["# lm-evaluation-harness tasks exported by synthprobe", "", "Run, for example:", ""]
    for share in shares:
        lines += share.run
    lines += ["Tasks and groups in this folder:", "", *[f"- `{t}`" for t in tasks], ""]
    for share in shares:
        lines += share.notes
    lines += [
        "The data files live in `data/`, named relative to this folder and loaded by",
        "`synthprobe_data.py`: the folder can be moved or pushed as it is (pass its new",
        "path to --include_path).",
        "",
    ]
    return "\n".join(lines).encode("utf-8")


def export_lm_eval(out: str | Path, *, progress: bool = False, overwrite: bool = False, **options: Any) -> list[Path]:
    """Write the task folder; returns the written paths. Raises InputError before writing, also
    when the folder already holds one of the files (unless ``overwrite``) or one is an input.

    ``options`` go to the benchmarks' ``lm_eval`` parts that take them: Deep Arithmark's
    ``data`` (the release); GPT-3's ``gpt3_tasks``, ``gpt3_seed``, ``gpt3_format``, ``sat_file``
    and ``gpt3`` (task name → a file built earlier, replacing the built task of that name).
    """
    out = check_out_dir(out)
    parts = routed("lm_eval", options, "export_lm_eval")
    inputs = [i for _, part, opts in parts if hasattr(part, "inputs") for i in part.inputs(**opts)]
    check_output_dir(out, ["README.md"], inputs, overwrite=overwrite)
    files: dict[str, bytes] = {}
    shares: list[TaskFiles] = []
    for bench, part, opts in parts:
        if not hasattr(part, "task_files"):
            continue  # a benchmark whose results convert but that exports no task
        share = part.task_files(out, progress=progress, **opts)
        for rel, blob in share.files.items():
            if rel in files or rel in ("README.md", f"{DATA_MODULE}.py"):
                raise InputError(f"{bench.title}'s lm-eval tasks would overwrite {rel}")
            files[rel] = blob
        shares.append(share)
        inputs += [i for i in share.inputs if i not in inputs]
    files[f"{DATA_MODULE}.py"] = DATA_MODULE_SOURCE.encode("utf-8")
    files["README.md"] = _readme(files, shares)
    return write_tree(out, files, inputs=inputs, overwrite=overwrite)
