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

SUBCOMMAND = "deeparithmark"

_DESCRIPTION = """\
Turn results JSON files into a report folder. Deep Arithmark results (from `synthprobe
score deeparithmark`) and GPT-3 synthetic-task results (from `synthprobe score gpt3`; older
"benchmark": "gpt3-synthetic" files too), number-format results (from `synthprobe probe
number-format`) and sweeps (`synthprobe sweep`) may be given together; each kind gets its own
sections. An lm-evaluation-harness output folder (lm_eval --output_path DIR --log_samples on
the YAMLs of `synthprobe export lm-eval`, or `synthprobe export lm-eval-results`) is read too:
see docs/lm-eval-files.md. A file written by `synthprobe contamination` adds a Contamination section (contaminated share
per task with exact intervals, clean-subset scores) and a table in leaderboard.md.
  index.html             one self-contained page (CSS inline, figures embedded as
                         base64 PNG, no scripts, nothing fetched): leaderboard,
                         accuracy by depth, by template, mistake profile, rank
                         preference; GPT-3 synthetic tasks; number-format sensitivity
                         (per format: accuracy, difference from plain, McNemar p);
                         run settings
  leaderboard.md         Model, Params, Deep, soft, d2-d5, ArithMark-3, delta, p vs chance;
                         and the GPT-3 table (task x setting, one column per model with
                         accuracy, 95 % Wilson interval and n, then the GPT-3 paper's
                         accuracy at each model size)
  depth_curve.png        acc_norm per depth per model, 95 % Wilson intervals, chance line
  template_heatmap.png   template x model heat-map of acc_norm
  mistake_profile.png    per template, how often each named mistake is picked
  rank_preference.png    how often the smallest ... largest option is picked
  items.html             the item viewer, when a file holds saved predictions
                         (--save-predictions, Deep Arithmark or GPT-3; GPT-3
                         prompts are rebuilt from the run's settings): every
                         scored item of every model,
                         filterable by depth, template, topic, outcome, picked
                         mistake, protocol and first broken step (from a `probe
                         steps --save-items` file of the same model); an item opens
                         to its prompt, endings, log-likelihoods, named mistakes and
                         every model's pick; two models side by side, disagreements
                         first. Prompts are read from the data file the results file
                         names (SHA-256 checked; --data FILE points elsewhere).
                         Opens from disk: data embedded, nothing fetched
  gpt3_curves.png        per GPT-3 task, each model's accuracy (95 % interval) at its own
                         size against the paper's curves over GPT-3 sizes
The Deep Arithmark figures come from each file's summaries (the mistake profile and rank
preference need items with metadata.option_sources / option_values, as Deep Arithmark items
have); per-item predictions (--save-predictions) are read only for each template's depth.
GPT-3 intervals are computed from each row's n and correct. Several GPT-3 files give one
column per model. Every file is validated before anything is written; a malformed file is
reported with its path and the field inside it.
"""


_EXAMPLES = """\
examples:
  synthprobe report benchmarks/deeparithmark_smollm2-135m-instruct.json --out report/
  synthprobe report benchmarks/gpt3_smollm2-135m-instruct.json --out report-gpt3/
  synthprobe report deeparithmark deep.json gpt3.json --out both/ --title "Deep Arithmark and GPT-3"
  synthprobe report contamination.json deep.json --out checked/
  synthprobe report deep.json --out paper/ --table latex --table csv   # + paper/tables/*.tex, *.csv
  synthprobe report lm-eval-out/ --out from-lm-eval/     # lm_eval --output_path lm-eval-out --log_samples
"""


def _report(args: argparse.Namespace) -> int:
    from synthprobe.report.build import build_report

    for p in build_report(list(args.results), args.out, title=args.title, overwrite=args.overwrite,
                          tables=args.table or (), data_files=list(args.data)):
        print(p)
    return 0


def _arguments(p: argparse.ArgumentParser) -> None:
    from synthprobe.cli.args import add_overwrite_argument

    p.add_argument("results", nargs="+", type=Path, metavar="RESULTS.json",
                   help="results files written by `synthprobe score deeparithmark` (each may hold "
                        "several models) or `synthprobe score gpt3` (one model each), or lm-eval output "
                        "folders (results_*.json and samples_*.jsonl), in any mix")
    p.add_argument("--out", required=True, type=Path, metavar="DIR",
                   help="output folder (created if missing; one that already holds report files is "
                        "refused unless --overwrite)")
    add_overwrite_argument(p)
    p.add_argument("--data", action="append", default=[], type=Path, metavar="FILE",
                   help="a Deep Arithmark JSONL data file the item viewer (items.html) takes prompts and "
                        "ending texts from, when it is not at the path the results file records; matched by "
                        "the SHA-256 the results file pins (repeat for several files)")
    p.add_argument("--title", default=None,
                   help="heading of index.html and of leaderboard.md (default: named after the inputs, "
                        "e.g. 'Deep Arithmark report' for the page and 'Deep Arithmark leaderboard' for "
                        "the Markdown file)")
    p.add_argument("--table", action="append", choices=["csv", "latex", "markdown"], default=None,
                   help="also write paper-ready tables into DIR/tables/: leaderboard, per_depth (Deep "
                        "Arithmark) and gpt3, as numbers (percent with two decimals, 95 %% Wilson bounds, "
                        "p-values); csv, latex (booktabs tabular, cells escaped) or markdown; repeat for "
                        "several formats. Like every report file, an existing one is never overwritten "
                        "without --overwrite")
    p.set_defaults(func=_report)


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    verb = verbs["report"]
    p = verb.add_parser(SUBCOMMAND, formatter_class=argparse.RawDescriptionHelpFormatter,
                        help="any results files (Deep Arithmark and GPT-3, in any mix) → HTML report, PNG "
                             "plots, Markdown leaderboard; the default, so `synthprobe report RESULTS.json… "
                             "--out DIR` is the same",
                        description=_DESCRIPTION, epilog=_EXAMPLES)
    _arguments(p)
