"""HTML pages from Jinja2 templates shipped in ``synthprobe/resources/templates``.

Autoescape is on for every template: text from results files, item files and models is escaped
by Jinja2, never by hand. Markup a page builds itself (a figure, a table cell) is passed as
:class:`markupsafe.Markup`, whose ``format`` escapes its arguments.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markupsafe import Markup, escape

__all__ = ["Markup", "escape", "render"]


@lru_cache(maxsize=1)
def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(loader=PackageLoader("synthprobe", "resources/templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True)


def render(name: str, **context: Any) -> str:
    """Render template ``name`` with ``context`` (autoescaped)."""
    return environment().get_template(name).render(**context)
