"""The self-contained HTML page: inline CSS, figures embedded as base64 PNG, no scripts,
nothing fetched from the network, no time stamps (the item viewer, ``items.html``, is a page of
its own beside it: :mod:`synthprobe.report.viewer`). The sections are the modules of
:mod:`synthprobe.report.sections`: every benchmark's own (its ``report`` part) and the generic ones."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.report import sections as parts
from synthprobe.templating import Markup, escape
from synthprobe.templating import render as render_template
from synthprobe.version import __version__

CSS = """
:root { --fg: #1d2430; --muted: #5b6573; --line: #d9dee5; --band: #f5f7fa; --accent: #2a5db0; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Roboto, Arial, sans-serif;
       color: var(--fg); background: #fff; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-top: 12px; border-top: 1px solid var(--line); }
p { margin: 6px 0 10px; max-width: 90ch; }
.sub { color: var(--muted); margin: 0 0 18px; }
nav { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 10px 0 4px; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; }
.note { color: var(--muted); font-size: 13.5px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13.5px; margin: 8px 0 6px; }
th, td { padding: 4px 9px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: var(--band); font-weight: 600; position: sticky; top: 0; }
td:first-child, th:first-child { text-align: left; }
td.l, th.l { text-align: left; white-space: normal; overflow-wrap: anywhere; }
td.l:first-child { min-width: 14ch; max-width: 36ch; }
th.l { min-width: 10ch; max-width: 36ch; }
details { margin: 8px 0; }
summary { cursor: pointer; color: var(--accent); }
tbody tr:nth-child(even) { background: #fafbfc; }
.warn { border-left: 4px solid #c77c02; background: #fff7e6; padding: 8px 12px; max-width: 90ch; }
.above { color: #1b6e33; font-weight: 600; }
.below { color: #a3281b; font-weight: 600; }
.sig-above { color: #1b6e33; font-weight: 600; }
.sig-above::after { content: " \\25B2"; font-size: 80%; }
.sig-below { color: #2f5597; font-weight: 600; }
.sig-below::after { content: " \\25BC"; font-size: 80%; }
figure { margin: 10px 0 4px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
h3 { font-size: 16px; margin: 18px 0 4px; }
code { font-size: 13px; background: var(--band); padding: 1px 4px; border-radius: 3px; }
""".strip()


def css() -> str:
    """The page's style sheet: :data:`CSS`, then the rules each section brings (its ``CSS``)."""
    return "\n".join([CSS, *(mod.CSS for mod in parts.modules() if getattr(mod, "CSS", ""))])


def default_title(extras: parts.Extras | None) -> str:
    """The page's title: after the leaderboards on it, else its first section."""
    return parts.default_title(extras, "report")


#: a page that compares models leads with these sections, in this order: what a user who scored
#: two checkpoints came for (the paired differences, then accuracy per depth)
LEAD_SECTIONS = ("comparison", "depth")


def lead_with_comparison(sections: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """``sections`` with the paired comparison and then the per-depth curve first, when the page
    has a paired comparison; unchanged otherwise."""
    if not any(sid == "comparison" for sid, _, _ in sections):
        return sections
    first = [s for key in LEAD_SECTIONS for s in sections if s[0] == key]
    return first + [s for s in sections if s[0] not in LEAD_SECTIONS]


def render(
    extras: parts.Extras,
    figures: dict[str, bytes | None],
    *,
    sources: Sequence[str],
    title: str | None = None,
    items_page: tuple[str, int, int] | None = None,
) -> str:
    """The page: the sections (:mod:`synthprobe.report.sections`) that ``extras`` (section KEY →
    items, as :func:`synthprobe.report.sections.collect` gives them) has items for, in page order,
    with their figures (``figures``: name → PNG); then the item viewer's link and the runs."""
    shown = parts.present(extras)
    if not shown:
        raise ValueError("nothing to report")
    title = title or default_title(extras)
    alone = len(parts.leaderboards(shown)) <= 1
    sections: list[tuple[str, str, str]] = []
    sub_parts: list[str] = []
    one_test_set = True
    for mod, items in shown:
        phrase = parts.summary(mod, items, alone=alone)
        if phrase:
            sub_parts.append(phrase)
        sections += parts.page_sections(mod, items, figures, alone=alone)
        one_test_set = one_test_set and getattr(mod, "one_test_set", lambda _: True)(items)

    sections = lead_with_comparison(sections)
    if items_page is not None:
        name, n_models, n_rows = items_page
        sections.append(
            (
                "items",
                "Items",
                str(
                    Markup(
                        "<p>Every scored item of every model ({} model{}, {:,} answers), filterable by "
                        "depth, template, topic, outcome, picked mistake, protocol and first broken step; "
                        "each item opens to its prompt, the endings with their log-likelihoods and named "
                        "mistakes, and every model's pick: "
                        '<a href="{}">open the item viewer</a>.</p>'
                    ).format(n_models, "s" if n_models != 1 else "", n_rows, name)
                ),
            )
        )

    runs = []
    for mod, items in shown:
        if hasattr(mod, "settings_table"):
            headed = not alone if parts.is_leaderboard(mod) else bool(runs)
            runs.append((f"<h3>{escape(parts.short_title(mod))}</h3>" if headed else "") + mod.settings_table(items))
    sections.append(
        (
            "runs",
            "Runs",
            "".join(runs)
            + '<p class="note">Read from: '
            + ", ".join(f"<code>{escape(s)}</code>" for s in sources)
            + "</p>",
        )
    )

    return render_template(
        "report.html",
        title=title,
        css=Markup(css()),
        sub=" · ".join(sub_parts),
        sections=[(sid, name, Markup(html)) for sid, name, html in sections],
        not_one_test_set=not one_test_set,
        version=__version__,
    )
