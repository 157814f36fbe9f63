"""The report's sections beyond the two leaderboards: one module each, listed in :data:`SECTIONS`.

A section module offers

``KEY``
    the section's anchor on the page (``"sweep"``);
``TITLE``
    its heading; ``SHORT_TITLE`` (optional, default ``TITLE``) names it elsewhere: a report
    that holds nothing else is titled ``SHORT_TITLE + " report"``, its leaderboard.md
    ``SHORT_TITLE``;
``parse(results) -> list``
    what one read results document (:class:`synthprobe.results.Results`) holds for the section,
    fields checked with located errors; ``[]`` when nothing;
``section(items) -> str``
    the section's HTML (a Jinja2 template or :mod:`synthprobe.report.html`);
``figure(items) -> bytes | None`` (optional)
    a PNG written as ``KEY.png`` and passed on as ``section(items, png)``;
``settings_table(items) -> str`` (optional)
    its run settings, shown under "Runs";
``summary(items) -> str | None`` (optional)
    a phrase for the page's subtitle;
``markdown_body(items) -> str`` (optional)
    its part of leaderboard.md;
``present(items) -> bool`` (optional)
    whether the items make a section at all (default: any items).

Adding a generic section to the report is one module plus its line here. A section a benchmark
owns (Deep Arithmark's per-step probe and protocol comparison) is named in its ``sections`` part
instead, and says where it goes with ``AFTER``, the ``KEY`` of the section it follows. A benchmark from the registry
(:mod:`synthprobe.registry`, e.g. installed through an entry point) brings its section as its
``report`` part, a module of this protocol whose ``KEY`` is the benchmark's name: it is shown
whenever an input file holds that benchmark's block, before the sections above. The two built-in
leaderboards (Deep Arithmark, GPT-3) are reached through the registry too (:func:`leaderboard`).

Beyond its section, a benchmark brings the rest of its report as more parts of its
:class:`~synthprobe.registry.Benchmark` (:data:`synthprobe.registry.PARTS`), each optional:

``tables``
    ``tables(items) -> {name: (head, rows)}``: its paper-ready tables (``report --table``, written
    as ``tables/<name>.<ext>`` by :mod:`synthprobe.report.tables`), from its report items (the
    built-in leaderboards' rows; what a registered benchmark's section ``parse`` returned);
``viewer``
    ``viewer(docs) -> list[Run]``: its saved items for the item viewer ``items.html``, as
    subclasses of :class:`synthprobe.report.viewer.Run` whose ``answers`` give the page's items
    and answers;
``lm_eval_reader``
    the module that reads its tasks in lm-evaluation-harness output folders back into its block
    (:mod:`synthprobe.report.lm_eval`);
``outcomes``
    the module that gives each model's per-item right/wrong for the paired comparison
    (:mod:`synthprobe.report.compare`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from types import ModuleType

from synthprobe import registry
from synthprobe.results import BENCHMARKS, Results

SECTIONS = (
    "synthprobe.report.compare",
    "synthprobe.report.sweep",
    "synthprobe.report.number_format",
    "synthprobe.report.contamination",
    "synthprobe.report.validity",
)

#: section KEY -> the items of every input file, in input order
Extras = Mapping[str, Sequence]


def leaderboard(name: str, part: str) -> ModuleType:
    """The ``part`` module (``read``, ``section``, ``table``, ``figures``) of the built-in
    benchmark ``name``'s report package, found through the registry and imported now."""
    return importlib.import_module(f"{registry.get(name).report}.{part}")


def _owned(benches: Sequence[registry.Benchmark]) -> list[ModuleType]:
    """The ``sections`` parts of ``benches``: the report sections each owns beyond its leaderboard."""
    return [mod for bench in benches if bench.has("sections") for mod in bench.part("sections")]


def _place(shown: list[ModuleType], owned: Sequence[ModuleType]) -> None:
    """Insert each owned section after the section its ``AFTER`` names (at the end when none)."""
    for mod in owned:
        after = [i for i, m in enumerate(shown) if m.KEY == getattr(mod, "AFTER", None)]
        shown.insert(after[0] + 1 if after else len(shown), mod)


def modules(names: Sequence[str] = ()) -> list[ModuleType]:
    """The section modules: the ``report`` parts of the registered benchmarks among ``names``
    (results blocks or section keys; not those built into the report,
    :data:`synthprobe.results.BENCHMARKS`), in name order; then :data:`SECTIONS`, with the sections
    the benchmarks own (their ``sections`` part: always the built-in ones', a registered one's
    when it is named) placed by their ``AFTER``."""
    shown = [importlib.import_module(name) for name in SECTIONS]
    _place(shown, _owned([b for b in map(registry.find, registry.BUILTIN) if b is not None]))
    keys = {mod.KEY for mod in shown}
    named = [registry.get(name) for name in sorted({n for n in names if n not in keys} - set(BENCHMARKS))]
    _place(shown, _owned(named))
    return [bench.part("report") for bench in named] + shown


def collect(docs: Sequence[Results]) -> dict[str, list]:
    """Every section's items from every read results document."""
    found: dict[str, list] = {}
    for mod in modules([name for doc in docs for e in doc.models for name in e.results]):
        items = [item for doc in docs for item in mod.parse(doc)]
        if items:
            found[mod.KEY] = items
    return found


def present(extras: Extras | None) -> list[tuple[ModuleType, Sequence]]:
    """``(module, items)`` for each section with items, in :data:`SECTIONS` order."""
    extras = extras or {}
    return [
        (mod, extras[mod.KEY])
        for mod in modules(list(extras))
        if extras.get(mod.KEY) and getattr(mod, "present", bool)(extras[mod.KEY])
    ]


def short_title(mod: ModuleType) -> str:
    return getattr(mod, "SHORT_TITLE", mod.TITLE)


def only_title(extras: Extras | None) -> str | None:
    """The first present section's short title (for a report of nothing else)."""
    shown = present(extras)
    return short_title(shown[0][0]) if shown else None
