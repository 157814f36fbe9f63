"""``synthprobe build <task>`` and ``synthprobe build gpt3``: one GPT-3 task's items as JSONL, or
several tasks into one folder, deterministically from ``--seed`` (byte-identical on every
machine). Scoring them is ``synthprobe score gpt3`` (:mod:`synthprobe.benchmarks.gpt3.commands.score`).

Exit status: 0 success; 2 bad input (unreadable file, bad argument value).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthprobe.commandline import nonneg_int, positive_int
from synthprobe.errors import InputError

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


def register(verbs: dict) -> None:
    """Add one ``synthprobe build <task>`` per GPT-3 task and ``synthprobe build gpt3``."""
    from synthprobe.benchmarks.gpt3.registry import FORMATS, ordered_tasks
    from synthprobe.commandline import add_overwrite_argument
    from synthprobe.prompts.numformat import NUMBER_FORMATS

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
