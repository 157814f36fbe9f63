"""Every exit status a synthprobe command ends with, and the two exception types that carry one:
:class:`InputError` (bad input; it names the file, line and field and what was expected) and
:class:`CommandFailed` (the command could not do its work)."""

from __future__ import annotations

from pathlib import Path

#: Exit status when a command ran but failed: a model that would not load, a scoring run that
#: broke off (no results file written), a check that found a problem (``build --check``,
#: ``selftest``, ``audit``), or a command module of the CLI that cannot be imported.
EXIT_FAILED = 1

#: Exit status for bad input or bad command-line values.
EXIT_BAD_INPUT = 2

#: Exit status after Ctrl-C (128 + SIGINT, the shell's convention).
EXIT_INTERRUPTED = 130


class InputError(Exception):
    """Bad user input. ``str(err)`` is the single line shown to the user."""

    def __init__(
        self, message: str, *, path: str | Path | None = None, line: int | None = None, field: str | None = None
    ):
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.detail = message
        loc = ""
        if self.path is not None:
            loc = self.path + (f":{line}" if line is not None else "")
        elif line is not None:
            loc = f"line {line}"
        if field is not None:
            loc = f"{loc}: field {field!r}" if loc else f"field {field!r}"
        super().__init__(f"{loc}: {message}" if loc else message)


class CommandFailed(Exception):
    """The command could not do its work (say, the model would not load). ``str(err)`` is the
    single line shown to the user; :func:`run_command_line` ends the command with
    :data:`EXIT_FAILED`."""


def run_command_line(func, args, prog: str = "synthprobe") -> int:
    """Run a parsed command; bad input, a failure and Ctrl-C end it with one line on stderr and
    :data:`EXIT_BAD_INPUT` / :data:`EXIT_FAILED` / :data:`EXIT_INTERRUPTED` instead of a traceback. SIGTERM ends it
    with :data:`EXIT_TERMINATED` after the clean-up (``finally`` blocks, atomic writers) ran.
    The command runs in its own :mod:`contextvars` context: what it keeps there (the items its
    plan's calibration scored ahead) ends with it."""
    import contextvars
    import sys

    with _sigterm_as_exit():
        return contextvars.copy_context().run(_run, func, args, prog, sys)


#: Exit status after SIGTERM (128 + 15).
EXIT_TERMINATED = 143


class _sigterm_as_exit:
    """While a command runs, SIGTERM raises ``SystemExit(143)`` so ``finally`` blocks and the
    atomic writers' clean-up run (the default action would end the process on the spot).
    Only in the main thread, where Python allows signal handlers."""

    def __enter__(self):
        import signal
        import threading

        self._old = None
        if threading.current_thread() is threading.main_thread():

            def _exit(signum, frame):
                raise SystemExit(EXIT_TERMINATED)

            self._old = signal.signal(signal.SIGTERM, _exit)
        return self

    def __exit__(self, *exc):
        import signal

        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
        return False


def _run(func, args, prog: str, sys) -> int:
    try:
        return int(func(args) or 0)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CommandFailed as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        print(f"{prog}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return EXIT_INTERRUPTED
