"""``synthprobe export hf``: the Deep Arithmark release as a Hugging Face Hub dataset folder,
written by its registry part ``hf`` (:func:`synthprobe.benchmarks.deeparithmark.export.hf.export_hf`);
and its option on the generic ``synthprobe export lm-eval`` (:mod:`synthprobe.cli.export` asks each
benchmark's ``commands`` part for its options), the release its ``lm_eval`` part exports."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.export.release import DEFAULT_RELEASE
from synthprobe.commandline import add_overwrite_argument


def _hf(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.release import locate_release
    from synthprobe.registry import get

    args.data = locate_release(args.data)
    result = get("deeparithmark").part("hf")(args.out, data=args.data, repo_id=args.repo_id, overwrite=args.overwrite)
    for p in result.paths:
        print(p)
    failed = [name for name, _, status in result.selftest.checks if status == "FAIL"]
    if failed:
        print(
            f"synthprobe: warning: {args.data} fails {len(failed)} selftest check(s): "
            f"{'; '.join(failed)} (marked FAIL in the card)",
            file=sys.stderr,
        )
    return 0


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    """Add ``synthprobe export hf``."""
    sub = verbs["export"]
    fmt = argparse.RawDescriptionHelpFormatter

    p = sub.add_parser(
        "hf",
        formatter_class=fmt,
        help="write a Hugging Face Hub dataset folder (card, Parquet, JSONL)",
        description=(
            "Write a Hub-ready dataset folder for the Deep Arithmark release:\n"
            "  README.md   dataset card with the Hub YAML header; every figure in it\n"
            "              (composition, balance, shortcut audit, prompt lengths, SHA-256)\n"
            "              is computed from the data file\n"
            "  data/       the rows as Parquet (read by datasets.load_dataset) and the\n"
            "              release JSONL byte for byte\n"
            "Afterwards datasets.load_dataset(OUT, split='test') returns exactly the release\n"
            "rows. The data file is validated first; nothing is written if it is malformed."
        ),
        epilog="example: synthprobe export hf --out out/hf-deeparithmark-1",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output folder (created if missing; one that already holds the files we "
        "write is refused unless --overwrite)",
    )
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_RELEASE,
        metavar="PATH",
        help=f"release JSONL to export (default: {DEFAULT_RELEASE})",
    )
    p.add_argument(
        "--repo-id",
        default=None,
        metavar="OWNER/NAME",
        help="Hub repository the folder will be pushed to; used in the card's "
        "quick-start snippet (default: a local-folder placeholder)",
    )
    add_overwrite_argument(p)
    p.set_defaults(func=_hf)


def lm_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--data`` to the ``export lm-eval`` parser."""
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_RELEASE,
        metavar="PATH",
        help=f"Deep Arithmark release JSONL (default: {DEFAULT_RELEASE})",
    )


def lm_eval_options(args: argparse.Namespace) -> dict[str, Any]:
    """Its keyword option of ``export_lm_eval``: the release, found as ``export hf`` finds it."""
    from synthprobe.benchmarks.deeparithmark.release import locate_release

    return {"data": locate_release(args.data)}
