"""Export task YAMLs for EleutherAI's lm-evaluation-harness (``lm_eval --include_path DIR``).

**Deep Arithmark** becomes a ``multiple_choice`` task over a byte-identical copy of the release
(``DIR/data/``, referenced by absolute path through ``dataset_path: json``):

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

import functools
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import yaml

from synthprobe.errors import InputError
from synthprobe.export._files import check_out_dir, write_tree
from synthprobe.io import check_output_dir
from synthprobe.export.release import DEFAULT_RELEASE, Release, load_release
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io import read_jsonl

TASK = "deeparithmark"
GROUP_BY_DEPTH = "deeparithmark_depths"

#: Prefix of every GPT-3 task name. lm-eval ships ``arithmetic_2da``, ``anagrams1``, … over
#: OpenAI's released files; ours hold regenerated items, so they get their own names instead
#: of silently overriding the built-in tasks.
GPT3_PREFIX = "synthprobe_"

#: The GPT-3 task families a plain export builds (SAT only with a user's file).
DEFAULT_GPT3_TASKS = "arithmetic,words"

#: The generated module the GPT-3 YAMLs take their few-shot sampler from.
FEWSHOT_MODULE = "synthprobe_fewshot"

_MC_METRICS = [
    {"metric": "acc", "aggregation": "mean", "higher_is_better": True},
    {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True},
]

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


class _Function(str):
    """A YAML ``!function`` reference (lm-eval imports it from a module next to the YAML)."""


class _Dumper(yaml.SafeDumper):
    """Strings with control characters (the "\\n" stop sequence) in double quotes."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(c in value for c in "\n\t\r") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _function(dumper: yaml.SafeDumper, value: _Function) -> yaml.ScalarNode:
    return dumper.represent_scalar("!function", str(value))


_Dumper.add_representer(str, _str)
_Dumper.add_representer(_Function, _function)


def _dump(comment: str, body: dict[str, Any]) -> bytes:
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000,
                     default_flow_style=False)
    return (comment + text).encode("utf-8")


def _mc_task(name: str, data_file: Path, what: str, sha: str, n: int) -> bytes:
    body = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{ctx}}",
        "doc_to_choice": "endings",
        "doc_to_target": "{{label}}",
        "target_delimiter": "",
        "num_fewshot": 0,
        "metric_list": _MC_METRICS,
        "metadata": {"version": 1.0, "items": n},
    }
    return _dump(_MC_COMMENT.format(what=what, sha=sha), body)


def _release_lines(release: Release) -> list[bytes]:
    """The file's non-blank lines, byte for byte, in item order (with their newline)."""
    lines = [ln if ln.endswith(b"\n") else ln + b"\n" for ln in release.data.splitlines(keepends=True)]
    lines = [ln for ln in lines if ln.strip()]
    if lines and lines[0].startswith(b"\xef\xbb\xbf"):
        lines[0] = lines[0][3:]
    if len(lines) != len(release.items):
        raise InputError(f"{len(lines)} non-blank lines but {len(release.items)} items",
                         path=release.path)
    return lines


def deeparithmark_files(release: Release, out: Path) -> dict[str, bytes]:
    """Relative path → bytes for the Deep Arithmark tasks, data copies included."""
    out_abs = out.resolve()
    stem = release.path.stem
    files: dict[str, bytes] = {}
    data_rel = f"data/{release.name}"
    files[data_rel] = release.data
    files[f"{TASK}.yaml"] = _mc_task(TASK, out_abs / data_rel, f"all {len(release.items)} items",
                                     release.sha256, len(release.items))
    by_depth: dict[int, list[bytes]] = defaultdict(list)
    for item, line in zip(release.items, _release_lines(release)):
        by_depth[item.metadata["depth"]].append(line)
    depth_tasks = []
    for depth in sorted(by_depth):
        name = f"{TASK}_depth{depth}"
        rel = f"data/{stem}.depth{depth}.jsonl"
        files[rel] = b"".join(by_depth[depth])
        files[f"{name}.yaml"] = _mc_task(name, out_abs / rel, f"depth-{depth} items only",
                                         release.sha256, len(by_depth[depth]))
        depth_tasks.append(name)
    group = {
        "group": GROUP_BY_DEPTH,
        "task": depth_tasks,
        "aggregate_metric_list": [{"metric": m, "weight_by_size": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0},
    }
    files[f"{GROUP_BY_DEPTH}.yaml"] = _dump(
        "# Deep Arithmark-1 by depth tier: one sub-task per depth, averaged by size.\n", group)
    return files


# ---------------------------------------------------------------------------------------
# GPT-3 tasks
# ---------------------------------------------------------------------------------------

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


def _gpt3_kind(path: Path) -> str:
    """``"generate"`` for {"context", "completion"} files, ``"choice"`` for ctx/endings/label
    files (SAT analogies), judged by the first record; every record is then checked."""
    for line, obj in read_jsonl(path):
        if "endings" in obj:
            load_arithmark3(path)  # the multiple-choice contract, with located errors
            return "choice"
        break
    for line, obj in read_jsonl(path):
        for key in ("context", "completion"):
            if not isinstance(obj.get(key), str) or not obj.get(key):
                raise InputError(f"expected a non-empty string, got {obj.get(key)!r}",
                                 path=path, line=line, field=key)
    return "generate"


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
    kind = _gpt3_kind(path)
    data = path.read_bytes()
    records = [obj for _, obj in read_jsonl(path)]
    task = _known_task(name, path.stem)
    if task is not None and (task.kind == "choice") != (kind == "choice"):
        task = None  # a file that does not hold that task's kind of item
    layout_fmt = fmt
    if task is not None and task.family == "arithmetic":
        layout_fmt = "eleuther" if records[0]["context"].startswith("Question:") else "openai"
    return Gpt3Pool(name, task, data, kind, layout_fmt, seed, path.name, len(records))


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


def demo_sampler(task: str, seed: int) -> type:
    """An lm-eval few-shot sampler class that draws demonstrations as ``synthprobe score gpt3``
    does: :func:`synthprobe.tasks.gpt3.prompts.draw_demos` for the test document's index in the
    pool, so K distinct pool items, never the test item, from a hash of (task, seed, index) —
    the same demonstrations whatever ``--limit``, document order or lm-eval ``--seed``.

    The pool is the task's few-shot split, which the exported YAMLs make the test split itself.
    """
    from lm_eval.api.samplers import ContextSampler

    from synthprobe.tasks.gpt3.prompts import draw_demos

    def key(doc: dict) -> str:
        return json.dumps(dict(doc), sort_keys=True, ensure_ascii=False)

    class DemoSampler(ContextSampler):
        _pool: list | None = None
        _index: dict[str, int] | None = None

        def sample(self, n: int, eval_doc: dict | None = None, df=None, **kwargs) -> list:
            if self._pool is None:
                self._pool = self.fewshot_docs()
                self._index = {key(d): i for i, d in enumerate(self._pool)}
            if n <= 0:
                return []
            where = self._index.get(key(eval_doc)) if eval_doc is not None else None
            if where is None:
                raise ValueError(f"{task}: the test document is not in the few-shot pool; "
                                 "synthprobe's demonstration draw needs fewshot_split equal to "
                                 "test_split")
            return [self._pool[j] for j in draw_demos(task, seed, where, len(self._pool), n)]

    DemoSampler.__name__ = DemoSampler.__qualname__ = f"DemoSampler_{task}_seed{seed}"
    return DemoSampler


def _sampler_attr(pool: Gpt3Pool) -> str:
    return f"demos_{pool.name}"


def _fewshot_module(pools: list[Gpt3Pool]) -> bytes:
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


def _comment(paragraphs: list[tuple[str, str]]) -> str:
    """``(label, text)`` pairs as a wrapped YAML comment; a label hangs the text after it."""
    import textwrap

    out = []
    for label, text in paragraphs:
        if not label and not text:
            out.append("#")
            continue
        indent = " " * (len(label) and 13)
        first = f"{label:<13}" if label else ""
        out += textwrap.wrap(text, width=96, initial_indent="# " + (("  " + first) if label else ""),
                             subsequent_indent="# " + (("  " + indent) if label else ""),
                             break_long_words=False, break_on_hyphens=False)
    return "".join(ln.rstrip() + "\n" for ln in out)


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
        return _comment(paras)
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
    return _comment(paras)


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
        fewshot["sampler"] = _Function(f"{FEWSHOT_MODULE}.{_sampler_attr(pool)}")
    family_tags = ["synthprobe_gpt3"] + ([f"synthprobe_gpt3_{pool.task.family}"] if pool.task else [])
    common = {
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(out.resolve() / rel)}},
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
              "metric_list": _MC_METRICS, "metadata": meta}
        return {rel: pool.data, f"{name}.yaml": _dump(_gpt3_comment(pool, "multiple choice", layout), mc)}
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
        f"{name}.yaml": _dump(_gpt3_comment(pool, "log-likelihood: is the completion greedy?", layout), ll),
        f"{name}_gen.yaml": _dump(_gpt3_comment(pool, "generation", layout), gen),
    }


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
        "The data files referenced by absolute path live in `data/`; moving this folder",
        "means exporting it again.",
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
        files[f"{FEWSHOT_MODULE}.py"] = _fewshot_module(pools)
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
