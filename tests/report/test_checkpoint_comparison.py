"""The report a user reads after comparing two checkpoints: it leads with the paired comparison
(and a plot of the differences), then accuracy per depth; per-template rows and mistake panels
fold away when there are too few items per template; every row says which checkpoint it is; long
model names stay inside plots and tables."""

from __future__ import annotations

import copy
import re
from html import unescape

import pytest

from synthprobe.benchmarks.deeparithmark.report import figures as plots
from synthprobe.benchmarks.deeparithmark.report.section import FOLD_BELOW
from synthprobe.cli import main
from synthprobe.report.reader import rows as read_rows
from tests.report.support_generated import bench_doc, write

LONG_A = "experiments/runs/2026-11-28-sft-lr3e-5-warmup200/checkpoint-12000-final-merged"
LONG_B = "experiments/runs/2026-11-30-sft-lr1e-5-warmup500-longer-context/checkpoint-24000-final-merged"


def _checkpoint(doc: dict, name: str, fingerprint: str, *, keep: int | None = None, flip_every: int = 0) -> dict:
    """The committed run as another checkpoint: its name and spec, its fingerprint; the first
    ``keep`` items only; every ``flip_every``-th wrong item made right (the summary follows)."""
    new = copy.deepcopy(doc)
    e = new["models"][0]
    e["model"] |= {"name": name, "spec": name, "fingerprint": fingerprint}
    block = e["results"]["deeparithmark"]
    preds = block["predictions"][:keep] if keep else block["predictions"]
    wrong = [p for p in preds if not p["correct_acc_norm"]]
    for p in wrong[::flip_every] if flip_every else []:
        p["correct_acc_norm"] = True
    block["predictions"] = preds
    s = block["summary"]
    for key in ("mistake_profile", "rank_preference"):
        s.pop(key, None)  # summaries of the full set; recomputed nowhere here
    k = sum(p["correct_acc_norm"] for p in preds)
    s["n"] = len(preds)
    s["metrics"]["acc_norm"] |= {"correct": k, "total": len(preds), "acc": k / len(preds)}
    s["by_depth"] = {
        str(d): {
            "n": sum(p["depth"] == d for p in preds),
            "correct": sum(p["correct_acc_norm"] for p in preds if p["depth"] == d),
        }
        for d in sorted({p["depth"] for p in preds})
    }
    s["by_template"] = {
        t: {
            "n": sum(p["template"] == t for p in preds),
            "correct": sum(p["correct_acc_norm"] for p in preds if p["template"] == t),
        }
        for t in sorted({p["template"] for p in preds})
    }
    return new


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Two long-named checkpoints, 60 items each (4 a template): the page a user gets from two
    short runs."""
    tmp = tmp_path_factory.mktemp("ckpt")
    doc = bench_doc()
    a = write(tmp / "a.json", _checkpoint(doc, LONG_A, "a" * 64, keep=60))
    b = write(tmp / "b.json", _checkpoint(doc, LONG_B, "b" * 64, keep=60, flip_every=2))
    out = tmp / "report"
    assert main(["report", str(a), str(b), "--out", str(out)]) == 0
    return {"a": a, "b": b, "out": out, "html": unescape((out / "index.html").read_text(encoding="utf-8"))}


def test_the_page_leads_with_the_paired_comparison_then_depth(small):
    sections = re.findall(r'<section id="([^"]+)">', small["html"])
    assert sections[:3] == ["comparison", "depth", "leaderboard"], sections
    comparison = small["html"][
        small["html"].index('<section id="comparison">') : small["html"].index('<section id="depth">')
    ]
    # the plot of the differences, then the table
    assert comparison.index('alt="paired differences with 95 % intervals"') < comparison.index("<table>")
    assert (small["out"] / "comparison.png").is_file()


def test_few_items_per_template_fold_away(small):
    html = small["html"]
    templates = html[html.index('<section id="templates">') :]
    templates = templates[: templates.index("</section>")]
    assert templates.startswith('<section id="templates"><h2>Accuracy by template</h2><details><summary>')
    assert re.search(rf"about [1-9] items? per template and model \(fewer than {FOLD_BELOW}\)", templates)
    assert "</details>" in templates and "<img" in templates.split("</summary>")[1]


def test_a_release_sized_run_does_not_fold(tmp_path):
    path = write(tmp_path / "full.json", bench_doc())
    assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 0
    html = (tmp_path / "r" / "index.html").read_text(encoding="utf-8")
    assert "<details>" not in html
    # and without a paired comparison the leaderboard leads, as before
    assert re.findall(r'<section id="([^"]+)">', html)[:2] == ["leaderboard", "depth"]


def test_every_row_says_which_checkpoint_it_is(small):
    html = small["html"]
    for section in ("leaderboard", "depth"):
        part = html[html.index(f'<section id="{section}">') :]
        part = part[: part.index("</section>")]
        for fp in ("a" * 12, "b" * 12):
            assert f"weights {fp}…" in part, (section, fp)
    runs = html[html.index('<section id="runs">') :]
    # one column per checkpoint: the settings, the unparsed row among them, never off the side
    assert re.search(r'<th class="l">Setting</th><th class="l">' + re.escape(LONG_B), runs)
    assert '<td class="l">weights fingerprint</td>' in runs and f'title="{"a" * 64}"' in runs


def test_leaderboard_md_and_the_paper_table_say_which_checkpoint_each_row_is(small, tmp_path):
    md = (small["out"] / "leaderboard.md").read_text(encoding="utf-8")
    line = next(x for x in md.splitlines() if x.startswith("Checkpoints: "))
    assert f"{LONG_A}: `weights {'a' * 12}`" in line and f"{LONG_B}: `weights {'b' * 12}`" in line
    out = tmp_path / "tables"
    assert main(["report", str(small["a"]), str(small["b"]), "--out", str(out), "--table", "csv"]) == 0
    import csv

    rows = list(csv.DictReader((out / "tables" / "leaderboard.csv").open(encoding="utf-8")))
    assert {(r["Model"], r["weights sha256"]) for r in rows} == {(LONG_A, "a" * 64), (LONG_B, "b" * 64)}
    assert {r["checkpoint"] for r in rows} == {LONG_A, LONG_B}


def _inside(fig, artist) -> bool:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    box, page = artist.get_window_extent(renderer), fig.bbox
    return box.x0 >= page.x0 - 1 and box.x1 <= page.x1 + 1 and box.y0 >= page.y0 - 1 and box.y1 <= page.y1 + 1


def test_long_names_stay_inside_the_figures(small, tmp_path):
    rows = read_rows(small["a"], "deeparithmark") + read_rows(small["b"], "deeparithmark")
    fig = plots.depth_figure(rows)
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert _inside(fig, ax.title) and _inside(fig, legend)
    assert all(max(len(line) for line in t.get_text().split("\n")) <= plots.LEGEND_WRAP for t in legend.get_texts())
    # the axes keep most of the width: a long name wraps instead of squeezing the plot
    assert ax.get_position().width > 0.5
    mistakes = plots.mistake_figure(read_rows(_with_mistakes(tmp_path), "deeparithmark"))
    (legend,) = mistakes.legends
    assert _inside(mistakes, legend)
    # below the panels, not over them
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(mistakes)
    renderer = mistakes.canvas.get_renderer()
    lowest = min(ax.get_tightbbox(renderer).y0 for ax in mistakes.axes if ax.get_visible())
    assert legend.get_window_extent(renderer).y1 <= lowest + 1


def _with_mistakes(tmp):
    """The committed run, mistake profile kept, under a long name twice (two files)."""
    doc = bench_doc()
    out = []
    for name in (LONG_A, LONG_B):
        d = copy.deepcopy(doc)
        d["models"][0]["model"]["name"] = name
        out.append(d)
    d = out[0]
    d["models"].append(out[1]["models"][0])
    return write(tmp / "mistakes.json", d)
