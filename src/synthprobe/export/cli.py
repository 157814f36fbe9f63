"""``synthprobe export hf`` and ``synthprobe export lm-eval``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthprobe.export.release import DEFAULT_RELEASE


def _hf(args: argparse.Namespace) -> int:
    from synthprobe.export.hf import export_hf

    result = export_hf(args.out, data=args.data, repo_id=args.repo_id)
    for p in result.paths:
        print(p)
    failed = [name for name, _, status in result.selftest.checks if status == "FAIL"]
    if failed:
        print(f"synthprobe: warning: {args.data} fails {len(failed)} selftest check(s): "
              f"{'; '.join(failed)} (marked FAIL in the card)", file=sys.stderr)
    return 0


def _lm_eval(args: argparse.Namespace) -> int:
    from synthprobe.export.lm_eval import TASK, export_lm_eval, parse_gpt3_spec

    gpt3 = dict(parse_gpt3_spec(s) for s in args.gpt3 or [])
    paths = export_lm_eval(args.out, data=args.data, gpt3=gpt3)
    for p in paths:
        print(p)
    print(f"run: lm_eval --model hf --model_args pretrained=MODEL --include_path "
          f"{Path(args.out).resolve()} --tasks {TASK}")
    return 0


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    sub = verbs["export"]
    fmt = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "hf", formatter_class=fmt,
        help="write a Hugging Face Hub dataset folder (card, Parquet, JSONL)",
        description=(
            "Write a Hub-ready dataset folder for the Deep Arithmark release:\n"
            "  README.md   dataset card with the Hub YAML header; every figure in it\n"
            "              (composition, balance, shortcut audit, prompt lengths, SHA-256)\n"
            "              is computed from the data file\n"
            "  data/       the rows as Parquet (read by datasets.load_dataset) and the\n"
            "              release JSONL byte for byte\n"
            "Afterwards datasets.load_dataset(OUT, split='test') returns exactly the release\n"
            "rows. The data file is validated first; nothing is written if it is malformed."),
        epilog="example: synthprobe export hf --out out/hf-deeparithmark-1")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="output folder (created if missing; our files in it are replaced)")
    p.add_argument("--data", type=Path, default=DEFAULT_RELEASE, metavar="PATH",
                   help=f"release JSONL to export (default: {DEFAULT_RELEASE})")
    p.add_argument("--repo-id", default=None, metavar="OWNER/NAME",
                   help="Hub repository the folder will be pushed to; used in the card's "
                        "quick-start snippet (default: a local-folder placeholder)")
    p.set_defaults(func=_hf)

    q = sub.add_parser(
        "lm-eval", formatter_class=fmt,
        help="write lm-evaluation-harness task YAMLs (use with --include_path)",
        description=(
            "Write task YAMLs for EleutherAI's lm-evaluation-harness:\n"
            "  deeparithmark.yaml           multiple_choice over the release (0-shot)\n"
            "  deeparithmark_depth<N>.yaml  one task per depth tier\n"
            "  deeparithmark_depths.yaml    group of the depth tasks\n"
            "  data/                        byte-identical copies of the data, referenced\n"
            "                               by absolute path (re-export after moving DIR)\n"
            "Endings keep their leading space, so target_delimiter is \"\". Metrics are acc\n"
            "and acc_norm; lm-eval's acc_norm divides by characters, ArithMark 3.0's by\n"
            "tokens, so only acc is comparable with `synthprobe score`.\n"
            "GPT-3 tasks: pass files built by `synthprobe build` as --gpt3 [NAME=]PATH\n"
            "(default name synthprobe_<file name>: lm-eval's built-in tasks of the same\n"
            "name read OpenAI's files, ours hold regenerated items).\n"
            "A context/completion file (arithmetic, word unscrambling) gives a loglikelihood\n"
            "task NAME (acc = the gold completion is the greedy continuation, as lm-eval's\n"
            "arithmetic tasks) and a generate_until task NAME_gen (greedy up to a newline,\n"
            "exact match). A ctx/endings/label file (SAT) gives a multiple_choice task.\n"
            "Build arithmetic files with --format eleuther for lm-eval's prompt wording."),
        epilog=("example: synthprobe export lm-eval --out out/lm-eval\n"
                "then:    lm_eval --model hf --model_args pretrained=MODEL "
                "--include_path out/lm-eval --tasks deeparithmark"))
    q.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="output folder (created if missing; our files in it are replaced)")
    q.add_argument("--data", type=Path, default=DEFAULT_RELEASE, metavar="PATH",
                   help=f"Deep Arithmark release JSONL (default: {DEFAULT_RELEASE})")
    q.add_argument("--gpt3", action="extend", nargs="+", metavar="[NAME=]PATH",
                   help="also export GPT-3 task files built by `synthprobe build` (one or more, "
                        "repeatable); NAME defaults to synthprobe_<file name>, which keeps "
                        "lm-eval's own arithmetic_*/unscramble tasks intact, e.g. "
                        "--gpt3 data/gpt3/*.jsonl")
    q.set_defaults(func=_lm_eval)
