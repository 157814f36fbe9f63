"""``synthprobe build NAME`` and ``synthprobe score NAME`` for a benchmark found in the registry
(:mod:`synthprobe.registry`, e.g. one installed through an entry point): the command line asks
the registry, never names a benchmark. The built-in benchmarks keep their own commands."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.registry import Benchmark


def add_commands(verbs: dict[str, argparse._SubParsersAction], verb: str, bench: Benchmark) -> None:
    """Add ``VERB NAME`` for ``bench`` (``build`` when it has a build part, ``score`` when it can be scored)."""
    from synthprobe.commandline import (
        add_limit_argument,
        add_model_args,
        add_overwrite_argument,
        add_yes_argument,
        int_at_least,
    )

    if verb == "build" and bench.has("build"):
        p = verbs["build"].add_parser(
            bench.name,
            help=f"build a {bench.title} data file",
            description=f"Build a {bench.title} data file (JSONL, one item a line) "
            f"deterministically from a seed. {bench.summary}".strip(),
        )
        p.add_argument("--n", type=int_at_least(1), required=True, metavar="N", help="number of items")
        p.add_argument("--seed", type=int, default=0, help="seed (default: %(default)s); same seed, same bytes")
        p.add_argument("--out", type=Path, required=True, metavar="FILE", help="the JSONL file to write")
        add_overwrite_argument(p)
        p.set_defaults(func=cmd_build, benchmark=bench)
    elif verb == "score" and all(bench.has(r) for r in ("load", "work", "metrics")):
        p = verbs["score"].add_parser(
            bench.name,
            help=f"score a causal LM on {bench.title}",
            description=f"Score a causal LM on a {bench.title} data file and write a "
            f"results JSON (its block: {bench.name!r}). {bench.summary} Before it starts, "
            "the run prints its plan and, above a few dozen items, an estimate "
            "timed on the loaded model; over an hour it waits for --yes.".strip(),
        )
        p.add_argument("--data", type=Path, required=True, metavar="FILE", help="the benchmark's data file")
        p.add_argument("--out", type=Path, required=True, metavar="FILE", help="the results JSON to write")
        add_limit_argument(p, "score the first N items only")
        p.add_argument("--no-cache", action="store_true", help="neither read nor write the per-item score cache")
        add_model_args(p, batch_size=8, chat=True)
        add_overwrite_argument(p)
        add_yes_argument(p)
        p.set_defaults(func=cmd_score, benchmark=bench)


def cmd_build(args: argparse.Namespace) -> int:
    from synthprobe.io.write import atomic_write_text, check_outputs
    from synthprobe.scoring.benchmark import build_jsonl

    bench: Benchmark = args.benchmark
    check_outputs([(args.out, "--out")], overwrite=args.overwrite)
    count, text = build_jsonl(bench, n=args.n, seed=args.seed)
    atomic_write_text(args.out, text)
    print(f"wrote {count} {bench.title} items to {args.out}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from synthprobe import results as res
    from synthprobe.backends import check_backend
    from synthprobe.backends.refs import model_refs, named_model
    from synthprobe.commandline import load_backend_or_exit, model_backend_options, run_settings
    from synthprobe.io.write import atomic_write_text, check_outputs
    from synthprobe.plan import Cell, Plan, check_plan, plural
    from synthprobe.scoring.benchmark import check_chat, load_items, score_block
    from synthprobe.scoring.settings import RunSettings

    bench: Benchmark = args.benchmark
    if not args.data.is_file():
        raise InputError(
            "does not exist or is not a file; expected the benchmark's data file", path=args.data, field="--data"
        )
    check_outputs([(args.out, "--out")], [(args.data, "--data")], overwrite=args.overwrite)
    ref = model_refs([args.model])[0]
    check_backend(ref.spec, **model_backend_options(args, ref))
    settings = RunSettings(**run_settings(args))
    settings.check_run()
    check_chat(bench, settings.chat)
    items = load_items(bench, args.data, limit=settings.limit)  # the whole file read before the model loads
    started = time.perf_counter()
    backend = load_backend_or_exit(ref.spec, args, ref=ref)
    try:
        load_s = round(time.perf_counter() - started, 3)

        def score() -> dict:
            return score_block(bench, backend, items, args.data, settings)

        # the plan, and above a few dozen items an estimate from the first batch (kept for the run)
        check_plan(
            Plan(
                [Cell(bench.name, len(items), score=score)], f"{bench.name} x {plural(len(items), 'item')}, for 1 model"
            ),
            yes=args.yes,
        )
        block = score()
        model = named_model(backend.describe(), ref)
        asked = settings.chat.identity(backend)
    finally:
        backend.close()
    doc = res.results_document(
        models=[
            {
                "model": model,
                "chat": asked,
                "settings": {"batch_size": args.batch_size, "limit": args.limit},
                "results": {bench.name: block},
                "seconds": {"load": load_s},
            }
        ]
    )
    atomic_write_text(args.out, res.dumps_results(doc))
    print(f"{model.get('name')} on {bench.title}: {json.dumps(block['summary'], ensure_ascii=False)}")
    print(f"results: {args.out}")
    return 0
