"""The report's sections: one module each. Every benchmark's own section (its ``report`` part in
the registry, :mod:`synthprobe.registry`: the built-in ones and any installed through an entry
point alike) and the generic sections listed in :data:`SECTIONS`.

A section module offers

``KEY``
    the section's anchor on the page (``"sweep"``); a benchmark's is its name (its results block);
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

A benchmark's section may be a **leaderboard** (``LEADERBOARD = True``): its items are one row per
scored model (each with ``model``, ``params`` and ``source``), which the report names apart
(:func:`unique_names`: two files' models of one name are never merged) and orders with its
``ordered(items)`` before anything reads them; the page and leaderboard.md are titled after the
leaderboards present ("Deep Arithmark and GPT-3 synthetic tasks report"), and each is headed with
its ``SHORT_TITLE`` when another is on the page. A leaderboard may also offer
``check(items)`` (raise an :class:`~synthprobe.errors.InputError` when the rows cannot be one
table), ``draw(items) -> [(name, make)]`` (several figures, each ``name.png``, drawn by
``make()``), ``page_sections(items, figures, *, alone) -> [(anchor, title, html)]`` (several
sections of the page instead of ``section``), ``one_test_set(items) -> bool`` (``False`` puts the
page's "not one test set" warning up) and a ``summary(items, *, alone)`` that knows whether it is
the only leaderboard.

Adding a generic section to the report is one module plus its line in :data:`SECTIONS`. A
section that belongs to an app above the report lives beside that app (the Validity section is
:mod:`synthprobe.validity.report`, beside ``synthprobe validate``) and is named here by its import
path, as the registry names a benchmark's parts: the report imports nothing above it. A
section a benchmark owns beyond its own (Deep Arithmark's per-step probe and protocol comparison)
is named in its ``sections`` part instead, and says where it goes with ``AFTER``, the ``KEY`` of
the section it follows. Every built-in benchmark's section and owned sections are always
considered; a benchmark installed through an entry point is looked up only when an input file
holds its block.

Beyond its section, a benchmark brings the rest of its report as more parts of its
:class:`~synthprobe.registry.Benchmark` (:data:`synthprobe.registry.PARTS`), each optional:

``tables``
    ``tables(items) -> {name: (head, rows)}``: its paper-ready tables (``report --table``, written
    as ``tables/<name>.<ext>`` by :mod:`synthprobe.report.tables`), from its section's items;
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
from pathlib import Path
from types import ModuleType

from synthprobe import registry
from synthprobe.results import Results, known_blocks

SECTIONS = (
    "synthprobe.report.compare",
    "synthprobe.report.sweep",
    "synthprobe.report.number_format",
    "synthprobe.report.contamination",
    "synthprobe.validity.report",
)

#: section KEY -> the items of every input file, in input order
Extras = Mapping[str, Sequence]


def _owned(benches: Sequence[registry.Benchmark]) -> list[ModuleType]:
    """The ``sections`` parts of ``benches``: the report sections each owns beyond its own."""
    return [mod for bench in benches if bench.has("sections") for mod in bench.part("sections")]


def _place(shown: list[ModuleType], owned: Sequence[ModuleType]) -> None:
    """Insert each owned section after the section its ``AFTER`` names (at the end when none)."""
    for mod in owned:
        after = [i for i, m in enumerate(shown) if m.KEY == getattr(mod, "AFTER", None)]
        shown.insert(after[0] + 1 if after else len(shown), mod)


def _builtin() -> list[registry.Benchmark]:
    return [b for b in map(registry.find, registry.BUILTIN) if b is not None]


def modules(names: Sequence[str] = ()) -> list[ModuleType]:
    """The section modules, in page order: the ``report`` parts of the built-in benchmarks, then
    those of the registered benchmarks among ``names`` (results blocks or section keys), in name
    order; then :data:`SECTIONS`, with the sections the benchmarks own (their ``sections`` part:
    always the built-in ones', a registered one's when it is named) placed by their ``AFTER``."""
    builtin = [b for b in _builtin() if b.has("report")]
    shown = [importlib.import_module(name) for name in SECTIONS]
    _place(shown, _owned(_builtin()))
    keys = {mod.KEY for mod in shown} | {b.name for b in builtin} | set(known_blocks())
    named = [registry.get(name) for name in sorted({n for n in names if n not in keys})]
    _place(shown, _owned(named))
    return [bench.part("report") for bench in builtin + [b for b in named if b.has("report")]] + shown


def is_leaderboard(mod: ModuleType) -> bool:
    return bool(getattr(mod, "LEADERBOARD", False))


def prepare(mod: ModuleType, items: Sequence) -> list:
    """A section's items as the page shows them: a leaderboard's rows named apart and ordered,
    then checked; any other section's as parsed."""
    if not is_leaderboard(mod):
        return list(items)
    rows = mod.ordered(unique_names(list(items), mod.KEY))
    if hasattr(mod, "check"):
        mod.check(rows)
    return rows


def unique_names(rows: list, family: str) -> list:
    """Two rows with the same model name are never merged: each is shown with its results file's
    name (its path when the file names agree too, and ``#k`` when one file holds the name twice),
    as the paired comparison (:func:`synthprobe.report.compare.display_names`) shows the models of
    the benchmark ``family``."""
    from dataclasses import replace

    from synthprobe.report.compare import Outcomes, display_names

    shown = display_names([Outcomes(family, (), r.model, r.source) for r in rows])
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        counts[(r.model, r.source)] = counts.get((r.model, r.source), 0) + 1
    seen: dict[tuple[str, str], int] = {}
    out = []
    for r in rows:
        name = shown[(family, r.model, r.source)]
        if counts[(r.model, r.source)] > 1:
            seen[(r.model, r.source)] = seen.get((r.model, r.source), 0) + 1
            inner = name[:-1] if name.endswith(")") and name != r.model else f"{name} ({Path(r.source).name}"
            name = f"{inner}#{seen[(r.model, r.source)]})"
        out.append(replace(r, model=name) if name != r.model else r)
    return out


def collect(docs: Sequence[Results]) -> dict[str, list]:
    """Every section's items from every read results document (a leaderboard's prepared:
    :func:`prepare`), for the sections with items."""
    found: dict[str, list] = {}
    for mod in modules([name for doc in docs for e in doc.models for name in e.results]):
        items = [item for doc in docs for item in mod.parse(doc)]
        if items:
            found[mod.KEY] = prepare(mod, items)
    return found


def present(extras: Extras | None) -> list[tuple[ModuleType, Sequence]]:
    """``(module, items)`` for each section with items, in page order (:func:`modules`)."""
    extras = extras or {}
    return [
        (mod, extras[mod.KEY])
        for mod in modules(list(extras))
        if extras.get(mod.KEY) and getattr(mod, "present", bool)(extras[mod.KEY])
    ]


def leaderboards(shown: Sequence[tuple[ModuleType, Sequence]]) -> list[ModuleType]:
    """The leaderboard sections among the present ones."""
    return [mod for mod, _ in shown if is_leaderboard(mod)]


def short_title(mod: ModuleType) -> str:
    return getattr(mod, "SHORT_TITLE", mod.TITLE)


def default_title(extras: Extras | None, noun: str, *, bare: bool = False) -> str:
    """``"<leaderboards> <noun>"`` (``"Deep Arithmark and GPT-3 synthetic tasks report"``), or,
    without a leaderboard, the first section's short title and the noun (``"Sweep report"``), the
    short title alone when ``bare`` (leaderboard.md's ``"Sweep"``)."""
    shown = present(extras)
    boards = leaderboards(shown)
    if boards:
        return " and ".join(short_title(m) for m in boards) + f" {noun}"
    if not shown:
        raise ValueError("nothing to report")
    return short_title(shown[0][0]) + ("" if bare else f" {noun}")


def figure_makers(mod: ModuleType, items: Sequence) -> list:
    """``(name, make)`` for each figure of a present section (``name.png``)."""
    if hasattr(mod, "draw"):
        return list(mod.draw(items))
    if hasattr(mod, "figure"):
        return [(mod.KEY, lambda: mod.figure(items))]
    return []


def page_sections(mod: ModuleType, items: Sequence, figures: Mapping, *, alone: bool) -> list[tuple[str, str, str]]:
    """``(anchor, title, html)`` for each section of the page a present section makes."""
    if hasattr(mod, "page_sections"):
        return list(mod.page_sections(items, figures, alone=alone))
    body = mod.section(items, figures.get(mod.KEY)) if hasattr(mod, "figure") else mod.section(items)
    return [(mod.KEY, mod.TITLE, body)]


def summary(mod: ModuleType, items: Sequence, *, alone: bool) -> str | None:
    """Its phrase of the page's subtitle, if any."""
    phrase = getattr(mod, "summary", None)
    if phrase is None:
        return None
    return phrase(items, alone=alone) if is_leaderboard(mod) else phrase(items)
