"""The self-contained HTML page: inline CSS, figures embedded as base64 PNG, no scripts,
nothing fetched from the network, no time stamps (the item viewer, ``items.html``, is a page of
its own beside it: :mod:`synthprobe.report.viewer`). The sections come from
:mod:`synthprobe.benchmarks.deeparithmark.report.section` and :mod:`synthprobe.benchmarks.gpt3.report.section`."""

from __future__ import annotations

from collections.abc import Sequence

from synthprobe.report import extras as extra_sections
from synthprobe.report.model import Gpt3Result, ModelResult
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
figure { margin: 10px 0 4px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); border-radius: 4px; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
h3 { font-size: 16px; margin: 18px 0 4px; }
table.gpt3 td { vertical-align: top; }
code { font-size: 13px; background: var(--band); padding: 1px 4px; border-radius: 3px; }
""".strip()

DEFAULT_TITLE = "Deep Arithmark report"


def default_title(
    results: Sequence[ModelResult], gpt3: Sequence[Gpt3Result], extras: extra_sections.Extras | None = None
) -> str:
    if not results and not gpt3 and extra_sections.only_title(extras):
        return f"{extra_sections.only_title(extras)} report"
    if results and gpt3:
        return "Deep Arithmark and GPT-3 synthetic tasks report"
    return DEFAULT_TITLE if results else "GPT-3 synthetic tasks report"


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
    results: Sequence[ModelResult],
    figures: dict[str, bytes | None],
    *,
    sources: Sequence[str],
    title: str | None = None,
    gpt3: Sequence[Gpt3Result] = (),
    extras: extra_sections.Extras | None = None,
    items_page: tuple[str, int, int] | None = None,
) -> str:
    """The page: Deep Arithmark sections when ``results`` has models, a GPT-3 section when
    ``gpt3`` has files (its figure is ``figures["gpt3_curves"]``), the sections of
    :mod:`synthprobe.report.extras` that ``extras`` has items for, then the runs."""
    shown = extra_sections.present(extras)
    deep_section = extra_sections.leaderboard("deeparithmark", "section")
    gpt3_section = extra_sections.leaderboard("gpt3", "section")
    if not results and not gpt3 and not shown:
        raise ValueError("nothing to report")
    title = title or default_title(results, gpt3, extras)
    sections = deep_section.sections(results, figures) if results else []
    if sections and gpt3:
        sections[0] = (sections[0][0], "Deep Arithmark leaderboard", sections[0][2])
    sub_parts: list[str] = []
    datasets: list[str] = []
    n_items: list[int] = []
    if results:
        chance = results[0].chance
        n_items = sorted({r.overall.n for r in results})
        datasets = sorted({r.settings.get("dataset SHA-256", "") for r in results} - {""})
        sub = (
            ("Deep Arithmark: " if gpt3 else "") + f"{len(results)} model{'s' if len(results) != 1 else ''} · "
            f"{', '.join(f'{n:,}' for n in n_items)} items"
            + (f" · chance {100 * chance:.0f} %" if any(r.has_chance for r in results) else " · no chance level (free)")
        )
        if datasets:
            sub += " · data SHA-256 " + ", ".join(f"{d[:12]}…" for d in datasets)
        sub_parts.append(sub)
    if gpt3:
        rows = len(extra_sections.leaderboard("gpt3", "table").lines(gpt3))
        sub_parts.append(
            f"GPT-3 synthetic tasks: {len(gpt3)} model{'s' if len(gpt3) != 1 else ''} · "
            f"{rows} task × setting row{'s' if rows != 1 else ''}"
        )
        sections.append(("gpt3", "GPT-3 synthetic tasks", gpt3_section.section(gpt3, figures.get("gpt3_curves"))))

    for mod, items in shown:
        summary = getattr(mod, "summary", None)
        phrase = summary(items) if summary else None
        if phrase:
            sub_parts.append(phrase)
        body = mod.section(items, figures.get(mod.KEY)) if hasattr(mod, "figure") else mod.section(items)
        sections.append((mod.KEY, mod.TITLE, body))

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
    if results:
        runs.append(("<h3>Deep Arithmark</h3>" if gpt3 else "") + deep_section.settings_table(results))
    if gpt3:
        runs.append(("<h3>GPT-3 synthetic tasks</h3>" if results else "") + gpt3_section.settings_table(gpt3))
    for mod, items in shown:
        if hasattr(mod, "settings_table"):
            runs.append(
                (f"<h3>{escape(extra_sections.short_title(mod))}</h3>" if results or gpt3 or len(runs) else "")
                + mod.settings_table(items)
            )
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
        css=Markup(CSS),
        sub=" · ".join(sub_parts),
        sections=[(sid, name, Markup(html)) for sid, name, html in sections],
        not_one_test_set=len(datasets) > 1 or len(n_items) > 1,
        version=__version__,
    )
