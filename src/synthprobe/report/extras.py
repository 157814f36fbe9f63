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

Adding a section to the report is one module plus its line here.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Mapping, Sequence

from synthprobe.results import Results

SECTIONS = (
    "synthprobe.report.compare",
    "synthprobe.report.steps",
    "synthprobe.report.sweep",
    "synthprobe.report.number_format",
    "synthprobe.report.protocol_effect",
    "synthprobe.report.contamination",
)

#: section KEY -> the items of every input file, in input order
Extras = Mapping[str, Sequence]


def modules() -> list[ModuleType]:
    return [importlib.import_module(name) for name in SECTIONS]


def collect(docs: Sequence[Results]) -> dict[str, list]:
    """Every section's items from every read results document."""
    found: dict[str, list] = {}
    for mod in modules():
        items = [item for doc in docs for item in mod.parse(doc)]
        if items:
            found[mod.KEY] = items
    return found


def present(extras: Extras | None) -> list[tuple[ModuleType, Sequence]]:
    """``(module, items)`` for each section with items, in :data:`SECTIONS` order."""
    extras = extras or {}
    return [(mod, extras[mod.KEY]) for mod in modules() if extras.get(mod.KEY)
            and getattr(mod, "present", bool)(extras[mod.KEY])]


def short_title(mod: ModuleType) -> str:
    return getattr(mod, "SHORT_TITLE", mod.TITLE)


def only_title(extras: Extras | None) -> str | None:
    """The first present section's short title (for a report of nothing else)."""
    shown = present(extras)
    return short_title(shown[0][0]) if shown else None
