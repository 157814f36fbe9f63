"""HTML pieces shared by the report's sections: the Jinja2 figure and table macros
(``resources/templates/report_parts.html``) and the runs-table keys."""

from __future__ import annotations

import base64
from collections.abc import Sequence

from synthprobe.templating import Markup, environment


def _parts():
    """The page's Jinja2 macros (``resources/templates/report_parts.html``)."""
    return environment().get_template("report_parts.html").module


def img(png: bytes, alt: str, caption: str) -> str:
    """The figure macro (alt text and caption escaped by the template), as plain HTML text."""
    data = base64.b64encode(png).decode("ascii")
    return str(_parts().figure(data, alt, caption))


def table(head: Sequence[str], body: Sequence[Sequence[str]], *, left: int = 1, raw: bool = False) -> str:
    """The table macro; its template escapes every cell. ``raw``: body cells are HTML already,
    built from :func:`markupsafe.escape`-d pieces, and pass as :class:`~markupsafe.Markup`."""
    cells = [[Markup(c) if raw else c for c in row] for row in body]
    return str(_parts().table(list(head), cells, left))


def setting_keys(results: Sequence) -> list[str]:
    """Every settings key of the given results, in first-seen order."""
    return list(dict.fromkeys(k for r in results for k in r.settings))
