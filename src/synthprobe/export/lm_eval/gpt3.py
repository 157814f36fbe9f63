"""GPT-3's synthetic tasks as lm-eval tasks: the pools (built here, or a user's files checked by
:func:`synthprobe.tasks.gpt3.taskfile.load_task_file`), their prompt layout, the YAMLs and the
generated few-shot module."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from synthprobe.errors import InputError
from synthprobe.export.lm_eval.yaml import MC_METRICS, Function, comment, data_source, dump
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.read import read_jsonl
from synthprobe.tasks.gpt3.taskfile import check_record, load_task_file

#: Prefix of every GPT-3 task name. lm-eval ships ``arithmetic_2da``, ``anagrams1``, … over
#: OpenAI's released files; ours hold regenerated items, so they get their own names instead
#: of silently overriding the built-in tasks.
GPT3_PREFIX = "synthprobe_"

#: The GPT-3 task families a plain export builds (SAT only with a user's file).
DEFAULT_GPT3_TASKS = "arithmetic,words"

#: The generated module the GPT-3 YAMLs take their few-shot sampler from.
FEWSHOT_MODULE = "synthprobe_fewshot"


@dataclass(frozen=True)
class Gpt3Pool:
    """One GPT-3 task pool to export: the lm-eval task name, synthprobe's task (None for a
    file whose name matches no task), the JSONL bytes, the prompt layout and where it came from."""

    name: str
    task: Any            # synthprobe.tasks.gpt3.registry.Task | None
    data: bytes
    kind: str            # "generate" | "choice"
    format: str          # "openai" | "eleuther": the prompt layout
    seed: int
    source: str          # "built with seed S" or the user's file name
    n: int


@dataclass(frozen=True)
class _Layout:
    """How lm-eval must join a pool's items to give synthprobe's prompt (prompts.py)."""

    description: str     # put before everything (GPT-3's word-task instruction)
    doc_to_text: str     # the item's context as lm-eval renders it
    fewshot_delimiter: str
    reads: str           # the prompt, described for the YAML comment


def _layout(pool: Gpt3Pool) -> _Layout:
    """synthprobe's prompt, ``head + demo pieces + test piece`` with the leading newlines of the
    whole stripped when there is no head, as lm-eval's ``description`` + ``doc_to_text`` +
    completion + ``fewshot_delimiter`` per demonstration + ``doc_to_text`` of the test item."""
    from synthprobe.tasks.gpt3.words import INSTRUCTION

    task, fmt = pool.task, pool.format
    if pool.kind == "choice":
        return _Layout("", "{{ctx}}", "\n",
                       "demonstrations 'ctx ending' one per line, then the test ctx")
    if task is None:
        return _Layout("", "{{context}}", "",
                       "demonstrations (context + completion) concatenated as stored, then the "
                       "test context")
    if task.family == "arithmetic":
        if fmt == "eleuther":
            return _Layout("", "{{context}}", "\n\n",
                           "'Question: ...\\nAnswer: N' demonstrations joined by a blank line, "
                           "then the test question")
        return _Layout("", "{{context | trim}}", "\n\n",
                       "'Q: ...\\n\\nA: N' demonstrations joined by a blank line (the first "
                       "item's leading blank lines dropped), then the test question")
    if fmt == "openai":
        return _Layout(INSTRUCTION, "{{context}}", "",
                       "GPT-3's instruction line (the description), then one line "
                       "'<scrambled> = <word>' per demonstration, then '<scrambled> ='")
    return _Layout("", "{{context | trim}}", "\n",
                   "one line '<scrambled> = <word>' per demonstration (no instruction line: "
                   "eleuther layout), then '<scrambled> ='")


def _is_choice_file(path: Path) -> bool:
    """Whether the file holds multiple-choice records (ctx/endings/label, SAT analogies) rather
    than {"context", "completion"} ones, judged by its first record."""
    for _, obj in read_jsonl(path):
        return "endings" in obj
    return False


def _known_task(*names: str):
    """The synthprobe GPT-3 task one of ``names`` (prefix dropped) stands for, else None."""
    from synthprobe.tasks.gpt3.registry import get_task

    for name in names:
        try:
            return get_task(name.removeprefix(GPT3_PREFIX))
        except InputError:
            continue
    return None


def _check_name(name: str, field: str) -> None:
    if not name or not name.replace("_", "").isalnum() or not name.isascii():
        raise InputError(f"task name {name!r} must be ASCII letters, digits and underscores",
                         field=field)


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
    from synthprobe.tasks.gpt3.registry import BuildConfig, build_items, serialize

    return serialize(build_items(BuildConfig(task_name, seed=seed, format=fmt,
                                             sat_file=sat_file))).encode("utf-8")


def built_pools(spec: str | Iterable[str] = DEFAULT_GPT3_TASKS, *, seed: int = 0, fmt: str = "openai",
                sat_file: str | Path | None = None, progress: bool = False) -> list[Gpt3Pool]:
    """Build the GPT-3 task pools ``synthprobe score gpt3 --seed SEED --format FMT`` scores.

    ``spec`` names tasks as ``synthprobe build gpt3 --tasks`` does (``arithmetic``, ``words``,
    names, paper codes; ``none`` for no task). SAT analogies are built only from ``sat_file``
    (added when given); naming SAT without one is an error. Same arguments, same bytes.
    """
    from tqdm.auto import tqdm

    from synthprobe.tasks.gpt3.registry import FORMATS, BuildConfig, resolve_tasks

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
        raise InputError("SAT analogies need --sat-file (Turney's SAT-package-V3.txt): the SAT "
                         "set is not shipped", field="--gpt3-tasks")
    configs = [BuildConfig(t.name, seed=seed, format=fmt,
                           sat_file=str(sat_file) if t.family == "sat" else None) for t in tasks]
    for c in configs:
        c.validate()
    pools = []
    for task, config in zip(tqdm(tasks, desc="building GPT-3 task pools", unit="task",
                                 disable=not progress or not tasks, dynamic_ncols=True), configs):
        data = _built_data(task.name, seed, fmt, config.sat_file)
        source = (f"built with seed {seed} from {Path(sat_file).name}" if task.family == "sat"
                  else f"built with seed {seed}, format {fmt}")
        pools.append(Gpt3Pool(GPT3_PREFIX + task.name, task, data, task.kind, fmt, seed, source,
                              data.count(b"\n")))
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
        ("", f"GPT-3 synthetic task {pool.name} ({variant}) for lm-evaluation-harness, exported by "
             "synthprobe."),
        ("", f"Items: {pool.n:,}, {pool.source}. SHA-256 {sha}."),
        ("", ""),
    ]
    if task is None:
        paras.append(("", "This file's name matches no synthprobe GPT-3 task, so there is no "
                          "synthprobe prompt to follow: demonstrations are lm-eval's random draw "
                          f"from this file (never the test item), and the prompt is {layout.reads}."))
        return comment(paras)
    cmd = f"synthprobe score gpt3 --tasks {task.name} --seed {pool.seed} --format {pool.format}"
    if not pool.source.startswith("built"):
        paras += [("", f"The demonstrations are those of `{cmd}` only if this file is the pool that "
                       f"command builds (`synthprobe build {task.name} --seed {pool.seed}`, default "
                       "--n)."), ("", "")]
    paras += [
        ("", f"The same as `{cmd}`:"),
        ("prompt", f"{layout.reads}: description {layout.description!r}, doc_to_text "
                   f"{layout.doc_to_text!r}, fewshot_delimiter {layout.fewshot_delimiter!r}, "
                   "target_delimiter '' (the completion carries its own leading space)."),
        ("demos", "K items of this task's own pool (fewshot_split = test_split), never the test "
                  f"item, drawn by {FEWSHOT_MODULE}.py with synthprobe's own draw: the same "
                  "demonstrations for the same item whatever --limit. Where synthprobe is not "
                  "installed in lm-eval's Python environment they are lm-eval's random draw instead "
                  "(seeded by the 4th value of lm-eval's --seed; they then depend on --limit and "
                  "document order)."),
    ]
    if pool.kind == "choice":
        paras.append(("choices", "every ending scored by its log-likelihood given the prompt."))
    elif variant == "generation":
        paras.append(("answer", f"greedy decoding up to a newline (at most {task.max_new_tokens} new "
                                "tokens), whitespace stripped, exact match with the stripped "
                                "completion."))
    else:
        paras.append(("acc", "1 when every token of the gold completion is the greedy choice "
                             "(synthprobe's --check is-greedy)."))
    paras += [
        ("", "Different:"),
        ("K", f"num_fewshot is left unset here, so lm-eval runs zero-shot by default and honours "
              f"--num_fewshot (a YAML value of 0 would make lm-eval ignore it): pass --num_fewshot 1 "
              f"for one-shot, {task.k_few} for GPT-3's few-shot ({task.family}); lm-eval runs one K "
              f"per run. synthprobe score gpt3 runs zero, one and few (K={task.k_few}) by default."),
        ("context", "synthprobe drops whole demonstrations, furthest from the test item first, until "
                    "the prompt fits --max-context (2048, capped at the model's); lm-eval instead "
                    "cuts the first tokens beyond the model's max_length (instruction and "
                    "demonstrations alike)."),
        ("BOS", "synthprobe adds no BOS token; lm-eval prepends one whenever the tokenizer adds it "
                "by default (Llama-style tokenizers do, GPT-2-style ones such as SmolLM2's do not). "
                "add_bos_token=False in --model_args matches synthprobe."),
    ]
    if pool.kind == "choice":
        paras.append(("metric", "GPT-3 and synthprobe pick the highest PER-TOKEN mean "
                                "log-likelihood; lm-eval's acc picks the highest sum and its "
                                "acc_norm divides by CHARACTERS, so neither is synthprobe's "
                                "accuracy."))
    if variant != "generation":
        paras.append(("tokens", "lm-eval tokenises prompt + continuation as one string and splits "
                                "after the prompt's tokens; synthprobe tokenises them separately. "
                                "They differ where a token straddles the join."))
    return comment(paras)


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
        mc = {"task": name, "tag": family_tags, **common, "output_type": "multiple_choice",
              "doc_to_choice": "endings", "doc_to_target": "{{label}}",
              **({"fewshot_config": fewshot} if fewshot else {}),
              "metric_list": MC_METRICS, "metadata": meta}
        return {rel: pool.data, f"{name}.yaml": dump(_gpt3_comment(pool, "multiple choice", layout), mc)}
    ll = {"task": name, "tag": family_tags, **common, "doc_to_target": "{{completion}}",
          **({"fewshot_config": fewshot} if fewshot else {}),
          "output_type": "loglikelihood",
          "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
          "metadata": meta}
    # The gold is compared trimmed; demonstrations keep the completion's own leading space.
    gen = {"task": f"{name}_gen", "tag": [f"{t}_gen" for t in family_tags], **common,
           "doc_to_target": "{{completion | trim}}",
           "fewshot_config": {**fewshot, "doc_to_target": "{{completion}}"},
           "output_type": "generate_until",
           "generation_kwargs": {"until": ["\n"], "do_sample": False,
                                 "max_gen_toks": _max_new_tokens(pool)},
           "filter_list": [{"name": "strip", "filter": [{"function": "remove_whitespace"},
                                                         {"function": "take_first"}]}],
           "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True,
                            "ignore_case": False, "ignore_punctuation": False}],
           "metadata": meta}
    return {
        rel: pool.data,
        f"{name}.yaml": dump(_gpt3_comment(pool, "log-likelihood: is the completion greedy?", layout), ll),
        f"{name}_gen.yaml": dump(_gpt3_comment(pool, "generation", layout), gen),
    }

