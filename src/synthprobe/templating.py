"""HTML pages from Jinja2 templates shipped in ``synthprobe/resources/templates``.

Autoescape is on for every template: text from results files, item files and models is escaped
by Jinja2, never by hand. Markup a page builds itself (a figure, a table cell) is passed as
:class:`markupsafe.Markup`, whose ``format`` escapes its arguments. Data a page's script reads goes in as JSON
through :func:`script_json`, never as markup.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from markupsafe import Markup, escape

__all__ = ["Markup", "escape", "render", "script_json"]


@lru_cache(maxsize=1)
def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    return Environment(
        loader=PackageLoader("synthprobe", "resources/templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, **context: Any) -> str:
    """Render template ``name`` with ``context`` (autoescaped)."""
    return environment().get_template(name).render(**context)


def script_json(obj: Any) -> Markup:
    """``obj`` as compact JSON safe inside ``<script type="application/json">``: Jinja2's own
    :func:`~jinja2.utils.htmlsafe_json_dumps` writes ``<``, ``>``, ``&`` and ``'`` as ``\\u``
    escapes, so no text in the data can close the script element (``</script>``) or open a
    comment; keys sorted, so the same data gives the same bytes."""
    import json

    from jinja2.utils import htmlsafe_json_dumps

    return htmlsafe_json_dumps(
        obj, dumps=json.dumps, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
