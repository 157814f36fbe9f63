"""``synthprobe probe number-format``: score one model on the same items written with plain digits,
comma groups and spaced groups, and test the paired differences (:mod:`synthprobe.scoring.number_format`).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results file is
written); 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from synthprobe.cliargs import add_model_args, add_yes_argument, int_at_least, nonneg_int
from synthprobe.errors import EXIT_FAILED, InputError

DESCRIPTION = """\
Number-format sensitivity (GPT-3's notes: results move with how numbers are written).
Renders the same items with plain digits (12345), comma groups (12,345) and spaced groups
(12 345, an ordinary space), scores the model on each through the one runner (cached,
resumable) and reports, per format against plain, the accuracy difference and the exact
McNemar test of the paired outcomes:

  * Deep Arithmark: a private variant built from --seed/--n, per depth (acc_norm); only
    items with a number of 1,000 or more change, the others keep their plain score;
  * GPT-3 arithmetic: the first --gpt3-n items of each task in --tasks, --shots, exact match
    against the answer written in the same format.

Writes the one results document with a "number_format" block (version 1) for the model;
'synthprobe report FILE --out DIR' renders it as a report page."""

EPILOG = """Example (small, the embedded model):
  synthprobe probe number-format --seed 1 --n 100 --tasks 4D+,5D-,2Dx --gpt3-n 40 --output nf.json
  synthprobe report nf.json --out nf-report/"""


def cmd_number_format(args: argparse.Namespace) -> int:
    from synthprobe.version import __version__
    from synthprobe import results as res
    from synthprobe.backends import check_backend
    from synthprobe.cliargs import NameRegistry, backend_options, load_backend_or_exit, model_refs, named_model
    from synthprobe.io import atomic_write_text, check_outputs, default_output, slug
    from synthprobe.scoring.number_format import ProbeConfig, parse_formats, run, table_lines
    from synthprobe.tasks.gpt3.registry import resolve_tasks

    tasks = [] if args.tasks.strip().lower() == "none" else resolve_tasks(args.tasks)
    config = ProbeConfig(formats=parse_formats(args.formats), seed=args.seed, n=args.n, tasks=tasks,
                         gpt3_n=args.gpt3_n, shots=args.shots, batch_size=args.batch_size,
                         max_context=args.max_context, progress=args.progress, cache=not args.no_cache).validate()
    refs = model_refs(args)
    name = (refs[0].name or refs[0].spec) if len(refs) == 1 else f"{len(refs)}models"
    output = (Path(args.output) if args.output
              else default_output(Path("benchmarks") / f"number_format_{slug(name)}.json"))
    if output.is_dir():
        raise InputError("is a directory; expected the path of the results file", path=output, field="--output")
    check_outputs([(output, "--output")], [(r.spec, "--model") for r in refs], overwrite=args.overwrite)
    for ref in refs:  # every spec checked before the first model loads
        check_backend(ref.spec, **backend_options(args))

    names = NameRegistry()
    entries = []
    for ref in refs:
        started = time.perf_counter()
        backend = load_backend_or_exit(ref.spec, args)
        load_seconds = time.perf_counter() - started
        try:
            names.claim(ref, backend.name)
            if ref is refs[0]:  # the plan and its estimate, once, on the first model
                from synthprobe.plan import check_plan
                from synthprobe.scoring.number_format import run_plan

                check_plan(run_plan(backend, config, models=len(refs)), yes=args.yes)
            try:
                block = run(backend, config)
            except (InputError, KeyboardInterrupt):
                raise
            except Exception as exc:  # anything mid-run: no results file, one clear line, exit 1
                print(f"synthprobe: error: scoring failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                return EXIT_FAILED
            rt = backend.runtime()
            model = named_model(backend.describe(), ref)
        finally:
            backend.close()
        settings = {"formats": list(config.formats), "seed": config.seed, "n": config.n,
                    "tasks": [t.name for t in config.tasks], "gpt3_n": config.gpt3_n, "shots": config.shots,
                    "batch_size": config.batch_size, "max_context": config.max_context, "scorer": "onepass",
                    "synthprobe": __version__, **rt}
        entries.append({"model": model, "settings": settings, "results": {"number_format": block},
                        "seconds": {"load": round(load_seconds, 2),
                                    "total": round(time.perf_counter() - started, 2)}})
    doc = {
        "schema": res.SCHEMA, "schema_version": res.SCHEMA_VERSION, "synthprobe": __version__,
        "command": shlex.join(["synthprobe", *sys.argv[1:]]),
        "models": entries,
    }
    atomic_write_text(output, res.dumps_results(doc))
    for entry in entries:
        if len(entries) > 1:
            print(f"\n{entry['model']['name']}")
        print("\n".join(table_lines(entry["results"]["number_format"])))
    print(f"\nresults: {output}")
    return 0


def register(verbs: dict) -> None:
    from synthprobe.io import add_overwrite_argument
    from synthprobe.scoring.number_format import DEFAULT_GPT3_N, DEFAULT_N, DEFAULT_SEED, DEFAULT_SHOTS

    p = verbs["probe"].add_parser(
        "number-format", help="score the same items with plain, comma-grouped and space-grouped numbers; "
                              "paired McNemar test per depth and task",
        description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--formats", default="comma,space",
                   help="formats to compare with plain, comma-separated: comma, space (default: both)")
    p.add_argument("--seed", type=nonneg_int, default=DEFAULT_SEED,
                   help="seed of the Deep Arithmark variant, the GPT-3 draws and the demonstrations "
                        "(default: %(default)s)")
    p.add_argument("--n", type=int_at_least(0), default=DEFAULT_N,
                   help="Deep Arithmark items (default: %(default)s; 0: no Deep Arithmark part)")
    p.add_argument("--tasks", default="arithmetic",
                   help="GPT-3 arithmetic tasks, comma-separated names or codes (4D+, 2Dx, ...), "
                        "'arithmetic' for all ten (default) or 'none'")
    p.add_argument("--gpt3-n", type=int_at_least(0), default=DEFAULT_GPT3_N, metavar="N",
                   help="items per GPT-3 task, the first N of its seeded pool (default: %(default)s)")
    p.add_argument("--shots", default=DEFAULT_SHOTS,
                   help="GPT-3 shot setting: zero, one, few or a number K (default: %(default)s: the "
                        "demonstration shows the format)")
    p.add_argument("--max-context", type=int_at_least(8), default=1024,
                   help="longest Deep Arithmark prompt plus ending in tokens (default: %(default)s)")
    p.add_argument("--output", default=None,
                   help="results JSON (default benchmarks/number_format_<model>.json, or a new timestamped "
                        "name beside it if that file exists)")
    add_overwrite_argument(p)
    p.add_argument("--no-cache", action="store_true",
                   help="do not read or write the score cache (default: finished items are kept, so a "
                        "stopped run resumes)")
    add_model_args(p, multiple=True, batch_size=16)
    add_yes_argument(p)
    p.set_defaults(func=cmd_number_format)
