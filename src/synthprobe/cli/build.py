"""``synthprobe build``: Deep Arithmark (build, selftest, shortcut audit) and the GPT-3 synthetic tasks.

Two front ends share the Deep Arithmark functions:

* ``python deeparithmark.py build|selftest|audit`` at the repository root (:func:`main`),
  which defaults to the released file ``data/deeparithmark-1.jsonl``;
* ``synthprobe build deeparithmark --seed S --n N --out PATH [--selftest]``
  (:func:`register`), for fresh private variants.

``synthprobe build <task>`` and ``synthprobe build gpt3`` write one GPT-3 task's items as JSONL,
deterministically from ``--seed`` (byte-identical on every machine). Scoring them is
``synthprobe score gpt3`` (:mod:`synthprobe.cli.score`).

Exit status: 0 success; 1 a failed check, a ``--check`` mismatch or a failed build;
2 bad input (unreadable file, bad argument value).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.composition import MAX_BUILD_SIZE, RELEASE_FILE, RELEASE_SEED, RELEASE_SIZE
from synthprobe.cli.args import CommandParser, add_overwrite_argument, int_in_range, nonneg_int, positive_int
from synthprobe.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, run_command_line
from synthprobe.tasks.numformat import NUMBER_FORMATS

# ---------------------------------------------------------------------------------------
# Argument types and checks
# ---------------------------------------------------------------------------------------


def check_writable(out: Path) -> None:
    """Fail early, before a long build, if ``out`` cannot be written."""
    if out.is_dir():
        raise InputError("is a directory; expected the path of the file to write", path=out, field="--out")
    anc = out.parent
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"cannot be created: {anc} is not a directory", path=out, field="--out")
    try:
        fd, probe = tempfile.mkstemp(prefix=".deeparithmark-probe.", dir=anc)
    except OSError as exc:
        raise InputError(
            f"cannot be written: {anc} is not writable ({exc.strerror})", path=out, field="--out"
        ) from None
    os.close(fd)
    os.unlink(probe)


# ---------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------


def _compare(out: Path, seed: int, n: int, number_format: str = "plain", templates=None) -> int:
    from synthprobe.benchmarks.deeparithmark.build import dumps_item, iter_items
    from synthprobe.io.read import sha256_file

    if not out.is_file():
        raise InputError("does not exist; nothing to compare the build with", path=out)
    extra = {} if templates is None else {"templates": templates}
    with open(out, "rb") as fh:
        for lineno, item in enumerate(iter_items(seed, n, number_format=number_format, **extra), start=1):
            want = (dumps_item(item) + "\n").encode("utf-8")
            have = fh.readline()
            if have != want:
                print(
                    f"{out}: line {lineno} differs from the build for seed {seed}, n {n:,}; "
                    f"run the build without --check to regenerate it",
                    file=sys.stderr,
                )
                return EXIT_FAILED
        if fh.read(1):
            print(f"{out}: has lines after the {n:,} items of the build for seed {seed}", file=sys.stderr)
            return EXIT_FAILED
    print(f"{out}: identical to the build for seed {seed}, n {n:,}")
    print(f"sha256 {sha256_file(out)}")
    return 0


def _identical(out: Path, seed: int, n: int) -> bool:
    """Whether ``out`` holds exactly the build for ``seed`` and ``n`` (rendered in memory)."""
    from synthprobe.benchmarks.deeparithmark.build import dumps_item, iter_items

    with open(out, "rb") as fh:
        for item in iter_items(seed, n):
            if fh.readline() != (dumps_item(item) + "\n").encode("utf-8"):
                return False
        return not fh.read(1)


def _outside_families(args: argparse.Namespace, number_format: str):
    """``--family`` / ``--composition``: the table to build from, the sources of the outside
    families and the families table to write beside the file; ``(None, (), None)`` for ours."""
    specs = getattr(args, "family", None) or []
    composition = getattr(args, "composition", None)
    if not specs and composition is None:
        return None, (), None
    from synthprobe.benchmarks.deeparithmark.base import FAMILIES
    from synthprobe.benchmarks.deeparithmark.plugins import (
        by_name,
        describe,
        family_table,
        load_source,
        preflight,
        source_of,
    )

    sources, outside, origins, shown = [], [], {}, {}
    for spec in specs:
        source = source_of(spec)
        names, origin = load_source(source, shown=spec)
        sources.append(source)
        for name in names:
            outside.append(name)
            origins[name] = origin
            shown[name] = spec
    templates = family_table(outside, Path(composition) if composition else None)
    rows = by_name(templates)
    for name in outside:
        preflight(FAMILIES[name], rows, shown=shown[name])
    return (
        templates,
        tuple(sources),
        describe(templates, origins, seed=args.seed, n=args.n, number_format=number_format),
    )


def _control_conflicts(args: argparse.Namespace) -> None:
    """``--control`` writes a flawed build of the release's families and nothing else."""
    given = [
        opt
        for opt, on in (
            ("--family", getattr(args, "family", None)),
            ("--composition", getattr(args, "composition", None) is not None),
            ("--number-format", getattr(args, "number_format", "plain") != "plain"),
            ("--check", args.check),
            ("--selftest", getattr(args, "selftest", False)),
            ("--workers", getattr(args, "workers", None) is not None),
        )
        if on
    ]
    if given:
        raise InputError(
            f"a positive control is a flawed build of the release's families in plain digits, "
            f"written once; it takes no {', '.join(given)}",
            field="--control",
        )


def cmd_build_control(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.build import BuildError
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS, build_control
    from synthprobe.io.read import sha256_file

    if args.control not in CONTROLS:
        raise InputError(f"no control {args.control!r}; expected one of {', '.join(CONTROLS)}", field="--control")
    _control_conflicts(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir() and not args.overwrite:
        raise InputError("already exists; add --overwrite to replace it", path=out, field="--out")
    check_writable(out)
    try:
        build_control(out, args.control, seed=args.seed, n=args.n, overwrite=args.overwrite)
    except BuildError as exc:
        print(f"build failed, nothing written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        raise InputError(f"cannot be written ({exc.strerror})", path=out, field="--out") from None
    print(
        f"wrote {out}: {args.n:,} items of the positive control {args.control} from seed {args.seed} "
        f"({CONTROLS[args.control]})"
    )
    print(
        "a deliberately flawed build, for testing a choices-only adversary (synthprobe validate); "
        "never report scores on it"
    )
    print(f"sha256 {sha256_file(out)}")
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.build import BuildError, build
    from synthprobe.io.read import sha256_file
    from synthprobe.io.write import check_outputs

    if getattr(args, "control", None) is not None:
        return cmd_build_control(args)
    out = Path(args.out if args.out is not None else args._default_out)
    number_format = getattr(args, "number_format", "plain")
    if args.out is None and number_format != "plain":
        raise InputError(
            f"the release file is written in plain digits; pass --out for a {number_format} rendering",
            field="--number-format",
        )
    templates, sources, table = _outside_families(args, number_format)
    try:
        if args.check:
            return _compare(out, args.seed, args.n, number_format, templates)
        if args.out is None and out.is_file() and not args.overwrite:
            # The release file: a fresh render identical to it leaves it untouched (so README's
            # command changes no tracked file); one that differs is refused without --overwrite.
            if _identical(out, args.seed, args.n):
                print(f"{out}: already identical to the build for seed {args.seed}, n {args.n:,}; left untouched")
                print(f"sha256 {sha256_file(out)}")
                return _run_selftest(out, None) if getattr(args, "selftest", False) else 0
            raise InputError(
                f"exists and differs from the build for seed {args.seed}, n {args.n:,}; pass --overwrite to replace it",
                path=out,
                field="--out",
            )
        outputs = [(out, "--out")]
        if table is not None:
            from synthprobe.benchmarks.deeparithmark.plugins import table_path

            outputs.append((table_path(out), "--out"))
        check_outputs(outputs, overwrite=args.overwrite)
        check_writable(out)
        extra = {} if templates is None else {"templates": templates, "sources": sources, "table": table}
        res = build(
            out,
            seed=args.seed,
            n=args.n,
            progress=args.progress,
            workers=getattr(args, "workers", None),
            number_format=number_format,
            **extra,
        )
    except BuildError as exc:
        print(f"build failed, nothing written: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        raise InputError(f"cannot be written ({exc.strerror})", path=out, field="--out") from None
    tries = sum(res.stats.attempts.values())
    shown = "" if number_format == "plain" else f", numbers in the {number_format} format"
    print(
        f"wrote {out}: {res.n:,} items from seed {res.seed}{shown} in {res.seconds:.1f} s "
        f"({tries:,} draws, {tries / res.n:.2f} per item; {res.workers} worker"
        f"{'s' if res.workers != 1 else ''}, {res.cpu_us_per_item:,.0f} µs CPU per item)"
    )
    print(f"sha256 {res.sha256}")
    if table is not None:
        from synthprobe.benchmarks.deeparithmark.plugins import table_path

        print(f"families table: {table_path(out)} ({', '.join(f['name'] for f in table['families'])})")
    if getattr(args, "selftest", False):
        return _run_selftest(out, None)
    return 0


def _run_selftest(path: Path, upstream: Path | None) -> int:
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

    report = selftest(path, upstream=upstream)
    print(report.table())
    return 0 if report.ok else EXIT_FAILED


def cmd_selftest(args: argparse.Namespace) -> int:
    return _run_selftest(Path(args.path), Path(args.upstream) if args.upstream else None)


def cmd_audit(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.deeparithmark.audit import (
        by_template,
        format_table,
        load_audit_items,
        score,
        strategy_picks,
        tolerance,
    )

    path = Path(args.path)
    items = load_audit_items(path)
    picks = strategy_picks(items)
    rows = [score(name, p, items) for name, p in picks.items()]
    print(format_table(rows, title=f"Shortcut audit: {path} ({len(items):,} items)"))
    if args.by_template:
        print()
        print(by_template(items, picks))
    return 0 if all(r.within(tolerance(len(items))) for r in rows) else EXIT_FAILED


# ---------------------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------------------

BUILD_HELP = "render a Deep Arithmark file deterministically from a seed"
BUILD_DESCRIPTION = """\
Render Deep Arithmark items deterministically: the same seed and size give a
byte-identical file on any machine. The composition (15 templates, 4 depth tiers) and
the correct-slot / answer-rank / depth balance follow the release table, scaled to
--n; every item is re-checked before the file is renamed into place, so a failed
build leaves nothing behind. Prints the file's SHA-256."""


def add_build_arguments(p: argparse.ArgumentParser, *, default_out: Path | None, shown_out: str | None = None) -> None:
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=RELEASE_SEED,
        metavar="S",
        help=f"generator seed, a whole number >= 0 (default {RELEASE_SEED}, the release)",
    )
    p.add_argument(
        "--n",
        type=int_in_range(1, MAX_BUILD_SIZE),
        default=RELEASE_SIZE,
        metavar="N",
        help=f"number of items, 1 to {MAX_BUILD_SIZE:,} (default {RELEASE_SIZE:,}); multiples of "
        "1,000 scale the release table exactly, other sizes split it proportionally",
    )
    if default_out is None:
        p.add_argument("--out", required=True, metavar="PATH", help="JSONL file to write")
    else:
        p.add_argument(
            "--out",
            default=None,
            metavar="PATH",
            help=f"JSONL file to write (default {shown_out or default_out}; if that file "
            "exists, a render identical to it leaves it untouched and one that "
            "differs is refused without --overwrite)",
        )
        p.set_defaults(_default_out=str(default_out))
    p.add_argument(
        "--workers",
        type=nonneg_int,
        default=None,
        metavar="K",
        help="processes that draw items in parallel (1: this process only; 0: one per "
        "CPU it may use; default: one per CPU from 20,000 items, else 1); every K "
        "gives the same bytes",
    )
    p.add_argument(
        "--number-format",
        choices=NUMBER_FORMATS,
        default="plain",
        metavar="F",
        help="how numbers of 1,000 and more are written in prompts and endings: plain "
        "(12345, default, the release's rendering), comma (12,345) or space (12 345, "
        "an ordinary space); the same items, ids and order in every format, so "
        "scores pair (synthprobe probe number-format); the metadata keeps plain "
        "digits and records the format",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--check",
        action="store_true",
        help="do not write: rebuild in memory and compare with the file at --out "
        "byte for byte (exit 1 on any difference)",
    )
    bar = p.add_mutually_exclusive_group()
    bar.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="always show the progress bar (default: only on a terminal)",
    )
    bar.add_argument("--no-progress", dest="progress", action="store_false", help="never show the progress bar")


def _register_deeparithmark(verbs: dict) -> None:
    """Add ``synthprobe build deeparithmark``."""
    p = verbs["build"].add_parser(
        "deeparithmark",
        help=BUILD_HELP,
        description=BUILD_DESCRIPTION,
        epilog="Examples:\n  synthprobe build deeparithmark --seed 7 --n 1000 --out private.jsonl --selftest\n"
        "  synthprobe build deeparithmark --control odd-one-out --seed 9 --n 1000 --out odd.jsonl",
    )
    add_build_arguments(p, default_out=None)
    p.add_argument(
        "--family",
        action="append",
        metavar="PATH|NAME",
        help="build from a family of your own: a Python file whose generate(rng) is "
        "decorated with synthprobe.benchmarks.deeparithmark.base.register, or the name of "
        "an installed entry point in the group 'synthprobe.families'; repeat for "
        "several. Alone, the file holds only these families, in equal shares; with "
        "--composition, the shares that table gives. Each family is drawn 200 times "
        "first and refused (exit 2) if its steps do not re-evaluate to its answer or "
        "its mistakes cannot serve as decoys. The families, their weights and "
        "sources are written beside the file as PATH.families.json, where the "
        "selftest reads them (docs/write-a-family.md)",
    )
    p.add_argument(
        "--composition",
        metavar="CSV",
        help="a table 'family,weight' (header line, then one row per family): the share "
        "of each family, ours (e.g. money_discount_fee,122) or one loaded with "
        "--family; depth tiers get the sum of their families' weights",
    )
    p.add_argument(
        "--selftest",
        action="store_true",
        help="run the full selftest (every card claim and the shortcut audit) on the "
        "written file; exit 1 if any check fails",
    )
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    p.add_argument(
        "--control",
        metavar="NAME",
        help="write a positive control instead: a deliberately flawed build that can be "
        "answered from the four endings alone, so a choices-only adversary "
        "(synthprobe validate) must beat chance on it or it has no power. "
        + "; ".join(f"{k}: {v}" for k, v in CONTROLS.items())
        + ". Its labels and metadata name the control; it is for testing an "
        "adversary, never for reporting scores. Takes --seed, --n, --out and "
        "--overwrite only",
    )
    p.set_defaults(func=cmd_build)


def build_parser(root: Path) -> argparse.ArgumentParser:
    data = root / RELEASE_FILE
    shown = RELEASE_FILE
    parser = CommandParser(
        prog="deeparithmark.py",
        description="Deep Arithmark-1: 1,000 arithmetic word problems needing 2-5 dependent "
        "operations, in the ArithMark 3.0 format. Build the file, re-check every "
        "claim of its card, and audit shortcut strategies.",
        epilog="Exit status: 0 ok, 1 a check failed or --check found a difference, "
        "2 bad input. Run 'deeparithmark.py COMMAND --help' for details.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    b = sub.add_parser(
        "build",
        help=BUILD_HELP,
        description=BUILD_DESCRIPTION,
        epilog=f"Without options this renders the release, {shown}, from seed\n"
        f"{RELEASE_SEED}; 'build --check' verifies the committed file.",
    )
    add_build_arguments(b, default_out=data, shown_out=f"{shown} beside deeparithmark.py")
    b.set_defaults(func=cmd_build)

    s = sub.add_parser(
        "selftest",
        help="re-check every claim of the card on a file (PASS/FAIL per check)",
        description="Re-check a Deep Arithmark file: the ArithMark 3.0 loader contract, "
        "canonical bytes, schema and types, unique ids and contexts, units, "
        "distinct positive options, no answer ± 1 decoy, one roundness class, clock "
        "options in one half-day, label ↔ sources ↔ answer ↔ values, answer rank, "
        "steps = depth, every step re-evaluated, composition, slot / rank / depth "
        "balance and grid, prompt length and the shortcut audit. Expected figures "
        "are derived for the file's size. Exit 1 if any check fails, 2 if the file "
        "cannot be read.",
    )
    s.add_argument("path", nargs="?", default=str(data), metavar="PATH", help=f"file to check (default {shown})")
    s.add_argument(
        "--upstream",
        metavar="ARITHMARK3.jsonl",
        help="an ArithMark 3.0 file; also require 0 identical contexts and 0 shared "
        "eight-word n-grams (lower-cased word tokens) with it",
    )
    s.set_defaults(func=cmd_selftest)

    a = sub.add_parser(
        "audit",
        help="score strategies that skip the arithmetic (all must stay at chance)",
        description="Print the shortcut table: pick the largest / smallest value, the roundest "
        "number, a fixed slot, the longest / shortest ending, and a cross-validated "
        "char-3-gram classifier over the option text. Exit 1 if any strategy leaves "
        "25 % ± 2.7 points (wider below 1,000 items: the 95 % interval of a guesser).",
    )
    a.add_argument("path", nargs="?", default=str(data), metavar="PATH", help=f"file to audit (default {shown})")
    a.add_argument(
        "--by-template",
        action="store_true",
        help="also print each template's score under the strategies the balance plan "
        "does not fix (largest, smallest, longest, shortest, classifier): a "
        "diagnostic for finding which generator leaks",
    )
    a.set_defaults(func=cmd_audit)
    return parser


def main(argv: list[str] | None = None, *, root: str | Path | None = None) -> int:
    """Entry point of ``deeparithmark.py``; ``root`` is the directory holding ``data/``."""
    parser = build_parser(Path(root) if root is not None else Path.cwd())
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    return run_command_line(args.func, args, parser.prog)


DEFAULT_DIR = Path("data") / "gpt3"


def _write_items(items: list, out: str, *, keep_identical: bool = False) -> str:
    """Write ``items`` to ``out`` ('-': stdout). ``keep_identical``: a file already holding exactly
    these bytes is left untouched (the message says so)."""
    from synthprobe.benchmarks.gpt3.registry import serialize
    from synthprobe.io.write import atomic_write_text

    text = serialize(items)
    if out == "-":
        sys.stdout.write(text)
        return "stdout"
    path = Path(out)
    if path.is_dir():
        raise InputError("is a directory; expected the path of the file to write", path=path, field="--out")
    if keep_identical and path.is_file() and path.read_bytes() == text.encode("utf-8"):
        return f"{path} (already identical, left untouched)"
    atomic_write_text(path, text)
    return str(path)


def cmd_build_task(args: argparse.Namespace) -> int:
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, get_task
    from synthprobe.io.write import check_outputs, default_output

    sat_file = getattr(args, "sat_file", None)
    default = DEFAULT_DIR / f"{get_task(args.task).name}.jsonl"
    out = args.out or str(default)
    check_outputs([(out, "--out")], [(sat_file, "--sat-file")], overwrite=args.overwrite or args.out is None)
    config = BuildConfig(
        args.task,
        seed=args.seed,
        n=args.n,
        format=args.format,
        sat_file=sat_file,
        number_format=getattr(args, "number_format", "plain"),
    )
    task = config.validate()
    items = build_items(config)
    keep = args.out is None and not args.overwrite
    if keep and default.is_file() and not _same_text(default, items):
        out = str(default_output(default))  # a default name that exists, with other bytes: a new name
    where = _write_items(items, out, keep_identical=keep)
    numbers = "" if config.number_format == "plain" else f", numbers {config.number_format}"
    print(
        f"{task.name} ({task.code}): {len(items):,} items, seed {args.seed}, format {args.format}{numbers} -> {where}",
        file=sys.stderr,
    )
    return 0


def _same_text(path: Path, items: list) -> bool:
    from synthprobe.benchmarks.gpt3.registry import serialize

    return path.read_bytes() == serialize(items).encode("utf-8")


def cmd_build_all(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items, resolve_tasks

    tasks = resolve_tasks(args.tasks)
    if args.sat_file is not None and not any(t.family == "sat" for t in tasks):
        raise InputError(
            f"only the SAT task reads a source file, and --tasks selects none "
            f"({', '.join(t.code for t in tasks)}); add SAT or drop --sat-file",
            field="--sat-file",
        )
    configs = [
        BuildConfig(
            t.name,
            seed=args.seed,
            n=args.n if t.family != "sat" else None,
            format=args.format,
            sat_file=args.sat_file if t.family == "sat" else None,
            number_format=args.number_format,
        )
        for t in tasks
    ]
    for c in configs:
        c.validate()
    out_dir = Path(args.out_dir)
    from synthprobe.io.write import check_output_dir

    check_output_dir(
        out_dir,
        [f"{t.name}.jsonl" for t in tasks],
        [(args.sat_file, "--sat-file")],
        overwrite=args.overwrite,
        field="--out-dir",
    )
    for task, config in zip(tqdm(tasks, desc="building", unit="task", disable=args.quiet), configs):
        items = build_items(config)
        _write_items(items, str(out_dir / f"{task.name}.jsonl"))
    print(f"{len(tasks)} task files (seed {args.seed}, format {args.format}) -> {out_dir}", file=sys.stderr)
    return 0


class _AnyCaseTaskNames(dict):
    """The ``build`` verb's map of sub-command names: a name that is not a sub-command but names
    a GPT-3 task in another case (``2d+``, ``cl``, ``Arithmetic_2DA``) finds that task's
    sub-command, as :func:`~synthprobe.benchmarks.gpt3.registry.get_task` does."""

    def _task_name(self, key) -> str | None:
        from synthprobe.benchmarks.gpt3.registry import get_task

        if not isinstance(key, str):
            return None
        try:
            name = get_task(key).name
        except InputError:
            return None
        return name if dict.__contains__(self, name) else None

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or self._task_name(key) is not None

    def __getitem__(self, key):
        if not dict.__contains__(self, key):
            name = self._task_name(key)
            if name is not None:
                return dict.__getitem__(self, name)
        return dict.__getitem__(self, key)


def _any_case(subparsers: argparse._SubParsersAction) -> None:
    """Let ``subparsers`` find GPT-3 task sub-commands in any case (argparse matches names exactly)."""
    names = getattr(subparsers, "_name_parser_map", None)
    if isinstance(names, dict) and subparsers.choices is names:
        folded = _AnyCaseTaskNames(names)
        subparsers._name_parser_map = folded
        subparsers.choices = folded


_BUILD_EPILOG = """Items follow OpenAI's released files byte-for-byte in layout:
  arithmetic  {"context": "\\n\\nQ: What is 98 plus 45?\\n\\nA:", "completion": " 143"}
  word tasks  {"context": "\\nasinoc =", "completion": " casino"}
  SAT         {"ind": ..., "ctx": "lull is to trust as", "endings": [" cajole is to compliance", ...], "label": 0}
The same seed gives a byte-identical file on every machine."""


_NUMBER_HELP = (
    "how operands and answers of 1,000 and more are written: plain (12345, OpenAI's files, the "
    "default), comma (12,345) or space (12 345); the same draws and order in every format"
)


def _register_gpt3(verbs: dict) -> None:
    from synthprobe.benchmarks.gpt3.registry import FORMATS, ordered_tasks
    from synthprobe.cli.args import add_overwrite_argument
    from synthprobe.tasks.numformat import NUMBER_FORMATS

    build = verbs["build"]
    _any_case(build)
    for task in ordered_tasks():
        aliases = [task.code] if task.code != task.name else []
        if task.code.replace("\u2212", "-") != task.code:
            aliases.append(task.code.replace("\u2212", "-"))
        aliases += [a for a in task.aliases if a not in aliases and a != task.name]
        p = build.add_parser(
            task.name,
            aliases=aliases,
            help=f"GPT-3 {task.code}: {task.summary}",
            description=f"Build GPT-3's {task.code} task ({task.summary}) as JSONL.",
            epilog=_BUILD_EPILOG,
        )
        p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the item draws (default 0)")
        default_n = f"{task.default_n:,}" if task.default_n else "every question in the file"
        p.add_argument(
            "--n",
            type=positive_int,
            default=None,
            help=f"number of items (default {default_n}); a smaller build is a prefix of a larger one",
        )
        p.add_argument(
            "--out", default=None, help=f"output file, '-' for stdout (default {DEFAULT_DIR}/{task.name}.jsonl)"
        )
        p.add_argument(
            "--format",
            choices=FORMATS,
            default="openai",
            help="openai: GPT-3's released layout; eleuther: lm-eval's 'Question: ...\\nAnswer:' "
            "rewrite of the arithmetic prompts (word and SAT items are the same in both)",
        )
        if task.family == "arithmetic":
            p.add_argument("--number-format", choices=NUMBER_FORMATS, default="plain", help=_NUMBER_HELP)
        add_overwrite_argument(p)
        if task.family == "sat":
            p.add_argument(
                "--sat-file",
                default=None,
                help="Turney's SAT file (SAT-package-V3.txt, from Peter Turney on request); "
                "default: synthprobe's self-written sample, not the SAT set",
            )
        p.set_defaults(func=cmd_build_task, task=task.name)

    p = build.add_parser(
        "gpt3",
        help="all GPT-3 synthetic tasks at once, one JSONL file each",
        description="Build several GPT-3 synthetic tasks into one folder, one JSONL file each.",
        epilog=_BUILD_EPILOG,
    )
    p.add_argument(
        "--tasks", default="all", help="comma-separated names or codes, or all/arithmetic/words/sat (default all)"
    )
    p.add_argument("--seed", type=nonneg_int, default=0, help="seed of the item draws (default 0)")
    p.add_argument(
        "--n", type=positive_int, default=None, help="items per task (default: 2,000 arithmetic, 10,000 words)"
    )
    p.add_argument("--out-dir", default=str(DEFAULT_DIR), help=f"output folder (default {DEFAULT_DIR})")
    p.add_argument("--format", choices=FORMATS, default="openai", help="openai or eleuther layout")
    p.add_argument(
        "--number-format",
        choices=NUMBER_FORMATS,
        default="plain",
        help=_NUMBER_HELP + "; only the arithmetic tasks take comma or space (--tasks arithmetic)",
    )
    p.add_argument("--sat-file", default=None, help="Turney's SAT file; default the shipped sample")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_overwrite_argument(p)
    p.set_defaults(func=cmd_build_all)


def register(verbs: dict) -> None:
    """Add ``synthprobe build deeparithmark``, one ``synthprobe build <task>`` per GPT-3 task and
    ``synthprobe build gpt3``."""
    _register_deeparithmark(verbs)
    _register_gpt3(verbs)
