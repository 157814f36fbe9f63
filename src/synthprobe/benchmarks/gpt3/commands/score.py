"""``synthprobe score gpt3``: regenerates GPT-3's synthetic tasks (or reads the user's task files),
builds zero-/one-/few-shot prompts, runs the model through the one runner and prints its accuracy
beside GPT-3's (Table H.1).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results
file is written); 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from synthprobe.commandline import (
    MODEL_USAGE,
    NOTHING_WRITTEN,
    add_bos_argument,
    add_limit_argument,
    add_max_context_argument,
    add_model_args,
    add_yes_argument,
    nonneg_int,
    positive_int,
    run_settings,
)
from synthprobe.errors import CommandFailed, InputError


def cmd_score(args: argparse.Namespace) -> int:
    from synthprobe.backends import ScoringError, check_backend
    from synthprobe.backends.refs import NameRegistry, model_refs, named_model
    from synthprobe.benchmarks.gpt3.registry import resolve_tasks
    from synthprobe.benchmarks.gpt3.sat import sample_path
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig, dumps_results, format_table, run
    from synthprobe.benchmarks.gpt3.taskfile import load_task_files
    from synthprobe.commandline import load_backend_or_exit, model_backend_options
    from synthprobe.io.paths import slug
    from synthprobe.io.read import sha256_file
    from synthprobe.io.write import atomic_write_text, check_outputs, default_output
    from synthprobe.scoring.console import format_usage
    from synthprobe.scoring.settings import for_model

    shots = [s.strip() for s in args.shots.split(",") if s.strip()]
    # every task file is read and checked here, before any model loads
    task_files = load_task_files(args.task_file or [])
    if args.tasks is None:
        tasks = [tf.task for tf in task_files] if task_files else resolve_tasks("all")
    else:
        tasks = resolve_tasks(args.tasks)
        tasks += [tf.task for tf in task_files if tf.task not in tasks]
    config = EvalConfig(
        **run_settings(args),
        tasks=tasks,
        task_files=task_files,
        shots=shots,
        limit_few=args.limit_few,
        seed=args.seed,
        format=args.format,
        check=args.check,
        sat_file=args.sat_file,
        save_items=args.save_predictions,
        protocol=args.sat_protocol,
    ).validate()
    refs = model_refs(args.models)
    name = refs[0].name or refs[0].spec if len(refs) == 1 else f"{len(refs)}models"
    output = Path(args.output) if args.output else default_output(Path("benchmarks") / f"gpt3_{slug(name)}.json")
    if output.is_dir():
        raise InputError("is a directory; expected the path of the results file", path=output, field="--output")
    check_outputs(
        [(output, "--output")],
        [
            (args.sat_file, "--sat-file"),
            *((r.spec, "--model") for r in refs),
            *((tf.path, "--task-file") for tf in task_files),
        ],
        overwrite=args.overwrite,
    )
    owns = []  # each model's settings: the run's with its own over them, checked before the first loads
    for ref in refs:
        config.check_engine(ref.spec)
        owns.append(for_model(config, ref))
        check_backend(ref.spec, **model_backend_options(args, ref))

    sat_path = Path(config.sat_file) if config.sat_file else sample_path()
    uses_sat = any(t.family == "sat" for t in config.tasks)
    from synthprobe import results as res
    from synthprobe.benchmarks.gpt3.words import WORD_SET_SIZE

    names = NameRegistry()
    pools: dict = {}  # the task pools, built once and shared by every model
    entries = []
    tables = []
    for ref, own in zip(refs, owns):
        started = time.perf_counter()
        # a model that will not load: exit 1, no results file
        backend = load_backend_or_exit(ref.spec, args, ref=ref)
        load_seconds = time.perf_counter() - started
        try:
            shown = names.claim(ref, backend.name)
            if warning := ref.bos_warning(shown, args.bos, backend.bos_need):
                print(warning, file=sys.stderr)

            def report(result: dict) -> None:
                if args.progress:
                    lo, hi = result["ci95"] or (0.0, 0.0)
                    print(
                        f"  {shown} {result['code']:>4} {result['setting']:>5}: {result['accuracy']:6.2f}% "  # noqa: B023
                        f"({result['correct']}/{result['n']}, 95% CI {lo:.1f}-{hi:.1f}, {result['seconds']:.1f} s)",
                        file=sys.stderr,
                    )

            if ref is refs[0]:  # the plan and its estimate once, on the first model, for all of them
                others = [
                    (r.name or r.spec, r.spec, model_backend_options(args, r), o) for r, o in zip(refs[1:], owns[1:])
                ]
                check_plan(backend, config, pools, yes=args.yes, models=len(refs), others=others)
            try:
                results = run(backend, own, on_result=report, pools=pools)
            except (InputError, KeyboardInterrupt):
                raise
            except ScoringError as exc:  # a refusal or a spent token budget: its own one line
                raise CommandFailed(f"{exc} ({shown})\n{NOTHING_WRITTEN}") from None
            except Exception as exc:  # anything mid-run: no results file, clear message, non-zero exit
                raise CommandFailed(
                    f"scoring failed ({shown}): {type(exc).__name__}: {exc}\n{NOTHING_WRITTEN}"
                ) from None
            threads = backend.runtime().get("torch_threads")
            usage = backend.usage() if callable(getattr(backend, "usage", None)) else None
            model = named_model(backend.describe(), ref)
            chat = own.chat.identity(backend, fewshot=any(r.get("k", 0) > 0 for r in results))
        finally:
            backend.close()
        settings = {
            "tasks": [t.name for t in config.tasks],
            "shots": shots,
            "seed": config.seed,
            "format": config.format,
            "check": config.check,
            "max_context": own.max_context,
            "batch_size": own.batch_size,
            "max_new_tokens": own.max_new_tokens,
            "threads": threads,
            "limits": {
                "zero_one_shot": config.limit,
                "few_shot_generation": config.limit_for(2),
                "few_shot_sat": config.limit,
            },
            "limit_note": "each task scores the first N items of its seeded pool; demonstrations "
            "are drawn from the whole pool",
            "sat_file": (str(sat_path) if config.sat_file else "synthprobe sample (not the SAT set)")
            if uses_sat
            else None,
            "sat_sha256": sha256_file(sat_path) if uses_sat else None,
            "word_list": f"wordsegment unigrams.txt, first {WORD_SET_SIZE:,} words by length rule",
            **(
                {
                    "task_files": [
                        {
                            "task": tf.task.name,
                            "path": str(tf.path),
                            "sha256": tf.sha256,
                            "items": len(tf.items),
                            "format": config.format_for(tf.task),
                        }
                        for tf in task_files
                    ]
                }
                if task_files
                else {}
            ),
        }
        # the one results document (synthprobe.results): one entry per model, its GPT-3 rows as a block
        entries.append(
            {
                "model": model,
                "chat": chat,
                "protocol": {"name": config.protocol, "cot": False},
                "settings": settings,
                "results": {"gpt3": {"rows": results}},
                "seconds": {"load": round(load_seconds, 2), "total": round(time.perf_counter() - started, 2)},
                **({"usage": usage} if usage is not None else {}),
            }
        )
        tables.append(format_table(results, model["name"]))
    doc = res.results_document(
        command=shlex.join(["synthprobe", *sys.argv[1:]]),
        models=entries,
        comparisons={"gpt3": gpt3_comparisons(entries)} if len(entries) > 1 else None,
    )
    atomic_write_text(output, dumps_results(doc))
    args.written = output  # for what runs after the command (export.cli's --output-format)
    print("\n\n".join(tables))
    for entry in entries:
        if "usage" in entry:  # a server's token accounting for this run's requests
            print(format_usage(entry["model"]["name"], entry["usage"]))
    if len(entries) > 1:
        from synthprobe.scoring.console import format_comparisons

        print("\n" + format_comparisons(doc["comparisons"]))
    print(f"\nresults: {output}")
    return 0


def gpt3_comparisons(entries: list[dict]) -> dict:
    """The paired comparison of every pair of models (exact match per item), per task and setting."""
    from synthprobe.metrics.compare import compare_models

    outcomes: dict[str, dict[str, bool]] = {}
    groups: dict[str, str] = {}
    prints: dict[str, str | None] = {}
    for e in entries:
        mine = outcomes.setdefault(e["model"]["name"], {})
        prints[e["model"]["name"]] = e["model"].get("fingerprint")
        for row in e["results"]["gpt3"]["rows"]:
            for it in row["items"]:
                key = f"{row['task']}|{row['setting']}|{it['index']}"
                mine[key] = bool(it["correct"])
                groups[key] = f"{row['code']} {row['setting']}"
    return compare_models(outcomes, groups, metric="accuracy (exact match)", group_by="task", fingerprints=prints)


def check_plan(backend, config, pools: dict, *, yes: bool, models: int = 1, others=()) -> None:
    """Print the run's plan and, for a run of more than a few dozen items, an estimate from a
    short calibration on the loaded model (:func:`synthprobe.plan.check_plan`); refuse a
    run estimated at over an hour unless ``yes``. ``others``: the later models, each
    ``(name, spec, load options, own settings)``, whose cached items the estimate counts as cached
    (:func:`synthprobe.plan.later_model`)."""
    from synthprobe import plan as run_plan
    from synthprobe.benchmarks.gpt3.scoring.score import plan, plan_cells, plan_text

    cells = plan(config, pools)
    each = f" for each of {models} models" if models > 1 else ""
    run_plan.check_plan(
        run_plan.Plan(
            plan_cells(backend, config, cells, pools),
            plan_text(cells) + each,
            models=models,
            shorter="--limit N, --limit-few N, --tasks or --shots",
            others=[
                run_plan.later_model(
                    name, spec, options, lambda stand, own=own: plan_cells(stand, own, cells, pools, tokens=False)
                )
                for name, spec, options, own in others
            ],
        ),
        yes=yes,
    )


def max_new_tokens_text() -> str:
    """Each generation task's default ``--max-new-tokens``, grouped: ``6 for 2D+ 2D−; ...``."""
    from synthprobe.benchmarks.gpt3.registry import ordered_tasks

    groups: dict[int, list[str]] = {}
    for t in ordered_tasks():
        if t.kind == "generate":
            groups.setdefault(t.max_new_tokens, []).append(t.code)
    return "; ".join(f"{n} for {' '.join(codes)}" for n, codes in sorted(groups.items()))


GPT3_DESCRIPTION = """\
Score causal LMs on GPT-3's synthetic tasks (arithmetic, word manipulation, SAT analogies)
zero-, one- and few-shot, write a results JSON and print the accuracy beside GPT-3's at every
model size (Table H.1). Generation tasks: greedy decoding to a newline, exact match; SAT: the
choice with the highest per-token mean log-likelihood. A run prints its plan first; one
estimated at over an hour waits for --yes.

Prompts, demonstrations, task files and the cache at length: docs/command-line.md."""

GPT3_EPILOG = """\
examples:
  synthprobe score gpt3 --tasks arithmetic_2da,CL --shots 0,1,few --limit 50
  synthprobe score gpt3 --task-file two_digit_addition.jsonl \\
      --task-file A1=my_a1.jsonl --limit 100     # your own task files"""


def register(verbs: dict) -> None:
    """Add ``synthprobe score gpt3``."""

    s = verbs["score"].add_parser(
        "gpt3",
        help="score a causal LM on GPT-3's synthetic tasks and compare with the paper",
        usage=MODEL_USAGE,
        description=GPT3_DESCRIPTION,
        epilog=GPT3_EPILOG,
    )
    _what_is_scored_flags(s)
    _how_it_is_asked_flags(s)
    _output_flags(s)
    add_model_args(s, multiple=True, batch_size=16, chat=True)
    add_bos_argument(s)
    s.add_argument(
        "--fewshot-as-multiturn",
        action="store_true",
        help="under --chat-template: each demonstration a user turn, its answer an assistant turn "
        "(default: all in one user turn)",
    )
    s.add_argument(
        "--sat-protocol",
        choices=["loglik", "letters"],
        default="loglik",
        help="how SAT's options are asked: loglik (default, the paper's: the options' log-likelihoods) "
        "or letters (the options as A-E, the model answers one letter; needed for engines without "
        "log-likelihoods). The generative tasks are the same under both",
    )
    s.set_defaults(func=cmd_score, writes_results=True)  # args.written: the results file (--output-format)


def _what_is_scored_flags(s) -> None:
    """The tasks, task files, shot settings, item counts and seed."""
    s.add_argument(
        "--tasks",
        default=None,
        help="comma-separated task names or paper codes (2D+, CL, SAT, ...), "
        "or all/arithmetic/words/sat (default all; with --task-file, only the files' tasks)",
    )
    s.add_argument(
        "--task-file",
        action="append",
        metavar="[NAME=]PATH",
        help="score a task file in OpenAI's released format (e.g. GPT-3's two_digit_addition.jsonl "
        "or a 'synthprobe build' file) instead of building that task; repeatable. The task is "
        "NAME (a name, paper code or released file name) or the file name up to its first dot; "
        "every line is checked before the model loads",
    )
    s.add_argument(
        "--shots",
        default="zero,one,few",
        help="comma-separated settings: zero/0, one/1, few (GPT-3's K: 50 arithmetic, 100 words, "
        "20 SAT) or a number K (default zero,one,few)",
    )
    add_limit_argument(s, "score only the first N items of each task")
    s.add_argument(
        "--limit-few",
        type=positive_int,
        default=None,
        metavar="N",
        help="N for the few-shot settings of the generation tasks, whose prompts are long (default: --limit)",
    )
    s.add_argument(
        "--seed", type=nonneg_int, default=0, metavar="S", help="seed of the items and demonstration draws (default 0)"
    )


def _how_it_is_asked_flags(s) -> None:
    """The prompt layout, how an answer is checked, the context and answer lengths, the SAT file."""
    from synthprobe.benchmarks.gpt3.registry import FORMATS
    from synthprobe.benchmarks.gpt3.scoring.score import CHECKS

    s.add_argument(
        "--format",
        choices=FORMATS,
        default="openai",
        help="prompt layout: openai (GPT-3's) or eleuther (lm-eval's Question/Answer arithmetic, "
        "word tasks without the instruction line) (default: %(default)s)",
    )
    s.add_argument(
        "--check",
        choices=CHECKS,
        default="generate",
        help="generate: exact match of the greedy generation (GPT-3); is-greedy: the gold "
        "completion is the model's greedy continuation (lm-eval's arithmetic acc)",
    )
    add_max_context_argument(
        s,
        "prompt plus answer tokens at most (default 2048, GPT-3's window; capped at the model's)",
        default=2048,
        least=1,
    )
    s.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"tokens to generate per item (default per task: {max_new_tokens_text()})",
    )
    s.add_argument(
        "--sat-file",
        default=None,
        metavar="PATH",
        help="Turney's SAT file; default synthprobe's sample (not the SAT set)",
    )


def _output_flags(s) -> None:
    """The results file, --overwrite, --yes, saved predictions and the score cache."""
    from synthprobe.commandline import add_overwrite_argument

    s.add_argument(
        "--output",
        default=None,
        metavar="PATH",
        help="results JSON (default benchmarks/gpt3_<model>.json; a new timestamped name if it exists)",
    )
    add_overwrite_argument(s)
    add_yes_argument(s)
    s.add_argument(
        "--save-predictions",
        action="store_true",
        help="also keep every item's gold answer and prediction in the results JSON",
    )
    s.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the score cache ($SYNTHPROBE_CACHE/scores)"
    )
