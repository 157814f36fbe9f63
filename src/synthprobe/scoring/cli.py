"""``synthprobe score deeparithmark`` (also behind ``bench_deeparithmark.py``)."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from synthprobe.cliargs import add_model_args, add_yes_argument, engine_options, int_at_least, positive_int
from synthprobe.errors import EXIT_FAILED, InputError, run_command_line

DESCRIPTION = """\
Score causal language models on Deep Arithmark (ArithMark 3.0 format: finish the sentence,
pick one of the endings) under the ArithMark 3.0 protocol: context and each ending are
tokenised separately without special tokens, an ending's score is the sum of its tokens'
log-probabilities (fp32), acc = argmax of the sum, acc_norm (primary) = argmax of the
per-token mean, acc_char = per character (lm-eval's acc_norm); ties go to the lowest index.
Prints the card's table (Deep, soft, d2-d5, ArithMark-3, delta, p vs chance) and writes a
results JSON (schema: synthprobe.scoring.results)."""

EPILOG = """\
examples:
  synthprobe score deeparithmark                       # the embedded SmolLM2-135M-Instruct
  synthprobe score deeparithmark --model ./my-model --model HuggingFaceTB/SmolLM2-135M
  synthprobe score deeparithmark --model fp32=smollm2-135m-instruct --model bf16=smollm2-135m-instruct \
      --model-arg ... --limit 100        # named models; two or more get a paired comparison
  synthprobe score deeparithmark --compare --compare-data data/arithmark-3.jsonl
score cache: every finished item is stored under $SYNTHPROBE_CACHE/scores (default
~/.cache/synthprobe), keyed by the model (weights and config), the data file's SHA-256 and
the settings that change a score. A run stopped by Ctrl-C, a kill or a crash loses at most
the batch in flight: run the same command again and only the missing items are scored (the
results report them as cached_items). --no-cache turns this off; 'synthprobe cache' shows
or clears it.
exit status: 0 ok, 2 bad input or flags, 1 a model failed to load or scoring failed,
130 interrupted by Ctrl-C (no results file is written in these three cases)."""


class _ZeroShot(argparse.Action):
    """``--shots`` is a GPT-3 flag; here it gets a sentence instead of the top-level usage."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error("Deep Arithmark is zero-shot: every item is scored on its own, without "
                     "demonstrations; drop --shots (it is an option of 'synthprobe score gpt3')")


def add_arguments(p: argparse.ArgumentParser, *, root: Path | None = None) -> None:
    """The flags, shared by the sub-command and ``bench_deeparithmark.py``.

    ``root``: resolve the default data paths against this folder instead of the working directory.
    """
    from synthprobe.io import add_overwrite_argument
    from synthprobe.scoring.deeparithmark import DEFAULT_COMPARE_DATA, DEFAULT_DATA

    base = root or Path()
    p.add_argument("--data", type=Path, default=base / DEFAULT_DATA, metavar="PATH",
                   help="Deep Arithmark JSONL file (default: %(default)s)")
    add_model_args(p, multiple=True, batch_size=32, chat=True)
    p.add_argument("--protocol", default="loglik", metavar="NAME[,NAME...]",
                   help="how each item is asked (default: %(default)s). loglik: ArithMark 3.0's protocol, the "
                        "endings' log-likelihoods compared; letters: the endings shown as A-D, the model answers "
                        "one letter; free: the sentence alone, the model writes the value, compared as a number "
                        "with the item's unit (a clock time as a time). letters/free generate greedily and read the "
                        "answer back (strict answer line, lax patterns, the last unambiguous letter or number); an "
                        "answer that cannot be read counts as wrong and is reported as 'unparsed'. Several, comma-"
                        "separated (e.g. loglik,letters,free): each model is scored under each on the same items, "
                        "with the paired difference per depth (exact McNemar); per-item predictions are then kept")
    p.add_argument("--cot", action="store_true",
                   help="letters/free: let the model reason first and end with a line 'ANSWER: ...' (refused with "
                        "loglik)")
    p.add_argument("--max-new-tokens", type=positive_int, default=None, metavar="N",
                   help="letters/free: tokens a model may generate per answer (default: 8 for letters, 16 for free, "
                        "320 with --cot)")
    p.add_argument("--shots", action=_ZeroShot, help=argparse.SUPPRESS)
    p.add_argument("--max-context", type=int_at_least(2), default=1024, metavar="N",
                   help="longest request in tokens; contexts are left-truncated to N minus the ending "
                        "length, and the number of truncated items is reported (default: %(default)s)")
    p.add_argument("--trust-remote-code", action="store_true",
                   help="allow modelling code shipped with a checkpoint to run (off by default)")
    p.add_argument("--bos", action="store_true",
                   help="prepend the tokenizer's BOS token to every context (the protocol adds none)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="score only the first N items of each file (quick checks)")
    p.add_argument("--compare", action="store_true",
                   help="also score ArithMark 3.0 with the same loaded weights in the same run; the "
                        "table gains ArithMark-3 and delta = Deep - ArithMark-3 columns")
    p.add_argument("--compare-data", type=Path, default=None, metavar="PATH",
                   help=f"ArithMark 3.0 file for --compare (default: {base / DEFAULT_COMPARE_DATA}; HF "
                        "dataset AxiomicLabs/Arithmark-3.0, file arithmark-3.jsonl)")
    p.set_defaults(_compare_default=base / DEFAULT_COMPARE_DATA, _root=base)
    p.add_argument("--save-predictions", action="store_true",
                   help="store every item's four scores, token and character counts and predictions "
                        "(`synthprobe report` then adds the item viewer, items.html)")
    p.add_argument("--output", type=Path, default=None, metavar="PATH",
                   help="results JSON (default: benchmarks/deeparithmark_<model>.json, or "
                        "benchmarks/deeparithmark_<N>models.json for several models; a new timestamped "
                        "name beside it if that file exists)")
    add_overwrite_argument(p)
    p.add_argument("--scorer", choices=["onepass", "reference"], default="onepass",
                   help="onepass (default): each context runs once with a tree mask; reference: one "
                        "row per ending, as lm-eval and the ArithMark 3.0 script do. Both give the "
                        "same scores up to float rounding")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the per-item score cache ($SYNTHPROBE_CACHE/scores), which "
                        "otherwise lets an interrupted run resume where it stopped")
    add_yes_argument(p)


def config_from_args(args: argparse.Namespace):
    from synthprobe.cliargs import model_refs
    from synthprobe.scoring.deeparithmark import ScoreConfig, default_output

    if args.compare_data is not None and not args.compare:
        raise InputError("only has an effect together with --compare", field="--compare-data")
    from synthprobe.io import check_outputs
    from synthprobe.io import default_output as new_name

    from synthprobe.tasks.deeparithmark.release import locate_release

    args.data = locate_release(args.data)
    models = model_refs(args)
    output = args.output or new_name(args._root / default_output(models))
    inputs = [(args.data, "--data"), *((m.spec, "--model") for m in models)]
    if args.compare:
        inputs.append((args.compare_data or args._compare_default, "--compare-data"))
    if not output.is_dir():  # a folder gets its own message in validate()
        check_outputs([(output, "--output")], inputs, overwrite=args.overwrite)
    from synthprobe.cliargs import chat_setup

    chat = chat_setup(args)
    protocols = tuple(x.strip() for x in str(args.protocol).split(",") if x.strip())
    return ScoreConfig(
        chat=chat, protocols=protocols, cot=args.cot, max_new_tokens=args.max_new_tokens,
        data=args.data, models=models, dtype=args.dtype, device=args.device,
        batch_size=args.batch_size, max_context=args.max_context, trust_remote_code=args.trust_remote_code,
        bos=args.bos, limit=args.limit, compare=args.compare,
        compare_data=args.compare_data or args._compare_default,
        save_predictions=args.save_predictions or len(protocols) > 1,
        output=output, scorer=args.scorer,
        progress=args.progress, cache=not args.no_cache, yes=args.yes,
        model_args=engine_options(args))


def run_command(args: argparse.Namespace) -> int:
    """Run the sub-command; InputError and Ctrl-C propagate to :func:`run_command_line` (exit 2
    and 130), other failures print and return 1. No results file is written in any of them."""
    from synthprobe.backends.base import ModelLoadError, ScoringError
    from synthprobe.scoring.deeparithmark import run

    config = config_from_args(args)
    try:
        run(config)
        args.written = config.output  # for what runs after the command (export.cli's --output-format)
    except InputError:
        raise
    except (ModelLoadError, ScoringError) as exc:
        print(f"synthprobe: error: {exc}\nno results file was written", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:  # Ctrl-C: the same one line, saying nothing was written
        raise KeyboardInterrupt(f"{str(exc) or 'interrupted'}; no results file was written") from None
    except Exception as exc:  # anything mid-run: say what failed, keep the traceback for a bug report
        traceback.print_exc()
        print(f"synthprobe: error: scoring failed: {type(exc).__name__}: {exc}\nno results file was written",
              file=sys.stderr)
        return EXIT_FAILED
    return 0


def register(verbs: dict) -> None:
    p = verbs["score"].add_parser(
        "deeparithmark", help="score models on Deep Arithmark (optionally beside ArithMark 3.0)",
        description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(p)
    p.set_defaults(func=run_command)


def bench_main(argv: list[str] | None = None, *, root: Path | None = None) -> int:
    """Entry point of ``bench_deeparithmark.py``: the same flags and code as the sub-command."""
    parser = argparse.ArgumentParser(prog="bench_deeparithmark.py", description=DESCRIPTION,
                                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser, root=root)
    args = parser.parse_args(argv)
    return run_command_line(run_command, args)
