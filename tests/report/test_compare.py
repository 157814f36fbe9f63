"""The report for comparing models: leaderboard order, n column and not-comparable marks,
ArithMark-3/Δ only when measured, the paired-comparison section (one run's block, and models
from different files on the same items), same-name runs told apart, paper-ready tables, and
the figure defects (k/N label contrast, GPT-3 title inside the figure, same-size models apart,
the per-depth table inside a 1,300 px window)."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.report.build import build_report
from synthprobe.report.reader import rows as read_rows

ROOT = Path(__file__).resolve().parents[2]
DA_BENCH = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
GPT3_BENCH = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"


def _deep_doc() -> dict:
    return json.loads(DA_BENCH.read_text(encoding="utf-8"))


def _variant(doc: dict, name: str, flip_every: int = 0) -> dict:
    """The committed model under another name; every ``flip_every``-th wrong item made right
    (the summary's counts follow, so the file stays consistent)."""
    new = copy.deepcopy(doc)
    e = new["models"][0]
    e["model"]["name"] = name
    block = e["results"]["deeparithmark"]
    if flip_every:
        wrong = [p for p in block["predictions"] if not p["correct_acc_norm"]]
        s = block["summary"]
        for p in wrong[::flip_every]:
            p["correct_acc_norm"] = True
            s["metrics"]["acc_norm"]["correct"] += 1
            s["by_depth"][str(p["depth"])]["correct"] += 1
            s["by_template"][p["template"]]["correct"] += 1
        acc = s["metrics"]["acc_norm"]
        acc["acc"] = acc["correct"] / acc["total"]
    return new


def _write(path: Path, doc: dict) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _md_rows(md: str, first: str) -> list[list[str]]:
    lines = md.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"| {first} |"))
    out = []
    for ln in lines[start + 2 :]:
        if not ln.startswith("|"):
            break
        out.append([c.strip() for c in ln.strip("|").split(" | ")])
    return out


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cmp")
    doc = _deep_doc()
    base = _write(tmp / "base.json", _variant(doc, "base"))
    tuned = _write(tmp / "tuned.json", _variant(doc, "tuned", flip_every=3))
    return base, tuned


def test_leaderboard_orders_by_score_with_n_and_no_empty_columns(two_files, tmp_path):
    base, tuned = two_files
    out = tmp_path / "r"
    build_report([base, tuned], out, progress=False)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    head = next(ln for ln in md.splitlines() if ln.startswith("| Model |"))
    assert head == "| Model | Params | n | Deep | soft | d2 % | d3 % | d4 % | d5 % | p vs chance |"  # no ArithMark-3, Δ
    rows = _md_rows(md, "Model")
    assert [r[0] for r in rows] == ["tuned", "base"]  # higher acc_norm first, same size
    assert [r[2] for r in rows] == ["1,000", "1,000"] and "not comparable" not in md
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "ArithMark-3</th>" not in html and "Δ</th>" not in html


def test_rows_on_different_items_are_marked_not_comparable(two_files, tmp_path):
    base, _ = two_files
    small = _deep_doc()
    e = small["models"][0]
    e["model"]["name"] = "small-run"
    e["settings"]["limit"] = 50
    block = e["results"]["deeparithmark"]
    keep = block["predictions"][:50]
    block["predictions"] = keep
    s = block["summary"]
    s["n"] = 50
    s["metrics"]["acc_norm"].update(correct=sum(p["correct_acc_norm"] for p in keep), total=50)
    s["by_depth"] = {
        str(d): {
            "n": sum(p["depth"] == d for p in keep),
            "correct": sum(p["correct_acc_norm"] for p in keep if p["depth"] == d),
        }
        for d in sorted({p["depth"] for p in keep})
    }
    s["by_template"] = {
        t: {
            "n": sum(p["template"] == t for p in keep),
            "correct": sum(p["correct_acc_norm"] for p in keep if p["template"] == t),
        }
        for t in sorted({p["template"] for p in keep})
    }
    s.pop("mistake_profile", None)
    s.pop("rank_preference", None)
    out = tmp_path / "r"
    build_report([base, _write(tmp_path / "small.json", small)], out, progress=False)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    cells = {r[0]: r[2] for r in _md_rows(md, "Model")}
    assert sorted(cells.values()) == ["1,000 · A", "50 · B"] or sorted(cells.values()) == ["1,000 · B", "50 · A"]
    assert "not comparable with each other" in md
    assert "not comparable with each other" in (out / "index.html").read_text(encoding="utf-8")


def test_paired_comparison_across_files(two_files, tmp_path):
    base, tuned = two_files
    out = tmp_path / "r"
    build_report([base, tuned], out, progress=False, tables=["csv"])
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "## Paired comparison" in md and "models from different files" in md
    rows = _md_rows(md, "B − A")
    overall = rows[0]
    preds = _deep_doc()["models"][0]["results"]["deeparithmark"]["predictions"]
    flipped = len([p for p in preds if not p["correct_acc_norm"]][::3])
    assert overall[0] == "tuned − base" and overall[1] == "all" and overall[2] == "1,000"
    assert overall[7] == f"0 / {flipped}"
    assert float(overall[5].replace("−", "-")) == pytest.approx(100 * flipped / 1000, abs=0.01)
    assert [r[1] for r in rows[1:]] == ["depth 2", "depth 3", "depth 4", "depth 5"]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert '<section id="comparison">' in html and "McNemar" in html


def test_one_runs_comparison_block_and_same_names_in_two_files(tmp_path):
    from synthprobe.metrics.compare import compare_models

    doc = _deep_doc()
    second = copy.deepcopy(doc["models"][0])
    doc["models"][0]["model"]["name"] = "final"
    second["model"]["name"] = "final-bf16"
    doc["models"].append(second)
    outcomes = {
        e["model"]["name"]: {p["id"]: p["correct_acc_norm"] for p in e["results"]["deeparithmark"]["predictions"]}
        for e in doc["models"]
    }
    doc["comparisons"] = {"deeparithmark": compare_models(outcomes, metric="acc_norm")}
    for e in doc["models"]:
        del e["results"]["deeparithmark"]["predictions"]
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    paths = [_write(a / "run.json", doc), _write(b / "run.json", doc)]
    out = tmp_path / "r"
    build_report(paths, out, progress=False)
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    names = [r[0] for r in _md_rows(md, "Model")]
    # two runs of the same names from different files: four rows, each with its file's path
    assert len(set(names)) == 4 and all(str(a) in n or str(b) in n for n in names)
    assert md.count("the models of one run") == 2


def test_paper_tables_in_three_formats_never_overwritten(two_files, tmp_path, capsys):
    base, tuned = two_files
    out = tmp_path / "r"
    assert (
        main(
            [
                "report",
                str(base),
                str(tuned),
                str(GPT3_BENCH),
                "--out",
                str(out),
                "--table",
                "csv",
                "--table",
                "latex",
                "--table",
                "markdown",
            ]
        )
        == 0
    )
    names = sorted(p.name for p in (out / "tables").iterdir())
    assert names == sorted(
        f"{t}.{ext}" for t in ("leaderboard", "per_depth", "gpt3", "paired_comparison") for ext in ("csv", "tex", "md")
    )
    # the paired comparison, as numbers, in the paper's LaTeX too: tuned − base overall and per depth
    pairs = list(csv.DictReader(io.StringIO((out / "tables" / "paired_comparison.csv").read_text(encoding="utf-8"))))
    assert [(r["B - A"], r["items"]) for r in pairs] == [
        ("tuned - base", g) for g in ("all", "depth 2", "depth 3", "depth 4", "depth 5")
    ]
    assert float(pairs[0]["Delta (points)"]) > 0 and int(pairs[0]["A only"]) == 0 and int(pairs[0]["B only"]) > 0
    paired_tex = (out / "tables" / "paired_comparison.tex").read_text(encoding="utf-8")
    assert paired_tex.startswith("\\begin{tabular}") and "tuned - base" in paired_tex
    assert len(re.findall(r"\\\\\n", paired_tex)) == len(pairs) + 1
    rows = list(csv.DictReader(io.StringIO((out / "tables" / "leaderboard.csv").read_text(encoding="utf-8"))))
    deep = {r.model: r for r in read_rows(base, "deeparithmark") + read_rows(tuned, "deeparithmark")}
    assert [r["Model"] for r in rows] == ["tuned", "base"]
    for r in rows:
        assert float(r["Deep"]) == pytest.approx(100 * deep[r["Model"]].acc_norm, abs=0.005)
        assert float(r["Deep CI low"]) < float(r["Deep"]) < float(r["Deep CI high"])
    tex = (out / "tables" / "gpt3.tex").read_text(encoding="utf-8")
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex
    g = read_rows(GPT3_BENCH, "gpt3")[0]
    assert len(re.findall(r"\\\\\n", tex)) == len(g.rows) + 1  # header + one line per row
    depth_md = (out / "tables" / "per_depth.md").read_text(encoding="utf-8")
    assert depth_md.count("\n| tuned") == 4
    before = (out / "tables" / "leaderboard.csv").read_bytes()
    assert main(["report", str(base), "--out", str(out), "--table", "csv"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (out / "tables" / "leaderboard.csv").read_bytes() == before


# -- figure defects -----------------------------------------------------------------------------


def _background_at(ax, x: float, y: float):
    """The colour under data point (x, y): the bar drawn there, else the white axes."""
    for patch in ax.patches:
        x0, y0 = patch.get_x(), patch.get_y()
        if x0 <= x <= x0 + patch.get_width() and y0 <= y <= y0 + patch.get_height():
            return patch.get_facecolor()
    return "white"


def test_count_labels_read_on_every_bar():
    from synthprobe.benchmarks.deeparithmark.report.figures import mistake_figure
    from synthprobe.report.figures import contrast

    results = read_rows(DA_BENCH, "deeparithmark")
    base = results[0]
    # bars at 100 %, 90 %, 79 %, 60 %: the long ones carry their label on the bar
    from dataclasses import replace

    from synthprobe.benchmarks.deeparithmark.report.model import MistakeCount

    mistakes = dict(base.mistakes)
    t = next(iter(mistakes))
    mistakes[t] = (
        MistakeCount("correct", 10, 10),
        MistakeCount("dropped_carry", 10, 9),
        MistakeCount("wrong_op", 100, 79),
        MistakeCount("other", 10, 6),
    )
    models = [replace(base, model=f"m{i}", mistakes=mistakes) for i in range(10)]  # every palette colour
    fig = mistake_figure(models)
    checked = 0
    for ax in fig.axes:
        for text in ax.texts:
            if text.get_gid() != "count-label":
                continue
            x, y = text.get_position()
            bg = _background_at(ax, x, y)
            assert contrast(text.get_color(), bg) >= 1.8, (text.get_text(), text.get_color(), bg)
            checked += 1
    assert checked >= 40


def _title_inside(fig) -> bool:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    fb = fig.bbox
    for artist in (fig._suptitle, *fig.legends):  # the title and the legend, whole
        box = artist.get_window_extent(canvas.get_renderer())
        if not (box.x0 >= fb.x0 and box.x1 <= fb.x1 and box.y0 >= fb.y0 and box.y1 <= fb.y1):
            return False
    return True


def test_gpt3_title_inside_the_figure_with_one_task_and_same_size_models_apart():
    from dataclasses import replace

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from synthprobe.benchmarks.gpt3.report.figures import gpt3_figure

    g = read_rows(GPT3_BENCH, "gpt3")[0]
    one = replace(g, rows=tuple(r for r in g.rows if r.code == "2D+" and r.setting == "zero"))
    models = [replace(one, model="fp32"), replace(one, model="bf16")]  # same size, same score
    fig = gpt3_figure(models)
    assert _title_inside(fig)
    assert _title_inside(gpt3_figure([g]))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    ax = fig.axes[0]
    points = [
        ax.transData.transform((line.get_xdata()[0], line.get_ydata()[0]))
        for line in ax.lines
        if line.get_marker() in ("o", "s") and line.get_markeredgecolor() == "black"
    ]
    assert len(points) == 2
    marker_px = 5 * fig.dpi / 72
    assert abs(points[0][0] - points[1][0]) >= marker_px


@pytest.mark.slow
def test_per_depth_table_fits_1300px(two_files, tmp_path):
    """The report opened in Chromium at 1,300 px: the page does not scroll sideways and the
    per-depth table fits its section."""
    import importlib
    import os
    import shutil

    chromium = os.environ.get("SYNTHPROBE_CHROMIUM", "/usr/bin/chromium")
    if shutil.which(chromium) is None:
        pytest.skip(f"needs Debian's chromium at {chromium}")
    sync_api = importlib.import_module("playwright.sync_api")
    base, tuned = two_files
    out = tmp_path / "r"
    build_report([base, tuned], out, progress=False)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1300, "height": 1000})
        page.goto((out / "index.html").as_uri())
        widths = page.evaluate("""() => {
            const t = document.querySelector('#depth table');
            return [document.documentElement.scrollWidth, t.scrollWidth, t.parentElement.clientWidth];
        }""")
        browser.close()
    page_w, table_w, box_w = widths
    assert page_w <= 1300 and table_w <= box_w, widths


def test_a_malformed_comparison_block_is_a_located_error(tmp_path, capsys):
    doc = _deep_doc()
    doc["comparisons"] = {
        "deeparithmark": {"version": 1, "models": ["a", "b"], "pairs": [{"a": "a", "b": "b", "n": "ten"}]}
    }
    out = tmp_path / "r"
    assert main(["report", str(_write(tmp_path / "bad.json", doc)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "comparisons.deeparithmark.pairs[0].n" in err
    assert not out.exists()
