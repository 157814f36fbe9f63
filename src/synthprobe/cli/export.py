"""``synthprobe export lm-eval``, ``lm-eval-results`` and ``hub-results``, and ``--output-format``
on the score commands. ``export hf`` is Deep Arithmark's own command
(:mod:`synthprobe.benchmarks.deeparithmark.commands.export`)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC
from pathlib import Path

from synthprobe.commandline import add_overwrite_argument
from synthprobe.registry import BUILTIN, DEFAULT, get


def _lm_eval_parts() -> list[tuple[object, object | None]]:
    """``(lm_eval part, commands part or None)`` of every built-in benchmark with an ``lm_eval``
    part, in registry order: what ``export lm-eval`` says (the part's ``HELP_*`` text) and which
    options it takes (the commands part's ``lm_eval_arguments`` / ``lm_eval_options``). Built-in
    only, as the command line registers only the built-in benchmarks' commands up front; an
    installed benchmark's tasks are still exported (``export_lm_eval`` asks every benchmark)."""
    found = []
    for name in BUILTIN:
        bench = get(name)
        if bench.has("lm_eval"):
            found.append((bench.part("lm_eval"), bench.part("commands") if bench.has("commands") else None))
    return found


def _lm_eval(args: argparse.Namespace) -> int:
    import time

    from synthprobe.export.lm_eval.tasks import export_lm_eval

    parts = _lm_eval_parts()
    options: dict = {}
    for _, commands in parts:
        if hasattr(commands, "lm_eval_options"):
            options.update(commands.lm_eval_options(args))
    started = time.perf_counter()
    paths = export_lm_eval(args.out, progress=not args.quiet, overwrite=args.overwrite, **options)
    for p in paths:
        print(p)
    tasks = sorted(p.stem for p in paths if p.suffix == ".yaml")
    run = [name for part, _ in parts if hasattr(part, "run_task") and (name := part.run_task(tasks))]
    print(
        f"{len(tasks)} task/group YAMLs in {time.perf_counter() - started:.1f} s; run: "
        f"lm_eval --model hf --model_args pretrained=MODEL --include_path "
        f"{Path(args.out).resolve()} --tasks {','.join(run)}",
        file=sys.stderr,
    )
    return 0


def _timestamp(text: str):
    from datetime import datetime

    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 time such as 2025-01-31T12:00:00, got {text!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _lm_eval_results(args: argparse.Namespace) -> int:
    from synthprobe.export.lm_eval.files import export_lm_eval_results

    paths = export_lm_eval_results(
        args.results, args.out, data=args.data, when=args.timestamp, overwrite=args.overwrite
    )
    for p in paths:
        print(p)
    return 0


def lm_eval_dir(results: Path) -> Path:
    """Where ``--output-format lm-eval`` writes by default: beside the results file, named after it."""
    return results.with_name(results.stem + "_lm-eval")


def _with_lm_eval(func):
    """A score command that also writes lm-eval's files from the results document it wrote."""

    def run(args: argparse.Namespace) -> int:
        if args.output_format != "lm-eval":
            return func(args)
        from synthprobe.io.write import check_out_dir

        if args.lm_eval_out is not None:
            check_out_dir(args.lm_eval_out)
        args.save_predictions = True  # lm-eval's samples are per item
        status = func(args)
        written = getattr(args, "written", None)
        if status != 0 or written is None:
            return status
        from synthprobe.errors import InputError
        from synthprobe.export.lm_eval.files import export_lm_eval_results

        out = args.lm_eval_out or lm_eval_dir(Path(written))
        try:
            paths = export_lm_eval_results(written, out)
        except InputError as exc:
            raise InputError(
                f"{exc} (the results document {written} is complete; no lm-eval file was written)"
            ) from None
        print(f"lm-eval files ({len(paths)}) -> {out}", file=sys.stderr)
        return 0

    return run


def add_output_format(verbs: dict[str, argparse._SubParsersAction]) -> None:
    """``--output-format`` and ``--lm-eval-out`` on the score commands that write a results
    document, which their parser says by its default ``writes_results=True`` (this module
    converts; the score command only says which file it wrote, in ``args.written``). The
    benchmarks' score commands are registered before this room."""
    for p in dict.fromkeys(verbs["score"].choices.values()):  # each sub-command once, aliases too
        if not p.get_default("writes_results"):
            continue
        p.add_argument(
            "--output-format",
            choices=("synthprobe", "lm-eval"),
            default="synthprobe",
            help="lm-eval: also write lm-evaluation-harness's output files, as `synthprobe export "
            "lm-eval-results` does (docs/lm-eval-files.md); implies --save-predictions "
            "(default: synthprobe, the results document only)",
        )
        p.add_argument(
            "--lm-eval-out",
            type=Path,
            default=None,
            metavar="DIR",
            help="folder of the lm-eval files (default: <results name>_lm-eval/ beside it)",
        )
        p.set_defaults(func=_with_lm_eval(p.get_default("func")))


def _hub_results(args: argparse.Namespace) -> int:
    from synthprobe.export.hub_results import export_hub_results

    paths, commands = export_hub_results(args.results, args.out, repo_prefix=args.repo_prefix, overwrite=args.overwrite)
    for p in paths:
        print(p)
    print("upload (needs the network and a token; `hf auth login` first):", file=sys.stderr)
    for c in commands:
        print(c)
    return 0


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    """The ``export`` sub-commands, and ``--output-format`` on the score commands; each for the
    verbs this command line builds."""
    if "score" in verbs:
        add_output_format(verbs)
    if "export" in verbs:
        _register_export(verbs)


def _lm_eval_description(parts: list) -> str:
    """``export lm-eval``'s description: each benchmark's files (its lm_eval part's ``HELP_FILES``)
    and what to know of them (``HELP_NOTES``) around the files every export writes."""
    return (
        "Write task YAMLs for EleutherAI's lm-evaluation-harness:\n"
        + "".join(getattr(part, "HELP_FILES", "") for part, _ in parts)
        + "  data/                        the data, named relative to DIR\n"
        "  synthprobe_data.py           loads data/ for lm-eval (custom_dataset), so\n"
        "                               DIR can be moved or pushed as it is\n"
        + "".join(getattr(part, "HELP_NOTES", "") for part, _ in parts)
    ).rstrip("\n")


def _lm_eval_epilog(parts: list) -> str:
    """``export lm-eval``'s example: one lm-eval run of every benchmark's tasks (``RUN_TASK``),
    then the parts' own example lines (``HELP_EXAMPLE``)."""
    run = ",".join(part.RUN_TASK for part, _ in parts if hasattr(part, "RUN_TASK"))
    return (
        "example, then two lm-eval runs on the files:\n"
        "  synthprobe export lm-eval --out out/lm-eval\n"
        "  lm_eval --model hf --model_args pretrained=MODEL \\\n"
        f"      --include_path out/lm-eval --tasks {run}\n"
        + "".join(line for part, _ in parts for line in getattr(part, "HELP_EXAMPLE", ()))
    ).rstrip("\n")


def _register_export(verbs: dict[str, argparse._SubParsersAction]) -> None:
    sub = verbs["export"]
    fmt = argparse.RawDescriptionHelpFormatter
    parts = _lm_eval_parts()
    _register_lm_eval(sub, fmt, parts)
    _register_lm_eval_results(sub, fmt, parts)
    _register_hub_results(sub, fmt)


def _register_lm_eval(sub, fmt, parts) -> None:
    """`export lm-eval`: each benchmark's task YAMLs, with the options its `commands` part adds."""
    q = sub.add_parser(
        "lm-eval",
        formatter_class=fmt,
        help="write lm-evaluation-harness task YAMLs (use with --include_path)",
        description=_lm_eval_description(parts),
        epilog=_lm_eval_epilog(parts),
    )
    q.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output folder (created if missing; one that already holds the files we "
        "write is refused unless --overwrite)",
    )
    for _, commands in parts:  # each benchmark's own options, in registry order
        if hasattr(commands, "lm_eval_arguments"):
            commands.lm_eval_arguments(q)
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    add_overwrite_argument(q)
    q.set_defaults(func=_lm_eval)


def _register_lm_eval_results(sub, fmt, parts) -> None:
    """`export lm-eval-results`: a results document as lm-eval's output files."""
    r = sub.add_parser(
        "lm-eval-results",
        formatter_class=fmt,
        help="write a results document as lm-evaluation-harness output files (results_*.json, samples_*.jsonl)",
        description=(
            "Write the models of a results document as lm-evaluation-harness 0.4.13 writes its\n"
            "output (lm_eval --output_path DIR --log_samples):\n"
            "  DIR/<model>/results_<time>.json          results, configs, versions, n-shot,\n"
            "                                           n-samples, config, environment fields\n"
            "  DIR/<model>/samples_<task>_<time>.jsonl  one line per item: doc, arguments, resps,\n"
            "                                           acc / acc_norm or exact_match, hashes\n"
            "Task names are those of `synthprobe export lm-eval` ("
            # each benchmark's task names (its lm_eval part's RESULT_TASKS) start a line
            + ",\n".join(part.RESULT_TASKS for part, _ in parts if hasattr(part, "RESULT_TASKS"))
            + "), and the metrics are lm-eval's, computed from\n"
            "the recorded log-likelihoods: acc_norm is lm-eval's per-character one. What lm-eval\n"
            "has no name for (per-token acc_norm, soft accuracy, per depth and template, the\n"
            "mistake profile, SAT rows) is kept under `synthprobe` keys, so `synthprobe report DIR`\n"
            "shows what the results document shows. Needs per-item predictions (score with\n"
            "--save-predictions) and the data the models were scored on (recorded in the file;\n"
            "--data when it moved). GPT-3 rows with several K become one run per K."
        ),
        epilog=(
            "example, then a report of the folder:\n"
            "  synthprobe export lm-eval-results benchmarks/deep.json --out lm-eval-out\n"
            "  synthprobe report lm-eval-out --out report/"
        ),
    )
    r.add_argument("results", type=Path, metavar="RESULTS.json", help="a results document (synthprobe score ...)")
    r.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output folder (created if missing); files are named with a time stamp and an "
        "existing one is refused unless --overwrite",
    )
    r.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="PATH",
        help="the Deep Arithmark data file the models were scored on (default: the path recorded in "
        "the results file, checked against its SHA-256)",
    )
    r.add_argument(
        "--timestamp",
        type=_timestamp,
        default=None,
        metavar="ISO",
        help="time stamp of the files (default: the results file's modification time, so "
        "exporting the same file twice gives the same names and bytes)",
    )
    add_overwrite_argument(r)
    r.set_defaults(func=_lm_eval_results)


def _register_hub_results(sub, fmt) -> None:
    """`export hub-results`: a Hub model card per model."""
    h = sub.add_parser(
        "hub-results",
        formatter_class=fmt,
        help="a Hugging Face Hub results folder per model: model card with a model-index header, results JSON",
        description=(
            "Write, for every model in the results files, a folder ready to push to the Hugging Face\n"
            "Hub: README.md (a model card whose YAML header carries the scores as a model-index,\n"
            "written and read back by huggingface_hub's own ModelCardData / EvalResult, so the Hub's\n"
            "metadata check accepts it) and results.json (that model's entry). Pushing needs the\n"
            "network, so nothing is uploaded: the upload command is printed, one per folder."
        ),
        epilog=f"example: synthprobe export hub-results benchmarks/{DEFAULT}_2models.json --out hub/ "
        "--repo-prefix my-org/",
    )
    h.add_argument(
        "results",
        nargs="+",
        type=Path,
        metavar="RESULTS.json",
        help="results files written by `synthprobe score` (Deep Arithmark and/or GPT-3)",
    )
    h.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="output folder; one sub-folder per model, named after the model",
    )
    h.add_argument(
        "--repo-prefix",
        default="YOUR-USER/",
        metavar="OWNER/",
        help="the Hub namespace in the printed upload commands (default: %(default)s)",
    )
    add_overwrite_argument(h)
    h.set_defaults(func=_hub_results)
