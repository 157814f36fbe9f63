"""The command line of ``synthprobe contamination`` (the verb is one command: ``check``, implied).

The contamination app's command, registered by the command line (:data:`synthprobe.cli._ROOMS`)
and kept beside the scan it runs: its help names the built-in benchmarks' files, which an app above
the benchmarks may."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from synthprobe.commandline import int_at_least
from synthprobe.ray_cluster import RAY_ADDRESS_HELP, ray_host_port

SUBCOMMAND = "check"

DESCRIPTION = """\
Were the task's items in the training data? Scan a corpus once and report, per item, whether
any 13-gram (GPT-3's decontamination length) or 8-gram (the ArithMark 3.0 card's claim) of its
prompt occurs in the corpus, and for GPT-3 arithmetic items GPT-3's own search for the problem
as "A + B =" or "A plus B" (minus, times likewise). Text is compared after NFKC and
case-folding; tokens are runs of letters and digits (punctuation and whitespace only separate
them). N-grams shared by items with different prompts are template text and are not used.

Corpus formats: plain text (.txt, .text, .md, or any file named), JSONL (.jsonl/.ndjson, the text in
--text-field), Parquet (.parquet, column --text-field) and datasets save_to_disk folders; a
folder is walked. Files are streamed in bounded memory (1 MiB text pieces, 64 Ki-token
buffers, 1,024-row batches; a JSONL record over --max-record-bytes is skipped and listed).

Writes the one results document with a "contamination" section: contaminated share per task
with exact 95 % intervals, the flagged items with the first match (file, line or row), and
with --scores the scores recomputed on the clean subset beside the full-set scores.
`synthprobe report FILE --out DIR` renders it."""

EPILOG = """\
examples:
  synthprobe contamination --corpus corpus/ --task release --output c.json
  synthprobe contamination --corpus web.jsonl --corpus books.parquet \\
      --task two_digit_addition.jsonl --task release \\
      --scores deep.json --output c.json
  synthprobe contamination --corpus s3-mounted/ --task release --ray \\
      --ray-address auto --output c.json"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from synthprobe.commandline import add_overwrite_argument
    from synthprobe.contamination import DEFAULT_MAX_RECORD_BYTES, DEFAULT_SHARD_BYTES

    p.add_argument(
        "--corpus", action="append", required=True, metavar="PATH", help="a corpus file or folder (repeat for more)"
    )
    p.add_argument(
        "--task",
        action="append",
        required=True,
        metavar="TASK",
        help="'release' (data/deeparithmark-1.jsonl), a Deep Arithmark file, or a GPT-3 task file "
        "([NAME=]PATH, OpenAI's context/completion lines); repeat for more",
    )
    p.add_argument("--output", type=Path, required=True, metavar="FILE", help="the results document to write")
    p.add_argument(
        "--text-field",
        default="text",
        metavar="NAME",
        help="the JSONL key / Parquet or datasets column holding the text (default: %(default)s)",
    )
    p.add_argument(
        "--scores",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="a results file of `synthprobe score deeparithmark|gpt3 --save-predictions` on the same "
        "task file: its scores are recomputed on the clean subset (repeat for more)",
    )
    p.add_argument(
        "--ray",
        action="store_true",
        help="scan on Ray Data (a local Ray is started for the run unless --ray-address is given); "
        "the results are identical to the single-machine scan",
    )
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="the running Ray cluster to use with --ray: " + RAY_ADDRESS_HELP,
    )
    p.add_argument(
        "--shard-bytes",
        type=int_at_least(1024),
        default=DEFAULT_SHARD_BYTES,
        metavar="N",
        help="bytes of a text/JSONL file per shard, the unit of work (default: %(default)s); the "
        "results do not depend on it",
    )
    p.add_argument(
        "--max-record-bytes",
        type=int_at_least(1024),
        default=DEFAULT_MAX_RECORD_BYTES,
        metavar="N",
        help="a JSONL record longer than this is not parsed; it is listed under corpus.skipped (default: %(default)s)",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: on a terminal)",
    )
    add_overwrite_argument(p)


def run_command(args: argparse.Namespace) -> int:
    from synthprobe.contamination import run as cr
    from synthprobe.errors import InputError

    if args.ray_address and not args.ray:
        raise InputError("is given without --ray", field="--ray-address")
    if args.ray_address:
        ray_host_port(args.ray_address)
    config = cr.Config(
        corpus=list(args.corpus),
        tasks=list(args.task),
        output=args.output,
        text_field=args.text_field,
        ray=args.ray,
        ray_address=args.ray_address,
        scores=list(args.scores),
        shard_bytes=args.shard_bytes,
        max_record_bytes=args.max_record_bytes,
        overwrite=args.overwrite,
        progress=args.progress,
        command="synthprobe " + shlex.join(sys.argv[1:]) if sys.argv[1:] else None,
    )
    doc = cr.run(config)
    cr.write(config, doc)
    for line in cr.summary_lines(doc):
        print(line)
    print(f"results: {config.output}")
    return 0


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    p = verbs["contamination"].add_parser(
        SUBCOMMAND,
        help="scan a corpus for a task's items",
        prog="synthprobe contamination",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(p)
    p.set_defaults(func=run_command)
