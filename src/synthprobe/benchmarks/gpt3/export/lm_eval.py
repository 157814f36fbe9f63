"""The GPT-3 synthetic tasks' ``lm_eval`` part (:mod:`synthprobe.registry`): their tasks for
``synthprobe export lm-eval`` and their results rows as lm-eval's output files.

**Tasks.** The ten arithmetic and five word tasks are built here, from ``gpt3_seed`` in
``gpt3_format``, exactly as ``synthprobe build``/``synthprobe score gpt3`` build them (the pools;
SAT analogies only from a user's ``sat_file``: the SAT set is never shipped). Files built earlier
with ``synthprobe build`` can be passed as ``gpt3={name: path}`` instead, checked by
:func:`synthprobe.benchmarks.gpt3.taskfile.load_task_file`. Every task is named ``synthprobe_<task>``
so it does not override lm-eval's built-in ``arithmetic_*``/unscramble tasks, which read
OpenAI's released files.

A free-form pool (``{"context", "completion"}``) gives a ``generate_until`` task
``synthprobe_<task>_gen`` (greedy, stop at a newline, exact match after trimming: GPT-3's check
and ``synthprobe score gpt3``'s) and a ``loglikelihood`` task ``synthprobe_<task>`` whose
``acc`` is "the gold completion is the greedy continuation" (lm-eval's arithmetic check,
``synthprobe score gpt3 --check is-greedy``). A multiple-choice pool (SAT) gives a
``multiple_choice`` task.

Prompts are GPT-3's: the word tasks' instruction line is the YAML ``description`` (lm-eval puts
it first), demonstrations come from the task's own pool (``fewshot_split`` is the test split)
joined with the same delimiters as :mod:`synthprobe.benchmarks.gpt3.prompts`, and they are drawn by
:func:`synthprobe.export.lm_eval.sampler.demo_sampler` — synthprobe's own draw, never the test
item — through the generated ``synthprobe_fewshot.py``. What still differs from ``synthprobe
score gpt3`` is stated at the top of every YAML.

**Results.** Each row scored with per-item predictions (``--check generate``: the task
``synthprobe_<task>_gen``; ``--check is-greedy``: ``synthprobe_<task>``) becomes a task of the
run of its K, its prompts rebuilt exactly as synthprobe built them; SAT rows (scored per token,
lm-eval's multiple choice sums) stay under ``synthprobe`` only.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.gpt3.taskfile import check_record, load_task_file
from synthprobe.errors import InputError
from synthprobe.export.lm_eval.files import (
    EntryTasks,
    TaskRun,
    doc_hash,
    hash_string,
    model_args,
    task_config,
    task_yaml,
)
from synthprobe.export.lm_eval.tasks import TaskFiles
from synthprobe.export.lm_eval.yaml import MC_METRICS, Function, comment, data_source, dump
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.read import read_jsonl
from synthprobe.results import Entry, Results

#: Prefix of every GPT-3 task name. lm-eval ships ``arithmetic_2da``, ``anagrams1``, … over
#: OpenAI's released files; ours hold regenerated items, so they get their own names instead
#: of silently overriding the built-in tasks.
GPT3_PREFIX = "synthprobe_"

#: The GPT-3 task families a plain export builds (SAT only with a user's file).
DEFAULT_GPT3_TASKS = "arithmetic,words"

#: The generated module the GPT-3 YAMLs take their few-shot sampler from.
FEWSHOT_MODULE = "synthprobe_fewshot"

#: the keyword options of ``export_lm_eval`` this part takes
OPTIONS = ("gpt3", "gpt3_tasks", "gpt3_seed", "gpt3_format", "sat_file")
#: what of its results lm-eval's files have a task for (said when an entry has none)
SCORED = "GPT-3 generation tasks"

# -- what `synthprobe export lm-eval --help` says of it (the command puts the parts' lines together)

#: its rows in the description's list of the files written (each line ends with a newline)
HELP_FILES = (
    "  synthprobe_<task>_gen.yaml   GPT-3's 10 arithmetic and 5 word tasks, greedy\n"
    "                               generation up to a newline, exact match\n"
    "  synthprobe_<task>.yaml       the same pools as loglikelihood tasks: acc = the\n"
    "                               gold completion is the greedy continuation\n"
    "  synthprobe_fewshot.py        draws few-shot demonstrations as\n"
    "                               `synthprobe score gpt3` does\n"
)
#: its paragraph after that list
HELP_NOTES = (
    "GPT-3 tasks are built here exactly as `synthprobe score gpt3 --seed S --format F`\n"
    "builds them (a few seconds; same seed, same bytes), named synthprobe_<task> so\n"
    "lm-eval's built-in arithmetic_*/unscramble tasks (OpenAI's files) stay intact.\n"
    "Prompts follow GPT-3: the word tasks' instruction line is the YAML description,\n"
    "demonstrations come from the task's own pool, never the test item. The GPT-3\n"
    "YAMLs leave num_fewshot unset (zero-shot unless asked); pass --num_fewshot 1, or\n"
    "50 (arithmetic) / 100 (words) for GPT-3's few-shot K. What still differs from `synthprobe "
    "score gpt3` is stated at the\n"
    "top of each YAML. SAT analogies are exported only with --sat-file (the SAT set\n"
    "is not shipped).\n"
)
#: the ``lm_eval --tasks`` name that runs its exported generation tasks (a tag of theirs)
RUN_TASK = "synthprobe_gpt3_gen"
#: the help's example lines after the run of every benchmark's tasks: one family at its few-shot K
HELP_EXAMPLE = ("  lm_eval ... --tasks synthprobe_gpt3_words_gen --num_fewshot 100\n",)
#: how `synthprobe export lm-eval-results` names its tasks (that command's description)
RESULT_TASKS = "synthprobe_<task>_gen, synthprobe_<task>"


def run_task(tasks: list[str]) -> str | None:
    """The ``lm_eval --tasks`` name that runs what an export wrote (``tasks``: the names of the
    task YAMLs written), or ``None`` when it wrote no generation task."""
    return RUN_TASK if any(t.endswith("_gen") for t in tasks) else None


@dataclass(frozen=True)
class Gpt3Pool:
    """One GPT-3 task pool to export: the lm-eval task name, synthprobe's task (None for a
    file whose name matches no task), the JSONL bytes, the prompt layout and where it came from."""

    name: str
    task: Any  # synthprobe.benchmarks.gpt3.registry.Task | None
    data: bytes
    kind: str  # "generate" | "choice"
    format: str  # "openai" | "eleuther": the prompt layout
    seed: int
    source: str  # "built with seed S" or the user's file name
    n: int


@dataclass(frozen=True)
class _Layout:
    """How lm-eval must join a pool's items to give synthprobe's prompt (prompts.py)."""

    description: str  # put before everything (GPT-3's word-task instruction)
    doc_to_text: str  # the item's context as lm-eval renders it
    fewshot_delimiter: str
    reads: str  # the prompt, described for the YAML comment


def _layout(pool: Gpt3Pool) -> _Layout:
    """synthprobe's prompt, ``head + demo pieces + test piece`` with the leading newlines of the
    whole stripped when there is no head, as lm-eval's ``description`` + ``doc_to_text`` +
    completion + ``fewshot_delimiter`` per demonstration + ``doc_to_text`` of the test item."""
    from synthprobe.benchmarks.gpt3.words import INSTRUCTION

    task, fmt = pool.task, pool.format
    if pool.kind == "choice":
        return _Layout("", "{{ctx}}", "\n", "demonstrations 'ctx ending' one per line, then the test ctx")
    if task is None:
        return _Layout(
            "", "{{context}}", "", "demonstrations (context + completion) concatenated as stored, then the test context"
        )
    if task.family == "arithmetic":
        if fmt == "eleuther":
            return _Layout(
                "",
                "{{context}}",
                "\n\n",
                "'Question: ...\\nAnswer: N' demonstrations joined by a blank line, then the test question",
            )
        return _Layout(
            "",
            "{{context | trim}}",
            "\n\n",
            "'Q: ...\\n\\nA: N' demonstrations joined by a blank line (the first "
            "item's leading blank lines dropped), then the test question",
        )
    if fmt == "openai":
        return _Layout(
            INSTRUCTION,
            "{{context}}",
            "",
            "GPT-3's instruction line (the description), then one line "
            "'<scrambled> = <word>' per demonstration, then '<scrambled> ='",
        )
    return _Layout(
        "",
        "{{context | trim}}",
        "\n",
        "one line '<scrambled> = <word>' per demonstration (no instruction line: "
        "eleuther layout), then '<scrambled> ='",
    )


def _is_choice_file(path: Path) -> bool:
    """Whether the file holds multiple-choice records (ctx/endings/label, SAT analogies) rather
    than {"context", "completion"} ones, judged by its first record."""
    for _, obj in read_jsonl(path):
        return "endings" in obj
    return False


def _known_task(*names: str):
    """The synthprobe GPT-3 task one of ``names`` (prefix dropped) stands for, else None."""
    from synthprobe.benchmarks.gpt3.registry import get_task

    for name in names:
        try:
            return get_task(name.removeprefix(GPT3_PREFIX))
        except InputError:
            continue
    return None


def _check_name(name: str, field: str) -> None:
    if not name or not name.replace("_", "").isalnum() or not name.isascii():
        raise InputError(f"task name {name!r} must be ASCII letters, digits and underscores", field=field)


def user_pool(name: str, path: Path, *, seed: int = 0, fmt: str = "openai") -> Gpt3Pool:
    """A GPT-3 task file built by the user (``synthprobe build``) as a pool to export.

    The task is recognised from ``name`` or the file name (``arithmetic_2da``, ``CL``, …); an
    arithmetic file's prompt layout is read from its first context (``Question:`` means the
    eleuther layout), a word file's follows ``fmt`` (the instruction line or not).
    """
    _check_name(name, "--gpt3")
    path = Path(path)
    kind = "choice" if _is_choice_file(path) else "generate"
    task = _known_task(name, path.stem)
    if task is not None and (task.kind == "choice") != (kind == "choice"):
        task = None  # a file that does not hold that task's kind of item
    layout_fmt = fmt
    if kind == "choice":
        n = len(load_arithmark3(path))  # the multiple-choice contract, with located errors
    elif task is not None:
        # the same full check as `score gpt3 --task-file`: every record holds the named task
        task_file = load_task_file(f"{task.name}={path}")
        n = len(task_file.items)
        layout_fmt = task_file.format or fmt
    else:
        # no task to hold the records to: their shape only, as the task-file reader checks it
        n = sum(1 for line, obj in read_jsonl(path) if check_record(obj, path, line))
    return Gpt3Pool(name, task, path.read_bytes(), kind, layout_fmt, seed, path.name, n)


@functools.lru_cache(maxsize=64)
def _built_data(task_name: str, seed: int, fmt: str, sat_file: str | None) -> bytes:
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, serialize

    return serialize(build_items(BuildConfig(task_name, seed=seed, format=fmt, sat_file=sat_file))).encode("utf-8")


def built_pools(
    spec: str | Iterable[str] = DEFAULT_GPT3_TASKS,
    *,
    seed: int = 0,
    fmt: str = "openai",
    sat_file: str | Path | None = None,
    progress: bool = False,
) -> list[Gpt3Pool]:
    """Build the GPT-3 task pools ``synthprobe score gpt3 --seed SEED --format FMT`` scores.

    ``spec`` names tasks as ``synthprobe build gpt3 --tasks`` does (``arithmetic``, ``words``,
    names, paper codes; ``none`` for no task). SAT analogies are built only from ``sat_file``
    (added when given); naming SAT without one is an error. Same arguments, same bytes.
    """
    from tqdm.auto import tqdm

    from synthprobe.benchmarks.gpt3.registry import FORMATS, BuildConfig, resolve_tasks

    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"expected an integer >= 0, got {seed!r}", field="--gpt3-seed")
    if fmt not in FORMATS:
        raise InputError(f"expected one of {', '.join(FORMATS)}, got {fmt!r}", field="--gpt3-format")
    parts = [p.strip() for p in (spec.split(",") if isinstance(spec, str) else spec) if p.strip()]
    tasks = [] if not parts or [p.lower() for p in parts] == ["none"] else resolve_tasks(parts)
    if sat_file is not None:
        if not Path(sat_file).is_file():
            raise InputError("file does not exist", path=sat_file, field="--sat-file")
        sat = _known_task("sat_analogies")
        if sat not in tasks:
            tasks.append(sat)
    elif any(t.family == "sat" for t in tasks):
        raise InputError(
            "SAT analogies need --sat-file (Turney's SAT-package-V3.txt): the SAT set is not shipped",
            field="--gpt3-tasks",
        )
    configs = [
        BuildConfig(t.name, seed=seed, format=fmt, sat_file=str(sat_file) if t.family == "sat" else None) for t in tasks
    ]
    for c in configs:
        c.validate()
    pools = []
    for task, config in zip(
        tqdm(
            tasks, desc="building GPT-3 task pools", unit="task", disable=not progress or not tasks, dynamic_ncols=True
        ),
        configs,
    ):
        data = _built_data(task.name, seed, fmt, config.sat_file)
        source = (
            f"built with seed {seed} from {Path(sat_file).name}"
            if task.family == "sat"
            else f"built with seed {seed}, format {fmt}"
        )
        pools.append(Gpt3Pool(GPT3_PREFIX + task.name, task, data, task.kind, fmt, seed, source, data.count(b"\n")))
    return pools


def _sampler_attr(pool: Gpt3Pool) -> str:
    return f"demos_{pool.name}"


def fewshot_module(pools: list[Gpt3Pool]) -> bytes:
    lines = [
        '"""Few-shot samplers for the synthprobe GPT-3 tasks in this folder (generated by',
        "`synthprobe export lm-eval`).",
        "",
        "Each draws a test item's demonstrations exactly as `synthprobe score gpt3` does: K distinct",
        "items of the task's own pool, never the test item, from a hash of (task, seed, index).",
        "Without synthprobe in this Python environment lm-eval's own random draw is used instead",
        '(zero-shot prompts are the same either way)."""',
        "",
        "try:",
        "    from synthprobe.export.lm_eval import demo_sampler",
        "except ImportError:",
        "    import logging",
        "",
        "    from lm_eval.api.samplers import ContextSampler",
        "",
        "    logging.getLogger(__name__).warning(",
        '        "synthprobe is not installed here: few-shot demonstrations are lm-eval\'s random "',
        '        "draw, not synthprobe\'s")',
        "",
        "    def demo_sampler(task, seed):",
        "        return ContextSampler",
        "",
        "",
    ]
    for pool in pools:
        if pool.task is not None:
            lines.append(f"{_sampler_attr(pool)} = demo_sampler({pool.task.name!r}, {pool.seed})")
    return ("\n".join(lines) + "\n").encode("utf-8")


def _gpt3_comment(pool: Gpt3Pool, variant: str, layout: _Layout) -> str:
    """What this YAML runs and, plainly, what differs from ``synthprobe score gpt3``."""
    sha = hashlib.sha256(pool.data).hexdigest()
    task = pool.task
    paras: list[tuple[str, str]] = [
        ("", f"GPT-3 synthetic task {pool.name} ({variant}) for lm-evaluation-harness, exported by synthprobe."),
        ("", f"Items: {pool.n:,}, {pool.source}. SHA-256 {sha}."),
        ("", ""),
    ]
    if task is None:
        paras.append(
            (
                "",
                "This file's name matches no synthprobe GPT-3 task, so there is no "
                "synthprobe prompt to follow: demonstrations are lm-eval's random draw "
                f"from this file (never the test item), and the prompt is {layout.reads}.",
            )
        )
        return comment(paras)
    cmd = f"synthprobe score gpt3 --tasks {task.name} --seed {pool.seed} --format {pool.format}"
    if not pool.source.startswith("built"):
        paras += [
            (
                "",
                f"The demonstrations are those of `{cmd}` only if this file is the pool that "
                f"command builds (`synthprobe build {task.name} --seed {pool.seed}`, default "
                "--n).",
            ),
            ("", ""),
        ]
    paras += _gpt3_same(pool, variant, layout, cmd)
    paras += _gpt3_different(pool, variant)
    return comment(paras)


def _gpt3_same(pool: Gpt3Pool, variant: str, layout: _Layout, cmd: str) -> list[tuple[str, str]]:
    """The comment's paragraphs on what the YAML runs as ``cmd`` does: prompt, demonstrations, scoring."""
    task = pool.task
    paras: list[tuple[str, str]] = []
    paras += [
        ("", f"The same as `{cmd}`:"),
        (
            "prompt",
            f"{layout.reads}: description {layout.description!r}, doc_to_text "
            f"{layout.doc_to_text!r}, fewshot_delimiter {layout.fewshot_delimiter!r}, "
            "target_delimiter '' (the completion carries its own leading space).",
        ),
        (
            "demos",
            "K items of this task's own pool (fewshot_split = test_split), never the test "
            f"item, drawn by {FEWSHOT_MODULE}.py with synthprobe's own draw: the same "
            "demonstrations for the same item whatever --limit. Where synthprobe is not "
            "installed in lm-eval's Python environment they are lm-eval's random draw instead "
            "(seeded by the 4th value of lm-eval's --seed; they then depend on --limit and "
            "document order).",
        ),
    ]
    if pool.kind == "choice":
        paras.append(("choices", "every ending scored by its log-likelihood given the prompt."))
    elif variant == "generation":
        paras.append(
            (
                "answer",
                f"greedy decoding up to a newline (at most {task.max_new_tokens} new "
                "tokens), whitespace stripped, exact match with the stripped "
                "completion.",
            )
        )
    else:
        paras.append(
            ("acc", "1 when every token of the gold completion is the greedy choice (synthprobe's --check is-greedy).")
        )
    return paras


def _gpt3_different(pool: Gpt3Pool, variant: str) -> list[tuple[str, str]]:
    """The comment's paragraphs on what lm-eval does differently: K, context, BOS, metric, tokens."""
    task = pool.task
    paras: list[tuple[str, str]] = []
    paras += [
        ("", "Different:"),
        (
            "K",
            f"num_fewshot is left unset here, so lm-eval runs zero-shot by default and honours "
            f"--num_fewshot (a YAML value of 0 would make lm-eval ignore it): pass --num_fewshot 1 "
            f"for one-shot, {task.k_few} for GPT-3's few-shot ({task.family}); lm-eval runs one K "
            f"per run. synthprobe score gpt3 runs zero, one and few (K={task.k_few}) by default.",
        ),
        (
            "context",
            "synthprobe drops whole demonstrations, furthest from the test item first, until "
            "the prompt fits --max-context (2048, capped at the model's); lm-eval instead "
            "cuts the first tokens beyond the model's max_length (instruction and "
            "demonstrations alike).",
        ),
        (
            "BOS",
            "synthprobe adds no BOS token; lm-eval prepends one whenever the tokenizer adds it "
            "by default (Llama-style tokenizers do, GPT-2-style ones such as SmolLM2's do not). "
            "add_bos_token=False in --model_args matches synthprobe.",
        ),
    ]
    if pool.kind == "choice":
        paras.append(
            (
                "metric",
                "GPT-3 and synthprobe pick the highest PER-TOKEN mean "
                "log-likelihood; lm-eval's acc picks the highest sum and its "
                "acc_norm divides by CHARACTERS, so neither is synthprobe's "
                "accuracy.",
            )
        )
    if variant != "generation":
        paras.append(
            (
                "tokens",
                "lm-eval tokenises prompt + continuation as one string and splits "
                "after the prompt's tokens; synthprobe tokenises them separately. "
                "They differ where a token straddles the join.",
            )
        )
    return paras


def _max_new_tokens(pool: Gpt3Pool) -> int:
    """The generation budget synthprobe's own GPT-3 scorer uses (32 for an unknown task)."""
    return int(pool.task.max_new_tokens) if pool.task is not None else 32


def gpt3_files(pool: Gpt3Pool, out: Path) -> dict[str, bytes]:
    """Task YAMLs and the data file for one GPT-3 pool.

    A free-form pool gives a loglikelihood task ``name`` and a generation task ``name_gen``; a
    multiple-choice pool (SAT) gives one ``multiple_choice`` task ``name``.

    No GPT-3 YAML sets ``num_fewshot``: lm-eval 0.4 ignores ``--num_fewshot`` for a task whose
    config says 0 ("Manual configuration will be ignored"); with the key unset it runs
    zero-shot unless ``--num_fewshot`` asks for more.
    """
    name = pool.name
    rel = f"data/{name}.jsonl"
    layout = _layout(pool)
    fewshot: dict[str, Any] = {}
    if pool.task is not None:
        fewshot["sampler"] = Function(f"{FEWSHOT_MODULE}.{_sampler_attr(pool)}")
    family_tags = ["synthprobe_gpt3"] + ([f"synthprobe_gpt3_{pool.task.family}"] if pool.task else [])
    common = {
        **data_source(rel),
        "test_split": "test",
        "fewshot_split": "test",
        "description": layout.description,
        "doc_to_text": layout.doc_to_text,
        "target_delimiter": "",
        "fewshot_delimiter": layout.fewshot_delimiter,
    }
    if not layout.description:
        del common["description"]
    meta = {"version": 1.0, "items": pool.n}
    if pool.kind == "choice":
        mc = {
            "task": name,
            "tag": family_tags,
            **common,
            "output_type": "multiple_choice",
            "doc_to_choice": "endings",
            "doc_to_target": "{{label}}",
            **({"fewshot_config": fewshot} if fewshot else {}),
            "metric_list": MC_METRICS,
            "metadata": meta,
        }
        return {rel: pool.data, f"{name}.yaml": dump(_gpt3_comment(pool, "multiple choice", layout), mc)}
    ll = {
        "task": name,
        "tag": family_tags,
        **common,
        "doc_to_target": "{{completion}}",
        **({"fewshot_config": fewshot} if fewshot else {}),
        "output_type": "loglikelihood",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": meta,
    }
    # The gold is compared trimmed; demonstrations keep the completion's own leading space.
    gen = {
        "task": f"{name}_gen",
        "tag": [f"{t}_gen" for t in family_tags],
        **common,
        "doc_to_target": "{{completion | trim}}",
        "fewshot_config": {**fewshot, "doc_to_target": "{{completion}}"},
        "output_type": "generate_until",
        "generation_kwargs": {"until": ["\n"], "do_sample": False, "max_gen_toks": _max_new_tokens(pool)},
        "filter_list": [{"name": "strip", "filter": [{"function": "remove_whitespace"}, {"function": "take_first"}]}],
        "metric_list": [
            {
                "metric": "exact_match",
                "aggregation": "mean",
                "higher_is_better": True,
                "ignore_case": False,
                "ignore_punctuation": False,
            }
        ],
        "metadata": meta,
    }
    return {
        rel: pool.data,
        f"{name}.yaml": dump(_gpt3_comment(pool, "log-likelihood: is the completion greedy?", layout), ll),
        f"{name}_gen.yaml": dump(_gpt3_comment(pool, "generation", layout), gen),
    }


def parse_gpt3_spec(spec: str) -> tuple[str, Path]:
    """``NAME=PATH``, or just ``PATH``: the task is then ``synthprobe_<file name>``."""
    name, sep, path = spec.partition("=")
    if not sep:
        stem = Path(spec).stem.replace("-", "_").replace(".", "_")
        name, path = (GPT3_PREFIX + stem if stem else ""), spec
    if not name or not path:
        raise InputError(
            f"expected NAME=PATH or PATH (e.g. data/gpt3/arithmetic_2da.jsonl), got {spec!r}", field="--gpt3"
        )
    return name, Path(path)


# -- the part: task files ---------------------------------------------------------------------


def inputs(
    gpt3: dict[str, str | Path] | None = None, sat_file: str | Path | None = None, **_: Any
) -> list[tuple[Any, str]]:
    """The files named by the options (the SAT package, task files built earlier), never written over."""
    named = [(sat_file, "--sat-file"), *((p, "--gpt3") for p in (gpt3 or {}).values())]
    return [(path, flag) for path, flag in named if path is not None]


def _readme_run(pools: list[Gpt3Pool], where: Path) -> list[str]:
    if not pools:
        return []
    from synthprobe.benchmarks.gpt3.registry import ordered_tasks

    lines = [
        "GPT-3's synthetic tasks, zero-shot (`synthprobe_gpt3_gen`: every generation task; "
        "`synthprobe_gpt3`: the log-likelihood ones):",
        "",
        "```bash",
        "lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 \\",
        f"    --include_path {where} --tasks synthprobe_gpt3_gen",
        "```",
        "",
        "lm-eval runs one K per run; GPT-3's few-shot K differs by family, so run the families apart:",
        "",
        "```bash",
    ]
    k_of = {t.family: t.k_few for t in ordered_tasks()}
    for fam in sorted({p.task.family for p in pools if p.task is not None}):
        lines.append(f"lm_eval ... --include_path {where} --tasks synthprobe_gpt3_{fam}_gen --num_fewshot {k_of[fam]}")
    return lines + [
        "```",
        "",
        "Demonstrations are drawn by `synthprobe_fewshot.py` exactly as `synthprobe score "
        "gpt3` draws them (synthprobe must be importable where lm-eval runs). Each YAML's "
        "header states what still differs from `synthprobe score gpt3`.",
        "",
    ]


def task_files(
    out: Path,
    *,
    gpt3: dict[str, str | Path] | None = None,
    gpt3_tasks: str | Iterable[str] = DEFAULT_GPT3_TASKS,
    gpt3_seed: int = 0,
    gpt3_format: str = "openai",
    sat_file: str | Path | None = None,
    progress: bool = False,
) -> TaskFiles:
    """The tasks ``gpt3_tasks`` built from ``gpt3_seed`` in ``gpt3_format`` (SAT from
    ``sat_file`` only), a file of ``gpt3`` replacing the built task of the same name, and the
    few-shot module their YAMLs name."""
    user = {
        name: user_pool(name, Path(path), seed=gpt3_seed, fmt=gpt3_format)
        for name, path in sorted((gpt3 or {}).items())
    }
    pools = [
        p
        for p in built_pools(gpt3_tasks, seed=gpt3_seed, fmt=gpt3_format, sat_file=sat_file, progress=progress)
        if p.name not in user
    ]
    pools += list(user.values())
    files: dict[str, bytes] = {}
    for pool in pools:
        for rel, blob in gpt3_files(pool, out).items():
            if rel in files:
                raise InputError(f"task {pool.name!r} would overwrite {rel}")
            files[rel] = blob
    if pools:
        files[f"{FEWSHOT_MODULE}.py"] = fewshot_module(pools)
    return TaskFiles(files, run=_readme_run(pools, out.resolve()), inputs=inputs(gpt3, sat_file))


# -- the part: results rows as lm-eval's files -------------------------------------------------


def _gpt3_settings(entry: Entry) -> dict:
    block = entry.results["gpt3"]
    return block.data.get("settings") or entry.settings or {}


def _gpt3_pool(results: Results, entry: Entry, row: dict, where: str):
    """The pool the row was scored on, as the export writes it (a :class:`Gpt3Pool`)."""
    from synthprobe.benchmarks.gpt3.registry import get_task

    settings = _gpt3_settings(entry)
    task = get_task(row["task"])
    seed, fmt = settings.get("seed", 0), settings.get("format", "openai")
    if settings.get("number_format", "plain") not in (None, "plain"):
        raise results.reader.fail(
            f"{where}", "scored with a number format other than plain; the exported lm-eval tasks hold plain numbers"
        )
    task_file = row.get("task_file")
    if task_file:
        path = Path(task_file)
        if not path.is_file():
            raise results.reader.fail(f"{where}.task_file", f"{task_file!r} is not found")
        return user_pool(f"synthprobe_{task.name}", path, seed=seed, fmt=fmt)
    return built_pools([task.name], seed=seed, fmt=fmt)[0]


def _exact_prompt(task, pool_items: list, index: int, k: int, seed: int, fmt: str, n_shots: int) -> str:
    """synthprobe's prompt for ``pool_items[index]`` with the ``n_shots`` demonstrations it used
    (fewer than ``k`` when ``--max-context`` cut some): the shortest character budget that keeps
    exactly ``n_shots`` finds the same prompt the token budget found."""
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

    full = build_prompt(task, pool_items, index, PromptConfig(shots=k, format=fmt, seed=seed, max_context=None))
    if full.n_shots == n_shots:
        return full.text
    lo, hi = 8, max(8, len(full.text))
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            got = build_prompt(
                task, pool_items, index, PromptConfig(shots=k, format=fmt, seed=seed, max_context=mid), len
            )
        except InputError:
            lo = mid + 1
            continue
        if got.n_shots >= n_shots:
            hi = mid
        else:
            lo = mid + 1
    return build_prompt(task, pool_items, index, PromptConfig(shots=k, format=fmt, seed=seed, max_context=lo), len).text


def _gpt3_task(results: Results, entry: Entry, i: int, row: dict, model_args: dict) -> TaskRun | None:
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, get_task

    block = entry.results["gpt3"]
    where = f"{block.where}.rows[{i}]"
    task = get_task(row["task"])
    if task.kind == "choice":
        return None  # SAT: scored per token, lm-eval's multiple choice sums; kept under `synthprobe`
    settings = _gpt3_settings(entry)
    check = settings.get("check", "generate")
    items = row.get("items") or []
    key = "prediction" if check == "generate" else "logprob"
    if not items or any(key not in it or "gold" not in it for it in items):
        raise results.reader.fail(
            f"{where}.items",
            "holds no per-item predictions; lm-eval's samples need them: score with --save-predictions",
        )
    pool = _gpt3_pool(results, entry, row, where)
    # the documents lm-eval loads (the pool's JSON lines; only the scored ones are decoded), and the
    # items synthprobe's prompts are built from
    pool_lines = [line for line in pool.data.decode("utf-8").splitlines() if line.strip()]
    if row.get("task_file"):
        from synthprobe.benchmarks.gpt3.taskfile import load_task_file

        built = load_task_file(f"{task.name}={row['task_file']}").items
    else:
        built = build_items(
            BuildConfig(task.name, seed=settings.get("seed", 0), format=settings.get("format", "openai"))
        )
    k = int(row["k"])
    files = gpt3_files(pool, results.path.parent)
    name = pool.name + ("_gen" if check == "generate" else "")
    body = task_yaml(files[f"{name}.yaml"])
    # where `synthprobe export lm-eval` puts the pool, relative to its folder
    body["dataset_kwargs"] = {"data_files": {"test": f"data/{pool.name}.jsonl"}}
    body["num_fewshot"] = k
    # lm-eval dumps the sampler class the YAML's !function names (synthprobe's demonstration draw)
    sampler = (
        f"<class 'synthprobe.export.lm_eval.sampler.DemoSampler_{task.name}_seed{pool.seed}'>"
        if (body.get("fewshot_config") or {}).get("sampler")
        else "default"
    )
    cfg = task_config(body, sampler=sampler, metadata_extra=model_args, config_source=f"{name}.yaml")
    samples = []
    for it in sorted(items, key=lambda x: x["index"]):
        idx = int(it["index"])
        doc = json.loads(pool_lines[idx])
        prompt = _exact_prompt(task, built, idx, k, pool.seed, pool.format, int(it.get("n_shots", k)))
        samples.append(_gpt3_sample(it, idx, doc, prompt, check, body))
    filt = "strip" if check == "generate" else "none"
    metrics = ("exact_match",) if check == "generate" else ("acc",)
    return TaskRun(
        name,
        cfg,
        k,
        pool.n,
        samples,
        filt,
        metrics,
        key=f"gpt3.rows[{i}]",
        where=where,
        drop=("gpt3", "rows", i, "items"),
    )


def _gpt3_sample(it: dict, idx: int, doc: dict, prompt: str, check: str, body: dict) -> dict:
    """One line of lm-eval's ``samples_*.jsonl`` for the scored item ``it`` (document ``idx``):
    the greedy generation and its exact match, or the gold completion's log-likelihood and
    whether it is the greedy one."""
    completion = doc["completion"]
    if check == "generate":
        target = completion.strip()
        raw = it["prediction"]
        filtered = raw.strip()
        gen_kwargs = dict(body["generation_kwargs"])
        metrics = {"exact_match": 1.0 if filtered == target else 0.0}
        line = {
            "doc_id": idx,
            "doc": doc,
            "target": target,
            "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": gen_kwargs}},
            "resps": [[raw]],
            "filtered_resps": [filtered],
            "filter": "strip",
            "metrics": ["exact_match"],
        }
    else:
        target = completion
        ll, greedy = str(float(it["logprob"])), str(bool(it["correct"]))
        metrics = {"acc": 1.0 if it["correct"] else 0.0}
        line = {
            "doc_id": idx,
            "doc": doc,
            "target": target,
            "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": completion}},
            "resps": [[[ll, greedy]]],
            "filtered_resps": [[ll, greedy]],
            "filter": "none",
            "metrics": ["acc"],
        }
    line.update(
        {
            "doc_hash": doc_hash(doc),
            "prompt_hash": hash_string(prompt),
            "target_hash": hash_string(target),
            **metrics,
            "synthprobe": it,
        }
    )
    return line


def result_tasks(results: Results, entry: Entry, *, shared: dict, **_: Any) -> EntryTasks:
    """The entry's GPT-3 rows as lm-eval tasks, one run per K (SAT rows left to ``synthprobe``)."""
    rows = entry.results["gpt3"].data["rows"]
    tasks = [t for i, row in enumerate(rows) if (t := _gpt3_task(results, entry, i, row, model_args(entry)))]
    settings = _gpt3_settings(entry)

    def config(k: int) -> dict:
        limits = settings.get("limits") or {}
        return {"seed": settings.get("seed"), "limit": limits.get("few_shot_generation" if k >= 2 else "zero_one_shot")}

    return EntryTasks(tasks, config=config)
