"""``synthprobe probe steps``: Deep Arithmark's per-step probe (:mod:`synthprobe.benchmarks.deeparithmark.step_probe`);
``synthprobe probe twins``: its perturbation twins scored beside their originals
(:mod:`synthprobe.benchmarks.deeparithmark.twins.score`).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results file is
written); 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from synthprobe.commandline import (
    add_bos_argument,
    add_limit_argument,
    add_max_context_argument,
    add_model_args,
    add_overwrite_argument,
    add_yes_argument,
    int_at_least,
    load_backend_or_exit,
    nothing_written,
    positive_int,
    run_settings,
)
from synthprobe.errors import InputError
from synthprobe.io.write import atomic_write_text
from synthprobe.plan import check_plan

STEPS_DESCRIPTION = """\
Where does a model's arithmetic break? Every solution step of every Deep Arithmark item
('what: a op b = c', with remainder, percent and clock forms) becomes two four-option
questions with the same options: the operation IN ISOLATION ('a op b =') and the step IN THE
CHAIN, teacher-forced (the problem, the earlier steps with their correct results, then the
step up to '='). The wrong options are the values of named mistakes at that step (a dropped
carry, the wrong operation, one group too many, a dropped remainder, the percent of the wrong
base, no carry into the hour, ...), balanced as the release's decoys are: picking the largest,
smallest or roundest option, or a fixed slot, scores chance (the release's shortcut audit is
run on the probes and stored with the results). Each probe is scored by the summed
log-likelihood of each option and by greedy generation with exact match.

The results document's 'steps' block holds, with exact (Clopper-Pearson) 95 % intervals:
accuracy by step × depth, by operation × operand digits, the first broken step per depth and
the isolation-vs-chain gap (exact McNemar test). 'synthprobe report FILE --out DIR' draws it."""

STEPS_EPILOG = """\
examples:
  synthprobe probe steps --limit 20                      # embedded model, first 20 items of the release
  synthprobe probe steps --data private.jsonl --model ./my-model --save-items
  synthprobe probe steps --limit 20 --model base=./base --model tuned=./tuned   # several models, one file
score cache: finished probes are stored under $SYNTHPROBE_CACHE/scores, keyed by the model,
the data file's SHA-256 and the settings; run the same command again after an interruption
and only the missing probes are scored. --no-cache turns this off.
exit status: 0 ok, 2 bad input or flags, 1 the model failed to load or scoring failed,
130 interrupted (no results file is written in these cases)."""


def add_steps_arguments(p: argparse.ArgumentParser) -> None:
    from synthprobe.benchmarks.deeparithmark.step_probe.score import DEFAULT_DATA, MAX_NEW_TOKENS

    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        metavar="PATH",
        help="Deep Arithmark JSONL file: the release or a private variant from 'synthprobe build "
        "deeparithmark --seed S' (default: %(default)s)",
    )
    add_limit_argument(p, "probe only the steps of the first N items (the same probes as a full run's first ones)")
    add_model_args(p, multiple=True, batch_size=16, chat=True)
    add_max_context_argument(p, "longest request in tokens; longer contexts are left-truncated (default: %(default)s)")
    p.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=MAX_NEW_TOKENS,
        metavar="N",
        help="generation budget per step; generation stops at the end of the line (default: %(default)s)",
    )
    add_bos_argument(p)
    p.add_argument(
        "--save-items",
        action="store_true",
        help="store every probe's options, scores, pick and generated text in the results "
        "(`synthprobe report` then shows each item's first broken step in the item viewer)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="PATH",
        help="results JSON (default: benchmarks/steps_<model>.json; a new timestamped name beside "
        "it if that file exists)",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the per-probe score cache ($SYNTHPROBE_CACHE/scores)",
    )
    add_yes_argument(p)


def run_steps(args: argparse.Namespace) -> int:
    from synthprobe.backends import check_backend
    from synthprobe.backends.refs import NameRegistry, model_refs, named_model
    from synthprobe.benchmarks.deeparithmark.release import locate_release
    from synthprobe.benchmarks.deeparithmark.step_probe import score as steps
    from synthprobe.commandline import model_backend_options
    from synthprobe.io.write import check_outputs
    from synthprobe.io.write import default_output as new_name
    from synthprobe.results import dumps_results

    args.data = locate_release(args.data)
    config = steps.StepsConfig(**run_settings(args), data=args.data, save_items=args.save_items)
    if not args.data.is_file():
        raise InputError(
            "file does not exist" if not args.data.exists() else "not a regular file", path=args.data, field="--data"
        )
    refs = model_refs(args.models)
    output = args.output or new_name(
        steps.default_output((refs[0].name or refs[0].spec) if len(refs) == 1 else f"{len(refs)}models")
    )
    check_outputs(
        [(output, "--output")],
        [(args.data, "--data"), *((r.spec, "--model") for r in refs)],
        overwrite=args.overwrite and args.output is not None,
    )
    probes = steps.load_probes(config)
    for ref in refs:  # every spec checked before the first model loads
        check_backend(ref.spec, **model_backend_options(args, ref))
    names = NameRegistry()
    doc = None
    for ref in refs:
        t0 = time.perf_counter()
        backend = load_backend_or_exit(ref.spec, args, ref=ref)
        load_s = time.perf_counter() - t0
        try:
            names.claim(ref, backend.name)
            if ref is refs[0]:  # the plan and its estimate, once, on the first model
                check_plan(steps.run_plan(backend, probes, config, models=len(refs)), yes=args.yes)
            with nothing_written():
                one = steps.run(
                    backend,
                    probes,
                    config,
                    spec=ref.spec,
                    load_s=load_s,
                    command=shlex.join(["synthprobe", *sys.argv[1:]]),
                )
        finally:
            backend.close()
        entry = one["models"][0]
        entry["model"] = named_model(entry["model"], ref)
        if doc is None:
            doc = one
        else:
            doc["models"].append(entry)
    atomic_write_text(output, dumps_results(doc))
    for entry in doc["models"]:
        if len(doc["models"]) > 1:
            print(f"\n{entry['model']['name']}")
        steps.format_summary(entry["results"]["steps"])
    print(f"\nresults: {output}")
    return 0


TWINS_DESCRIPTION = """\
Which perturbation moves a model, and which mistake does it make? Score a model on the
originals of a twin build ('synthprobe build twins': MANIFEST is its DIR/<stem>.twins.json)
and on their twins: an irrelevant clause (a sentence with a number that plays no part), one
step more (depth + 1), the operations told in another order, the quantities in another unit.
Every file is checked against the manifest's SHA-256 first: twins are scored only beside
the originals they were made from.

Originals and twins are scored as 'synthprobe score deeparithmark' scores them, under each
--protocol (loglik, letters, free) and any engine, through the same score cache. The
results document's 'twins' block holds, per protocol and twin kind (and per depth and
family): original and twin accuracy, the paired difference twin - original with its 95 %
interval (Newcombe's hybrid score interval for paired proportions), the exact McNemar p
(Holm-adjusted across the kinds of a protocol), the consistency counts (both right, both
wrong, right->wrong, wrong->right) and, for the irrelevant clause, the uptake: the share
of the wrong picks that are the irrelevant-number decoy against 1/3 (one-sided exact
binomial test). Generated answers that match no option count wrong ('no_option'); how
each set's answers were read (answered, unparsed, inconsistent, echo, cut off) is shown beside.

--aa SEED2 adds the A/A check: the same originals paired with an independent build of the
same size from SEED2 (by position within family, correct slot and answer rank), the same
statistics; with nothing perturbed it should find no effect (its McNemar test rejects at
most at the stated rate: tests/benchmarks/deeparithmark/twins/test_probe_twins.py simulates
it)."""

TWINS_EPILOG = """\
examples:
  synthprobe build twins --out twins/                        # the release's twins (helper command)
  synthprobe probe twins twins/deeparithmark-1.twins.json --limit 50
  synthprobe probe twins twins/ --protocol loglik,letters,free --kinds irrelevant_clause --save-items
  synthprobe probe twins twins/deeparithmark-1.twins.json --aa 2 --model ./my-model
score cache: finished items are stored under $SYNTHPROBE_CACHE/scores (the originals share
the entries of 'synthprobe score deeparithmark'); an interrupted run resumes. --no-cache
turns this off.
exit status: 0 ok, 2 bad input or flags (a twin file without its originals, files that differ
from the manifest), 1 the model failed to load or scoring failed, 130 interrupted (no
results file is written in these cases)."""


def add_twins_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "manifest",
        type=Path,
        metavar="MANIFEST",
        help="the twins manifest written by 'synthprobe build twins' (DIR/<stem>.twins.json), or its folder",
    )
    p.add_argument(
        "--kinds",
        default="all",
        metavar="all|KIND[,KIND...]",
        help="twin kinds to score (default: every kind in the manifest): irrelevant_clause, "
        "one_step_more, reordered, unit_change",
    )
    add_limit_argument(p, "score only the first N originals that have a twin of a chosen kind (and their twins)")
    p.add_argument(
        "--protocol",
        default="loglik",
        metavar="NAME[,NAME...]",
        help="how each item is asked, as in 'synthprobe score deeparithmark': loglik, letters, free, "
        "or several comma-separated (default: %(default)s)",
    )
    p.add_argument(
        "--aa",
        type=int_at_least(0),
        default=None,
        metavar="SEED2",
        help="also run the A/A check: the originals against an independent build of the same size "
        "from SEED2 (the release's families), the same statistics; it should find no effect",
    )
    add_model_args(p, multiple=True, batch_size=32, chat=True)
    add_max_context_argument(p, "longest request in tokens; longer contexts are left-truncated (default: %(default)s)")
    p.add_argument(
        "--max-new-tokens",
        type=positive_int,
        default=None,
        metavar="N",
        help="letters/free: tokens per answer (default: 8 for letters, 16 for free, 320 with --cot)",
    )
    p.add_argument("--cot", action="store_true", help="letters/free: reason first, end with 'ANSWER: ...'")
    add_bos_argument(p)
    p.add_argument(
        "--scorer",
        choices=["onepass", "reference"],
        default="onepass",
        help="loglik: how the endings are scored (as in 'synthprobe score deeparithmark')",
    )
    p.add_argument(
        "--save-items",
        action="store_true",
        help="store every pair's picks, correctness and generated texts in the results (the report's "
        "item viewer shows twins side by side)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="PATH",
        help="results JSON (default: benchmarks/twins_<model>.json; a new timestamped name beside it if "
        "that file exists; a given PATH that exists is refused without --overwrite)",
    )
    add_overwrite_argument(p)
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the score cache")
    add_yes_argument(p)


def run_twins(args: argparse.Namespace) -> int:
    from synthprobe.backends import check_backend
    from synthprobe.backends.refs import NameRegistry, model_refs, named_model
    from synthprobe.benchmarks.deeparithmark.twins import score as tw
    from synthprobe.commandline import model_backend_options
    from synthprobe.io.write import check_outputs
    from synthprobe.io.write import default_output as new_name
    from synthprobe.results import dumps_results

    kinds = None if args.kinds.strip() == "all" else tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    config = tw.TwinsConfig(
        **run_settings(args),
        manifest=args.manifest,
        kinds=kinds,
        protocols=tuple(x.strip() for x in str(args.protocol).split(",") if x.strip()),
        aa=args.aa,
        cot=args.cot,
        bos=args.bos,
        scorer=args.scorer,
        save_items=args.save_items,
    )
    ts = tw.load_twins(config)  # every file checked before a model is looked up
    refs = model_refs(args.models)
    output = args.output or new_name(
        tw.default_output((refs[0].name or refs[0].spec) if len(refs) == 1 else f"{len(refs)}models")
    )
    check_outputs(
        [(output, "--output")],
        [
            (Path(ts.manifest["path"]), "MANIFEST"),
            (Path(ts.originals.info["path"]), "MANIFEST"),
            *((Path(s.info["path"]), "MANIFEST") for s in ts.twins.values()),
            *((r.spec, "--model") for r in refs),
        ],
        overwrite=args.overwrite and args.output is not None,
    )
    if config.aa is not None:
        tw.aa_partners(ts, config.aa)  # a seed without partners is refused before any model loads
    needs = ("loglikelihood",) if "loglik" in config.protocols else ()
    for ref in refs:
        check_backend(ref.spec, needs=needs, **model_backend_options(args, ref))
    names = NameRegistry()
    doc = None
    for ref in refs:
        t0 = time.perf_counter()
        backend = load_backend_or_exit(ref.spec, args, ref=ref)
        load_s = time.perf_counter() - t0
        try:
            names.claim(ref, backend.name)
            if ref is refs[0]:
                check_plan(tw.run_plan(backend, ts, config, models=len(refs)), yes=args.yes)
            with nothing_written():
                one = tw.run(
                    backend, ts, config, spec=ref.spec, load_s=load_s, command=shlex.join(["synthprobe", *sys.argv[1:]])
                )
        finally:
            backend.close()
        entry = one["models"][0]
        entry["model"] = named_model(entry["model"], ref)
        if doc is None:
            doc = one
        else:
            doc["models"].append(entry)
    atomic_write_text(output, dumps_results(doc))
    for entry in doc["models"]:
        print(f"\n{entry['model']['name']}: twins of {entry['results']['twins']['originals']['n']} originals")
        tw.format_table(entry["results"]["twins"])
    print(f"\nresults: {output}")
    return 0


def register(verbs: dict) -> None:
    """Add ``synthprobe probe steps`` and ``synthprobe probe twins``."""
    p = verbs["probe"].add_parser(
        "steps",
        help="per-step probe of Deep Arithmark: which step of the chain breaks, alone and in context",
        description=STEPS_DESCRIPTION,
        epilog=STEPS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_steps_arguments(p)
    p.set_defaults(func=run_steps)
    p = verbs["probe"].add_parser(
        "twins",
        help="Deep Arithmark's perturbation twins beside their originals: the paired effect of each kind",
        description=TWINS_DESCRIPTION,
        epilog=TWINS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_twins_arguments(p)
    p.set_defaults(func=run_twins)
