"""Self-contained HTML reports for the qualitative probes: each prompt beside its generations.

Every piece of text from an item file or a model passes through :func:`html.escape`.
"""

from __future__ import annotations

from html import escape
from typing import Any

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:110em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #bbb;padding:.5em;vertical-align:top;text-align:left}
th{background:#eee}
pre{white-space:pre-wrap;margin:0;font-family:ui-monospace,monospace;font-size:.9em}
.ok{color:#176117;font-weight:bold}.no{color:#a11;font-weight:bold}
.meta td{border:none;padding:.1em .8em .1em 0}
details summary{cursor:pointer;color:#555}
"""


def _meta_table(meta: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>" for k, v in meta.items())
    return f'<table class="meta">{rows}</table>'


def _page(title: str, meta: dict[str, Any], intro: str, table: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1><p>{escape(intro)}</p>{_meta_table(meta)}{table}</body></html>\n")


def _prompt_cell(prompt: str, new_text: str) -> str:
    return (f"<td><pre>{escape(new_text)}</pre><details><summary>full prompt "
            f"({len(prompt)} characters)</summary><pre>{escape(prompt)}</pre></details></td>")


def _truncated(row: dict[str, Any], j: int) -> str:
    finished = row.get("finished")
    if finished is None or finished[j]:
        return ""
    return '<br><span class="no">truncated: reached --max-new-tokens</span>'


def novel_words_html(doc: dict[str, Any]) -> str:
    n = doc["sampling"]["n"]
    head = "".join(f"<th>Generation {i + 1}</th>" for i in range(n))
    rows = []
    for i, r in enumerate(doc["results"], 1):
        cells = []
        for j, (g, used, form) in enumerate(zip(r["generations"], r["uses_word"], r["used_form"])):
            flag = (f'<span class="ok">uses the word ({escape(form)})</span>' if used
                    else '<span class="no">does not use the word</span>')
            cells.append(f"<td><pre>{escape(g)}</pre>{flag}{_truncated(r, j)}</td>")
        rows.append(f"<tr><td>{i}</td><td>{escape(r['word'])}</td>{_prompt_cell(r['prompt'], r['new_text'])}"
                    f"{''.join(cells)}</tr>")
    demos = "".join(f"<li><b>{escape(d['word'])}</b>: {escape(d['sentence'])}</li>" for d in doc["demonstrations"])
    table = (f"<h2>Human-written examples</h2><ul>{demos}</ul><h2>Model sentences</h2>"
             f"<table><tr><th>#</th><th>Word</th><th>Prompt (new text)</th>{head}</tr>{''.join(rows)}</table>")
    s = doc["summary"]
    meta = {"model": doc["model"], "items": doc["items_file"], "seed": doc["seed"],
            "decoding": doc["sampling"]["decoding"], "temperature": doc["sampling"]["temperature"],
            "top-p": doc["sampling"]["top_p"], "words": s["words"],
            "first sample uses the word": f"{s['uses_word_first_sample']} of {s['words']}"}
    intro = ("GPT-3's novel-word probe (Brown et al. 2020, Figure 3.16): each definition is appended after the "
             "previous answer. 'Uses the word' is an automatic proxy: the word or a regular inflection appears "
             "as a token.")
    return _page("Novel words", meta, intro, table)


def grammar_html(doc: dict[str, Any]) -> str:
    n = doc["sampling"]["n"]
    head = "".join(f"<th>Generation {i + 1}</th>" for i in range(n))
    rows = []
    for i, r in enumerate(doc["results"], 1):
        cells = []
        for j, g in enumerate(r["generations"]):
            mark = ""
            if r["reference"] is not None:
                em = r["exact_match"][j]
                mark = '<span class="ok">exact match</span>' if em else '<span class="no">differs</span>'
            cells.append(f"<td><pre>{escape(g)}</pre>{mark}{_truncated(r, j)}</td>")
        ref = escape(r["reference"]) if r["reference"] is not None else "<i>none</i>"
        chrf = f"<br>chrF {r['chrf']:.1f}" if "chrf" in r else ""
        rows.append(f"<tr><td>{i}</td>{_prompt_cell(r['prompt'], r['input'])}{''.join(cells)}"
                    f"<td>{ref}{chrf}</td></tr>")
    demos = "".join(f"<li>{escape(d['input'])} &rarr; {escape(d['output'])}</li>" for d in doc["demonstrations"])
    table = (f"<h2>Human-written demonstrations</h2><ul>{demos}</ul><h2>Model corrections</h2>"
             f"<table><tr><th>#</th><th>Poor English input</th>{head}<th>Reference</th></tr>"
             f"{''.join(rows)}</table>")
    s = doc["summary"]
    meta = {"model": doc["model"], "items": doc["items_file"], "seed": doc["seed"],
            "decoding": doc["sampling"]["decoding"], "items answered": s["items"],
            "with reference": s["with_reference"]}
    if s.get("scored"):
        meta["chrF (corpus)"] = f"{s['chrf']:.2f}"
        meta["exact match"] = f"{s['exact_match']} of {s['scored']} ({100 * s['exact_match_rate']:.1f}%)"
    how = ("each new input appended after the model's previous completions (chained, as in the paper)"
           if s.get("chained") else "then each poor-English input on its own")
    intro = f"GPT-3's grammar-correction probe (Brown et al. 2020, Figure 3.17): human-written demonstrations, {how}."
    return _page("Grammar correction", meta, intro, table)
