"""Every output of the report says which metric it shows: a letters or free run is reported as
accuracy of the answers read back (never acc_norm, no soft, no p-value for free), each protocol
in its own table with its own metric line, the figures agree with the scorer's own row, the run
table gives the outcomes and the rules that read the answers, the item viewer labels a pick that
is no option by its outcome, and files of the older layout still render."""

from __future__ import annotations

import re
from html import unescape

import pytest

from synthprobe.benchmarks.deeparithmark.card import card_cells, card_header
from synthprobe.benchmarks.deeparithmark.report import figures as plots
from synthprobe.benchmarks.deeparithmark.scoring.results import table_row
from synthprobe.cli import main
from synthprobe.report.reader import rows as read_rows
from tests.report.support_generated import LABELS, bench_doc, generated_entry, old_layout, write

DEPTHS = (2, 3, 4, 5)


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    """One file: the committed loglik run, and letters and free runs of the same items."""
    tmp = tmp_path_factory.mktemp("protocols")
    doc = bench_doc()
    ll = doc["models"][0]
    doc["models"] += [generated_entry(ll, "letters"), generated_entry(ll, "free")]
    path = write(tmp / "protocols.json", doc)
    out = tmp / "report"
    assert main(["report", str(path), "--out", str(out), "--table", "csv"]) == 0
    return {
        "doc": doc,
        "path": path,
        "out": out,
        "html": (out / "index.html").read_text(encoding="utf-8"),
        "md": (out / "leaderboard.md").read_text(encoding="utf-8"),
    }


def _md_table(md: str, after: str) -> tuple[list[str], list[list[str]]]:
    lines = md[md.index(after) :].splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| Model |"))
    head = [c.strip() for c in lines[start].strip("|").split(" | ")]
    rows = []
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in ln.strip("|").split(" | ")])
    return head, rows


def test_each_protocol_has_its_own_table_under_its_own_metric(three):
    md, html = three["md"], three["html"]
    heads = re.findall(r"^### (.+)$", md, re.M)
    assert heads == [
        "acc_norm: the ending with the highest mean log-likelihood per token",
        LABELS["letters"],
        LABELS["free"],
    ]
    for text in heads:
        assert f"<h3>{text}</h3>" in unescape(html)
    ll_head, _ = _md_table(md, heads[0])
    letters_head, letters_rows = _md_table(md, heads[1])
    free_head, free_rows = _md_table(md, heads[2])
    assert "soft" in ll_head and "soft" not in letters_head and "soft" not in free_head
    assert letters_head[:5] == ["Model", "Params", "n", "Deep", "answered"]
    assert letters_head[-4:] == ["unparsed", "inconsistent", "echo", "cut off"]
    # a free answer has no chance level: no p-value on the page, as in the scorer's own table
    assert free_rows[0][free_head.index("p vs chance")] == "—"
    assert letters_rows[0][letters_head.index("p vs chance")] != "—"
    # nothing of a generated run is called acc_norm: its paragraph names accuracy
    generated_part = md[md.index(heads[1]) :]
    assert "acc_norm" not in generated_part


def test_the_report_and_the_scorer_agree_on_every_figure(three):
    """Each generated row's cells are the scorer's own row's (``card.card_cells``, as the CLI
    prints them): Deep, d2-d5, p and the outcome shares."""
    md = three["md"]
    for entry, label in zip(three["doc"]["models"][1:], ("letters", "free")):
        row = table_row(entry)
        cli = dict(
            zip(card_header(DEPTHS, compare=False, answers=True), card_cells(row, DEPTHS, compare=False, answers=True))
        )
        head, rows = _md_table(md, LABELS[label])
        (mine,) = [dict(zip(head, r)) for r in rows]
        assert mine["Model"] == cli["Model"] == f"SmolLM2-135M-Instruct (Q4_1 GGUF) [{label}]"
        for col in (
            "Deep",
            "d2 %",
            "d3 %",
            "d4 %",
            "d5 %",
            "p vs chance",
            "unparsed",
            "inconsistent",
            "echo",
            "cut off",
        ):
            assert mine[col] == cli[col], (label, col)
        acc = entry["results"]["deeparithmark"]["extraction"]["answered_accuracy"]
        assert mine["answered"] == f"{100 * acc['correct'] / acc['total']:.2f} %"


def test_figures_name_the_metric_they_plot(three):
    rows = read_rows(three["path"], "deeparithmark")
    loglik = [r for r in rows if r.protocol == "loglik"]
    generated = [r for r in rows if r.generated]
    assert plots.metric_axis(loglik) == "acc_norm (%)" and plots.metric_axis(generated) == "accuracy (%)"
    fig = plots.heatmap_figure(generated)
    assert fig.axes[0].get_title().startswith("accuracy (%) and n per template")
    assert fig.axes[1].get_ylabel() == "accuracy (%)"  # the colour bar
    html = unescape(three["html"])
    assert 'alt="acc_norm / accuracy by depth per model"' in html
    # the free run's cells are never starred or hatched against a chance level it does not have
    free = [r for r in rows if r.protocol == "free"]
    cells = [c for row in plots.template_cells(free, sorted(free[0].by_template)) for c in row if c]
    assert cells and not any(c.significant or c.contains_chance for c in cells)


def test_the_run_table_gives_outcomes_rules_and_accuracy_over_answered_items(three):
    html = unescape(three["html"])
    runs = html[html.index('<section id="runs">') :]
    n = 1000
    # letters: every tenth item unparsed, inconsistent, cut off; free: unparsed, echo, cut off
    assert runs.count(f"{n // 10} (10.0 %, counted wrong)") == 2 + 3 + 1  # unparsed ×2, inconsistent, echo, cut off ×2
    for row in (
        "unparsed answers",
        "inconsistent answers",
        "echo answers",
        "cut off answers",
        "read by rule",
        "accuracy over answered items",
        "checkpoint",
        "weights fingerprint",
    ):
        assert f'<td class="l">{row}</td>' in runs, row
    assert "strict 80 % · lax 0 % · last 0 % · value 0 % · unparsed 20 %" in runs  # letters
    assert "strict 70 % · lax 0 % · last 10 % · value 0 % · unparsed 20 %" in runs  # free
    for entry in three["doc"]["models"][1:]:
        acc = entry["results"]["deeparithmark"]["extraction"]["answered_accuracy"]
        assert f"{100 * acc['correct'] / acc['total']:.1f} % ({acc['correct']}/{acc['total']})" in runs


def test_paper_tables_carry_each_rows_metric_and_outcomes(three):
    import csv

    rows = list(csv.DictReader((three["out"] / "tables" / "leaderboard.csv").open(encoding="utf-8")))
    by_metric = {r["Model"]: r for r in rows}
    letters = by_metric["SmolLM2-135M-Instruct (Q4_1 GGUF) [letters]"]
    assert letters["metric"] == "accuracy" and letters["soft"] == "" and float(letters["inconsistent"]) == 10.0
    assert by_metric["SmolLM2-135M-Instruct (Q4_1 GGUF) [free]"]["p vs chance"] == ""
    assert by_metric["SmolLM2-135M-Instruct (Q4_1 GGUF)"]["metric"] == "acc_norm"


def test_the_viewer_labels_a_pick_that_is_no_option_by_its_outcome(three, tmp_path):
    import json
    import subprocess

    from viewer_support import page_data

    data = page_data((three["out"] / "items.html").read_text(encoding="utf-8"))
    _, letters, free = data["runs"]
    assert [r.get("oc") for r in letters[:4]] == ["unparsed", "inconsistent", "cut_off", "answered"]
    assert [r.get("rule") for r in free[:4]] == ["unparsed", "last", "unparsed", "strict"]
    assert free[3]["p"] == -1 and free[3]["parsed"] == 999999 and letters[3]["p"] >= 0
    # the viewer's own script labels them (run under node on the page's data)
    script = (three["out"] / "items.html").read_text(encoding="utf-8")
    js = script[script.index("function mistakeOf") : script.index("function pickText")]
    outcome = script[script.index("var OUTCOME") : script.index("function mistakeOf")]
    probe = tmp_path / "probe.js"
    probe.write_text(
        f"var D = {json.dumps(data)}; var items = D.items;\n{outcome}\n{js}\n"
        "console.log(JSON.stringify(D.runs.slice(1).map(function (rs) "
        "{ return rs.slice(0, 5).map(mistakeOf); })));",
        encoding="utf-8",
    )
    labels = json.loads(subprocess.run(["node", str(probe)], capture_output=True, text=True, check=True).stdout)
    assert labels[0][:3] == [
        "no answer parsed",
        "inconsistent: letter and value name different options",
        "cut off before it stated an answer",
    ]
    assert labels[1][:4] == [
        "no answer parsed",
        "echo: repeats a number of the question",
        "cut off before it stated an answer",
        "value matches no option",
    ]
    assert labels[0][3] == data["items"][letters[3]["i"]]["mistakes"][letters[3]["p"]]


def test_a_file_of_the_older_layout_still_renders_as_accuracy(tmp_path):
    doc = bench_doc()
    ll = doc["models"][0]
    doc["models"] = [ll, old_layout(generated_entry(ll, "letters")), old_layout(generated_entry(ll, "free"))]
    path = write(tmp_path / "old.json", doc)
    assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 0
    rows = {r.protocol: r for r in read_rows(path, "deeparithmark")}
    assert rows["letters"].metric == rows["free"].metric == "accuracy" and rows["loglik"].metric == "acc_norm"
    assert rows["letters"].metric_label == LABELS["letters"] and rows["free"].p_value is None
    assert rows["letters"].soft is None and rows["loglik"].soft is not None
    md = (tmp_path / "r" / "leaderboard.md").read_text(encoding="utf-8")
    head, free_rows = _md_table(md, LABELS["free"])
    assert free_rows[0][head.index("p vs chance")] == "—" and "soft" not in head
    # the viewer reads the older records' picks
    from viewer_support import page_data

    data = page_data((tmp_path / "r" / "items.html").read_text(encoding="utf-8"))
    assert sum(r["ok"] for r in data["runs"][1]) == rows["letters"].overall.correct


def test_a_free_run_alone_claims_no_chance_level(tmp_path):
    doc = bench_doc()
    doc["models"] = [generated_entry(doc["models"][0], "free")]
    path = write(tmp_path / "free.json", doc)
    assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 0
    html = unescape((tmp_path / "r" / "index.html").read_text(encoding="utf-8"))
    assert '<p class="sub">1 model · 1,000 items · no chance level (free) ·' in html and "chance 25 %" not in html
    fig = plots.depth_figure(read_rows(path, "deeparithmark"))
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert not any(label.startswith("chance") for label in labels) and fig.axes[0].get_ylabel() == "accuracy (%)"
    # depth cells give n, no p against a chance level
    depth = html[html.index('<section id="depth">') :]
    assert "no chance level" in depth and "Holm p" not in depth[: depth.index("</table>")]
