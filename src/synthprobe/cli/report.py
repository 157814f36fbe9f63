"""``synthprobe report RESULTS.json… --out DIR`` (also spelled ``synthprobe report deeparithmark
RESULTS.json… --out DIR``).

Reads results files written by ``synthprobe score deeparithmark`` (each may hold several
models), by ``synthprobe score gpt3`` (one model each) and by ``synthprobe probe number-format``,
in any mix, and writes
``index.html`` (self-contained: inline CSS, embedded PNGs, works offline), the PNG plots and
``leaderboard.md`` into DIR. Same inputs give byte-identical files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from synthprobe.registry import BUILTIN, DEFAULT

#: the sub-command ``synthprobe report FILES`` means (``synthprobe.cli.DEFAULT_WHAT``): the default benchmark's name
SUBCOMMAND = DEFAULT

#: the score commands of the built-in benchmarks, in registry order, as the description names them
_SCORES = "`synthprobe score " + "`, `score ".join(BUILTIN) + "`"

_DESCRIPTION = f"""\
Turn results files into a report folder: index.html (one self-contained page: leaderboard,
figures, run settings), the PNG plots, leaderboard.md, and items.html (the item viewer) when a
file holds saved predictions. Same inputs, byte-identical files.

RESULTS.json may be any mix of files written by {_SCORES},
`probe number-format`, `sweep` and `contamination`, and lm-evaluation-harness output folders
(docs/lm-eval-files.md); each kind gets its own sections. Every file is checked before anything
is written. `synthprobe report {SUBCOMMAND}` is the same command (the name is historical).

Each file written and what it shows: docs/command-line.md."""


_EXAMPLES = """\
examples:
  synthprobe report results.json --out report/
  synthprobe report deep.json words.json --out both/ --title "Our models"
  synthprobe report contamination.json deep.json --out checked/
  synthprobe report deep.json --out paper/ --table latex --table csv
  synthprobe report lm-eval-out/ --out from-lm-eval/   # lm_eval's folder
"""


def _report(args: argparse.Namespace) -> int:
    from synthprobe.report.build import build_report

    for p in build_report(
        list(args.results),
        args.out,
        title=args.title,
        overwrite=args.overwrite,
        tables=args.table or (),
        data_files=list(args.data),
    ):
        print(p)
    return 0


def _arguments(p: argparse.ArgumentParser) -> None:
    from synthprobe.commandline import add_overwrite_argument

    p.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS.json",
        help="synthprobe results files (a folder of them: pass the files, DIR/*.json) or "
        "lm-eval output folders, in any mix",
    )
    p.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output folder (created if missing; one that already holds report files is refused unless --overwrite)",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--data",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="the data file items.html takes prompts from when it is not at the path the results "
        "file records (matched by SHA-256; repeatable)",
    )
    p.add_argument(
        "--title", default=None, help="heading of index.html and leaderboard.md (default: named after the inputs)"
    )
    p.add_argument(
        "--table",
        action="append",
        choices=["csv", "latex", "markdown"],
        default=None,
        help="also write paper-ready tables (the leaderboard, the paired comparison and each "
        "benchmark's own: docs/command-line.md) into DIR/tables/; repeat for several formats",
    )
    p.set_defaults(func=_report)


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    verb = verbs["report"]
    p = verb.add_parser(
        SUBCOMMAND,
        usage="synthprobe report RESULTS.json... --out DIR [OPTION...]",
        help="any results files → HTML report, PNG plots, Markdown leaderboard (the default: "
        "`synthprobe report RESULTS.json... --out DIR`)",
        description=_DESCRIPTION,
        epilog=_EXAMPLES,
    )
    _arguments(p)
