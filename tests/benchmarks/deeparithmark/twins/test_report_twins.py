"""The twins section of ``synthprobe report``: a results document with a ``twins`` block (built
here by hand, in the layout ``synthprobe probe twins`` writes), reported by the real
command; the tables' numbers worked out here by hand, the figures, leaderboard.md, the item
viewer with each twin beside its original, and a malformed block refused (exit 2, nothing
written)."""

from __future__ import annotations

import hashlib
import html as htmllib
import json
import re
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.base import IRRELEVANT
from synthprobe.benchmarks.deeparithmark.build import dumps_item, render_bytes
from synthprobe.benchmarks.deeparithmark.twins import metrics
from synthprobe.benchmarks.deeparithmark.twins.build import iter_twins
from synthprobe.cli import main
from synthprobe.results import dumps_results, results_document

KINDS = ("irrelevant_clause", "one_step_more", "reordered", "unit_change")
SEED, N = 7, 60


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hand_cell(a: int, b: int, c: int, d: int, **more) -> dict:
    """A CELL with a both right, b right → wrong, c wrong → right, d both wrong; its interval and
    p-values as given (the report shows them, it does not recompute them)."""
    n = a + b + c + d
    cell = {
        "n": n,
        "original": (a + b) / n,
        "twin": (a + c) / n,
        "difference": (c - b) / n,
        "ci": [max(-1.0, (c - b) / n - 0.25), min(1.0, (c - b) / n + 0.125)],
        "p_mcnemar": 0.125,
        "both_right": a,
        "both_wrong": d,
        "right_to_wrong": b,
        "wrong_to_right": c,
    }
    cell.update(more)
    return cell


def hand_block() -> dict:
    """A summary-only block: loglik with two kinds, numbers chosen to read back exactly."""
    uptake = {"wrong_picks": 10, "irrelevant": 6, "share": 0.6, "expected": 1 / 3, "p": 0.0766}
    ic = hand_cell(3, 1, 6, 2, p_holm=0.25, uptake=uptake, ci=[0.05, 0.7])
    ic["by_depth"] = {
        "2": hand_cell(2, 0, 4, 0, uptake={**uptake, "wrong_picks": 0, "irrelevant": 0, "share": None, "p": None}),
        "3": hand_cell(1, 1, 2, 2, uptake=uptake),
    }
    ic["by_family"] = {"money_discount_fee": hand_cell(3, 1, 6, 2, uptake=uptake)}
    ro = hand_cell(10, 4, 0, 6, p_holm=0.25, ci=[-0.41, -0.02], p_mcnemar=0.0625)
    ro["by_depth"] = {"2": hand_cell(10, 4, 0, 6, p_mcnemar=0.0625)}
    ro["by_family"] = {"tank_fill": hand_cell(10, 4, 0, 6, p_mcnemar=0.0625)}
    return {
        "version": 1,
        "originals": {"path": "originals.jsonl", "sha256": "0" * 64, "n": 32},
        "manifest": {"path": "originals.twins.json", "sha256": "1" * 64},
        "settings": {"protocols": ["loglik"], "limit": None},
        "summary": {"loglik": {"irrelevant_clause": ic, "reordered": ro}},
        "aa": {"seed": 3, "n": 20, "summary": {"loglik": {"aa": hand_cell(8, 2, 2, 8)}}},
    }


def document(block: dict, name: str = "hand-model") -> dict:
    entry = {"model": {"spec": f"toy:{name}", "name": name}, "settings": {}, "results": {"twins": block}}
    return results_document(command="synthprobe probe twins originals.twins.json", models=[entry])


def write(path: Path, doc: dict) -> Path:
    path.write_text(dumps_results(doc), encoding="utf-8")
    return path


def report(results: Path, out: Path, *extra: str) -> int:
    return main(["report", str(results), "--out", str(out), *extra])


# -- the tables, by hand -------------------------------------------------------------------------


def test_kind_table_by_hand_in_leaderboard_and_page(tmp_path):
    res = write(tmp_path / "twins.json", document(hand_block()))
    out = tmp_path / "rep"
    assert report(res, out) == 0
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    # 12 pairs: original 4/12 = 33.3 %, twin 9/12 = 75.0 %, +5/12 = +41.7 %; uptake 6/10 = 60.0 %
    row = (
        "| irrelevant_clause | 12 | 33.3 % | 75.0 % | +41.7 % [5.0, 70.0] | 0.12 | 0.25 | 3 | 2 | 1 | 6 | "
        "6/10 = 60.0 % vs 33.3 % (p 0.077) |"
    )
    assert row in md
    # 20 pairs: original 14/20 = 70.0 %, twin 10/20 = 50.0 %, −4/20 = −20.0 %; no uptake for reordered
    assert "| reordered | 20 | 70.0 % | 50.0 % | -20.0 % [-41.0, -2.0] | 0.062 | 0.25 | 10 | 6 | 4 | 0 | — |" in md
    # the A/A check: no Holm p (one comparison)
    assert "| A/A check (seed 3) | 20 | 50.0 % | 50.0 % | 0.0 % [-25.0, 12.5] | 0.12 | — | 8 | 8 | 2 | 2 | — |" in md
    assert "### hand-model · loglik" in md
    # the breakdowns: one column per kind, the difference and McNemar p per depth / family
    assert "| d2 | +66.7 % (p 0.12, n=6) | -20.0 % (p 0.062, n=20) |" in md
    assert "| d3 | +16.7 % (p 0.12, n=6) | — |" in md
    assert "| money_discount_fee | +41.7 % (p 0.12, n=12) | — |" in md
    assert "| tank_fill | — | -20.0 % (p 0.062, n=20) |" in md
    page = (out / "index.html").read_text(encoding="utf-8")
    assert 'id="twins"' in page and "Perturbation twins" in page
    text = htmllib.unescape(re.sub(r"<[^>]+>", "|", page))
    assert "+41.7 % [5.0, 70.0]" in text and "6/10 = 60.0 % vs 33.3 % (p 0.077)" in text
    assert "+66.7 % (p 0.12, n=6)" in text
    # the figures
    for name in ("twins.png", "twins_uptake.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (out / "items.html").exists()  # no saved pairs: no viewer
    # same inputs, same bytes
    again = tmp_path / "rep2"
    assert report(res, again) == 0
    for f in out.iterdir():
        assert f.read_bytes() == (again / f.name).read_bytes(), f.name


def test_no_uptake_figure_without_wrong_irrelevant_picks(tmp_path):
    block = hand_block()
    del block["summary"]["loglik"]["irrelevant_clause"]
    out = tmp_path / "rep"
    assert report(write(tmp_path / "t.json", document(block)), out) == 0
    assert (out / "twins.png").exists() and not (out / "twins_uptake.png").exists()


# -- a malformed block ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spoil", "field", "message"),
    [
        (
            lambda b: b["summary"]["loglik"]["reordered"].pop("right_to_wrong"),
            "twins.summary.loglik.reordered.right_to_wrong",
            "missing",
        ),
        (
            lambda b: b["summary"]["loglik"]["reordered"].update(ci=[0.1]),
            "twins.summary.loglik.reordered.ci",
            "[low, high]",
        ),
        (
            lambda b: b["summary"]["loglik"]["reordered"].update(twin=1.5),
            "twins.summary.loglik.reordered.twin",
            "[0, 1]",
        ),
        (
            lambda b: b["summary"]["loglik"]["reordered"].update(n=21),
            "twins.summary.loglik.reordered.n",
            "= 20, got 21",
        ),
        (
            lambda b: b["summary"]["loglik"]["irrelevant_clause"].pop("uptake"),
            "twins.summary.loglik.irrelevant_clause.uptake",
            "missing",
        ),
        (
            lambda b: b["summary"]["loglik"]["reordered"]["by_depth"]["2"].update(p_mcnemar="x"),
            "twins.summary.loglik.reordered.by_depth.2.p_mcnemar",
            "expected a number",
        ),
        (lambda b: b.update(items=[{"id": "x"}]), "twins.items[0].twin_of", "missing"),
        (lambda b: b["aa"]["summary"]["loglik"].pop("aa"), "twins.aa.summary.loglik.aa", "missing"),
    ],
)
def test_malformed_block_is_one_error_naming_the_field_nothing_written(tmp_path, capsys, spoil, field, message):
    block = hand_block()
    spoil(block)
    res = write(tmp_path / "bad.json", document(block))
    out = tmp_path / "rep"
    assert report(res, out) == 2
    err = capsys.readouterr().err
    assert f"models[0].results.{field}" in err and message in err and "bad.json" in err
    assert not out.exists()


# -- the item viewer: saved pairs with their data files ------------------------------------------


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> tuple[Path, dict]:
    """The originals of SEED/N, their twin files and manifest, and the twins of each original:
    ``(folder, {twin source_id: (original item dict, twin item dict)})``."""
    folder = tmp_path_factory.mktemp("twins")
    originals = folder / "originals.jsonl"
    originals.write_bytes(render_bytes(SEED, N))
    lines: dict[str, list[str]] = {k: [] for k in KINDS}
    pairs = {}
    for item, twins in iter_twins(KINDS, SEED, N):
        for kind, tw in twins.items():
            lines[kind].append(dumps_item(tw) + "\n")
            pairs[tw["source_id"]] = (item, tw)
    kinds = {}
    for kind in KINDS:
        path = folder / f"originals.twins-{kind}.jsonl"
        path.write_text("".join(lines[kind]), encoding="utf-8")
        kinds[kind] = {"file": path.name, "sha256": _sha(path), "n": len(lines[kind]), "unsupported": {}}
    manifest = folder / "originals.twins.json"
    manifest.write_text(
        json.dumps(
            {
                "format": "synthprobe/deeparithmark-twins",
                "version": 1,
                "originals": {"path": originals.name, "sha256": _sha(originals), "seed": SEED, "n": N},
                "kinds": kinds,
                "controls": {},
            }
        ),
        encoding="utf-8",
    )
    return folder, pairs


def _side(item: dict, pick: int, *, twin: bool, text: str | None) -> dict:
    label = int(item["label"])
    out = {"pick": pick, "correct": pick == label, "text": text}
    if twin:
        out["pick_source"] = item["metadata"]["option_sources"][pick]
    return out


def saved_block(folder: Path, pairs: dict, *, protocols=("loglik", "letters"), with_files: bool = True) -> dict:
    """Pairs picked by a fixed rule (the original right on even positions; the twin right on every
    third of its kind, else its pick the irrelevant-number decoy when it has one, else a wrong
    option), summarised by the probe's own statistics."""
    items = []
    for protocol in protocols:
        seen: dict[str, int] = {}
        for k, (sid, (orig, tw)) in enumerate(sorted(pairs.items())):
            j = seen[tw["metadata"]["twin_kind"]] = seen.get(tw["metadata"]["twin_kind"], -1) + 1
            o_label, t_label = int(orig["label"]), int(tw["label"])
            o_pick = o_label if k % 2 == 0 else (o_label + 1) % 4
            sources = tw["metadata"]["option_sources"]
            t_pick = sources.index(IRRELEVANT) if IRRELEVANT in sources else (t_label + 3) % 4
            if j % 3 == 0:
                t_pick = t_label
            text = None if protocol == "loglik" else f"The answer is option {k}."
            items.append(
                {
                    "id": sid,
                    "twin_of": orig["source_id"],
                    "kind": tw["metadata"]["twin_kind"],
                    "protocol": protocol,
                    "family": orig["metadata"]["template"],
                    "depth": orig["metadata"]["depth"],
                    "original": _side(orig, o_pick, twin=False, text=text),
                    "twin": _side(tw, t_pick, twin=True, text=text),
                }
            )
    originals = folder / "originals.jsonl"
    manifest = folder / "originals.twins.json"
    block = {
        "version": 1,
        "originals": {"path": str(originals), "sha256": _sha(originals), "n": N},
        "manifest": {"path": str(manifest), "sha256": _sha(manifest)},
        "settings": {"protocols": list(protocols), "limit": None},
        "summary": metrics.summarise(items, protocols, KINDS),
        "items": items,
    }
    if with_files:
        block["files"] = {
            k: {
                "path": str(folder / f"originals.twins-{k}.jsonl"),
                "sha256": _sha(folder / f"originals.twins-{k}.jsonl"),
            }
            for k in KINDS
        }
    return block


def viewer_json(page: str) -> dict:
    m = re.search(r'<script type="application/json" id="items-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


@pytest.mark.parametrize("with_files", [True, False])
def test_viewer_shows_each_twin_beside_its_original(build, tmp_path, with_files):
    folder, pairs = build
    block = saved_block(folder, pairs, with_files=with_files)
    res = write(tmp_path / "saved.json", document(block, "saver"))
    out = tmp_path / "rep"
    assert report(res, out) == 0
    page = (out / "items.html").read_text(encoding="utf-8")
    assert 'id="pairs"' in page and "Twins beside their originals" in page
    data = viewer_json(page)
    assert data["notes"] == []
    names = [m["name"] for m in data["models"]]
    assert names == ["saver · twins, loglik", "saver · twins, letters"]
    by_key = {it["key"]: it for it in data["items"]}
    n_pairs = len(pairs)
    assert len(pairs) >= 20
    for m, protocol in enumerate(("loglik", "letters")):
        rows = data["runs"][m]
        twins = [r for r in rows if "tw" in r]
        assert len(twins) == n_pairs and all(r["pr"] == protocol for r in rows)
        for r in twins:
            twin = data["items"][r["i"]]
            orig = by_key[r["tw"]["of"]]
            o_row = next(
                x for x in rows if data["items"][x["i"]] is orig or data["items"][x["i"]]["key"] == orig["key"]
            )
            o_src, t_src = pairs[twin["id"]]
            # both prompts, both option lists, the picks and the named mistake of the twin's pick
            assert twin["prompt"] == t_src["ctx"] and orig["prompt"] == o_src["ctx"]
            assert orig["id"] == o_src["source_id"] and twin["endings"] == t_src["endings"]
            assert twin["mistakes"] == t_src["metadata"]["option_sources"]
            assert r["tw"]["k"] == t_src["metadata"]["twin_kind"]
            assert r["tw"]["src"] == twin["mistakes"][r["p"]]
            assert r["ok"] == (r["p"] == twin["label"]) and o_row["ok"] == (o_row["p"] == orig["label"])
            if protocol == "letters":
                assert r["gen"].startswith("The answer is option")
    # the report's own tables agree with the probe's statistics
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "### saver · letters" in md
    c = block["summary"]["loglik"]["irrelevant_clause"]
    assert c["uptake"]["wrong_picks"] > 0 and c["uptake"]["irrelevant"] == c["uptake"]["wrong_picks"]
    assert f"| irrelevant_clause | {c['n']} |" in md
    assert (out / "twins_uptake.png").exists()


def test_viewer_without_data_files_says_so_and_keeps_the_picks(build, tmp_path):
    folder, pairs = build
    block = saved_block(folder, pairs, protocols=("loglik",))
    block["originals"]["sha256"] = "f" * 64  # a file the report cannot find
    res = write(tmp_path / "saved.json", document(block, "saver"))
    out = tmp_path / "rep"
    assert report(res, out) == 0
    data = viewer_json((out / "items.html").read_text(encoding="utf-8"))
    assert any("originals" in n and "ffffffffffff" in n for n in data["notes"])
    originals = [it for it in data["items"] if it["key"].startswith("ffffffffffff:")]
    assert originals and all(it["prompt"] is None for it in originals)
    assert len([r for r in data["runs"][0] if "tw" in r]) == len(pairs)


def test_page_without_pairs_is_unchanged_by_the_pairs_part(tmp_path):
    """items.html of a page without twins never carries the pairs part."""
    from synthprobe.report import viewer

    page = viewer.render_data({"version": 1, "title": "t", "notes": [], "models": [], "items": [], "runs": []}, css="")
    assert 'id="pairs"' not in page and "report_items_pairs" not in page
    assert page.endswith("</script>\n</main></body></html>\n") or page.endswith("</script>\n</main></body></html>")


# -- the probe's own output, reported ------------------------------------------------------------


@pytest.fixture
def toy():
    from synthprobe.backends import ENGINES, register_engine

    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def test_what_probe_twins_writes_is_reported(build, toy, tmp_path):
    """`synthprobe probe twins` on the toy engine (two protocols, the A/A check, saved items),
    then `synthprobe report`: every cell of the block is a row, every saved pair in the viewer."""
    folder, pairs = build
    res = tmp_path / "t.json"
    probe = ["probe", "twins", str(folder / "originals.twins.json"), "--model", "toy:bigram", "--no-progress"]
    probe += ["--save-items", "--protocol", "loglik,letters", "--aa", "3", "--batch-size", "4", "--output", str(res)]
    assert main(probe) == 0
    out = tmp_path / "rep"
    assert report(res, out) == 0
    block = json.loads(res.read_text())["models"][0]["results"]["twins"]
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    for protocol, cells in block["summary"].items():
        assert f"### toy:bigram · {protocol}" in md
        for kind, c in cells.items():
            assert f"| {kind} | {c['n']} | " in md
        assert f"| A/A check (seed 3) | {block['aa']['summary'][protocol]['aa']['n']} | " in md
    # the letters run's answers: how each set's were read, in leaderboard.md and on the page
    letters = [r for r in block["runs"] if r["protocol"] == "letters" and r["set"] == "originals"][0]
    read = f"originals (n {letters['items']}): answered {letters['outcomes']['answered']}, unparsed "
    assert "answers read (letters): " + read in md and "answers read (loglik)" not in md
    assert "answers read (letters): " + read in (out / "index.html").read_text(encoding="utf-8")
    assert "Accuracy: right picks over the pairs of each row (n = Pairs); the pick is the option with the highest" in md
    data = viewer_json((out / "items.html").read_text(encoding="utf-8"))
    assert data["notes"] == []
    assert sum(1 for rows in data["runs"] for r in rows if "tw" in r) == len(block["items"])
    assert all(it["prompt"] for it in data["items"])
