"""Honest numbers on the page: multiple-test correction, n on every figure cell and bar,
no size verdict without enough items, baselines beside headline figures; Jinja2 pages.

Checked against the committed benchmark files where they hold the numbers.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from synthprobe.benchmarks.deeparithmark.report import figures as plots
from synthprobe.benchmarks.gpt3.report import figures as gpt3_figures
from synthprobe.report import page
from synthprobe.report.format import fmt_p
from synthprobe.report.reader import rows as read_rows
from synthprobe.results import read_results
from synthprobe.templating import escape

ROOT = Path(__file__).resolve().parents[2]
DEEP = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
GPT3 = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
#: the 2026-10 results file (first layout, the release before role-balanced decoys): its depth 2 is
#: below 0.05 before Holm's correction only, and two templates' intervals lie below chance
DEEP_2026_10 = ROOT / "tests" / "fixtures" / "results_v1" / "deeparithmark_smollm2-135m-instruct_2026-10.json"


def deep_summary(path: Path = DEEP) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return doc["models"][0]["results"]["deeparithmark"]["summary"]


def render_deep(path: Path) -> str:
    results = read_rows(path, "deeparithmark")
    return page.render({"deeparithmark": results}, {}, sources=[str(path)])


@pytest.fixture(scope="module")
def deep_page() -> str:
    return render_deep(DEEP)


def depth_section(html: str) -> str:
    return re.search(r'<section id="depth">(.*?)</section>', html, re.S).group(1)


def check_depth_marks(path: Path, html: str) -> tuple[list[float], list[float], list[str]]:
    """The depth table of ``path``'s page: n, p and Holm p in every cell, a mark only where the
    adjusted p is below 0.05; returns the raw and adjusted p-values and the cells."""
    by_depth = deep_summary(path)["by_depth"]
    depths = sorted(by_depth, key=int)
    raw = [by_depth[d]["p_vs_chance"] for d in depths]
    holm = multipletests(raw, method="holm")[1]
    cells = re.findall(r"<td>(.*?)</td>", html, re.S)
    assert len(cells) == len(depths)
    for d, cell, p, q in zip(depths, cells, raw, holm):
        text = unescape(re.sub(r"<[^>]+>", "", cell))
        assert f"n {by_depth[d]['n']}" in text, d
        assert f"· p {fmt_p(p)} · Holm p {fmt_p(q)}" in text, (d, text)
        # coloured only when the adjusted p is below 0.05
        assert (('class="sig-above"' in cell) or ('class="sig-below"' in cell)) == (q < 0.05), d
    assert "Holm" in html and "multipletests" in html and "after the correction" in html
    return raw, list(holm), cells


def test_depth_marks_use_holm_adjusted_p_values_equal_to_statsmodels(deep_page):
    raw, holm, cells = check_depth_marks(DEEP, depth_section(deep_page))
    # the shipped file (the role-balanced release): no tier is far from chance, marked or not
    assert min(raw) > 0.05 and not any('class="sig-above"' in c or 'class="sig-below"' in c for c in cells)


def test_a_tier_below_005_only_before_holm_gets_no_mark():
    """Depth 2 of the 2026-10 file: p 0.049 uncorrected, 0.15 after Holm over 4 tiers: no mark,
    and the caption does not call it a stable wrong path."""
    raw, holm, cells = check_depth_marks(DEEP_2026_10, depth_section(render_deep(DEEP_2026_10)))
    assert raw[0] < 0.05 < holm[0]
    assert 'class="sig-below"' not in cells[0]


@pytest.mark.parametrize(
    "path,holding",
    # the shipped file: every template's interval holds chance; the 2026-10 file: 13 of 15, so
    # both a hatched cell and a plain one are drawn
    [(DEEP, 15), (DEEP_2026_10, 13)],
    ids=["shipped", "2026-10"],
)
def test_heatmap_cells_carry_n_and_mark_intervals_holding_chance(path, holding):
    summary = deep_summary(path)
    results = read_rows(path, "deeparithmark")
    by_template, chance = summary["by_template"], summary["chance"]
    fig = plots.heatmap_figure(results)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    templates = [t.get_text().rsplit(" (d", 1)[0] for t in ax.get_yticklabels()]
    assert sorted(templates) == sorted(by_template) and len(templates) == 15
    holm = dict(zip(templates, multipletests([by_template[t]["p_vs_chance"] for t in templates], method="holm")[1]))
    for t, text in zip(templates, texts):
        b = by_template[t]
        star = "*" if holm[t] < 0.05 else ""
        assert text == f"{100 * b['acc_norm']:.0f}{star}\nn={b['n']}", t
    hatched = [p for p in ax.patches if p.get_gid() == "contains-chance"]
    holds = [t for t in templates if by_template[t]["ci95"][0] <= chance <= by_template[t]["ci95"][1]]
    assert len(hatched) == len(holds) == holding
    rows = sorted(int(round(p.get_y() + 0.5)) for p in hatched)
    assert rows == sorted(templates.index(t) for t in holds)
    # n spans 33-128 items in both files
    assert min(b["n"] for b in by_template.values()) == 33 and max(b["n"] for b in by_template.values()) == 128


def test_mistake_profile_bars_carry_their_n():
    results = read_rows(DEEP, "deeparithmark")
    fig = plots.mistake_figure(results)
    texts = {t.get_text() for ax in fig.axes for t in ax.texts}
    r = results[0]
    for template, counts in r.mistakes.items():
        for mc in counts:
            if mc.offered and mc.chosen:
                assert f"{mc.chosen}/{mc.offered}" in texts, (template, mc.source)
            elif mc.offered:
                assert f"0 of {mc.offered}" in texts


def test_mistake_profile_leads_with_the_strongest_preferences_and_draws_no_unreadable_panel():
    import dataclasses

    from synthprobe.benchmarks.deeparithmark.report.model import MIN_OFFERS, MistakeCount, preferred_mistake

    (r,) = read_rows(DEEP, "deeparithmark")
    strongest = {t: preferred_mistake(rows)[0].rate for t, rows in r.mistakes.items()}
    order = sorted(strongest, key=lambda t: (-strongest[t], r.template_depth.get(t, 0), t))  # ties: by depth, name
    # one template whose wrong options were each offered fewer than 10 times: no panel for it
    thin = order[0]
    few = tuple(MistakeCount(mc.source, min(mc.offered, MIN_OFFERS - 1), 0) for mc in r.mistakes[thin])
    thinned = dataclasses.replace(r, mistakes={**r.mistakes, thin: few})
    fig = plots.mistake_figure([thinned])
    titles = [ax.get_title(loc="center") for ax in fig.axes if ax.get_title(loc="center")]
    shown = [t.split(" (d")[0] for t in titles]
    assert thin not in shown and shown == [t for t in order if t != thin]
    # on the page the table leads, strongest preference first; the figure follows with the
    # hidden template counted in its caption
    html = page.render({"deeparithmark": [thinned]}, {"mistake_profile": b"png"}, sources=[str(DEEP)])
    section = re.search(r'<section id="mistakes">(.*?)</section>', html, re.S).group(1)
    assert section.index("<table") < section.index("<figure")
    first_row = re.search(r"<tbody>\s*<tr><td[^>]*>(.*?)</td>", section, re.S).group(1)
    assert first_row.startswith(escape(order[1]))
    assert "The 1 template where no wrong option was offered 10 times get no panel" in section


def test_a_model_that_never_picks_an_option_has_no_preferred_mistake():
    """Under ``free`` a model writes values, not options: every wrong option offered, none picked.
    Its cells say so, and its templates are no preference to lead with."""
    import dataclasses

    from synthprobe.benchmarks.deeparithmark.report.model import MistakeCount, mistake_templates

    (r,) = read_rows(DEEP, "deeparithmark")
    none = {t: tuple(MistakeCount(mc.source, mc.offered, 0) for mc in rows) for t, rows in r.mistakes.items()}
    free = dataclasses.replace(r, mistakes=none)
    readable, rest = mistake_templates([free])
    assert readable == [] and sorted(rest) == sorted(r.mistakes)
    html = page.render({"deeparithmark": [free]}, {}, sources=[str(DEEP)])
    section = re.search(r'<section id="mistakes">(.*?)</section>', html, re.S).group(1)
    assert section.count("no wrong option picked") == len(r.mistakes) and "chosen 0 of" not in section


# --- GPT-3: no size verdict without enough items -------------------------------------------


def test_zero_of_three_gets_no_size_verdict():
    from synthprobe.benchmarks.gpt3.paper import TOO_FEW, paper_row, where_it_lands
    from synthprobe.metrics.stats import wilson_percent as interval

    # the reported case: 0 of 3 on 5D+ zero-shot printed "0, as ≤ 13B"; the interval 0-56 %
    # holds every GPT-3 cell of the row
    ci = tuple(interval(0, 3))
    assert ci[1] > 50
    assert where_it_lands(0.0, paper_row("5D+", "zero"), ci) == TOO_FEW
    assert where_it_lands(0.0, paper_row("5D-", "few"), tuple(interval(0, 10))) == TOO_FEW
    # enough items keep the tie at zero
    assert where_it_lands(0.0, paper_row("5D+", "zero"), tuple(interval(0, 2_000))) == "0, as ≤ 13B"


def test_committed_gpt3_verdicts_follow_the_rule():
    from synthprobe.benchmarks.gpt3.paper import paper_row, where_it_lands

    (entry,) = read_results(GPT3).models  # the committed file, converted on read
    for r in entry.results["gpt3"].data["rows"]:
        if r["code"] == "SAT":
            assert r["lands"] is None
            continue
        row = paper_row(r["code"], r["setting"])
        assert r["lands"] == where_it_lands(r["accuracy"], row, tuple(r["ci95"])), (r["code"], r["setting"])


@pytest.mark.slow
def test_is_greedy_check_with_three_items_gives_no_verdict(tmp_path):
    import os
    import subprocess
    import sys

    out = tmp_path / "g.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "score",
            "gpt3",
            "--model",
            "smollm2-135m-instruct",
            "--tasks",
            "5D+",
            "--shots",
            "0",
            "--limit",
            "3",
            "--check",
            "is-greedy",
            "--output",
            str(out),
            "--quiet",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (entry,) = read_results(out).models  # the one results document
    (row,) = entry.results["gpt3"].data["rows"]
    assert row["n"] == 3 and row["ci95"][1] > 50
    assert row["lands"] == "n too small"
    table = proc.stdout.splitlines()
    line = next(ln for ln in table if ln.startswith("5D+"))
    assert line.rstrip().endswith("n too small") and "as ≤" not in line


def test_sat_panel_from_the_sample_carries_its_caveat_in_the_figure():
    from dataclasses import replace

    from synthprobe.report.reader import rows as read_rows

    (result,) = read_rows(GPT3, "gpt3")
    assert json.loads(GPT3.read_text(encoding="utf-8"))["settings"]["sat_file"].startswith("synthprobe sample")
    fig = gpt3_figures.gpt3_figure([result])
    caveats = [(ax, t) for ax in fig.axes for t in ax.texts if t.get_gid() == "sat-sample-caveat"]
    assert len(caveats) == 1
    ax, text = caveats[0]
    assert ax.get_title().startswith("SAT") and "not the SAT set" in text.get_text()
    # the same rows with the real SAT set (no sample note): no caveat
    rows = tuple(replace(r, paper_note=None) if r.family == "sat" else r for r in result.rows)
    fig = gpt3_figures.gpt3_figure([replace(result, rows=rows)])
    assert not [t for ax in fig.axes for t in ax.texts if t.get_gid() == "sat-sample-caveat"]


# --- probes: baselines and variety beside the headline figures -----------------------------

EVIL = "<script>alert(1)</script>"


def _probe_env():
    import os

    return {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def test_copy_baseline_of_the_shipped_grammar_set_is_71_5():
    from synthprobe.probes.grammar import copy_baseline
    from synthprobe.probes.items import load_grammar

    items = [g for g in load_grammar() if g.output is None and g.reference is not None]
    assert round(copy_baseline([g.input for g in items], [g.reference for g in items]), 1) == 71.5


def test_distinct_n_and_shared_frames_see_one_template_sentence():
    from synthprobe.probes.novel_words import distinct_n, shared_frames

    same = ["We saw a farduddle.", "We saw a yalubalu.", "We saw a screeg."]
    varied = [
        "The kids began to farduddle on the bed.",
        "A yalubalu grows by the river.",
        "He screeged at the door all night.",
    ]
    assert shared_frames(same, ["farduddle", "yalubalu", "screeg"]) == 3
    assert shared_frames(varied, ["farduddle", "yalubalu", "screeg"]) == 0
    assert distinct_n(same, 2) < 0.6 < distinct_n(varied, 2) == 1.0
    assert distinct_n(same, 1) == pytest.approx(6 / 12) and distinct_n([""], 1) is None


@pytest.mark.slow
def test_grammar_probe_reports_the_copy_baseline_in_json_and_html(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "g"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "probe",
            "grammar",
            "--model",
            "smollm2-135m-instruct",
            "--out",
            str(out),
            "--max-new-tokens",
            "24",
            "--no-chain",
            "--quiet",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env=_probe_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    s = json.loads((out / "grammar.json").read_text(encoding="utf-8"))["summary"]
    assert s["scored"] == 10 and round(s["copy_baseline_chrf"], 1) == 71.5
    html = (out / "grammar.html").read_text(encoding="utf-8")
    assert f"{s['chrf']:.2f} (copy-the-input baseline: 71.53)" in html
    assert "copy-the-input baseline 71.53" in proc.stdout


@pytest.mark.slow
def test_novel_words_probe_reports_distinct_n_in_json_and_html(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "n"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "probe",
            "novel-words",
            "--model",
            "smollm2-135m-instruct",
            "--out",
            str(out),
            "--max-new-tokens",
            "24",
            "--quiet",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env=_probe_env(),
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "novel_words.json").read_text(encoding="utf-8"))
    s = doc["summary"]
    from synthprobe.probes.novel_words import distinct_n, shared_frames

    gens = [g for r in doc["results"] for g in r["generations"]]
    assert s["distinct_1"] == distinct_n(gens, 1) and s["distinct_2"] == distinct_n(gens, 2)
    assert 0 < s["distinct_1"] <= 1 and 0 < s["distinct_2"] <= 1
    assert s["shared_frame_first_sample"] == shared_frames(
        [r["generations"][0] for r in doc["results"]], [r["word"] for r in doc["results"]]
    )
    html = (out / "novel_words.html").read_text(encoding="utf-8")
    assert f"{s['distinct_1']:.2f} / {s['distinct_2']:.2f}" in html
    assert "share a template sentence" in html and "distinct-1" in proc.stdout


def test_probe_pages_escape_a_hostile_model_name():
    from synthprobe.backends.decoding import Sampling
    from synthprobe.probes import report

    nw = {
        "model": EVIL,
        "items_file": EVIL,
        "seed": 0,
        "sampling": Sampling().to_dict(),
        "demonstrations": [{"word": "zib", "sentence": "A zib."}],
        "results": [
            {
                "word": "zob",
                "prompt": "p",
                "new_text": "n",
                "generations": ["We saw a zob."],
                "uses_word": [True],
                "used_form": ["zob"],
                "finished": [True],
            }
        ],
        "summary": {
            "words": 1,
            "uses_word_first_sample": 1,
            "distinct_1": 1.0,
            "distinct_2": 1.0,
            "shared_frame_first_sample": 0,
        },
    }
    gr = {
        "model": EVIL,
        "items_file": "f",
        "seed": 0,
        "sampling": Sampling().to_dict(),
        "demonstrations": [{"input": "a", "output": "b"}],
        "results": [
            {
                "input": "x",
                "prompt": "p",
                "generations": ["y"],
                "reference": "y",
                "exact_match": [True],
                "chrf": 100.0,
                "finished": [True],
            }
        ],
        "summary": {
            "items": 1,
            "with_reference": 1,
            "scored": 1,
            "chrf": 100.0,
            "exact_match": 1,
            "exact_match_rate": 1.0,
            "copy_baseline_chrf": 40.0,
        },
    }
    for html in (report.novel_words_html(nw), report.grammar_html(gr)):
        assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "1.00 / 1.00" in report.novel_words_html(nw)
    assert "100.00 (copy-the-input baseline: 40.00)" in report.grammar_html(gr)


def test_report_help_says_it_reads_any_results_files_with_examples():
    import subprocess
    import sys

    for argv in (["report", "--help"], ["report", "deeparithmark", "--help"]):
        proc = subprocess.run(
            [sys.executable, "-m", "synthprobe", *argv], capture_output=True, text=True, env=_probe_env(), timeout=120
        )
        assert proc.returncode == 0
        text = " ".join(proc.stdout.split())
        assert "score gpt3" in text and "score deeparithmark" in text, argv
        assert "examples:" in proc.stdout and "synthprobe report results.json --out report/" in proc.stdout, argv
        assert "any mix of files written by" in text and "--out DIR" in text and "--table" in text, argv


# --- Jinja2 pages ---------------------------------------------------------------------------


def test_report_page_is_a_jinja2_template_and_escapes_a_hostile_model_name():
    from dataclasses import replace

    from synthprobe.report.build import render_files
    from synthprobe.report.reader import rows as read_rows
    from synthprobe.templating import environment

    deep = [replace(r, model=EVIL, settings={**r.settings, "dtype": EVIL}) for r in read_rows(DEEP, "deeparithmark")]
    gpt3 = read_rows(GPT3, "gpt3", required=False)
    gpt3 = [replace(g, model=EVIL) for g in gpt3]
    files = render_files({"deeparithmark": deep, "gpt3": gpt3}, sources=[EVIL], title=EVIL, progress=False)
    html = files["index.html"].decode("utf-8")
    assert "<script>" not in html and html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 6
    assert "&amp;lt;" not in html  # escaped once, not twice
    assert html.startswith("<!DOCTYPE html>") and '<section id="depth">' in html
    assert 'font: 15px/1.5 -apple-system, "Segoe UI"' in html  # the CSS is not escaped
    # the templates ship as package resources, with autoescape on
    env = environment()
    assert env.autoescape is True
    assert {"report.html", "report_parts.html", "grammar.html", "novel_words.html"} <= set(env.list_templates())


def test_a_headline_below_chance_is_marked_blue_with_a_down_arrow_not_alarm_red():
    """The 2026-10 file's 21.80 % is significantly below chance (p < 0.05): a finding about the
    model, so its Deep cell carries the blue ▼ mark, which the lead explains, never the red that
    the validity verdicts use for a failure."""
    (r,) = read_rows(DEEP_2026_10, "deeparithmark")
    assert r.acc_norm < r.chance and r.p_value < 0.05
    html = render_deep(DEEP_2026_10)
    board = re.search(r'<section id="leaderboard">(.*?)</section>', html, re.S).group(1)
    assert f'<span class="sig-below">{100 * r.acc_norm:.2f} %</span>' in board
    assert "a green ▲ / blue ▼ marks a score significantly above / below chance" in board
    rules = dict(re.findall(r"^(\.[\w-]+(?:::after)?) \{ (.*?) \}$", page.css(), re.M))
    assert "#2f5597" in rules[".sig-below"] and "#a3281b" not in rules[".sig-below"]
    assert "25BC" in rules[".sig-below::after"] and "25B2" in rules[".sig-above::after"]
