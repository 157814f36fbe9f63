"""`score deeparithmark --partial-inputs`: the baselines' prompts, the other-context derangement
and the metrics (no model), the whole path through the command line on the toy bigram engine
(the block, the printed lines, the report table, a located error in a damaged file), and the
real embedded model on 20 items (slow)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.benchmarks.deeparithmark.scoring import partial as pi
from synthprobe.benchmarks.deeparithmark.scoring.partial import partial_datasets
from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3

ROOT = Path(__file__).resolve().parents[4]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture(scope="module")
def release():
    return load_arithmark3(DATA)


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


# -- prompts and the derangement ---------------------------------------------------------------


def test_the_endings_baseline_lists_the_endings_in_order_without_the_question(release):
    item = release[0]
    assert item.endings == (" $54.", " $66.", " $69.", " $57.")
    ctx = pi.endings_context(item.endings)
    assert ctx == "Options: $54; $66; $69; $57.\nAnswer:"
    (endings,) = pi.partial_items([item], "endings")
    assert endings.ctx == ctx and endings.endings == item.endings and endings.label == item.label
    assert "Idris" in item.ctx and "Idris" not in endings.ctx
    (filler,) = pi.partial_items([item], "filler")
    assert filler.ctx == pi.FILLER == "The answer is" and filler.id == item.id


def test_other_context_is_a_derangement_within_each_template(release):
    donor, cross = pi.donors(release)
    assert cross == 0  # every template of the release has many items
    assert sorted(donor) == list(range(len(release)))  # a permutation: every question lent once
    for i, j in enumerate(donor):
        assert i != j
        assert release[i].metadata["template"] == release[j].metadata["template"]
        assert release[i].metadata["depth"] == release[j].metadata["depth"]
    items = pi.partial_items(release, "other-context", donor)
    assert all(it.ctx == release[j].ctx != release[i].ctx for i, (it, j) in enumerate(zip(items, donor)))
    assert all(it.endings == release[i].endings and it.label == release[i].label for i, it in enumerate(items))
    # seeded: the same every time, another seed another one
    assert pi.donors(release)[0] == donor
    assert pi.donors(release, seed=1)[0] != donor


def test_items_alone_in_their_template_borrow_from_each_other(release):
    items = release[:20]
    counts = Counter(it.metadata["template"] for it in items)
    alone = [i for i, it in enumerate(items) if counts[it.metadata["template"]] == 1]
    donor, cross = pi.donors(items)
    assert cross == len(alone) >= 2
    assert all(i != j for i, j in enumerate(donor)) and sorted(donor) == list(range(len(items)))
    for i in alone:
        assert donor[i] in alone
    for i, j in enumerate(donor):
        if i not in alone:
            assert items[i].metadata["template"] == items[j].metadata["template"]
    # one item alone takes the next item's question (wrapping round)
    two = [release[0], release[1]]  # two templates, one item each
    assert pi.donors(two) == ([1, 0], 2)
    three = [release[1], release[2], release[0]]  # tank_fill twice, money_discount_fee alone (last)
    assert pi.donors(three) == ([1, 0, 0], 1)
    with pytest.raises(InputError, match="at least two items"):
        pi.donors(release[:1])


def test_the_other_context_cache_key_follows_the_items_scored(release):
    """The donors depend on the items scored (--limit): a cached score under one set must not
    be read for another; the other baselines' prompts do not depend on it."""
    info = {"path": str(DATA), "sha256": "x", "n_items": 0}
    a = partial_datasets(Dataset("deeparithmark", release[:20], info)).sets
    b = partial_datasets(Dataset("deeparithmark", release[:30], info)).sets
    assert a["other-context"][1]["donors_sha256"] != b["other-context"][1]["donors_sha256"]
    assert a["filler"][1] == b["filler"][1] and a["endings"][1] == b["endings"][1]
    assert {name: key["baseline"] for name, (_, key) in a.items()} == {n: n for n in pi.BASELINES}


# -- the metrics ---------------------------------------------------------------------------------


def _rec(i: int, depth: int, pred: int, label: int = 0) -> dict:
    return {"id": str(i), "depth": depth, "n_endings": 4, "pred_acc_norm": pred, "correct_acc_norm": pred == label}


def test_accuracy_agreement_and_reliance_overall_and_per_depth():
    # 8 items, label 0 everywhere; depths 2 (items 0-3) and 3 (items 4-7)
    full = [_rec(i, 2 if i < 4 else 3, p) for i, p in enumerate([0, 0, 0, 1, 0, 0, 2, 3])]
    endings = [_rec(i, r["depth"], p) for i, (r, p) in enumerate(zip(full, [0, 1, 2, 1, 0, 3, 3, 3]))]
    filler = [_rec(i, r["depth"], p) for i, (r, p) in enumerate(zip(full, [1, 1, 1, 1, 1, 1, 1, 1]))]
    other = [_rec(i, r["depth"], p) for i, (r, p) in enumerate(zip(full, [0, 0, 1, 1, 0, 2, 2, 2]))]
    block = pi.partial_block(full, {"endings": endings, "filler": filler, "other-context": other}, cross_template=0)
    assert block["n"] == 8 and block["full"]["correct"] == 5 and block["full"]["accuracy"] == 5 / 8
    e, f, o = (block["baselines"][k] for k in pi.BASELINES)
    assert (e["correct"], e["agree"], e["agreement"]) == (2, 4, 0.5)  # items 0, 3, 4, 7 agree
    assert (f["correct"], f["agree"]) == (0, 1)
    assert (o["correct"], o["agree"], o["agreement"]) == (3, 5, 0.625)  # items 0, 1, 3, 4, 6
    assert set(e) == {"n", "correct", "accuracy", "ci95", "p_vs_chance", "agree", "agreement"}
    assert 0 <= e["ci95"][0] <= e["accuracy"] <= e["ci95"][1] <= 1
    assert block["best_partial"] == "other-context" and block["reliance"] == pytest.approx(5 / 8 - 3 / 8)
    d2, d3 = block["by_depth"]["2"], block["by_depth"]["3"]
    assert d2["full"]["n"] == d3["full"]["n"] == 4
    assert d2["baselines"]["other-context"]["correct"] == 2 and d2["baselines"]["endings"]["correct"] == 1
    assert d2["best_partial"] == "other-context" and d2["reliance"] == pytest.approx(3 / 4 - 2 / 4)
    # depth 3: endings and other-context both 1 of 4: a tie goes to the first baseline
    assert d3["best_partial"] == "endings" and d3["reliance"] == pytest.approx(2 / 4 - 1 / 4)
    text = pi.format_partial(block, "m")
    assert "partial-input baselines · m" in text and "agreement  50.0 %" in text
    assert "question reliance +25.00 pts (full - other-context); d2 +25.0; d3 +25.0" in text


def test_the_block_refuses_records_of_other_items():
    full = [_rec(0, 2, 0), _rec(1, 2, 0)]
    with pytest.raises(ValueError, match="not the full run's items"):
        pi.partial_block(full, {"filler": [_rec(1, 2, 0), _rec(0, 2, 0)]}, cross_template=0)


# -- the command line, on the toy bigram engine (no model) ------------------------------------


def _score(out: Path, *extra: str) -> list[str]:
    return [
        "score",
        "deeparithmark",
        "--data",
        str(DATA),
        "--model",
        "toy:a",
        "--limit",
        "24",
        "--no-progress",
        "--no-cache",
        "--output",
        str(out),
        *extra,
    ]


def test_partial_inputs_through_the_command_line_and_the_report(tmp_path, capsys, toy):
    from synthprobe.report.build import build_report

    out = tmp_path / "r.json"
    assert main(_score(out, "--partial-inputs", "--save-predictions")) == 0
    captured = capsys.readouterr()
    assert (
        f"plan: deeparithmark x zero-shot x 24 items ({DATA}) x 1 protocol (loglik) + partial-input "
        "baselines: 3 more loglik passes over the 24 deeparithmark items (endings, filler, other-context), "
        "for 1 model\n"
    ) in captured.err
    assert "partial input other-context" in captured.err  # its own cell in the estimate
    assert "partial-input baselines · toy:a (acc_norm, n=24" in captured.out
    block = json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]
    summary, preds = block["summary"], block["predictions"]
    pb = summary["partial_inputs"]
    assert pb["full"]["correct"] == summary["metrics"]["acc_norm"]["correct"] and pb["n"] == 24
    for name in pi.BASELINES:
        b = pb["baselines"][name]
        assert b["n"] == 24 and 0 <= b["agreement"] <= 1
        assert b["correct"] == sum(1 for p in preds if p["partial_picks"][name] == p["label"])
        assert b["agree"] == sum(1 for p in preds if p["partial_picks"][name] == p["pred_acc_norm"])
    best = max(b["accuracy"] for b in pb["baselines"].values())
    assert pb["reliance"] == pytest.approx(pb["full"]["accuracy"] - best)
    assert sum(d["full"]["n"] for d in pb["by_depth"].values()) == 24
    assert all(p["other_context_from"] != p["id"] for p in preds)
    page = tmp_path / "page"
    build_report([out], page, progress=False)
    html = (page / "index.html").read_text()
    assert 'id="partial"' in html and "Partial-input baselines" in html and "question reliance" in html

    # a damaged figure is refused with where it is
    doc = json.loads(out.read_text())
    doc["models"][0]["results"]["deeparithmark"]["summary"]["partial_inputs"]["baselines"]["filler"]["agreement"] = 0.99
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"partial_inputs\.baselines\.filler\.agreement"):
        build_report([bad], tmp_path / "bad-page", progress=False)


def test_without_the_flag_there_is_no_block_and_no_section(tmp_path, capsys, toy):
    out = tmp_path / "r.json"
    assert main(_score(out)) == 0
    assert "partial" not in capsys.readouterr().out
    assert "partial_inputs" not in json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]["summary"]


@pytest.mark.parametrize("protocol", ["letters", "free", "loglik,letters"])
def test_partial_inputs_need_the_loglik_protocol(tmp_path, capsys, toy, protocol):
    out = tmp_path / "r.json"
    assert main(_score(out, "--partial-inputs", "--protocol", protocol)) == 2
    err = capsys.readouterr().err
    assert "--partial-inputs" in err and "--protocol loglik only" in err
    assert not out.exists()


def test_one_item_is_too_few_for_the_other_context_baseline(tmp_path, capsys, toy):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(DATA),
                "--model",
                "toy:a",
                "--limit",
                "1",
                "--no-progress",
                "--partial-inputs",
                "--output",
                str(out),
            ]
        )
        == 2
    )
    assert "at least two items" in capsys.readouterr().err and not out.exists()


# -- the embedded model ----------------------------------------------------------------------------


@pytest.mark.model
def test_embedded_model_partial_inputs_on_20_items(tmp_path, capsys):
    from synthprobe.report.build import build_report

    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--data",
                str(DATA),
                "--limit",
                "20",
                "--partial-inputs",
                "--dtype",
                "float32",
                "--device",
                "cpu",
                "--no-progress",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert "question reliance" in capsys.readouterr().out
    summary = json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]["summary"]
    pb = summary["partial_inputs"]
    assert pb["n"] == summary["n"] == 20 and pb["full"]["correct"] == summary["metrics"]["acc_norm"]["correct"]
    for name in pi.BASELINES:
        b = pb["baselines"][name]
        assert b["n"] == 20 and 0 <= b["agreement"] <= 1 and b["agree"] == round(20 * b["agreement"])
        assert pb["runs"][name]["cached_items"] == 0
    assert pb["reliance"] == pytest.approx(
        pb["full"]["accuracy"] - max(b["accuracy"] for b in pb["baselines"].values())
    )
    for d, row in pb["by_depth"].items():
        assert row["full"]["n"] == summary["by_depth"][d]["n"]
        assert row["reliance"] == pytest.approx(
            row["full"]["accuracy"] - max(b["accuracy"] for b in row["baselines"].values())
        )
    # a real model's picks move when its question is taken away
    assert any(b["agree"] < 20 for b in pb["baselines"].values())
    page = tmp_path / "page"
    build_report([out], page, progress=False)
    html = (page / "index.html").read_text()
    assert "Partial-input baselines" in html and "other-context agreement" in html
