"""Self-contained HTML reports for the qualitative probes: each prompt beside its generations.

The pages are Jinja2 templates (``resources/templates/novel_words.html``, ``grammar.html``) with
autoescape on: every piece of text from an item file or a model is escaped by Jinja2.
"""

from __future__ import annotations

from typing import Any

from synthprobe.templating import Markup, render

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


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def novel_words_html(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    meta = {
        "model": doc["model"],
        "items": doc["items_file"],
        "seed": doc["seed"],
        "decoding": doc["sampling"]["decoding"],
        "temperature": doc["sampling"]["temperature"],
        "top-p": doc["sampling"]["top_p"],
        "words": s["words"],
        "first sample uses the word": f"{s['uses_word_first_sample']} of {s['words']}",
    }
    if "distinct_1" in s:
        meta["distinct-1 / distinct-2 (all generations)"] = f"{_num(s['distinct_1'])} / {_num(s['distinct_2'])}"
        meta["first samples that share a template sentence"] = (
            f"{s['shared_frame_first_sample']} of {s['words']} (the same sentence once the word is blanked out)"
        )
    intro = (
        "GPT-3's novel-word probe (Brown et al. 2020, Figure 3.16): each definition is appended after the "
        "previous answer. 'Uses the word' is an automatic proxy: the word or a regular inflection appears "
        "as a token. Read it beside distinct-n (unique word n-grams over all n-grams of the generations; "
        "1.0 = nothing repeats) and the count of sentences that are one template with the word swapped in."
    )
    return render("novel_words.html", title="Novel words", css=Markup(_CSS), meta=meta, intro=intro, doc=doc)


def grammar_html(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    meta = {
        "model": doc["model"],
        "items": doc["items_file"],
        "seed": doc["seed"],
        "decoding": doc["sampling"]["decoding"],
        "items answered": s["items"],
        "with reference": s["with_reference"],
    }
    if s.get("scored"):
        chrf = f"{s['chrf']:.2f}"
        if s.get("copy_baseline_chrf") is not None:
            chrf += f" (copy-the-input baseline: {s['copy_baseline_chrf']:.2f})"
        meta["chrF (corpus)"] = chrf
        meta["exact match"] = f"{s['exact_match']} of {s['scored']} ({100 * s['exact_match_rate']:.1f}%)"
    how = (
        "each new input appended after the model's previous completions (chained, as in the paper)"
        if s.get("chained")
        else "then each poor-English input on its own"
    )
    intro = f"GPT-3's grammar-correction probe (Brown et al. 2020, Figure 3.17): human-written demonstrations, {how}."
    if s.get("copy_baseline_chrf") is not None:
        intro += (
            " The copy-the-input baseline is the chrF of handing back every input unchanged: a correction "
            "must beat it to have improved anything."
        )
    return render("grammar.html", title="Grammar correction", css=Markup(_CSS), meta=meta, intro=intro, doc=doc)
