"""The ``synthprobe`` command.

Verbs (``build``, ``score``, ``probe``, ``study``, ``report``, ``export``, ``cache``, ``sweep``,
``contamination``, ``validate``) each hold one sub-command per task or format. The generic commands
are the modules of this package and the cross-benchmark apps' ``commands`` modules (``_ROOMS``,
each with the verbs it adds to); a benchmark adds its own
sub-commands through its registry part ``commands`` (:mod:`synthprobe.registry`), as a pytest
plug-in adds options: a module whose ``register(verbs)`` adds them and whose ``VERBS``, if given,
names the verbs it adds to. ``register`` gets the verbs this command line builds, each mapped to
its argparse sub-parsers action: a command line that names a verb builds only that verb, and
imports only the modules that add to it. The built-in benchmarks' commands are registered before
the rooms of each verb; a benchmark installed through an entry point is looked up only when a
command line names it. The shared flags and types are :mod:`synthprobe.commandline`; no other
module of synthprobe imports this package (the rooms are imported by name, from here).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from synthprobe.errors import EXIT_BAD_INPUT, EXIT_FAILED, InputError, run_command_line
from synthprobe.registry import BUILTIN, DEFAULT
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
#: means ``synthprobe report deeparithmark FILES`` (the sub-command named after
#: :data:`synthprobe.registry.DEFAULT`).
DEFAULT_WHAT = {"report": DEFAULT}  # the sub-command of cli/report.py
#: Verbs that are one command: ``synthprobe contamination ARGS`` means ``synthprobe
#: contamination check ARGS`` (``--help`` included), ``synthprobe sweep ARGS`` ``sweep run ARGS``.
ONE_COMMAND = {"contamination": "check", "sweep": "run", "validate": "run"}

#: The generic command modules, in the order they register, and the verbs each adds sub-commands
#: to. They register after the built-in benchmarks' own commands (so a verb lists a benchmark's
#: sub-commands first, ``probe steps`` before ``probe novel-words``, and a room may amend what the
#: benchmarks added: ``--output-format`` on the score commands). A command line that names a verb
#: imports and registers only that verb's modules (and the benchmarks' commands for it): the whole
#: tree (over 600 arguments) took ~16 ms to build, on every command and every in-process call of main().
#: The cross-benchmark apps' commands (``probe``, ``contamination``, ``validate``) sit in their app,
#: beside what they run (``synthprobe.<app>.commands``), as a benchmark's own commands sit in its
#: folder: they name the built-in benchmarks, which an app above the benchmarks may.
_ROOMS = {
    "synthprobe.cli.cache": ("cache",),
    "synthprobe.probes.commands": ("probe",),
    "synthprobe.cli.study": ("study",),
    "synthprobe.cli.report": ("report",),
    "synthprobe.cli.export": ("export", "score"),  # also --output-format on the score commands
    "synthprobe.cli.sweep": ("sweep",),
    "synthprobe.contamination.commands": ("contamination",),
    "synthprobe.validity.commands": ("validate",),
}


def _build(only: str | None = None) -> tuple[argparse.ArgumentParser, dict[str, argparse._SubParsersAction]]:
    """The parser and each verb's sub-commands: every verb's, or, given ``only``, that verb's
    alone (the other verbs are listed, with no sub-commands)."""
    from synthprobe.commandline import CommandParser

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
    from synthprobe.registry import get

    for name in BUILTIN:
        _register_commands(get(name), verbs, only)
    for room, its_verbs in _ROOMS.items():
        if only is None or only in its_verbs:
            _register(room, _wanted(verbs, its_verbs, only))
    return parser, verbs


def _wanted(
    verbs: dict[str, argparse._SubParsersAction], its_verbs, only: str | None
) -> dict[str, argparse._SubParsersAction]:
    """The verbs a module adds to (``its_verbs``; ``None``: any) that this command line builds."""
    return {v: a for v, a in verbs.items() if (its_verbs is None or v in its_verbs) and only in (None, v)}


def _register_commands(bench, verbs: dict[str, argparse._SubParsersAction], only: str | None) -> None:
    """A benchmark's own sub-commands (its ``commands`` part), for the verbs this command line
    builds that the part's ``VERBS`` names (any, without ``VERBS``)."""
    if not bench.has("commands"):
        return
    try:
        module = bench.part("commands")
    except InputError as exc:
        raise MissingCommands(f"{exc}; its commands would be missing") from None
    wanted = _wanted(verbs, getattr(module, "VERBS", None), only)
    if wanted:
        module.register(wanted)


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
    """``VERB NAME`` where NAME is no sub-command but a benchmark the registry knows
    (:mod:`synthprobe.registry`, e.g. installed through an entry point): its own commands (its
    ``commands`` part) are added now, and for ``build NAME`` / ``score NAME`` the generic ones
    where it adds none, so entry points are read only when a command names what is not built in.
    Not for a verb whose next word is an argument (:data:`DEFAULT_WHAT`, :data:`ONE_COMMAND`)."""
    if (
        len(argv) < 2
        or argv[0] not in verbs
        or argv[0] in DEFAULT_WHAT
        or argv[0] in ONE_COMMAND
        or argv[1].startswith("-")
        or argv[1] in verbs[argv[0]].choices
    ):
        return 0
    from synthprobe.registry import find

    bench = find(argv[1])
    if bench is None or bench.name in BUILTIN:  # a built-in one's commands are registered already
        return 0
    try:
        _register_commands(bench, verbs, argv[0])
    except MissingCommands as exc:
        raise InputError(str(exc)) from None
    if argv[0] in ("build", "score") and argv[1] not in verbs[argv[0]].choices:
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
