"""The ``synthprobe`` command.

Verbs (``build``, ``score``, ``probe``, ``study``, ``report``, ``export``, ``cache``, ``sweep``,
``contamination``) each hold one sub-command per task or format. Each verb is one module of this
package, whose ``register(verbs)`` adds its sub-commands; they are listed in ``_ROOMS`` with the
verbs they add to, and a command line registers only those of its verb. Only this package parses
arguments (:mod:`synthprobe.cli.args` holds the shared flags and types), and no other module of
synthprobe imports it.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from synthprobe.errors import EXIT_BAD_INPUT, EXIT_FAILED, run_command_line
from synthprobe.version import __version__

VERBS = {
    "build": "generate a task's data file deterministically from a seed",
    "score": "score a causal LM on a task and write a results JSON",
    "study": "the GPT-3 news-article human study: generate, serve to raters, analyse",
    "probe": (
        "GPT-3's qualitative probes (novel words, grammar correction), the per-step arithmetic probe, "
        "number-format sensitivity"
    ),
    "report": "turn results JSON files into an HTML report, plots and a leaderboard",
    "export": (
        "export a release as a Hugging Face dataset folder or lm-eval task YAMLs, or results as lm-eval's output files"
    ),
    "cache": "inspect or clear the per-item scoring cache and converted model weights",
    "sweep": "score a grid of models x tasks x seeds as Ray tasks (or serially) into one results file",
    "validate": (
        "model-based evidence that a benchmark measures what it claims: a trained choices-only adversary "
        "with positive controls, learnability, seed variance"
    ),
    "contamination": "scan a training corpus for a task's items (13-grams, 8-grams, GPT-3's arithmetic search)",
}

#: Verbs whose sub-command may be left out: ``synthprobe report FILES`` (``--help`` included)
#: means ``synthprobe report deeparithmark FILES``.
DEFAULT_WHAT = {"report": "deeparithmark"}
#: Verbs that are one command: ``synthprobe contamination ARGS`` means ``synthprobe
#: contamination check ARGS`` (``--help`` included), ``synthprobe sweep ARGS`` ``sweep run ARGS``.
ONE_COMMAND = {"contamination": "check", "sweep": "run", "validate": "run"}

#: The command modules, in the order they register, and the verbs each adds sub-commands to. A
#: command line that names a verb imports and registers only that verb's modules: the whole tree
#: (over 600 arguments) took ~16 ms to build, on every command and every in-process call of main().
_ROOMS = {
    "synthprobe.cli.build": ("build",),
    "synthprobe.cli.score": ("score",),
    "synthprobe.cli.cache": ("cache",),
    "synthprobe.cli.probe": ("probe",),
    "synthprobe.cli.study": ("study",),
    "synthprobe.cli.report": ("report",),
    "synthprobe.cli.export": ("export", "score"),  # also --output-format on the score commands
    "synthprobe.cli.sweep": ("sweep",),
    "synthprobe.cli.contamination": ("contamination",),
    "synthprobe.cli.validate": ("validate",),
}


def _build(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse._SubParsersAction]]:
    """The parser and each verb's sub-commands: every verb's, or, given ``only``, that verb's
    alone (the other verbs are listed, with no sub-commands)."""
    from synthprobe.cli.args import CommandParser

    parser = CommandParser(
        prog="synthprobe",
        description="Build procedurally generated probe benchmarks, prove them fair, and "
        "score causal language models on them.",
        epilog="Run 'synthprobe VERB --help' for the sub-commands of a verb.",
    )
    parser.add_argument("--version", action="version", version=f"synthprobe {__version__}")
    top = parser.add_subparsers(dest="verb", metavar="VERB")
    verbs: dict[str, argparse._SubParsersAction] = {}
    for verb, help_text in VERBS.items():
        p = top.add_parser(verb, help=help_text, description=help_text)
        verbs[verb] = p.add_subparsers(dest="what", metavar="WHAT")
        p.set_defaults(_verb_parser=p)
    for room, its_verbs in _ROOMS.items():
        if only is None or only in its_verbs:
            _register(room, verbs)
    return parser, verbs


class MissingCommands(ImportError):
    """A command module listed in :data:`_ROOMS` cannot be imported. A command line of a verb
    it adds to (or of no verb) refuses to start rather than run without that module's commands."""


def _register(room: str, verbs: dict[str, argparse._SubParsersAction]) -> None:
    """Import ``room`` and let it add its sub-commands; an import failure names the module."""
    try:
        module = importlib.import_module(room)
    except ImportError as exc:
        raise MissingCommands(
            f"cannot import the command module {room} ({type(exc).__name__}: {exc}); its commands would be missing"
        ) from exc
    module.register(verbs)


def build_parser() -> argparse.ArgumentParser:
    """The whole ``synthprobe`` command line."""
    return _build()[0]


def with_default_what(verbs: dict[str, argparse._SubParsersAction], argv: list[str]) -> list[str]:
    """``argv`` with the verb's default sub-command put in where the word after the verb is
    not a sub-command (:data:`DEFAULT_WHAT`; an option such as ``--help`` too, so ``synthprobe report
    --help`` shows the options of the command that runs), or always for a verb that is one command
    (:data:`ONE_COMMAND`)."""
    if argv and argv[0] in ONE_COMMAND and argv[1:2] != [ONE_COMMAND[argv[0]]]:
        return [argv[0], ONE_COMMAND[argv[0]], *argv[1:]]
    if not argv or argv[0] not in DEFAULT_WHAT or argv[1:2] and argv[1] in verbs[argv[0]].choices:
        return argv
    return [argv[0], DEFAULT_WHAT[argv[0]], *argv[1:]]


def _benchmark_commands(verbs: dict[str, argparse._SubParsersAction], argv: list[str]) -> int:
    """``build NAME`` / ``score NAME`` where NAME is no sub-command but a benchmark the registry
    knows (:mod:`synthprobe.registry`, e.g. installed through an entry point): its commands are
    added now, so entry points are read only when a command names what is not built in."""
    if (
        len(argv) < 2
        or argv[0] not in ("build", "score")
        or argv[1].startswith("-")
        or argv[1] in verbs[argv[0]].choices
    ):
        return 0
    from synthprobe.registry import find

    bench = find(argv[1])
    if bench is not None:
        from synthprobe.cli.benchmark import add_commands

        add_commands(verbs, argv[0], bench)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser, verbs = _build(argv[0] if argv and argv[0] in VERBS else None)
    except MissingCommands as exc:
        print(f"synthprobe: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    status = run_command_line(lambda _: _benchmark_commands(verbs, argv), None)
    if status:
        return status
    # unrecognized arguments are reported by the sub-command that was given them (CommandParser)
    args = parser.parse_args(with_default_what(verbs, argv))
    if args.verb is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    func = getattr(args, "func", None)
    if func is None:
        args._verb_parser.print_help()
        return EXIT_BAD_INPUT
    return run_command_line(func, args)
