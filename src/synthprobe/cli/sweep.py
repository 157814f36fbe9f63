"""``synthprobe sweep``: a grid of (model × task × seed) scoring jobs, on Ray or in this process,
merged into one results file (and, with ``--report``, one report)."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthprobe.commandline import (
    add_bos_argument,
    add_limit_argument,
    add_max_context_argument,
    add_model_args,
    add_yes_argument,
    chat_setup,
    nonneg_int,
    nothing_written,
    positive_int,
)
from synthprobe.errors import InputError
from synthprobe.ray_cluster import RAY_ADDRESS_HELP, ray_host_port
from synthprobe.registry import DEFAULT

#: the description, around each built-in benchmark's sentences (:func:`_description`)
_OPENING = """\
Score a grid of (model x task x seed) jobs and merge them into ONE results file: e.g. twelve
checkpoints on Deep Arithmark at the release seed plus ten private variants. """

_DESCRIPTION_REST = """ Any other
registered benchmark (e.g. one installed through an entry point) joins as its NAME: each seed's
file is its `synthprobe build NAME --n N --seed S` (N = --limit, 1000 without it; 'release' =
seed 0), scored as `synthprobe score NAME` does.

Jobs run as Ray tasks: on a local Ray started for the run (--workers K CPUs) or on a running
cluster (--ray-address). A job asks Ray for one GPU when its model loads in-process (hf, vllm)
on CUDA (--device cuda, or auto on a cluster with GPUs), else CPUs only (--cpus-per-job; one CPU
for a server-backed model such as openai:URL). A job whose worker dies is retried
(--max-retries) and scores only the items its lost run had not cached yet. --serial (or
--workers 0) runs the same jobs one by one in this process, without Ray.

The results file keeps grid order (model, task, seed) and holds only what the grid and the
scores decide, so a Ray run writes the same bytes as a serial run; per-job timings and cache
hits are printed instead. Its "sweep" block holds the grid and, per model and task, the mean and
sd across seeds of acc_norm (Deep Arithmark) or accuracy (GPT-3; correct/total of another
benchmark's summary), and whether the models' rank
order holds from seed to seed (Kendall's W with Friedman's p, and how many seeds rank the models
as their means do). `synthprobe report` reads it and adds a "Sweep" section."""

EPILOG_HEAD = """\
examples:
  synthprobe sweep --model ./ckpt --seeds release,1-10 --limit 100 --workers 2
  synthprobe sweep --grid grid.yaml --ray-address ray://head:10001 \\
      --output sweep.json --report sweep/
  synthprobe sweep --model ./ckpt-1 --model ./ckpt-2 --seeds 1-3 --serial
grid file (YAML, or JSON by its .json suffix):
  models:
    - smollm2-135m-instruct
    - {spec: smollm2-135m-instruct, label: smollm2-bf16, dtype: bfloat16}
    - {spec: "openai:http://127.0.0.1:8000/v1", model_args: {concurrency: 8}}
  seeds: release,1-10
"""
EPILOG_TAIL = """\
  limit: 100
--model values are added after the file's models; --seeds, --task and --limit replace the
file's values. A model's options in the file replace the shared --dtype / --device /
--model-arg values for that model. Labels name the models in the results and the report.
On a cluster (--ray-address) the driver ships its own synthprobe to the workers (Ray
py_modules); every node needs its dependencies (synthprobe[ray], torch, transformers: the same
Ray and Python) and the models' files or servers. Results come back to the driver, which writes
the one file; each node keeps its score cache in its own $SYNTHPROBE_CACHE (the one `ray
start` saw) and builds a missing data file at the --data-dir path (a shared folder avoids it),
or in its cache where it cannot write there (the results then name that path). A job that
asks for more CPUs (or a GPU) than any one node has fails at once instead of waiting. Tested with a two-node cluster
started on one machine:
  ray start --head --port 6379 --ray-client-server-port 10001 --num-cpus 1
  ray start --address 127.0.0.1:6379 --num-cpus 1
  synthprobe sweep --model smollm2-135m-instruct --seeds release,1 --limit 3 \\
      --ray-address ray://127.0.0.1:10001
(or --ray-address 127.0.0.1:6379, the GCS address).
exit status: 0 ok, 2 bad input or flags, 1 a job failed or the cluster could not be reached (no results
file is written), 130 Ctrl-C."""
#: the grid file's example task list: the default benchmark
EPILOG = EPILOG_HEAD + f"  tasks: [{DEFAULT}]\n" + EPILOG_TAIL


def _sweep_parts() -> list[tuple[str, object]]:
    """``(name, sweep part)`` of every built-in benchmark with one, in registry order: what the
    help says of each (its ``HELP`` and ``TASK_HELP``). Built-in only, as the command line reads
    no entry point to build its parsers; an installed benchmark joins through the generic text."""
    from synthprobe.registry import BUILTIN, get

    return [(name, get(name).part("sweep")) for name in BUILTIN if get(name).has("sweep")]


def _description(parts: list[tuple[str, object]]) -> str:
    """The description: how each built-in benchmark's jobs run (its sweep part's ``HELP``), then
    any other registered benchmark's, the engines and the results file."""
    return _OPENING + " ".join(part.HELP for _, part in parts if hasattr(part, "HELP")) + _DESCRIPTION_REST


def add_arguments(p: argparse.ArgumentParser, parts: list[tuple[str, object]]) -> None:
    """The sweep's options; ``parts`` (:func:`_sweep_parts`) name the built-in tasks in ``--task``."""
    from synthprobe.commandline import add_overwrite_argument

    named = [f"{getattr(part, 'TASK_HELP', name)}{' (default)' if name == DEFAULT else ''}" for name, part in parts]

    p.add_argument(
        "--grid",
        type=Path,
        default=None,
        metavar="FILE",
        help="grid file (YAML or JSON) with models, seeds, tasks and limit; see below",
    )
    add_model_args(p, multiple=True, batch_size=32, chat=True)
    _grid_flags(p, named)
    _ray_flags(p)
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where each seed's data file is built (default: $SYNTHPROBE_CACHE/sweep/data)",
    )
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="PATH",
        help="results JSON (default: benchmarks/sweep_<N>models_<M>seeds.json, a new "
        "timestamped name beside it if that file exists)",
    )
    p.add_argument(
        "--report",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write the report of the results (as `synthprobe report`) into DIR",
    )
    add_overwrite_argument(p)
    add_yes_argument(p)


def _grid_flags(p: argparse.ArgumentParser, named: list[str]) -> None:
    """What each job scores: the task, shot settings, seeds, items, context, BOS, scorer, the cache."""
    p.add_argument(
        "--task",
        action="append",
        dest="tasks",
        default=None,
        metavar="TASK",
        help=f"task to score (repeatable): {', '.join(named)}, or another registered benchmark's NAME",
    )
    p.add_argument(
        "--shots",
        default="zero",
        metavar="SETTING",
        help="shot setting of the GPT-3 tasks: zero, one, few or a number K (default: %(default)s)",
    )
    p.add_argument(
        "--seeds",
        default=None,
        metavar="LIST",
        help="comma-separated seeds and ranges; 'release' is the release seed (default: release), e.g. release,1-10",
    )
    add_limit_argument(p, "score only the first N items of each seed's file (small grids)")
    add_max_context_argument(
        p,
        f"longest request in tokens, as in `score {DEFAULT}`, for the jobs of a benchmark that takes one; "
        "a benchmark with a context of its own keeps it, recorded in its jobs (default: %(default)s)",
    )
    add_bos_argument(p)
    p.add_argument(
        "--scorer",
        choices=["onepass", "reference"],
        default="onepass",
        help=f"as in `score {DEFAULT}` (default: %(default)s)",
    )
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the per-item score cache (a lost worker then costs its whole job)",
    )


def _ray_flags(p) -> None:
    """Where the jobs run: Ray workers, its address, CPUs per job, retries (--serial: none)."""
    p.add_argument(
        "--workers",
        type=nonneg_int,
        default=2,
        metavar="K",
        help="CPUs of the local Ray started for the run (default: %(default)s); 0 = --serial",
    )
    p.add_argument("--serial", action="store_true", help="run the jobs one by one in this process, without Ray")
    p.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="join a running Ray cluster instead of starting one: " + RAY_ADDRESS_HELP,
    )
    p.add_argument(
        "--cpus-per-job",
        type=positive_int,
        default=1,
        metavar="N",
        help="CPUs a job asks Ray for; also the torch threads of an in-process CPU model "
        "when --threads is not given (default: %(default)s)",
    )
    p.add_argument(
        "--max-retries",
        type=nonneg_int,
        default=3,
        metavar="N",
        help="times Ray reruns a job whose worker died (default: %(default)s)",
    )


def _echo_done(bar, job, result) -> None:
    from synthprobe.sweep.run import accuracy, metric_name

    run = result["run"]
    bar.write(
        f"job {job.index}: {job.name}: {metric_name(job.task)} {100 * accuracy(result['entry'], job.task):.2f} % "
        f"({run['cached_items']} cached, {run['seconds']:.1f} s, pid {run['pid']})"
    )
    bar.update(1)


def run_command(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from synthprobe.commandline import backend_options
    from synthprobe.io.write import atomic_write_json, check_output_dir, check_outputs, default_output
    from synthprobe.sweep import grid as grid_mod
    from synthprobe.sweep import run as runner

    if args.serial and args.ray_address:
        raise InputError("runs without Ray; leave out --ray-address", field="--serial")
    if args.ray_address:
        ray_host_port(args.ray_address)
    from synthprobe.backends.refs import parse_model_ref

    # --model NAME=SPEC is the grid file's {spec: SPEC, label: NAME}
    models = [{"spec": r.spec, "label": r.name} if r.name else r.spec for r in map(parse_model_ref, args.models or [])]
    grid = grid_mod.make_grid(grid_file=args.grid, models=models, seeds=args.seeds, tasks=args.tasks, limit=args.limit)
    serial = args.serial or (args.workers == 0 and not args.ray_address)
    data_dir = args.data_dir or runner.default_data_dir()
    if data_dir.exists() and not data_dir.is_dir():
        raise InputError("exists and is not a folder", path=data_dir, field="--data-dir")
    output = args.output or default_output(
        Path("benchmarks") / f"sweep_{len(grid.models)}models_{len(grid.seeds)}seeds.json"
    )
    if output.is_dir():
        raise InputError("is a folder; expected a file name for the results JSON", path=output, field="--output")
    inputs = [*([(args.grid, "--grid")] if args.grid else []), *((m.spec, "--model") for m in grid.models)]
    check_outputs([(output, "--output")], inputs, overwrite=args.overwrite)
    if args.report is not None:
        if args.report.exists() and not args.report.is_dir():
            raise InputError(
                "exists and is not a folder; expected an output folder", path=args.report, field="--report"
            )
        check_output_dir(
            args.report,
            ["index.html", "leaderboard.md"],
            [*inputs, (output, "--output")],
            overwrite=args.overwrite,
            field="--report",
        )
    settings = runner.Settings(
        options=backend_options(args),
        batch_size=args.batch_size,
        max_context=args.max_context,
        bos=args.bos,
        scorer=args.scorer,
        cache=not args.no_cache,
        limit=grid.limit,
        data_dir=str(data_dir),
        cpus_per_job=args.cpus_per_job,
        shots=args.shots,
        chat=chat_setup(args),
    )
    runner.check_models(grid, settings)
    jobs = grid.jobs()
    if args.ray_address:
        runner.join_cluster(args.ray_address)
    runner.prepare_data(grid, data_dir, progress=args.progress)
    where = (
        "in this process"
        if serial
        else (f"on Ray at {args.ray_address}" if args.ray_address else f"on a local Ray with {args.workers} CPUs")
    )
    from synthprobe.plan import check_plan

    # the plan and its estimate (the first model loaded here for the calibration, then closed)
    with runner.sweep_plan(
        grid, settings, jobs, where=where, workers=None if serial else args.workers if not args.ray_address else 0
    ) as plan:
        check_plan(plan, yes=args.yes)
    bar = tqdm(total=len(jobs), desc="sweep", unit=" job", disable=not args.progress, dynamic_ncols=True)
    try:
        with nothing_written(kept="finished items stay in the score cache"):
            if serial:
                results = runner.run_serial(jobs, settings, lambda j, r: _echo_done(bar, j, r))
            else:
                results = runner.run_ray(
                    jobs,
                    settings,
                    lambda j, r: _echo_done(bar, j, r),
                    workers=args.workers,
                    address=args.ray_address,
                    max_retries=args.max_retries,
                )
    finally:
        bar.close()
    entries = [r["entry"] for r in results]
    doc = runner.document(grid, settings, entries)
    atomic_write_json(output, doc)
    for text in runner.tables(grid, entries):
        print(text)
    print()
    print(runner.format_summary(doc["sweep"]["summary"]))
    print(f"\nresults: {output}")
    if args.report is not None:
        from synthprobe.report.build import build_report

        build_report([output], args.report, progress=args.progress, overwrite=args.overwrite)
        print(f"report: {args.report / 'index.html'}")
    return 0


def register(verbs: dict) -> None:
    parts = _sweep_parts()
    p = verbs["sweep"].add_parser(
        "run",
        prog="synthprobe sweep",
        help="run a grid of (model × task × seed) scoring jobs (the default: `synthprobe sweep ...`)",
        description=_description(parts),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(p, parts)
    p.set_defaults(func=run_command)
