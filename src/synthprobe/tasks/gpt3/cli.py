"""``synthprobe build <task>``, ``synthprobe build gpt3`` and ``synthprobe score gpt3``.

Build writes one task's items as JSONL, deterministically from ``--seed`` (byte-identical on
every machine). Score regenerates the same items in memory, builds zero-/one-/few-shot
prompts, runs the model and prints its accuracy beside GPT-3's (Table H.1).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results
file is written); 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from synthprobe.cliargs import add_model_args, nonneg_int, positive_int
from synthprobe.errors import EXIT_FAILED, InputError

DEFAULT_DIR = Path("data") / "gpt3"


def _write_items(items: list, out: str, *, keep_identical: bool = False) -> str:
    """Write ``items`` to ``out`` ('-': stdout). ``keep_identical``: a file already holding exactly
    these bytes is left untouched (the message says so)."""
    from synthprobe.io import atomic_write_text
    from synthprobe.tasks.gpt3.registry import serialize

    text = serialize(items)
    if out == "-":
        sys.stdout.write(text)
        return "stdout"
    path = Path(out)
    if path.is_dir():
        raise InputError("is a directory; expected the path of the file to write", path=path, field="--out")
    if keep_identical and path.is_file() and path.read_bytes() == text.encode("utf-8"):
        return f"{path} (already identical, left untouched)"
    atomic_write_text(path, text)
    return str(path)


def cmd_build_task(args: argparse.Namespace) -> int:
    from synthprobe.io import check_outputs, default_output
    from synthprobe.tasks.gpt3.registry import BuildConfig, build_items, get_task

    sat_file = getattr(args, "sat_file", None)
    default = DEFAULT_DIR / f"{get_task(args.task).name}.jsonl"
    out = args.out or str(default)
    check_outputs([(out, "--out")], [(sat_file, "--sat-file")], overwrite=args.overwrite or args.out is None)
    config = BuildConfig(args.task, seed=args.seed, n=args.n, format=args.format, sat_file=sat_file)
    task = config.validate()
    items = build_items(config)
    keep = args.out is None and not args.overwrite
    if keep and default.is_file() and not _same_text(default, items):
        out = str(default_output(default))  # a default name that exists, with other bytes: a new name
    where = _write_items(items, out, keep_identical=keep)
    print(f"{task.name} ({task.code}): {len(items):,} items, seed {args.seed}, format {args.format} -> {where}",
          file=sys.stderr)
    return 0


def _same_text(path: Path, items: list) -> bool:
    from synthprobe.tasks.gpt3.registry import serialize

    return path.read_bytes() == serialize(items).encode("utf-8")


def cmd_build_all(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from synthprobe.tasks.gpt3.registry import BuildConfig, build_items, resolve_tasks

    tasks = resolve_tasks(args.tasks)
    if args.sat_file is not None and not any(t.family == "sat" for t in tasks):
        raise InputError(f"only the SAT task reads a source file, and --tasks selects none "
                         f"({', '.join(t.code for t in tasks)}); add SAT or drop --sat-file", field="--sat-file")
    configs = [BuildConfig(t.name, seed=args.seed, n=args.n if t.family != "sat" else None,
                           format=args.format, sat_file=args.sat_file if t.family == "sat" else None)
               for t in tasks]
    for c in configs:
        c.validate()
    out_dir = Path(args.out_dir)
    from synthprobe.io import check_output_dir

    check_output_dir(out_dir, [f"{t.name}.jsonl" for t in tasks], [(args.sat_file, "--sat-file")],
                     overwrite=args.overwrite, field="--out-dir")
    for task, config in zip(tqdm(tasks, desc="building", unit="task", disable=args.quiet), configs):
        items = build_items(config)
        _write_items(items, str(out_dir / f"{task.name}.jsonl"))
    print(f"{len(tasks)} task files (seed {args.seed}, format {args.format}) -> {out_dir}", file=sys.stderr)
    return 0




def cmd_score(args: argparse.Namespace) -> int:
    from synthprobe import __version__
    from synthprobe.io import atomic_write_text, check_outputs, default_output, sha256_file, slug
    from synthprobe.cliargs import load_backend_or_exit
    from synthprobe.tasks.gpt3.registry import resolve_tasks
    from synthprobe.scoring.gpt3 import EvalConfig, dumps_results, format_table, run
    from synthprobe.tasks.gpt3.sat import sample_path
    from synthprobe.tasks.gpt3.taskfile import load_task_files

    shots = [s.strip() for s in args.shots.split(",") if s.strip()]
    # every task file is read and checked here, before any model loads
    task_files = load_task_files(args.task_file or [])
    if args.tasks is None:
        tasks = [tf.task for tf in task_files] if task_files else resolve_tasks("all")
    else:
        tasks = resolve_tasks(args.tasks)
        tasks += [tf.task for tf in task_files if tf.task not in tasks]
    config = EvalConfig(
        tasks=tasks, task_files=task_files, shots=shots, limit=args.limit, limit_few=args.limit_few,
        seed=args.seed, format=args.format, check=args.check, max_context=args.max_context,
        batch_size=args.batch_size, max_new_tokens=args.max_new_tokens, sat_file=args.sat_file,
        save_items=args.save_predictions, progress=args.progress, cache=not args.no_cache,
    ).validate()
    output = Path(args.output) if args.output else default_output(Path("benchmarks") / f"gpt3_{slug(args.model)}.json")
    if output.is_dir():
        raise InputError("is a directory; expected the path of the results file", path=output, field="--output")
    check_outputs([(output, "--output")],
                  [(args.sat_file, "--sat-file"), (args.model, "--model"),
                   *((tf.path, "--task-file") for tf in task_files)],
                  overwrite=args.overwrite)

    started = time.perf_counter()
    try:
        backend = load_backend_or_exit(args.model, args)
    except SystemExit as exc:  # the reason is printed; no results file
        return int(exc.code)
    load_seconds = time.perf_counter() - started

    def report(result: dict) -> None:
        if args.progress:
            lo, hi = result["ci95"] or (0.0, 0.0)
            print(f"  {result['code']:>4} {result['setting']:>5}: {result['accuracy']:6.2f}% "
                  f"({result['correct']}/{result['n']}, 95% CI {lo:.1f}-{hi:.1f}, {result['seconds']:.1f} s)",
                  file=sys.stderr)

    try:
        results = run(backend, config, on_result=report)
    except (InputError, KeyboardInterrupt):
        raise
    except Exception as exc:  # anything mid-run: no results file, clear message, non-zero exit
        print(f"synthprobe: error: scoring failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED

    sat_path = Path(config.sat_file) if config.sat_file else sample_path()
    uses_sat = any(t.family == "sat" for t in config.tasks)
    from synthprobe.tasks.gpt3.words import WORD_SET_SIZE

    doc = {
        "benchmark": "gpt3-synthetic",
        "synthprobe": __version__,
        "command": shlex.join(["synthprobe", *sys.argv[1:]]),
        "model": backend.describe(),
        "settings": {
            "tasks": [t.name for t in config.tasks], "shots": shots, "seed": config.seed,
            "format": config.format, "check": config.check, "max_context": config.max_context,
            "batch_size": config.batch_size, "max_new_tokens": config.max_new_tokens,
            "threads": backend.runtime().get("torch_threads"),
            "limits": {"zero_one_shot": config.limit, "few_shot_generation": config.limit_for(2),
                       "few_shot_sat": config.limit},
            "limit_note": "each task scores the first N items of its seeded pool; demonstrations "
                          "are drawn from the whole pool",
            "sat_file": (str(sat_path) if config.sat_file else "synthprobe sample (not the SAT set)")
            if uses_sat else None,
            "sat_sha256": sha256_file(sat_path) if uses_sat else None,
            "word_list": f"wordsegment unigrams.txt, first {WORD_SET_SIZE:,} words by length rule",
            **({"task_files": [{"task": tf.task.name, "path": str(tf.path), "sha256": tf.sha256,
                                "items": len(tf.items), "format": config.format_for(tf.task)}
                               for tf in task_files]} if task_files else {}),
        },
        "results": results,
        "seconds": {"load": round(load_seconds, 2), "total": round(time.perf_counter() - started, 2)},
    }
    atomic_write_text(output, dumps_results(doc))
    print(format_table(results, backend.name if hasattr(backend, "name") else args.model))
    print(f"\nresults -> {output}", file=sys.stderr)
    return 0


def max_new_tokens_text() -> str:
    """Each generation task's default ``--max-new-tokens``, grouped: ``6 for 2D+ 2D−; ...``."""
    from synthprobe.tasks.gpt3.registry import ordered_tasks

    groups: dict[int, list[str]] = {}
    for t in ordered_tasks():
        if t.kind == "generate":
            groups.setdefault(t.max_new_tokens, []).append(t.code)
    return "; ".join(f"{n} for {' '.join(codes)}" for n, codes in sorted(groups.items()))


class _AnyCaseTaskNames(dict):
    """The ``build`` verb's map of sub-command names: a name that is not a sub-command but names
    a GPT-3 task in another case (``2d+``, ``cl``, ``Arithmetic_2DA``) finds that task's
    sub-command, as :func:`~synthprobe.tasks.gpt3.registry.get_task` does."""

    def _task_name(self, key) -> str | None:
        from synthprobe.tasks.gpt3.registry import get_task

        if not isinstance(key, str):
            return None
        try:
            name = get_task(key).name
        except InputError:
            return None
        return name if dict.__contains__(self, name) else None

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or self._task_name(key) is not None

    def __getitem__(self, key):
        if not dict.__contains__(self, key):
            name = self._task_name(key)
            if name is not None:
                return dict.__getitem__(self, name)
        return dict.__getitem__(self, key)


def _any_case(subparsers: argparse._SubParsersAction) -> None:
    """Let ``subparsers`` find GPT-3 task sub-commands in any case (argparse matches names exactly)."""
    names = getattr(subparsers, "_name_parser_map", None)
    if isinstance(names, dict) and subparsers.choices is names:
        folded = _AnyCaseTaskNames(names)
        subparsers._name_parser_map = folded
        subparsers.choices = folded


_BUILD_EPILOG = """Items follow OpenAI's released files byte-for-byte in layout:
  arithmetic  {"context": "\\n\\nQ: What is 98 plus 45?\\n\\nA:", "completion": " 143"}
  word tasks  {"context": "\\nasinoc =", "completion": " casino"}
  SAT         {"ind": ..., "ctx": "lull is to trust as", "endings": [" cajole is to compliance", ...], "label": 0}
The same seed gives a byte-identical file on every machine."""


def register(verbs: dict) -> None:
    from synthprobe.io import add_overwrite_argument
    from synthprobe.tasks.gpt3.registry import FORMATS, ordered_tasks
    from synthprobe.scoring.gpt3 import CHECKS

    build = verbs["build"]
    _any_case(build)
    for task in ordered_tasks():
        aliases = [task.code] if task.code != task.name else []
        if task.code.replace("\u2212", "-") != task.code:
            aliases.append(task.code.replace("\u2212", "-"))
        aliases += [a for a in task.aliases if a not in aliases and a != task.name]
        p = build.add_parser(
            task.name, aliases=aliases, help=f"GPT-3 {task.code}: {task.summary}",
            description=f"Build GPT-3's {task.code} task ({task.summary}) as JSONL.",
            epilog=_BUILD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the item draws (default 0)")
        default_n = f"{task.default_n:,}" if task.default_n else "every question in the file"
        p.add_argument("--n", type=positive_int, default=None, help=f"number of items (default {default_n}); "
                       "a smaller build is a prefix of a larger one")
        p.add_argument("--out", default=None, help=f"output file, '-' for stdout (default {DEFAULT_DIR}/{task.name}.jsonl)")
        p.add_argument("--format", choices=FORMATS, default="openai",
                       help="openai: GPT-3's released layout; eleuther: lm-eval's 'Question: ...\\nAnswer:' "
                            "rewrite of the arithmetic prompts (word and SAT items are the same in both)")
        add_overwrite_argument(p)
        if task.family == "sat":
            p.add_argument("--sat-file", default=None,
                           help="Turney's SAT file (SAT-package-V3.txt, from Peter Turney on request); "
                                "default: synthprobe's self-written sample, not the SAT set")
        p.set_defaults(func=cmd_build_task, task=task.name)

    p = build.add_parser("gpt3", help="all GPT-3 synthetic tasks at once, one JSONL file each",
                         description="Build several GPT-3 synthetic tasks into one folder, one JSONL file each.",
                         epilog=_BUILD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tasks", default="all", help="comma-separated names or codes, or all/arithmetic/words/sat "
                   "(default all)")
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the item draws (default 0)")
    p.add_argument("--n", type=positive_int, default=None, help="items per task (default: 2,000 arithmetic, 10,000 words)")
    p.add_argument("--out-dir", default=str(DEFAULT_DIR), help=f"output folder (default {DEFAULT_DIR})")
    p.add_argument("--format", choices=FORMATS, default="openai", help="openai or eleuther layout")
    p.add_argument("--sat-file", default=None, help="Turney's SAT file; default the shipped sample")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_overwrite_argument(p)
    p.set_defaults(func=cmd_build_all)

    s = verbs["score"].add_parser(
        "gpt3", help="score a causal LM on GPT-3's synthetic tasks and compare with the paper",
        description="Score a causal LM on GPT-3's synthetic tasks (arithmetic, word manipulation, SAT "
                    "analogies) zero-, one- and few-shot, write a results JSON and print the accuracy "
                    "beside GPT-3's for every model size (Table H.1).",
        epilog="Generation tasks: greedy decoding, stop at newline, strip, exact match. SAT: the choice "
               "with the highest per-token mean log-likelihood. Demonstrations come from the same task's "
               "pool (never the test item) and are dropped from the far end to fit --max-context.\n"
               "Example: synthprobe score gpt3 --tasks arithmetic_2da,CL --shots 0,1,few --limit 50\n"
               "Your own task files in OpenAI's released format (e.g. GPT-3's original files):\n"
               "  synthprobe score gpt3 --task-file two_digit_addition.jsonl --task-file A1=my_a1.jsonl --limit 100",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--tasks", default=None, help="comma-separated task names or paper codes (2D+, CL, SAT, ...), "
                   "or all/arithmetic/words/sat (default all; with --task-file, only the files' tasks)")
    s.add_argument("--task-file", action="append", metavar="[NAME=]PATH",
                   help="score the items of a task file in OpenAI's released format ({\"context\", "
                        "\"completion\"} lines, e.g. GPT-3's two_digit_addition.jsonl or a 'synthprobe build' "
                        "file) instead of building that task; repeatable, one file per task. The task is "
                        "NAME (a task name, paper code or released file name: 2D+, arithmetic_2da, "
                        "two_digit_addition, A1, mid_word_1_anagrams, ...) or else the file name up to its "
                        "first dot. Every line is checked before the model loads (only the two fields, the "
                        "task's question form, operands and correct answer, or its word transformation; no "
                        "repeated item); the first bad one is an error naming file, line and field (exit 2). "
                        "An arithmetic file's layout (Q:/A: or lm-eval's Question:/Answer:) is read from it; "
                        "demonstrations are drawn from the file's own items")
    s.add_argument("--shots", default="zero,one,few",
                   help="comma-separated settings: zero/0, one/1, few (GPT-3's K: 50 arithmetic, 100 words, "
                        "20 SAT) or a number K (default zero,one,few)")
    s.add_argument("--limit", type=positive_int, default=None, help="score only the first N items of each task")
    s.add_argument("--limit-few", type=positive_int, default=None,
                   help="a separate, usually smaller, N for the few-shot (K >= 2) settings of the generation "
                        "tasks, whose prompts run to 1,000-2,000 tokens (default: --limit; SAT uses --limit)")
    s.add_argument("--seed", type=nonneg_int, default=0, help="seed of the items and demonstration draws (default 0)")
    s.add_argument("--format", choices=FORMATS, default="openai",
                   help="prompt layout: openai (GPT-3's, word tasks with the instruction line) or eleuther "
                        "(lm-eval's Question/Answer arithmetic; word tasks as openai without the instruction "
                        "line, which differs from lm-eval's unscramble layout: lm-eval keeps the context's "
                        "leading newline, adds a space before the answer and a blank line between examples)")
    s.add_argument("--check", choices=CHECKS, default="generate",
                   help="generate: exact match of the greedy generation (GPT-3); is-greedy: the gold "
                        "completion is the model's greedy continuation (lm-eval's arithmetic acc)")
    s.add_argument("--max-context", type=positive_int, default=2048,
                   help="prompt plus answer tokens at most (default 2048, GPT-3's window; capped at the model's)")
    s.add_argument("--max-new-tokens", type=positive_int, default=None,
                   help=f"tokens to generate per item (default per task: {max_new_tokens_text()})")
    s.add_argument("--sat-file", default=None, help="Turney's SAT file; default synthprobe's sample (not the SAT set)")
    s.add_argument("--output", default=None, help="results JSON (default benchmarks/gpt3_<model>.json, or a new "
                   "timestamped name beside it if that file exists)")
    add_overwrite_argument(s)
    s.add_argument("--save-predictions", action="store_true",
                   help="also keep every item's gold answer, prediction and correctness in the results JSON "
                        "(each item's pool index, demonstrations used and prompt tokens are always kept)")
    s.add_argument("--no-cache", action="store_true",
                   help="do not read or write the score cache (default: every finished batch of items is kept "
                        "under $SYNTHPROBE_CACHE/scores, so a run stopped by Ctrl-C or a crash resumes where it "
                        "stopped when the same command is run again; 'synthprobe cache' shows or clears it)")
    add_model_args(s, batch_size=16)
    s.set_defaults(func=cmd_score)
