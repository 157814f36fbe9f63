"""`synthprobe report`: results JSON from the real scorer → HTML page, PNG plots, leaderboard.

The results come from `synthprobe score deeparithmark` run on a small Deep Arithmark variant
(built by the real generator) with two tiny randomly initialised Llamas that use the
embedded model's tokenizer, so every section is fed by the scorer's actual output.
"""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from scoring_support import embedded_tokenizer

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.report.build import build_report
from synthprobe.report.reader import rows as read_rows

SECTIONS = ("leaderboard", "depth", "templates", "mistakes", "ranks", "runs")
PNGS = ("depth_curve.png", "template_heatmap.png", "mistake_profile.png", "rank_preference.png")
#: the 48-item test files offer no wrong option 10 times in any template: no mistake panels
SMALL_PNGS = tuple(n for n in PNGS if n != "mistake_profile.png")


def tiny_llamas(folder: Path, seeds: tuple[int, ...]) -> list[Path]:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    # the embedded model's tokenizer from the dequantised cache (parsing it out of the GGUF file
    # again would take ~10 s of the module's set-up)
    tok = embedded_tokenizer()
    out = []
    for seed in seeds:
        torch.manual_seed(seed)
        cfg = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=48 + 16 * (seed % 3),
            intermediate_size=96,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            tie_word_embeddings=True,
        )
        path = folder / f"tiny-llama-{seed}"
        LlamaForCausalLM(cfg).save_pretrained(path)
        tok.save_pretrained(path)
        out.append(path)
    return out


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict[str, Path]:
    """Two results files from the real scorer: two models with an ArithMark-format comparison
    file (a second small variant stands in for ArithMark 3.0, which is not shipped), and one
    model alone."""
    from synthprobe.benchmarks.deeparithmark.build import build

    root = tmp_path_factory.mktemp("report")
    data = root / "deeparithmark-small.jsonl"
    build(data, seed=5, n=48, progress=False)
    other = root / "arithmark-format.jsonl"
    build(other, seed=6, n=16, progress=False)
    a, b, c = tiny_llamas(root, (1, 2, 3))
    two = root / "two_models.json"
    one = root / "one_model.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(data),
                "--model",
                str(a),
                "--model",
                str(b),
                "--compare",
                "--compare-data",
                str(other),
                "--save-predictions",
                "--output",
                str(two),
            ]
        )
        == 0
    )
    assert main(["score", "deeparithmark", "--data", str(data), "--model", str(c), "--output", str(one)]) == 0
    return {"two": two, "one": one, "root": root}


@pytest.fixture(scope="module")
def reports(scored) -> dict[str, Path]:
    """The report of the one-model file, and of both files (three models), built once."""
    one = scored["root"] / "report-one"
    many = scored["root"] / "report-many"
    build_report([scored["one"]], one, progress=False)
    assert main(["report", str(scored["two"]), str(scored["one"]), "--out", str(many)]) == 0
    return {"one": one, "many": many}


def html_of(out: Path) -> str:
    return (out / "index.html").read_text(encoding="utf-8")


def check_self_contained(html: str) -> None:
    assert "<script" not in html.lower() and "<link" not in html.lower()
    for url in re.findall(r'(?:src|href)="([^"#]+)"', html):
        # an embedded figure, or the item viewer beside the page in the same folder
        assert url.startswith("data:image/png;base64,") or url == "items.html", url
    assert "http://" not in html and "https://" not in html


def embedded_pngs(html: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)]


def test_one_model_report_has_every_section(reports):
    out = reports["one"]
    html = html_of(out)
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html, sid
    check_self_contained(html)
    pngs = embedded_pngs(html)
    # the single-model file has no per-item predictions, but the summary carries the rank
    # preference and mistake profile; on 48 items no template offers a wrong option 10 times, so
    # the mistake profile is its table alone, and the page says why there are no panels
    assert len(pngs) == 3 and not (out / "mistake_profile.png").exists()
    assert "No mistake panels: no template offered a wrong option 10 times" in html
    for name in SMALL_PNGS:
        data = (out / name).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        assert data in pngs  # the page embeds exactly the written files
        assert b"tEXt" not in data and b"iTXt" not in data  # no Software / time stamp
    from PIL import Image

    with Image.open(io.BytesIO((out / "depth_curve.png").read_bytes())) as im:
        assert im.size[0] > 500 and im.size[1] > 300


def test_leaderboard_matches_the_scorers_own_table(scored, reports):
    out = reports["many"]
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    header = "| Model | Params | n | Deep | soft | d2 % | d3 % | d4 % | d5 % | ArithMark-3 | Δ | p vs chance |"
    assert header in md
    rows = {
        line.split(" | ")[0].lstrip("| "): line.strip("|").split(" | ")
        for line in md.splitlines()
        if line.startswith("| tiny-llama") and " − " not in line
    }
    assert len(rows) == 3
    for path in (scored["two"], scored["one"]):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for entry in doc["models"]:
            row = entry["row"]  # the scorer's own percentages
            cells = [c.strip() for c in rows[row["model"]]]
            del cells[2]  # n, which the scorer's own table does not print
            assert cells[2] == f"{row['deep']:.2f} %"
            assert cells[3] == f"{row['soft']:.2f} %"
            assert cells[4:8] == [f"{row[f'd{d}']:.1f}" for d in (2, 3, 4, 5)]
            if row["arithmark3"] is None:
                assert cells[8] == "—" and cells[9] == "—"
            else:
                assert cells[8] == f"{row['arithmark3']:.2f} %"
                assert float(cells[9].replace("−", "-")) == pytest.approx(row["delta"], abs=0.006)
    html = html_of(out)
    for sid in SECTIONS:
        assert f'<section id="{sid}">' in html, sid
    for name in ("tiny-llama-1", "tiny-llama-2", "tiny-llama-3"):
        assert html.count(name) >= 4  # leaderboard, depth table, mistakes, ranks, runs
    check_self_contained(html)
    assert len(embedded_pngs(html)) == 4  # three figures (no mistake panels on 48 items) and the paired differences
    assert "Not one test set" not in html  # both files scored the same data


def test_mistake_profile_and_rank_preference_come_from_the_results(scored, reports):
    [first, _] = read_rows(scored["two"], "deeparithmark")
    summary = json.loads(scored["two"].read_text(encoding="utf-8"))["models"][0]["results"]["deeparithmark"]["summary"]
    assert list(first.rank_picks) == summary["rank_preference"]["chosen_rank_counts"]
    assert sum(first.rank_picks) == first.overall.n
    for template, block in summary["mistake_profile"].items():
        got = {mc.source: (mc.offered, mc.chosen) for mc in first.mistakes[template]}
        assert got == {s: (v["offered"], v["chosen"]) for s, v in block["sources"].items()}
    # per template, the page names the wrong option picked most often among those offered at
    # least 10 times, and says so when none was offered that often
    from synthprobe.benchmarks.deeparithmark.report.section import preferred_mistake

    html = html_of(reports["many"])
    for _template, rows in first.mistakes.items():
        wrong = [mc for mc in rows if mc.source != "correct" and mc.offered >= 10]
        top, enough = preferred_mistake(rows)
        if wrong:
            assert enough and top == max(wrong, key=lambda mc: (mc.rate, mc.chosen, mc.source))
        else:
            assert not enough
        if top is not None:
            assert f"chosen {top.chosen} of {top.offered} times offered" in html
    # each template's depth is known (from the predictions), so the heat-map labels are complete
    assert all(first.template_depth.get(t) in (2, 3, 4, 5) for t in first.by_template)


@pytest.mark.fresh_figures
def test_reruns_are_byte_identical(scored, reports, tmp_path):
    a, b = reports["many"], tmp_path / "b"
    build_report([scored["two"], scored["one"]], b, progress=False)
    names = sorted(p.name for p in a.iterdir())
    assert (
        names
        == sorted(p.name for p in b.iterdir())
        == sorted(["index.html", "leaderboard.md", "items.html", "comparison.png", *SMALL_PNGS])
    )
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def _write(path: Path, doc) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_bad_results_are_located_and_nothing_is_written(scored, tmp_path, capsys):
    good = json.loads(scored["one"].read_text(encoding="utf-8"))
    out = tmp_path / "out"

    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "synthprobe/deeparithmark-results",\n  "models": [1,]\n}', encoding="utf-8")
    with pytest.raises(InputError) as err:
        build_report([scored["one"], broken], out)
    assert err.value.line == 2 and str(broken) in str(err.value)

    other = _write(tmp_path / "other.json", {**good, "schema": "lm-eval"})
    with pytest.raises(InputError) as err:
        build_report([other], out)
    assert err.value.field == "schema"

    bad = json.loads(json.dumps(good))
    bad["models"][0]["results"]["deeparithmark"]["summary"]["by_depth"]["3"]["correct"] = "7"
    with pytest.raises(InputError) as err:
        build_report([_write(tmp_path / "bad.json", bad)], out)
    assert err.value.field == "models[0].results.deeparithmark.summary.by_depth.3.correct"

    bad = json.loads(json.dumps(good))
    block = bad["models"][0]["results"]["deeparithmark"]["summary"]["metrics"]["acc_norm"]
    block["correct"] = block["total"] + 1
    with pytest.raises(InputError, match="correct <= total"):
        build_report([_write(tmp_path / "bad2.json", bad)], out)

    bad = json.loads(json.dumps(good))
    del bad["models"][0]["model"]["name"]
    assert main(["report", str(_write(tmp_path / "bad3.json", bad)), "--out", str(out)]) == 2
    assert "models[0].model.name" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert not out.exists()


def test_cli_subcommand_form_and_help(scored, reports, tmp_path, capsys):
    # `synthprobe report deeparithmark FILES` is the same command as `synthprobe report FILES`
    out = tmp_path / "sub"
    assert main(["report", "deeparithmark", str(scored["one"]), "--out", str(out)]) == 0
    assert (out / "index.html").read_bytes() == (reports["one"] / "index.html").read_bytes()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["report", "deeparithmark", "--help"])
    text = capsys.readouterr().out
    assert "index.html" in text and "leaderboard.md" in text and "docs/command-line.md" in text
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert capsys.readouterr().out == text  # the verb shows the command's own help
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert main(["report", str(scored["one"]), "--out", str(a_file)]) == 2


def test_results_on_different_data_are_flagged(scored):
    from synthprobe.report.page import render

    [res] = read_rows(scored["one"], "deeparithmark")
    doc = json.loads(scored["one"].read_text(encoding="utf-8"))
    doc["datasets"]["deeparithmark"]["sha256"] = "0" * 64
    other = scored["root"] / "other-data.json"
    other.write_text(json.dumps(doc), encoding="utf-8")
    html = render({"deeparithmark": [res, *read_rows(other, "deeparithmark")]}, {}, sources=["a", "b"])
    assert "Not one test set" in html


def test_same_model_in_two_files_is_told_apart(scored, tmp_path):
    from synthprobe.benchmarks.deeparithmark.report.table import markdown
    from synthprobe.report.sections import unique_names

    copy = tmp_path / "copy.json"
    shutil.copy(scored["one"], copy)
    md = markdown(
        unique_names(read_rows(scored["one"], "deeparithmark") + read_rows(copy, "deeparithmark"), "deeparithmark")
    )
    assert "tiny-llama-3 (one_model.json)" in md and "tiny-llama-3 (copy.json)" in md


def test_title_heads_the_page_and_the_leaderboard(scored, reports, tmp_path):
    # without --title each file keeps its own heading
    assert (reports["one"] / "leaderboard.md").read_text(encoding="utf-8").startswith("# Deep Arithmark leaderboard\n")
    assert "<h1>Deep Arithmark report</h1>" in html_of(reports["one"])
    out = tmp_path / "titled"
    assert main(["report", str(scored["one"]), "--out", str(out), "--title", "Tiny | <models>"]) == 0
    assert (out / "leaderboard.md").read_text(encoding="utf-8").startswith("# Tiny | <models>\n")
    html = html_of(out)
    assert "<title>Tiny | &lt;models&gt;</title>" in html and "<h1>Tiny | &lt;models&gt;</h1>" in html


DA_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"


def test_depth_tiers_must_add_up_to_the_total(tmp_path):
    doc = json.loads(DA_BENCH.read_text(encoding="utf-8"))
    summary = doc["models"][0]["results"]["deeparithmark"]["summary"]
    summary["by_depth"]["3"]["n"] -= 1  # one item lost from a tier
    bad = _write(tmp_path / "bad-depths.json", doc)
    with pytest.raises(InputError, match=r"depth tiers hold 999 items .* total 1000") as err:
        read_rows(bad, "deeparithmark")
    assert err.value.field == "models[0].results.deeparithmark.summary.by_depth"
    assert str(bad) in str(err.value)
    summary["by_depth"]["3"]["n"] += 1
    summary["by_depth"]["3"]["correct"] += 1  # same items, one more correct than the total says
    with pytest.raises(InputError, match=r"\(230 correct\), but metrics.acc_norm has total 1000 \(229 correct\)"):
        read_rows(_write(tmp_path / "bad-correct.json", doc), "deeparithmark")
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "bad-correct.json"), "--out", str(out)]) == 2
    assert not out.exists()


def test_rank_title_says_balanced_only_when_the_file_is(tmp_path):
    from synthprobe.benchmarks.deeparithmark.report.figures import rank_balance_note, rank_balanced

    doc = json.loads(DA_BENCH.read_text(encoding="utf-8"))
    rp = doc["models"][0]["results"]["deeparithmark"]["summary"]["rank_preference"]
    assert rp["answer_rank_counts"] == [248, 252, 248, 252]
    [res] = read_rows(DA_BENCH, "deeparithmark")
    assert res.answer_ranks == (248, 252, 248, 252) and rank_balanced(res) is True
    assert rank_balance_note([res]) == "answers are rank-balanced"

    rp["answer_rank_counts"] = [400, 200, 200, 200]  # the answer is the smallest option 40 % of the time
    [skewed] = read_rows(_write(tmp_path / "skewed.json", doc), "deeparithmark")
    assert rank_balanced(skewed) is False
    assert rank_balance_note([skewed]) == "answer ranks are NOT balanced in these results"
    assert rank_balance_note([res, skewed]) == "answer ranks are NOT balanced in these results"

    del rp["answer_rank_counts"]
    [unknown] = read_rows(_write(tmp_path / "unknown.json", doc), "deeparithmark")
    assert unknown.answer_ranks is None and rank_balanced(unknown) is None
    assert rank_balance_note([unknown]) == "answer ranks not recorded"
    assert rank_balance_note([res, unknown]) == "answer ranks not recorded"

    rp["answer_rank_counts"] = [250, 250, 500]
    with pytest.raises(InputError, match="expected 4 counts") as err:
        read_rows(_write(tmp_path / "short.json", doc), "deeparithmark")
    assert err.value.field == "models[0].results.deeparithmark.summary.rank_preference.answer_rank_counts"


def test_rank_section_words_follow_the_balance(tmp_path):
    from synthprobe.report.build import render_files

    doc = json.loads(DA_BENCH.read_text(encoding="utf-8"))
    rp = doc["models"][0]["results"]["deeparithmark"]["summary"]["rank_preference"]
    rp["answer_rank_counts"] = [400, 200, 200, 200]
    skewed = read_rows(_write(tmp_path / "skewed.json", doc), "deeparithmark")
    html = render_files({"deeparithmark": skewed}, sources=["skewed.json"], progress=False)["index.html"].decode(
        "utf-8"
    )
    ranks = html[html.index('<section id="ranks">') :]
    ranks = ranks[: ranks.index("</section>")]
    assert "is not balanced in these results" in ranks and "rank is balanced in" not in ranks
    assert "40.0 / 20.0 / 20.0 / 20.0 %" in ranks


def test_a_mistake_offered_few_times_is_not_called_preferred():
    from synthprobe.benchmarks.deeparithmark.report.model import MistakeCount
    from synthprobe.benchmarks.deeparithmark.report.section import MIN_OFFERS, preferred_mistake

    assert MIN_OFFERS == 10
    rows = (
        MistakeCount("correct", 30, 9),
        MistakeCount("rare", 3, 3),
        MistakeCount("common", 20, 8),
        MistakeCount("never", 12, 0),
    )
    assert preferred_mistake(rows) == (MistakeCount("common", 20, 8), True)  # 3/3 is too few offers
    only_rare = (MistakeCount("correct", 5, 1), MistakeCount("rare", 3, 2), MistakeCount("rarer", 2, 2))
    assert preferred_mistake(only_rare) == (MistakeCount("rarer", 2, 2), False)
    assert preferred_mistake((MistakeCount("correct", 5, 5),)) == (None, False)


def test_mistake_table_marks_too_few_offers(tmp_path):
    from synthprobe.report.page import render

    [res] = read_rows(DA_BENCH, "deeparithmark")
    t = "measure_cm_cut"
    few = {
        **res.mistakes,
        t: tuple(type(mc)(mc.source, min(mc.offered, 4), min(mc.chosen, 4)) for mc in res.mistakes[t]),
    }
    import dataclasses

    html = render({"deeparithmark": [dataclasses.replace(res, mistakes=few)]}, {}, sources=["x"])
    row = html[html.index(f"{t} <span") :]
    row = row[: row.index("</tr>")]
    assert "too few offers to name a preference" in row
    # the unchanged templates still name their preferred mistake
    assert html.count("too few offers to name a preference") == 1


def test_heatmap_labels_do_not_overlap_with_many_long_names():
    import dataclasses

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from synthprobe.benchmarks.deeparithmark.report.figures import heatmap_figure

    [res] = read_rows(DA_BENCH, "deeparithmark")
    for m in (3, 12):
        models = [
            dataclasses.replace(res, model=f"organisation-{i}/A-Rather-Long-Model-Name-{i}B-Instruct (Q4_K_M GGUF)")
            for i in range(m)
        ]
        fig = heatmap_figure(models)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        renderer = canvas.get_renderer()
        ax = fig.axes[0]
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
        assert len(boxes) == m
        for a, b in zip(boxes, boxes[1:]):
            assert a.x1 <= b.x0, (m, a, b)  # left to right, no overlap
        figure_box = fig.bbox
        for b in boxes + [t.get_window_extent(renderer) for t in ax.get_yticklabels()]:
            assert b.x0 >= 0 and b.y0 >= 0 and b.x1 <= figure_box.x1 and b.y1 <= figure_box.y1


# --- GPT-3 synthetic-task results ------------------------------------------------------------

GPT3_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
DA_PNGS = PNGS


def wilson_percent(correct: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval in percent, from its textbook formula (an oracle
    independent of the report's scipy-based helper)."""
    import math

    z = 1.959963984540054
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return 100 * max(0.0, centre - half), 100 * min(1.0, centre + half)


def paper_text(cell: dict) -> str:
    v = cell["value"]
    return (f"{v:.1f}" if v >= 10 else f"{v:.2f}") + ("†" if cell.get("doubtful") else "")


def md_table(md: str, first_header: str) -> list[list[str]]:
    """The Markdown table whose header starts with ``first_header``, as rows of cells."""
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"| {first_header} |"))
    rows = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]])
    return rows


def section(html: str, sid: str) -> str:
    part = html[html.index(f'<section id="{sid}">') :]
    return part[: part.index("</section>")]


def gpt3_html_rows(html: str) -> dict[tuple[str, str], str]:
    """(task, setting) → the HTML of that row of the GPT-3 table."""
    body = section(html, "gpt3")
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    out = {}
    for tr in body.split("<tr>")[1:]:
        task = re.search(r'<span class="note">([^<]+)</span>', tr).group(1)
        setting = re.findall(r'<td class="l">([^<]*)</td>', tr)[0]
        out[(task, setting)] = tr
    return out


def as_v2(old: dict) -> dict:
    """A one-model GPT-3 file of the earlier layout as the one results document that
    ``synthprobe score gpt3`` writes now (the same model, settings, rows and seconds)."""
    from synthprobe.results import SCHEMA, SCHEMA_VERSION

    entry = {
        "model": old["model"],
        "settings": old["settings"],
        "results": {"gpt3": {"rows": old["results"]}},
        "seconds": old["seconds"],
    }
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "synthprobe": old.get("synthprobe"),
        "command": old.get("command"),
        "models": [entry],
    }


def rows_of(doc: dict) -> list[dict]:
    return doc["models"][0]["results"]["gpt3"]["rows"]


@pytest.fixture(scope="module")
def gpt3_old() -> dict:
    """The committed GPT-3 file as it is on disk (the earlier one-model layout)."""
    return json.loads(GPT3_BENCH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def gpt3_doc(gpt3_old) -> dict:
    """The committed GPT-3 file in the layout ``synthprobe score gpt3`` writes now."""
    return as_v2(gpt3_old)


@pytest.mark.fresh_figures  # it reruns the report: the same bytes again
def test_gpt3_only_report_shows_the_files_numbers(gpt3_doc, tmp_path):
    src = tmp_path / GPT3_BENCH.name
    shutil.copy(GPT3_BENCH, src)
    out = tmp_path / "report"
    assert main(["report", str(src), "--out", str(out)]) == 0
    # the file keeps every item's generation, so the item viewer comes with it
    assert sorted(p.name for p in out.iterdir()) == ["gpt3_curves.png", "index.html", "items.html", "leaderboard.md"]
    html = html_of(out)
    check_self_contained(html)
    # no Deep Arithmark sections without Deep Arithmark files
    assert re.findall(r'<section id="([^"]+)">', html) == ["gpt3", "items", "runs"]
    assert "<h1>GPT-3 synthetic tasks report</h1>" in html
    png = (out / "gpt3_curves.png").read_bytes()
    assert embedded_pngs(html) == [png] and b"tEXt" not in png
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        assert im.size[0] > 1000 and im.size[1] > 800

    rows = rows_of(gpt3_doc)
    model = gpt3_doc["models"][0]["model"]
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert md.startswith("# GPT-3 synthetic tasks leaderboard\n")
    table = md_table(md, "Task")
    head, body = table[0], table[2:]
    sizes = list(rows[0]["paper"])
    assert head == (["Task", "Setting", "K", f"{model['name']} (135 M)"] + [f"GPT-3 {s}" for s in sizes] + ["Note"])
    assert len(body) == len(rows) == 48
    html_rows = gpt3_html_rows(html)
    assert len(html_rows) == len(rows)
    for row, cells in zip(rows, body):  # the file's order: arithmetic, words, SAT; zero, one, few
        lo, hi = wilson_percent(row["correct"], row["n"])
        score = f"{row['accuracy']:.1f} [{lo:.1f}, {hi:.1f}] n={row['n']}"
        if row.get("lands"):  # none for SAT scored on the shipped sample
            score += f"; lands {row['lands']}"
        assert cells[:4] == [row["code"], row["setting"], str(row["k"]), score], row["task"]
        assert cells[4:-1] == [paper_text(row["paper"][s]) for s in sizes], row["task"]
        if row.get("paper_note"):
            assert row["paper_note"] in cells[-1]
        tr = html_rows[(row["task"], row["setting"])]
        assert f"<b>{row['accuracy']:.1f}</b> [{lo:.1f}, {hi:.1f}]" in tr
        assert f"{row['correct']}/{row['n']}" in tr
        from markupsafe import escape  # the escaping Jinja2 applies (' as &#39;)

        if row.get("lands"):
            assert f"lands {escape(row['lands'])}" in tr
        else:
            assert "lands" not in tr
        tds = [re.sub(r"<[^>]+>", "", td) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        assert tds[4:-1] == [paper_text(row["paper"][s]) for s in sizes]  # smallest size first
        if row.get("paper_note"):
            assert escape(row["paper_note"]) in tr
    # spot checks against figures worked out by hand: SAT zero-shot 6 of 16 (the shipped sample: no
    # size verdict); 2D+ few-shot 1 of 10
    sat = next(c for c in body if c[0] == "SAT" and c[1] == "zero")
    assert sat[3] == "37.5 [18.5, 61.4] n=16"
    two = next(c for c in body if c[0] == "2D+" and c[1] == "few")
    assert two[3].startswith("10.0 [1.8, 40.4] n=10")
    # the SAT few-shot prompts held 15 demonstrations, not the 20 asked for
    sat_few = next(c for c in body if c[0] == "SAT" and c[1] == "few")
    assert "K used: mean 15" in sat_few[-1]
    # rerun: byte-identical
    again = tmp_path / "again"
    build_report([src], again, progress=False)
    for name in ("index.html", "leaderboard.md", "gpt3_curves.png"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_mixed_report_of_both_committed_benchmarks(gpt3_doc, tmp_path):
    da_doc = json.loads(DA_BENCH.read_text(encoding="utf-8"))
    out = tmp_path / "mixed"
    paths = sorted([str(DA_BENCH), str(GPT3_BENCH)])
    assert main(["report", *paths, "--out", str(out), "--title", "Both benchmarks"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["index.html", "leaderboard.md", "gpt3_curves.png", "items.html", *DA_PNGS]
    )
    html = html_of(out)
    check_self_contained(html)
    assert re.findall(r'<section id="([^"]+)">', html) == [*SECTIONS[:-1], "gpt3", "items", "runs"]
    assert len(embedded_pngs(html)) == 5
    assert sorted(embedded_pngs(html)) == sorted((out / n).read_bytes() for n in ["gpt3_curves.png", *DA_PNGS])

    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert md.startswith("# Both benchmarks\n")
    assert md.index("## Deep Arithmark") < md.index("## GPT-3 synthetic tasks")
    da_row = da_doc["models"][0]["row"]
    [deep] = md_table(md, "Model")[2:]
    assert deep[0] == da_row["model"] and deep[3] == f"{da_row['deep']:.2f} %"
    assert deep[5:9] == [f"{da_row[f'd{d}']:.1f}" for d in (2, 3, 4, 5)]
    gpt3 = md_table(md, "Task")[2:]
    assert len(gpt3) == len(rows_of(gpt3_doc))
    for row, cells in zip(rows_of(gpt3_doc), gpt3):
        lo, hi = wilson_percent(row["correct"], row["n"])
        assert cells[3].startswith(f"{row['accuracy']:.1f} [{lo:.1f}, {hi:.1f}] n={row['n']}")
    # both parts of the page carry their own numbers
    assert f"{da_row['deep']:.2f} %" in section(html, "leaderboard")
    rows = gpt3_html_rows(html)
    sat = rows[("sat_analogies", "zero")]
    assert "<b>37.5</b> [18.5, 61.4]" in sat and "6/16" in sat
    # the Deep Arithmark rank section still speaks from its own file (balanced answer ranks)
    assert "is balanced in these results" in section(html, "ranks")
    # the link to the item viewer counts what the viewer holds: its model columns and every
    # benchmark's answers (not the Deep Arithmark ones alone)
    data = json.loads(
        re.search(
            r'<script type="application/json" id="items-data">(.*?)</script>',
            (out / "items.html").read_text(encoding="utf-8"),
            re.S,
        ).group(1)
    )
    n_models, n_answers = len(data["models"]), sum(len(r) for r in data["runs"])
    assert n_answers > len(da_doc["models"][0]["results"]["deeparithmark"]["predictions"])
    assert f"({n_models} model{'s' if n_models != 1 else ''}, {n_answers:,} answers)" in section(html, "items")


def _variant(doc: dict, **model) -> dict:
    new = json.loads(json.dumps(doc))
    new["models"][0]["model"].update(model)
    return new


def test_gpt3_files_of_several_models_give_one_column_each(gpt3_doc, tmp_path):
    # a second model: other scores (correct and accuracy changed together), one row missing,
    # size unknown; and a third, larger one that scores every row
    other = _variant(gpt3_doc, name="Other | model", params=None)
    for row in rows_of(other):
        if row["setting"] != "few":
            row["correct"] = min(row["n"], row["correct"] + 3)
            row["accuracy"] = round(100 * row["correct"] / row["n"], 4)
    dropped = rows_of(other).pop(0)
    big = _variant(gpt3_doc, name="Big model", params=1_300_000_000)
    for row in rows_of(big):
        row["correct"] = row["n"] // 2
        row["accuracy"] = round(100 * row["correct"] / row["n"], 4)
        row["ci95"] = [0.0, 1.0]  # an interval of the file's own is not what the report shows
    files = [GPT3_BENCH, _write(tmp_path / "other.json", other), _write(tmp_path / "big.json", big)]
    out = tmp_path / "report"
    build_report(files, out, progress=False)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    table = md_table(md, "Task")
    # largest model first, unknown size last
    assert table[0][3:6] == [
        "Big model (1.30 B)",
        f"{gpt3_doc['models'][0]['model']['name']} (135 M)",
        "Other \\| model",
    ]
    by_key = {(c[0], c[1]): c for c in table[2:]}
    for mine, theirs, large in zip(rows_of(gpt3_doc), [None] + rows_of(other), rows_of(big)):
        cells = by_key[(mine["code"], mine["setting"])]
        for cell, row in zip(cells[3:6], (large, mine, theirs)):
            if row is None:
                assert cell == "—"
                continue
            lo, hi = wilson_percent(row["correct"], row["n"])
            assert cell.startswith(f"{100 * row['correct'] / row['n']:.1f} [{lo:.1f}, {hi:.1f}] n={row['n']}")
    assert dropped["task"] == "arithmetic_2da" and by_key[("2D+", "zero")][5] == "—"
    html = html_of(out)
    check_self_contained(html)
    assert "Not one test set" not in html  # same seed, format, check and limits
    assert "Other | model" in section(html, "gpt3")
    # a file scored with another seed is flagged
    reseeded = _variant(gpt3_doc, name="Reseeded")
    reseeded["models"][0]["settings"]["seed"] = 1
    page = render_page([GPT3_BENCH, _write(tmp_path / "reseeded.json", reseeded)])
    assert "Not one test set" in section(page, "gpt3")


def render_page(paths) -> str:
    from synthprobe.report.build import render_files
    from synthprobe.report.reader import rows as read_rows

    gpt3 = [g for p in paths for g in read_rows(p, "gpt3", required=False)]
    return render_files({"gpt3": gpt3}, sources=[str(p) for p in paths], progress=False)["index.html"].decode()


def test_bad_gpt3_results_are_located_and_nothing_is_written(gpt3_doc, gpt3_old, tmp_path, capsys):
    from synthprobe.report.reader import rows as read_rows

    def fails(doc, field, match=None):
        path = _write(tmp_path / "bad.json", doc)
        with pytest.raises(InputError, match=match) as err:
            (read_rows(path, "deeparithmark", required=False), read_rows(path, "gpt3", required=False))
        assert err.value.field == field and str(path) in str(err.value)
        return err.value

    def bad(edit, doc=gpt3_doc):
        doc = json.loads(json.dumps(doc))
        edit(doc)
        return doc

    at = "models[0].results.gpt3.rows"
    fails(bad(lambda d: rows_of(d)[3].update(accuracy=12.5)), f"{at}[3].accuracy", r"100 × correct / n")
    fails(bad(lambda d: rows_of(d)[3].update(correct=rows_of(d)[3]["n"] + 1)), f"{at}[3].correct", "correct <= n")
    fails(bad(lambda d: rows_of(d)[3].update(n=0, correct=0)), f"{at}[3].n", ">= 1")
    fails(bad(lambda d: rows_of(d)[0].update(k=1)), f"{at}[0].k", "setting 'zero' means k = 0")
    fails(bad(lambda d: rows_of(d)[1].update(setting="two")), f"{at}[1].setting", "zero, one, few")
    fails(bad(lambda d: rows_of(d)[0]["paper"].update(huge={"value": 1.0})), f"{at}[0].paper.huge", "model size")
    fails(
        bad(lambda d: rows_of(d)[0]["paper"]["175B"].update(value=176.0)),
        f"{at}[0].paper.175B.value",
        "between 0 and 100",
    )
    fails(bad(lambda d: rows_of(d)[2]["shots"].pop("reduced")), f"{at}[2].shots.reduced", "missing")
    fails(bad(lambda d: rows_of(d)[2]["shots"].update(max=60)), f"{at}[2].shots", "max <= k")
    fails(
        bad(lambda d: rows_of(d).append(rows_of(d)[0])),
        f"{at}[48]",
        r"already scored in models\[0\]\.results\.gpt3\.rows\[0\]",
    )
    fails(bad(lambda d: d["models"][0]["results"]["gpt3"].update(rows=[])), at, "is empty")
    fails(bad(lambda d: d["models"][0]["model"].pop("name")), "models[0].model.name", "missing")
    fails(bad(lambda d: rows_of(d)[5].pop("task")), f"{at}[5].task", "missing")
    # the earlier one-model layout (the committed files): errors at the field as it is on disk
    fails(bad(lambda d: d["results"][3].update(accuracy=12.5), gpt3_old), "results[3].accuracy", r"100 × correct / n")
    fails(bad(lambda d: d.update(results=[]), gpt3_old), "results", "is empty")
    fails(bad(lambda d: d["model"].pop("name"), gpt3_old), "model.name", "missing")
    fails(bad(lambda d: d.update(benchmark="gpt4-synthetic"), gpt3_old), "benchmark", "'gpt3-synthetic'")
    # neither kind: the message names both
    err = fails(bad(lambda d: d.pop("benchmark"), gpt3_old), "schema")
    assert "synthprobe/deeparithmark-results" in str(err) and "gpt3-synthetic" in str(err)

    out = tmp_path / "out"
    broken = _write(tmp_path / "broken.json", bad(lambda d: rows_of(d)[7].update(correct="3")))
    old_broken = _write(tmp_path / "old_broken.json", bad(lambda d: d["results"][7].update(correct="3"), gpt3_old))
    assert main(["report", str(DA_BENCH), str(GPT3_BENCH), str(broken), "--out", str(out)]) == 2
    assert f"{at}[7].correct" in capsys.readouterr().err
    assert main(["report", str(DA_BENCH), str(GPT3_BENCH), str(old_broken), "--out", str(out)]) == 2
    assert "results[7].correct" in capsys.readouterr().err
    assert not out.exists()


def test_gpt3_file_without_paper_figures_or_size(gpt3_doc, tmp_path):
    # a task the paper has no row for, scored by a model of unknown size
    doc = _variant(gpt3_doc, params=None)
    doc["models"][0]["results"]["gpt3"]["rows"] = [
        {k: v for k, v in row.items() if k not in ("paper", "paper_note", "lands")} for row in rows_of(doc)[:3]
    ]
    out = tmp_path / "report"
    build_report([_write(tmp_path / "bare.json", doc)], out, progress=False)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    table = md_table(md, "Task")
    assert table[0] == ["Task", "Setting", "K", gpt3_doc["models"][0]["model"]["name"], "Note"]
    assert [c[3] for c in table[2:]] == ["0.0 [0.0, 7.1] n=50", "4.0 [1.1, 13.5] n=50", "10.0 [1.8, 40.4] n=10"]
    html = html_of(out)
    check_self_contained(html)
    assert "GPT-3 paper" not in section(html, "gpt3").split("<table", 1)[1]
    assert (out / "gpt3_curves.png").read_bytes() in embedded_pngs(html)
