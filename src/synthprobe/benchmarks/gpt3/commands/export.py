"""The GPT-3 synthetic tasks' options on ``synthprobe export lm-eval`` (the command is generic,
:mod:`synthprobe.cli.export`; it asks each benchmark's ``commands`` part for its options): which
tasks to build, from which seed, in which prompt layout, SAT from a user's file, task files built
earlier. Their ``lm_eval`` part (:mod:`synthprobe.benchmarks.gpt3.export.lm_eval`) takes them as
its ``OPTIONS``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from synthprobe.commandline import nonneg_int


def lm_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Add its options to the ``export lm-eval`` parser."""
    from synthprobe.benchmarks.gpt3.export.lm_eval import DEFAULT_GPT3_TASKS
    from synthprobe.benchmarks.gpt3.registry import FORMATS

    parser.add_argument(
        "--gpt3-tasks",
        default=DEFAULT_GPT3_TASKS,
        metavar="LIST",
        help="GPT-3 tasks to build: comma-separated names or paper codes, or the groups "
        f"arithmetic/words; 'none' for none (default: {DEFAULT_GPT3_TASKS}, all 15)",
    )
    parser.add_argument(
        "--gpt3-seed",
        type=nonneg_int,
        default=0,
        metavar="S",
        help="seed of the GPT-3 items and of their few-shot demonstrations, as "
        "`synthprobe score gpt3 --seed` (default 0)",
    )
    parser.add_argument(
        "--gpt3-format",
        choices=FORMATS,
        default="openai",
        help="openai: GPT-3's layout ('Q: ...\\n\\nA:', word tasks with the instruction "
        "line); eleuther: lm-eval's 'Question: ...\\nAnswer:', no instruction "
        "(default openai)",
    )
    parser.add_argument(
        "--sat-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="also export SAT analogies from Turney's SAT-package-V3.txt (never shipped; "
        "without it no SAT task is written)",
    )
    parser.add_argument(
        "--gpt3",
        action="extend",
        nargs="+",
        metavar="[NAME=]PATH",
        help="also export GPT-3 task files built earlier by `synthprobe build` (one or "
        "more, repeatable); NAME defaults to synthprobe_<file name>, and a file "
        "replaces the built task of the same name, e.g. --gpt3 data/gpt3/*.jsonl",
    )


def lm_eval_options(args: argparse.Namespace) -> dict[str, Any]:
    """Its keyword options of ``export_lm_eval`` from the parsed arguments (``--gpt3`` specs
    checked here: a malformed one is an error before anything is built)."""
    from synthprobe.benchmarks.gpt3.export.lm_eval import parse_gpt3_spec

    return {
        "gpt3": dict(parse_gpt3_spec(s) for s in args.gpt3 or []),
        "gpt3_tasks": args.gpt3_tasks,
        "gpt3_seed": args.gpt3_seed,
        "gpt3_format": args.gpt3_format,
        "sat_file": args.sat_file,
    }
