"""What every command's arguments share: whole numbers with bounds, ``--overwrite``, the one model
block (:func:`add_model_args` and the readers of its flags) and the help formatter.

argparse turns the :class:`argparse.ArgumentTypeError` into ``argument --n: expected ...``
and exit status 2, so a bad value never reaches the code that would use it. Only ASCII digits
count: ``int()`` alone would also take ``"٣٠"``, ``"５"``, ``"1_000"`` and surrounding spaces.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections.abc import Callable

from synthprobe.errors import InputError

#: The usage line of the commands that score models: the flags most runs set; --help lists every one.
MODEL_USAGE = "%(prog)s [--model SPEC]... [OPTION...]"


class WrappingHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The help of every synthprobe command, wrapped to the terminal's width.

    Descriptions and epilogs are written as paragraphs: consecutive lines that start in the first
    column are one paragraph, re-filled to the width (a blank line, a line ending in ``:`` or a
    line opening with a short lower-case label such as ``exit status:`` starts a new one).
    Indented lines keep their layout: a table row (``  NAME   text``) or a bullet (``  * text``)
    is re-filled with the lines under its text, its continuation under that column; any other
    indented line (an example command) is kept, and wrapped four columns in when wider than the
    terminal. Option help is wrapped without breaking words at hyphens (``--chat-template``
    stays whole)."""

    _LABEL = re.compile(r"[a-z][a-z0-9 -]{0,20}:(\s|$)")
    _CELL = re.compile(r"(\s+\S+(?: \S+)?\s{2,}|\s*[*-] )\S")

    def _fill_text(self, text, width, indent):
        import textwrap

        width = max(width, 40)
        wrap = dict(width=width, break_long_words=False, break_on_hyphens=False)
        out: list[str] = []
        para: list[str] = []  # the words of a paragraph, or of a table cell or bullet
        cell: list[str] = []  # [first-line prefix, continuation indent] while one is open

        def flush():
            if para:
                first, rest = cell or ("", "")
                out.extend(
                    textwrap.wrap(
                        " ".join(para), initial_indent=indent + first, subsequent_indent=indent + rest, **wrap
                    )
                )
            para.clear()
            cell.clear()

        for line in text.splitlines():
            line = line.rstrip()
            lead = line[: len(line) - len(line.lstrip())]
            if not line:
                flush()
                out.append("")
            elif cell and lead == cell[1]:  # the cell's text goes on
                para.append(line.strip())
            elif lead:
                flush()
                found = self._CELL.match(line)
                if found:
                    cell.extend([line[: found.end() - 1], " " * (found.end() - 1)])
                    para.append(line[found.end() - 1 :])
                elif len(indent) + len(line) <= width:
                    out.append(indent + line)
                else:
                    out.extend(
                        textwrap.wrap(
                            line.strip(), initial_indent=indent + lead, subsequent_indent=indent + lead + "    ", **wrap
                        )
                    )
            else:
                if cell or self._LABEL.match(line) or (para and para[-1].endswith(":")):
                    flush()
                para.append(line.strip())
        flush()
        while out and not out[-1]:
            out.pop()
        while out and not out[0]:
            out.pop(0)
        return "\n".join(out)

    def _format_usage(self, usage, actions, groups, prefix):
        import textwrap

        text = super()._format_usage(usage, actions, groups, prefix)
        line = text.rstrip("\n")
        if usage is None or "\n" in line or len(line) <= self._width:  # argparse wraps its own
            return text
        hang = " " * (len(prefix or "usage: ") + len(self._prog) + 1)
        return (
            "\n".join(
                textwrap.wrap(
                    line, width=self._width, subsequent_indent=hang, break_long_words=False, break_on_hyphens=False
                )
            )
            + "\n\n"
        )

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(
            " ".join(text.split()), width=max(width, 20), break_long_words=False, break_on_hyphens=False
        )


class CommandParser(argparse.ArgumentParser):
    """The parser class of every synthprobe command line (its sub-commands inherit it): help
    through :class:`WrappingHelpFormatter`, and an unrecognized option answered with the nearest
    option of the same command (``--protocl``: did you mean ``--protocol``?).

    Unrecognized arguments are reported by the (sub-)command that was given them, with its usage
    line and its options to guess from, and they win over a missing required argument: in
    ``build deeparithmark --nn 3`` the mistake is ``--nn`` (did you mean ``--n``?), not the
    ``--out`` still to come."""

    _UNRECOGNIZED = "unrecognized arguments: "
    _MISSING = ("the following arguments are required: ", "one of the arguments ")
    _GIVEN_TO = "_unrecognized_given_to"  # namespace attribute: the parser that was given the extras

    def __init__(self, *args, formatter_class=WrappingHelpFormatter, **kwargs):
        if formatter_class in (argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter):
            formatter_class = WrappingHelpFormatter
        super().__init__(*args, formatter_class=formatter_class, **kwargs)
        self._arg_strings: list[str] = []
        self._relaxed = False

    def parse_known_args(self, args=None, namespace=None):
        self._arg_strings = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(self._arg_strings, namespace)
        if extras and not hasattr(namespace, self._GIVEN_TO):  # the innermost sub-command sets it first
            setattr(namespace, self._GIVEN_TO, self)
        return namespace, extras

    def parse_args(self, args=None, namespace=None):
        namespace, extras = self.parse_known_args(args, namespace)
        given_to = vars(namespace).pop(self._GIVEN_TO, self)
        if extras:
            given_to.error(self._UNRECOGNIZED + " ".join(extras))
        return namespace

    def error(self, message):
        if self._relaxed:
            raise _NotParsed(message)
        if message.startswith(self._MISSING):
            unknown = self._unrecognized()
            if any(word[:1] in self.prefix_chars and len(word) > 1 for word in unknown):
                message = self._UNRECOGNIZED + " ".join(unknown)
        if message.startswith(self._UNRECOGNIZED):
            message += nearest_options(self, message[len(self._UNRECOGNIZED) :].split())
        super().error(message)

    def _unrecognized(self) -> list[str]:
        """The arguments of the line being parsed that this parser does not know, found by parsing
        it again with nothing required; ``[]`` when that parse fails too."""
        relaxed = [a for a in self._actions if a.required] + [g for g in self._mutually_exclusive_groups if g.required]
        given = self._arg_strings
        for thing in relaxed:
            thing.required = False
        self._relaxed = True
        try:
            return super().parse_known_args(given, None)[1]
        except _NotParsed:
            return []
        finally:
            self._relaxed = False
            self._arg_strings = given
            for thing in relaxed:
                thing.required = True


class _NotParsed(Exception):
    """Raised instead of exiting while :class:`CommandParser` parses a line again with nothing required."""


def nearest_options(parser: argparse.ArgumentParser, given: list[str]) -> str:
    """``"; did you mean --protocol?"`` for the options among ``given`` (``--protocl`` or
    ``--protocl=x``) that are close to one of ``parser``'s own option strings, else ``""``."""
    import difflib

    known = [o for o in parser._option_string_actions if o.startswith("--")]
    hints = []
    for word in given:
        if not word.startswith("--"):
            continue
        close = difflib.get_close_matches(word.split("=", 1)[0], known, n=1, cutoff=0.6)
        if close and close[0] not in hints:
            hints.append(close[0])
    return f"; did you mean {' or '.join(hints)}?" if hints else ""


_WHOLE = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS = 100


def _parse_whole(text: str, wanted: str) -> int:
    if not _WHOLE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected {wanted} (ASCII digits), got {text!r}")
    if len(text) > _MAX_DIGITS:
        raise argparse.ArgumentTypeError(f"expected {wanted}, got a number of {len(text):,} digits")
    return int(text)


def int_in_range(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` accepting whole numbers ``minimum <= n <= maximum`` in ASCII digits."""
    if maximum is not None:
        wanted = f"a whole number from {minimum} to {maximum:,}"
    else:
        wanted = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"

    def parse(text: str) -> int:
        value = _parse_whole(text, wanted)
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    parse.__name__ = f"int_in_range_{minimum}_{maximum}"
    return parse


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type`` accepting whole numbers ``>= minimum``."""
    parse = int_in_range(minimum)
    parse.__name__ = f"int_at_least_{minimum}"
    return parse


def any_int(text: str) -> int:
    """An argparse ``type`` for any whole number in ASCII digits (the command checks the range)."""
    return _parse_whole(text, "a whole number")


#: The one help text of every command's ``--overwrite``.
OVERWRITE_HELP = (
    "replace output files that exist (default: refuse; a default output name that exists gets a new, timestamped name)"
)


def add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--overwrite`` (help :data:`OVERWRITE_HELP`) to an argparse parser."""
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)


#: ``--n``, ``--limit``, ``--batch-size`` and the like.
positive_int = int_at_least(1)

#: Seeds.
nonneg_int = int_at_least(0)


# -- the one model block -------------------------------------------------------------------------


def model_arg(text: str) -> tuple[str, object]:
    """``--model-arg key=value``: the value as JSON when the strict decoder of :mod:`synthprobe.io.read`
    takes it (``4``, ``true``, ``1.5``), else the text as given."""
    from synthprobe.io.read import loads_json

    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected key=value with a plain key, got {text!r}")
    try:
        parsed = loads_json(value)
    except InputError:
        parsed = value
    return key, parsed


class _OneModel(argparse.Action):
    """``--model`` of a command that runs one model: a second ``--model`` is refused (exit 2)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, "_model_given", False):
            parser.error(
                f"{option_string} given twice; this command runs one model (score several with "
                "'synthprobe score' or 'synthprobe sweep')"
            )
        namespace._model_given = True
        setattr(namespace, self.dest, values)


#: The ``--model-arg`` keys of the engines that load weights (``hf``, ``vllm:``) beyond the flags of
#: the model block; tests check them against each engine's ``OPTIONS``.
HF_MODEL_ARGS = {"tokenizer": "PATH_OR_ID", "adapter": "PATH (PEFT/LoRA)", "revision": "REV"}
VLLM_MODEL_ARGS = ("tensor_parallel_size", "max_model_len", "enforce_eager", "block_size", "gpu_memory_utilization")


def model_arg_help() -> str:
    """The help of ``--model-arg``: every engine's keys."""
    from synthprobe.backends.openai import OPTIONS

    weights = ", ".join(f"{k}={v}" for k, v in HF_MODEL_ARGS.items())
    return (
        f"an option of the model's engine, repeatable: {weights} (hf and vllm); {', '.join(VLLM_MODEL_ARGS)} "
        f"(vllm); {', '.join(OPTIONS)} (openai engines). Each key: docs/command-line.md#model-arg"
    )


def add_model_args(
    p: argparse.ArgumentParser,
    *,
    multiple: bool = False,
    batch_size: int | None = None,
    quiet_alias: bool = True,
    chat: bool = False,
) -> None:
    """The flags of every command that loads a model: ``--model`` (repeatable with ``multiple``:
    ``args.models``, read with :func:`model_refs`; else one, ``args.model``, a second refused),
    ``--model-arg key=value`` (engine options), ``--dtype``, ``--device``, ``--threads``,
    ``--concurrency`` (a server-backed engine's requests in flight), ``--batch-size`` (when the command batches,
    default ``batch_size``) and one progress switch
    ``--progress/--no-progress`` (``--quiet`` = ``--no-progress``). See :func:`backend_options`.
    ``chat``: also ``--chat-template`` and ``--system-prompt`` (the commands that send prompts
    as chat turns); :func:`chat_setup` reads them."""
    from synthprobe.backends.spec import EMBEDDED_ALIAS

    where = (
        f"an alias ({EMBEDDED_ALIAS}, embedded, the default), a local folder or .gguf file, a hub id, or "
        "ENGINE:SPEC (e.g. openai:http://127.0.0.1:8000/v1); NAME=, ,KEY=VALUE: its name, own settings "
        "(docs/command-line.md#models)"
    )
    if multiple:
        p.add_argument(
            "--model",
            action="append",
            dest="models",
            metavar="[NAME=]SPEC",
            help=f"model to score; repeat for several, scored on the same items. SPEC: {where}",
        )
    else:
        p.add_argument(
            "--model",
            default=EMBEDDED_ALIAS,
            metavar="[NAME=]SPEC",
            action=_OneModel,
            help=f"the model (one; a second --model is an error). SPEC: {where}",
        )
    p.add_argument(
        "--model-arg",
        action="append",
        dest="model_args",
        type=model_arg,
        default=[],
        metavar="KEY=VALUE",
        help=model_arg_help(),
    )
    _add_engine_args(p, batch_size)
    if chat:
        _add_chat_args(p)
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=True, help="show progress bars (default: on)"
    )
    if quiet_alias:
        p.add_argument("--quiet", action="store_false", dest="progress", help="the same as --no-progress")


def _add_engine_args(p: argparse.ArgumentParser, batch_size: int | None) -> None:
    """How the model runs: dtype, device, threads, batch size, and a server's concurrency and token budget."""
    p.add_argument(
        "--dtype",
        default=None,
        help="float32, bfloat16 or float16 (default: bfloat16 on CUDA, float32 on CPU); log-softmax is always fp32",
    )
    p.add_argument("--device", default="auto", help="auto, cpu or cuda (default: %(default)s = CUDA if available)")
    p.add_argument(
        "--threads",
        type=any_int,
        default=None,
        metavar="N",
        help="CPU threads for torch (default: one per physical core this process may use)",
    )
    if batch_size is not None:
        p.add_argument(
            "--batch-size",
            type=positive_int,
            default=batch_size,
            metavar="N",
            help="items per forward pass (default: %(default)s)",
        )
    p.add_argument(
        "--concurrency",
        type=int_in_range(1, 1024),
        default=None,
        metavar="N",
        help="requests in flight to a server-backed model (default 8, lowered on 429/503 answers)",
    )
    p.add_argument(
        "--max-tokens-total",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="stop once a server reports N tokens spent (exit 1; finished items stay cached, so a "
        "larger N resumes) (default: no limit)",
    )


def _add_chat_args(p: argparse.ArgumentParser) -> None:
    """--chat-template and --system-prompt (read by :func:`chat_setup`)."""
    p.add_argument(
        "--chat-template",
        default="none",
        metavar="auto|none|NAME|PATH",
        help="send every prompt as a user turn under a chat template: auto (the model's own), "
        "NAME (one of the tokenizer's named templates), PATH (a Jinja file) or none (raw text, "
        "as always; the default); recorded with its SHA-256 (docs/chat-and-protocols.md)",
    )
    p.add_argument(
        "--system-prompt",
        default=None,
        metavar="TEXT",
        help="a system turn before every prompt (needs --chat-template; recorded with its SHA-256)",
    )


def add_limit_argument(p, help: str) -> None:
    """``--limit N`` (``args.limit``: a whole number >= 1, or None for all): every command that
    scores the first N of something declares it here, once; ``help`` says of what."""
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help=help)


def add_max_context_argument(p, help: str, *, default: int = 1024, least: int = 2) -> None:
    """``--max-context N`` (``args.max_context``): the longest request in tokens, declared here
    once for every command that takes it; ``default`` and the ``least`` it accepts are the
    command's (GPT-3's window is 2,048)."""
    p.add_argument("--max-context", type=int_at_least(least), default=default, metavar="N", help=help)


def add_bos_argument(p: argparse.ArgumentParser) -> None:
    """``--bos`` / ``--no-bos`` (``args.bos``: True, False, or None when neither is given): every
    command that runs a model declares it here, once."""
    p.add_argument(
        "--bos",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="BOS first or never, every model; default: as trained (on for Gemma); per model: NAME=SPEC,bos=true",
    )


def add_yes_argument(p: argparse.ArgumentParser) -> None:
    """``--yes``: the one flag that starts a run estimated at over an hour (:mod:`synthprobe.plan`)."""
    p.add_argument(
        "--yes",
        action="store_true",
        help="start a run estimated at over an hour (without --yes it stops after its plan, exit 2)",
    )


def chat_setup(args: argparse.Namespace):
    """The :class:`~synthprobe.backends.chat.ChatSetup` of ``--chat-template``, ``--system-prompt``
    and (where the command has it) ``--fewshot-as-multiturn``
    (:func:`~synthprobe.backends.chat.chat_setup_for`: its errors are InputErrors)."""
    from synthprobe.backends.chat import NONE, chat_setup_for

    return chat_setup_for(
        getattr(args, "chat_template", NONE),
        getattr(args, "system_prompt", None),
        fewshot_as_multiturn=bool(getattr(args, "fewshot_as_multiturn", False)),
    )


def run_settings(args: argparse.Namespace) -> dict:
    """The settings every scoring run shares (the fields of
    :class:`~synthprobe.scoring.settings.RunSettings`), read from a command's arguments: ``--limit``,
    ``--batch-size``, ``--no-cache``, the progress switch, the chat setup (:func:`chat_setup`) and,
    where the command has them, ``--max-context`` and ``--max-new-tokens``. Each command adds its own
    fields beside them (``StepsConfig(**run_settings(args), data=...)``)."""
    shared = {
        "limit": args.limit,
        "batch_size": args.batch_size,
        "cache": not args.no_cache,
        "progress": args.progress,
        "chat": chat_setup(args),
    }
    for name in ("max_context", "max_new_tokens"):
        if hasattr(args, name):
            shared[name] = getattr(args, name)
    return shared


def engine_options(args: argparse.Namespace) -> dict:
    """The engine's own options from the model block: ``--threads``, ``--concurrency`` when given,
    then every ``--model-arg`` (last, so it wins)."""
    options: dict = {}
    for flag in ("threads", "concurrency", "max_tokens_total"):
        if getattr(args, flag, None) is not None:
            options[flag] = getattr(args, flag)
    options.update(dict(getattr(args, "model_args", None) or []))
    return options


def backend_options(args: argparse.Namespace, **extra) -> dict:
    """``load_backend`` options from the model block's flags (:func:`engine_options` last, so
    ``--model-arg`` wins)."""
    options = {"dtype": args.dtype, "device": args.device, "progress": args.progress}
    options.update(extra)
    options.update(engine_options(args))
    return options


def model_backend_options(args: argparse.Namespace, ref, **extra) -> dict:
    """:func:`backend_options` for one model: the run-wide ``--bos``/``--no-bos`` where the command
    has it, then the model's own ``bos``, ``dtype``, ``device`` and engine keys
    (``--model NAME=SPEC,KEY=VALUE``, :class:`~synthprobe.backends.refs.ModelRef`) over them."""
    options = backend_options(args, **extra)
    if getattr(args, "bos", None) is not None:
        options.setdefault("bos", args.bos)
    if ref is not None:
        options.update({k: ref.settings[k] for k in ("bos", "dtype", "device") if k in ref.settings})
        options.update(ref.engine_settings())
    return options


def load_backend_or_exit(spec: str, args: argparse.Namespace, *, ref=None, **extra):
    """Load ``spec`` with the model block's options (and ``ref``'s own settings over them, see
    :func:`model_backend_options`); a model that cannot be loaded ends the command with one line
    and :data:`~synthprobe.errors.EXIT_FAILED` (bad flags raise InputError: status 2)."""
    from synthprobe.backends import ModelLoadError, load_backend
    from synthprobe.errors import CommandFailed

    try:
        return load_backend(spec, **model_backend_options(args, ref, **extra))
    except ModelLoadError as exc:
        raise CommandFailed(str(exc)) from None


#: The line every command that writes a results file adds when it stops without writing it.
NOTHING_WRITTEN = "no results file was written"


@contextlib.contextmanager
def nothing_written(*, kept: str = ""):
    """Around a command's scoring: a model that will not load or a run that fails ends the command
    with its one line and :data:`NOTHING_WRITTEN` (:class:`~synthprobe.errors.CommandFailed`, exit 1);
    Ctrl-C says the same (exit 130). ``kept`` is said first on Ctrl-C (what the cache holds).
    Bad input (:class:`~synthprobe.errors.InputError`) passes through unchanged (exit 2)."""
    from synthprobe.backends.base import ModelLoadError, ScoringError
    from synthprobe.errors import CommandFailed

    try:
        yield
    except (ModelLoadError, ScoringError) as exc:
        raise CommandFailed(f"{exc}\n{NOTHING_WRITTEN}") from None
    except KeyboardInterrupt as exc:
        raise KeyboardInterrupt(
            f"{str(exc) or 'interrupted'}; {kept + '; ' if kept else ''}{NOTHING_WRITTEN}"
        ) from None


def add_probe_model_args(p: argparse.ArgumentParser, *, chat: bool = False) -> None:
    """The model block (:func:`add_model_args`, with ``--chat-template``/``--system-prompt`` when
    ``chat``) plus ``--bos`` and ``--seed``: the generating commands (probes, study)."""
    add_model_args(p, chat=chat)
    add_bos_argument(p)
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=0,
        help="sampling seed; the same seed gives byte-identical output files (default: %(default)s)",
    )
