"""Export task YAMLs for EleutherAI's lm-evaluation-harness (``lm_eval --include_path DIR``).

**Deep Arithmark** becomes a ``multiple_choice`` task over a byte-identical copy of the release
(``DIR/data/``, named relative to DIR and loaded by the generated ``synthprobe_data.py``
through ``custom_dataset``, so DIR can be moved or pushed as it is):

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

Besides the full task ``deeparithmark`` there is one task per depth tier
(``deeparithmark_depth2`` …) and a group ``deeparithmark_depths`` averaging them by size.

**GPT-3 synthetic tasks** (the ten arithmetic and five word tasks) are built here, from
``gpt3_seed`` in ``gpt3_format``, exactly as ``synthprobe build``/``synthprobe score gpt3``
build them; SAT analogies only from a user's ``sat_file`` (the SAT set is never shipped).
Files built earlier with ``synthprobe build`` can be passed as ``gpt3={name: path}`` instead.
Every task is named ``synthprobe_<task>`` so it does not override lm-eval's built-in
``arithmetic_*``/unscramble tasks, which read OpenAI's released files.

A free-form pool (``{"context", "completion"}``) gives a ``generate_until`` task
``synthprobe_<task>_gen`` (greedy, stop at a newline, exact match after trimming: GPT-3's check
and ``synthprobe score gpt3``'s) and a ``loglikelihood`` task ``synthprobe_<task>`` whose
``acc`` is "the gold completion is the greedy continuation" (lm-eval's arithmetic check,
``synthprobe score gpt3 --check is-greedy``). A multiple-choice pool (SAT) gives a
``multiple_choice`` task.

Prompts are GPT-3's: the word tasks' instruction line is the YAML ``description`` (lm-eval puts
it first), demonstrations come from the task's own pool (``fewshot_split`` is the test split)
joined with the same delimiters as :mod:`synthprobe.tasks.gpt3.prompts`, and they are drawn by
:func:`demo_sampler` — synthprobe's own draw, never the test item — through the generated
``synthprobe_fewshot.py``. What still differs from ``synthprobe score gpt3`` is stated at the
top of every YAML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from synthprobe.errors import InputError
from synthprobe.io.write import check_out_dir, write_tree
from synthprobe.export.lm_eval.deeparithmark import GROUP_BY_DEPTH, TASK, deeparithmark_files
from synthprobe.export.lm_eval.gpt3 import (DEFAULT_GPT3_TASKS, FEWSHOT_MODULE, GPT3_PREFIX, Gpt3Pool,
                                            built_pools, fewshot_module, gpt3_files, user_pool)
from synthprobe.export.lm_eval.sampler import demo_sampler
from synthprobe.export.lm_eval.yaml import DATA_MODULE, DATA_MODULE_SOURCE
from synthprobe.export.release import DEFAULT_RELEASE, load_release
from synthprobe.io.write import check_output_dir


def _readme(files: dict[str, bytes], out: Path, pools: list[Gpt3Pool]) -> bytes:
    tasks = sorted(k[:-5] for k in files if k.endswith(".yaml"))
    where = out.resolve()
    lines = [
        "# lm-evaluation-harness tasks exported by synthprobe",
        "",
        "Run, for example:",
        "",
        "```bash",
        "lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 \\",
        f"    --include_path {where} --tasks {TASK} --log_samples --output_path results/",
        "```",
        "",
    ]
    families = sorted({p.task.family for p in pools if p.task is not None})
    if pools:
        lines += [
            "GPT-3's synthetic tasks, zero-shot (`synthprobe_gpt3_gen`: every generation task; "
            "`synthprobe_gpt3`: the log-likelihood ones):",
            "",
            "```bash",
            "lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 \\",
            f"    --include_path {where} --tasks synthprobe_gpt3_gen",
            "```",
            "",
            "lm-eval runs one K per run; GPT-3's few-shot K differs by family, so run the families "
            "apart:",
            "",
            "```bash",
        ]
        from synthprobe.tasks.gpt3.registry import ordered_tasks

        k_of = {t.family: t.k_few for t in ordered_tasks()}
        for fam in families:
            lines.append(f"lm_eval ... --include_path {where} --tasks synthprobe_gpt3_{fam}_gen "
                         f"--num_fewshot {k_of[fam]}")
        lines += ["```", "",
                  "Demonstrations are drawn by `synthprobe_fewshot.py` exactly as `synthprobe score "
                  "gpt3` draws them (synthprobe must be importable where lm-eval runs). Each YAML's "
                  "header states what still differs from `synthprobe score gpt3`.", ""]
    lines += [
        "Tasks and groups in this folder:",
        "",
        *[f"- `{t}`" for t in tasks],
        "",
        "`acc_norm` here is lm-eval's per-character normalisation; ArithMark 3.0 and",
        "`synthprobe score` normalise per token. `acc` is defined the same way under both",
        "protocols; BOS and tokenisation differences are listed in each YAML's header.",
        "The data files live in `data/`, named relative to this folder and loaded by",
        "`synthprobe_data.py`: the folder can be moved or pushed as it is (pass its new",
        "path to --include_path).",
        "",
    ]
    return "\n".join(lines).encode("utf-8")


def export_lm_eval(out: str | Path, *, data: str | Path = DEFAULT_RELEASE,
                   gpt3: dict[str, str | Path] | None = None,
                   gpt3_tasks: str | Iterable[str] = DEFAULT_GPT3_TASKS, gpt3_seed: int = 0,
                   gpt3_format: str = "openai", sat_file: str | Path | None = None,
                   progress: bool = False, overwrite: bool = False) -> list[Path]:
    """Write the task folder; returns the written paths. Raises InputError before writing, also
    when the folder already holds one of the files (unless ``overwrite``) or one is an input.

    Deep Arithmark from ``data``; the GPT-3 tasks ``gpt3_tasks`` built from ``gpt3_seed`` in
    ``gpt3_format`` (SAT from ``sat_file`` only); ``gpt3`` maps task names to files built
    earlier, which replace a built task of the same name.
    """
    out = check_out_dir(out)
    inputs = [(data, "--data"), (sat_file, "--sat-file"), *((p, "--gpt3") for p in (gpt3 or {}).values())]
    check_output_dir(out, ["README.md", f"{TASK}.yaml"], inputs, overwrite=overwrite)
    release = load_release(data)
    files = deeparithmark_files(release, out)
    user = {name: user_pool(name, Path(path), seed=gpt3_seed, fmt=gpt3_format)
            for name, path in sorted((gpt3 or {}).items())}
    pools = [p for p in built_pools(gpt3_tasks, seed=gpt3_seed, fmt=gpt3_format, sat_file=sat_file,
                                    progress=progress) if p.name not in user]
    pools += list(user.values())
    for pool in pools:
        for rel, blob in gpt3_files(pool, out).items():
            if rel in files:
                raise InputError(f"task {pool.name!r} would overwrite {rel}")
            files[rel] = blob
    if pools:
        files[f"{FEWSHOT_MODULE}.py"] = fewshot_module(pools)
    files[f"{DATA_MODULE}.py"] = DATA_MODULE_SOURCE.encode("utf-8")
    files["README.md"] = _readme(files, out, pools)
    return write_tree(out, files, inputs=inputs, overwrite=overwrite)


def parse_gpt3_spec(spec: str) -> tuple[str, Path]:
    """``NAME=PATH``, or just ``PATH``: the task is then ``synthprobe_<file name>``."""
    name, sep, path = spec.partition("=")
    if not sep:
        stem = Path(spec).stem.replace("-", "_").replace(".", "_")
        name, path = (GPT3_PREFIX + stem if stem else ""), spec
    if not name or not path:
        raise InputError(f"expected NAME=PATH or PATH (e.g. data/gpt3/arithmetic_2da.jsonl), got {spec!r}",
                         field="--gpt3")
    return name, Path(path)


__all__ = ["export_lm_eval", "deeparithmark_files", "gpt3_files", "built_pools", "user_pool",
           "demo_sampler", "parse_gpt3_spec", "Gpt3Pool", "TASK", "GROUP_BY_DEPTH", "GPT3_PREFIX",
           "DEFAULT_GPT3_TASKS", "FEWSHOT_MODULE"]

