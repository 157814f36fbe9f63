"""The lazy registry of benchmarks: a name → ``"module:attr"`` of its :class:`Benchmark`,
imported on first use.

Deep Arithmark and the GPT-3 synthetic tasks are built in (:data:`BUILTIN`). Any installed
package adds one through an entry point in the group ``synthprobe.benchmarks``, named after the
benchmark and pointing at its :class:`Benchmark`::

    [project.entry-points."synthprobe.benchmarks"]
    units = "my_units.benchmark:BENCHMARK"

Entry points are read only when a name is not built in, so naming a built-in benchmark imports
nothing but its own modules. A :class:`Benchmark` names its parts (``build``, ``load``,
``work``, ``metrics``, ``report``, ``sweep``, its own sub-commands ``commands``, ...: :data:`PARTS`)
as ``"module:attr"`` strings (or the objects themselves), each imported only when a command asks
for it: the runner, the sweep, the report assembler, the exports and the command line reach a
benchmark through here, never by importing it (the import-linter contracts in
``pyproject.toml``). See docs/write-a-benchmark.md.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from typing import Any

from synthprobe.errors import InputError

#: the entry-point group third-party benchmarks register in
GROUP = "synthprobe.benchmarks"

#: built-in benchmarks: name → ``"module:attr"`` of their :class:`Benchmark`
BUILTIN = {
    "deeparithmark": "synthprobe.benchmarks.deeparithmark.benchmark:BENCHMARK",
    "gpt3": "synthprobe.benchmarks.gpt3.benchmark:BENCHMARK",
}

#: the benchmark a command uses when none is named (``synthprobe sweep`` without ``--task``)
DEFAULT = "deeparithmark"

#: the parts a benchmark may name, and what each one is
PARTS = {
    "build": "build(n, seed) -> list of JSON objects: the data file's lines (`synthprobe build NAME`)",
    "load": "load(path) -> list of items (dicts, each with a unique string 'id'): the data file read strictly",
    "work": "work(backend, items) -> the runner's work(todo, batch_size, emit) function (`synthprobe score NAME`)",
    "metrics": "metrics(records) -> dict: the block's summary from the scored records",
    "report": "the report section module (KEY, TITLE, parse, section; see synthprobe.report.sections)",
    "sweep": (
        "the sweep part (canonical, RELEASE_SEED, prepare, size, run, load, score, accuracy, "
        "METRIC; see synthprobe.sweep.part)"
    ),
    "lm_eval": (
        "its lm-eval exports (OPTIONS, inputs, task_files, result_tasks; HELP_FILES, HELP_NOTES, RUN_TASK, "
        "run_task, RESULT_TASKS for the export commands' text; see synthprobe.export.lm_eval)"
    ),
    "hub_results": "hub_results(results, entry) -> list of huggingface_hub.EvalResult: its scores on a Hub model card",
    "hf": "hf(out, data=..., repo_id=..., overwrite=...) -> the Hub dataset folder of its data file (`export hf`)",
    "tables": "tables(items) -> {name: (head, rows)}: its paper-ready tables (`report --table`), from its report items",
    "viewer": "viewer(docs) -> list of synthprobe.report.viewer.Run: its saved items for the item viewer (items.html)",
    "lm_eval_reader": (
        "the module that reads its tasks in lm-eval output folders into its block (see synthprobe.report.lm_eval)"
    ),
    "outcomes": (
        "the module giving each model's per-item right/wrong for the paired comparison (see synthprobe.report.compare)"
    ),
    "layout": (
        "its place in the results document: BLOCKS (the model-entry blocks it owns → what each is), "
        "check_block(name, block, reader), and the earlier file layouts it still reads (see synthprobe.results)"
    ),
    "commands": (
        "the module of its own sub-commands: register(verbs) adds them (verbs: each verb this command line "
        "builds -> its argparse sub-parsers action), and VERBS, if given, names the verbs it adds to; "
        "registered before the command line's own modules, so each verb lists its sub-commands as it always "
        "did; lm_eval_arguments(parser) and lm_eval_options(args), if given, are its options on the generic "
        "`export lm-eval` (see synthprobe.cli)"
    ),
    "sections": (
        "more report section modules it owns (a probe's, a protocol comparison's), shown whatever the inputs; "
        "each may name AFTER, the KEY of the section it follows (see synthprobe.report.sections)"
    ),
}


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its name (the results block's key), its title, and its parts, each a
    ``"module:attr"`` (``"module"`` for a module) or the object itself; ``None`` when the
    benchmark has no such part."""

    name: str
    title: str
    build: Any = None
    load: Any = None
    work: Any = None
    metrics: Any = None
    report: Any = None
    sweep: Any = None
    lm_eval: Any = None
    hub_results: Any = None
    hf: Any = None
    tables: Any = None
    viewer: Any = None
    lm_eval_reader: Any = None
    outcomes: Any = None
    sections: Any = None
    layout: Any = None
    commands: Any = None
    #: one line for `synthprobe score NAME --help`
    summary: str = ""

    def part(self, role: str) -> Any:
        """The part ``role`` (one of :data:`PARTS`), imported now; an :class:`InputError` when
        the benchmark has none."""
        if role not in PARTS:
            raise ValueError(f"unknown part {role!r}; expected one of {list(PARTS)}")
        ref = getattr(self, role)
        if ref is None:
            raise InputError(f"benchmark {self.name!r} has no {role!r} part; expected {PARTS[role]}")
        if role == "sections":  # a sequence of modules, each a "module" string or the module
            return [resolve(r, f"benchmark {self.name!r} part {role!r}") if isinstance(r, str) else r for r in ref]
        return resolve(ref, f"benchmark {self.name!r} part {role!r}") if isinstance(ref, str) else ref

    def has(self, role: str) -> bool:
        return getattr(self, role) is not None


def resolve(ref: str, what: str) -> Any:
    """``"module:attr"`` (or ``"module"``) → the object, with one error naming ``what`` on failure."""
    module, _, attr = ref.partition(":")
    try:
        obj = importlib.import_module(module)
        for name in attr.split(".") if attr else ():
            obj = getattr(obj, name)
    except (ImportError, AttributeError) as exc:
        raise InputError(f"{what}: cannot load {ref!r} ({type(exc).__name__}: {exc})") from None
    return obj


def _entry_points() -> dict[str, Any]:
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=GROUP)}


@cache
def find(name: str) -> Benchmark | None:
    """The benchmark called ``name``, or ``None``: built-in first, then (only then) the entry
    points of group :data:`GROUP`."""
    if name in BUILTIN:
        ref, what = BUILTIN[name], f"built-in benchmark {name!r}"
    else:
        ep = _entry_points().get(name)
        if ep is None:
            return None
        ref, what = ep.value, f"benchmark {name!r} (entry point {ep.value!r} of {GROUP!r})"
    bench = resolve(ref, what)
    if not isinstance(bench, Benchmark) or bench.name != name:
        got = type(bench).__name__ + (f" named {bench.name!r}" if isinstance(bench, Benchmark) else "")
        raise InputError(f"{what}: expected a synthprobe.registry.Benchmark named {name!r}, got {got}")
    return bench


def get(name: str) -> Benchmark:
    """The benchmark called ``name``; an :class:`InputError` listing the known ones when none is."""
    bench = find(name)
    if bench is None:
        raise InputError(
            f"unknown benchmark {name!r}; expected one of {names()} (built in, or installed "
            f"through an entry point of group {GROUP!r})"
        )
    return bench


def names() -> list[str]:
    """Every benchmark's name: the built-in ones, then the installed ones (reads the entry points)."""
    return list(BUILTIN) + sorted(n for n in _entry_points() if n not in BUILTIN)
