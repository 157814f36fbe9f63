"""``synthprobe score deeparithmark`` (also behind ``bench_deeparithmark.py``).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results
file is written); 2 bad input.
"""

from __future__ import annotations

import argparse
import traceback
from pathlib import Path

from synthprobe.commandline import (
    MODEL_USAGE,
    NOTHING_WRITTEN,
    add_bos_argument,
    add_limit_argument,
    add_max_context_argument,
    add_model_args,
    add_yes_argument,
    engine_options,
    nothing_written,
    positive_int,
    run_settings,
)
from synthprobe.errors import CommandFailed, InputError, run_command_line
from synthprobe.metrics.extract import RESOLVE

DESCRIPTION = """\
Score causal language models on Deep Arithmark (finish the sentence, pick one of four endings)
under the ArithMark 3.0 protocol (each ending's summed token log-probabilities; acc_norm, the
primary metric, per token), print the table (Deep, soft, d2-d5, ArithMark-3, delta, p vs chance)
and write a results JSON. Every finished item is kept in a score cache, so an interrupted run
resumes where it stopped when the same command is run again.

The protocol, the cache and the results file at length: docs/command-line.md."""

EPILOG = """\
examples:
  synthprobe score deeparithmark                       # the embedded model
  synthprobe score deeparithmark --model ./my-model \\
      --model HuggingFaceTB/SmolLM2-135M --limit 100   # two models, compared
  synthprobe score deeparithmark --model a=./ckpt-1 --model b=./ckpt-2  # named
  synthprobe score deeparithmark --compare             # beside ArithMark 3.0

exit status: 0 ok, 2 bad input or flags, 1 a model failed to load or scoring failed, 130
interrupted by Ctrl-C (no results file is written in these three cases)."""


class _ZeroShot(argparse.Action):
    """``--shots`` is a GPT-3 flag; here it gets a sentence instead of the top-level usage."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(
            "Deep Arithmark is zero-shot: every item is scored on its own, without "
            "demonstrations; drop --shots (it is an option of 'synthprobe score gpt3')"
        )


def add_arguments(p: argparse.ArgumentParser, *, root: Path | None = None) -> None:
    """The flags, shared by the sub-command and ``bench_deeparithmark.py``.

    ``root``: resolve the default data paths against this folder instead of the working directory.
    """
    from synthprobe.benchmarks.deeparithmark.scoring.score import DEFAULT_DATA

    base = root or Path()
    from synthprobe.benchmarks.deeparithmark.release import default_shown

    p.add_argument(
        "--data",
        type=Path,
        default=base / DEFAULT_DATA,
        metavar="PATH",
        help=f"Deep Arithmark JSONL file (default: {default_shown(base / DEFAULT_DATA)})",
    )
    add_model_args(p, multiple=True, batch_size=32, chat=True)
    _protocol_flags(p)
    p.add_argument(
        "--trust-remote-code", action="store_true", help="run modelling code shipped with a checkpoint (off by default)"
    )
    add_bos_argument(p)
    add_limit_argument(p, "score only the first N items of each file")
    _compare_flags(p, base)
    _output_flags(p)


def _protocol_flags(p) -> None:
    """How an item is asked (--protocol, --cot, --resolve), the answer's length and the context."""
    p.add_argument(
        "--protocol",
        default="loglik",
        metavar="NAME[,NAME...]",
        help="how each item is asked (default: %(default)s). loglik: ArithMark 3.0's protocol, the "
        "endings' log-likelihoods compared; letters: the endings shown as A-D, the model answers "
        "one letter; letterprob: letters' question, the likeliest letter token read in one pass "
        "(with letters' answer where that is not the letter alone); free: the "
        "sentence alone, the model writes the value, compared as a number "
        "with the item's unit (a clock time as a time). letters/free generate greedily and read the "
        "answer back (rules strict, lax, last, value: docs/chat-and-protocols.md); an answer that "
        "is unparsed, inconsistent (a letter with another option's value), an echo of the "
        "question's numbers or cut off by the budget counts as wrong and is reported. Several, comma-"
        "separated (e.g. loglik,letters,free): each model under each on the same items, paired "
        "per depth (exact McNemar; per-item predictions kept)",
    )
    p.add_argument(
        "--cot",
        action="store_true",
        help="letters/free: let the model reason first, ending with a line 'ANSWER: ...' (not with loglik, letterprob)",
    )
    p.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="new tokens per answer (default: 8 for letters and letterprob's fallback, 16 for free, 320 with --cot)",
    )
    p.add_argument(
        "--resolve",
        choices=RESOLVE,
        default="none",
        help="letters: credit an inconsistent answer (a letter written with another option's value, "
        "'A. $6966' where $6966 is B) by its letter (letter-first) or by its value (value-first); "
        "default none: never credited. The rule is recorded in the results",
    )
    p.add_argument("--shots", action=_ZeroShot, help=argparse.SUPPRESS)
    add_max_context_argument(
        p, "longest request in tokens; longer contexts are left-truncated and counted (default: %(default)s)"
    )


def _compare_flags(p: argparse.ArgumentParser, base: Path) -> None:
    """--compare: ArithMark 3.0 scored with the same weights (its file found under ``base``)."""
    from synthprobe.benchmarks.deeparithmark.scoring.score import DEFAULT_COMPARE_DATA

    p.add_argument(
        "--compare",
        action="store_true",
        help="also score ArithMark 3.0 with the same weights; the table gains ArithMark-3 and "
        "delta = Deep - ArithMark-3",
    )
    p.add_argument(
        "--compare-data",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"ArithMark 3.0 file for --compare (default: {base / DEFAULT_COMPARE_DATA}; from the "
        "HF dataset AxiomicLabs/Arithmark-3.0)",
    )
    p.set_defaults(_compare_default=base / DEFAULT_COMPARE_DATA, _root=base)


def _output_flags(p) -> None:
    """What a run keeps and writes: predictions, partial-input baselines, the results file, the scorer, the cache."""
    from synthprobe.commandline import add_overwrite_argument

    p.add_argument(
        "--save-predictions",
        action="store_true",
        help="keep every item's scores and prediction (`synthprobe report` then adds the item viewer, items.html)",
    )
    p.add_argument(
        "--partial-inputs",
        action="store_true",
        help="loglik: score each item again without its question (endings listed, a filler, "
        "another item's question): accuracy, agreement, reliance (docs/partial-inputs.md)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="PATH",
        help="results JSON (default: benchmarks/deeparithmark_<model>.json; a new timestamped name if it exists)",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--scorer",
        choices=["onepass", "reference"],
        default="onepass",
        help="onepass (default): each context runs once with a tree mask; reference: one row "
        "per ending, as lm-eval does; the same scores up to float rounding",
    )
    p.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the score cache ($SYNTHPROBE_CACHE/scores)"
    )
    add_yes_argument(p)


def config_from_args(args: argparse.Namespace):
    from synthprobe.backends.refs import model_refs
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig, default_output

    if args.compare_data is not None and not args.compare:
        raise InputError("only has an effect together with --compare", field="--compare-data")
    from synthprobe.benchmarks.deeparithmark.release import locate_release
    from synthprobe.io.write import check_outputs
    from synthprobe.io.write import default_output as new_name

    args.data = locate_release(args.data)
    models = model_refs(args.models)
    output = args.output or new_name(args._root / default_output(models))
    inputs = [(args.data, "--data"), *((m.spec, "--model") for m in models)]
    if args.compare:
        inputs.append((args.compare_data or args._compare_default, "--compare-data"))
    if not output.is_dir():  # a folder gets its own message in validate()
        check_outputs([(output, "--output")], inputs, overwrite=args.overwrite)

    shared = run_settings(args)  # reads the chat template, once
    protocols = tuple(x.strip() for x in str(args.protocol).split(",") if x.strip())
    if args.resolve != "none" and "letters" not in protocols:
        raise InputError(
            f"--resolve {args.resolve} reads letters answers only; add --protocol letters", field="--resolve"
        )
    return ScoreConfig(
        **shared,
        protocols=protocols,
        cot=args.cot,
        resolve=args.resolve,
        data=args.data,
        models=models,
        dtype=args.dtype,
        device=args.device,
        trust_remote_code=args.trust_remote_code,
        bos=args.bos,
        compare=args.compare,
        compare_data=args.compare_data or args._compare_default,
        save_items=args.save_predictions or len(protocols) > 1,
        output=output,
        scorer=args.scorer,
        yes=args.yes,
        model_args=engine_options(args),
        partial_inputs=args.partial_inputs,
    )


def run_command(args: argparse.Namespace) -> int:
    """Run the sub-command; InputError and Ctrl-C propagate to :func:`run_command_line` (exit 2
    and 130), other failures print and return 1. No results file is written in any of them."""
    from synthprobe.benchmarks.deeparithmark.scoring.score import run

    config = config_from_args(args)
    try:
        with nothing_written():
            run(config)
        args.written = config.output  # for what runs after the command (export.cli's --output-format)
    except (InputError, CommandFailed, KeyboardInterrupt):
        raise
    except Exception as exc:  # anything mid-run: say what failed, keep the traceback for a bug report
        traceback.print_exc()
        raise CommandFailed(f"scoring failed: {type(exc).__name__}: {exc}\n{NOTHING_WRITTEN}") from None
    return 0


def register(verbs: dict) -> None:
    """Add ``synthprobe score deeparithmark``."""
    p = verbs["score"].add_parser(
        "deeparithmark",
        help="score models on Deep Arithmark (optionally beside ArithMark 3.0)",
        usage=MODEL_USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(p)
    p.set_defaults(func=run_command, writes_results=True)  # args.written: the results file (--output-format)


def bench_main(argv: list[str] | None = None, *, root: Path | None = None) -> int:
    """Entry point of ``bench_deeparithmark.py``: the same flags and code as the sub-command."""
    from synthprobe.commandline import CommandParser

    parser = CommandParser(prog="bench_deeparithmark.py", usage=MODEL_USAGE, description=DESCRIPTION, epilog=EPILOG)
    add_arguments(parser, root=root)
    args = parser.parse_args(argv)
    return run_command_line(run_command, args)
