"""The report's item viewer (items.html) without a browser: what it embeds, where it takes the
prompts from, older files, bad input, escaping, determinism. In Chromium:
tests/report/test_viewer_browser.py."""

from __future__ import annotations

import json
import shutil

import pytest
from viewer_support import EVIL, RELEASE, evil_data, page_data, score_toy

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.report.build import build_report
from synthprobe.templating import script_json


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def test_script_json_cannot_close_the_script_element():
    data = {"t": EVIL, "n": [1.5, None, True]}
    text = str(script_json(data))
    assert "</script" not in text.lower() and "<!--" not in text and "&" not in text
    assert json.loads(text) == data


def test_items_page_embeds_every_prediction_with_its_prompt(toy, tmp_path):
    res = score_toy(RELEASE, tmp_path / "toy.json")
    rep = tmp_path / "rep"
    written = build_report([res], rep)
    assert rep / "items.html" in written
    data = page_data((rep / "items.html").read_text("utf-8"))
    preds = json.loads(res.read_text())["models"][0]["results"]["deeparithmark"]["predictions"]
    release = [json.loads(line) for line in RELEASE.read_text("utf-8").splitlines()[:8]]
    assert [m["name"] for m in data["models"]] == ["toy:bigram"]
    assert data["models"][0]["n"] == 8 and data["models"][0]["correct"] == sum(p["correct_acc_norm"] for p in preds)
    assert data["notes"] == []
    for it, row, p, src in zip(data["items"], data["runs"][0], preds, release):
        assert it["id"] == p["id"] == str(src["ind"])
        assert it["prompt"] == src["ctx"] and it["endings"] == src["endings"]
        assert it["mistakes"] == src["metadata"]["option_sources"] and it["depth"] == src["metadata"]["depth"]
        assert (row["p"], bool(row["ok"]), row["pr"]) == (p["pred_acc_norm"], p["correct_acc_norm"], "loglik")
        assert row["lp"] == [round(x, 4) for x in p["logprob"]]
        assert row["pt"] == [round(x, 4) for x in p["per_token"]]
        assert p["protocol"] == "loglik"  # new records say how they were scored
    index = (rep / "index.html").read_text("utf-8")
    assert '<a href="items.html">open the item viewer</a>' in index and "<script" not in index


def test_same_inputs_give_the_same_bytes(toy, tmp_path):
    res = score_toy(RELEASE, tmp_path / "toy.json")
    build_report([res], tmp_path / "a")
    build_report([res], tmp_path / "b")
    assert (tmp_path / "a" / "items.html").read_bytes() == (tmp_path / "b" / "items.html").read_bytes()


def test_prompts_come_from_the_data_file_only_when_its_sha256_matches(toy, tmp_path):
    data = tmp_path / "d" / "items.jsonl"
    data.parent.mkdir()
    shutil.copy(RELEASE, data)
    res = score_toy(data, tmp_path / "toy.json")
    moved = tmp_path / "moved.jsonl"
    data.rename(moved)
    # the recorded path is gone: scores still shown, prompts not, and the page says why
    build_report([res], tmp_path / "r1")
    d1 = page_data((tmp_path / "r1" / "items.html").read_text("utf-8"))
    assert all(it["prompt"] is None and it["endings"] is None for it in d1["items"])
    assert len(d1["notes"]) == 1 and "--data" in d1["notes"][0] and len(d1["runs"][0]) == 8
    assert d1["items"][0]["mistakes"]  # the record still names the mistakes
    # --data points at it
    assert main(["report", str(res), "--out", str(tmp_path / "r2"), "--data", str(moved)]) == 0
    d2 = page_data((tmp_path / "r2" / "items.html").read_text("utf-8"))
    assert d2["notes"] == [] and d2["items"][0]["prompt"] and d2["items"][0]["endings"]
    # a file with other bytes at the recorded path is not used
    edited = moved.read_text("utf-8").replace("Clara", "Clarissa", 1)
    data.write_text(edited, encoding="utf-8")
    build_report([res], tmp_path / "r3")
    d3 = page_data((tmp_path / "r3" / "items.html").read_text("utf-8"))
    assert d3["items"][0]["prompt"] is None and d3["notes"]


def test_a_missing_data_argument_is_one_error(toy, tmp_path, capsys):
    res = score_toy(RELEASE, tmp_path / "toy.json")
    assert main(["report", str(res), "--out", str(tmp_path / "r"), "--data", str(tmp_path / "nope.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl" in err and "--data" in err
    assert not (tmp_path / "r").exists()


def test_files_without_predictions_and_older_layouts(toy, tmp_path):
    res = score_toy(RELEASE, tmp_path / "toy.json")
    doc = json.loads(res.read_text())
    # no --save-predictions: no viewer, no link
    bare = json.loads(json.dumps(doc))
    del bare["models"][0]["results"]["deeparithmark"]["predictions"]
    (tmp_path / "bare.json").write_text(json.dumps(bare))
    build_report([tmp_path / "bare.json"], tmp_path / "r1")
    assert not (tmp_path / "r1" / "items.html").exists()
    assert "items.html" not in (tmp_path / "r1" / "index.html").read_text("utf-8")
    # the earlier Deep Arithmark-only layout, records without "protocol": read as log-likelihood
    old = json.loads(json.dumps(doc))
    old["schema"], old["schema_version"] = "synthprobe/deeparithmark-results", 1
    for rec in old["models"][0]["results"]["deeparithmark"]["predictions"]:
        del rec["protocol"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    build_report([tmp_path / "old.json"], tmp_path / "r2")
    data = page_data((tmp_path / "r2" / "items.html").read_text("utf-8"))
    assert {row["pr"] for row in data["runs"][0]} == {"loglik"} and data["items"][0]["prompt"]


def test_a_bad_prediction_record_names_its_field(toy, tmp_path):
    res = score_toy(RELEASE, tmp_path / "toy.json")
    doc = json.loads(res.read_text())
    doc["models"][0]["results"]["deeparithmark"]["predictions"][3]["pred_acc_norm"] = 9
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"predictions\[3\]\.pred_acc_norm"):
        build_report([bad], tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_first_broken_step_joins_from_a_per_step_probe_of_the_same_model(toy, tmp_path):
    res = score_toy(RELEASE, tmp_path / "toy.json", limit=6)
    steps = tmp_path / "steps.json"
    assert (
        main(
            [
                "probe",
                "steps",
                "--model",
                "toy:bigram",
                "--limit",
                "6",
                "--no-progress",
                "--no-cache",
                "--save-items",
                "--output",
                str(steps),
            ]
        )
        == 0
    )
    build_report([res, steps], tmp_path / "r")
    data = page_data((tmp_path / "r" / "items.html").read_text("utf-8"))
    items = json.loads(steps.read_text())["models"][0]["results"]["steps"]["items"]
    for it, row in zip(data["items"], data["runs"][0]):
        mine = sorted((r for r in items if r["item"] == it["id"]), key=lambda r: r["step"])
        want = next((str(r["step"]) for r in mine if not r["chain"]["choice"]), "none") if mine else "not probed"
        assert row["fb"] == want
    assert {row["fb"] for row in data["runs"][0]} - {"none", "not probed"}  # some item breaks somewhere
    # a probe of the same weights in another dtype says nothing about this run
    doc = json.loads(steps.read_text())
    doc["models"][0]["model"]["dtype"] = "bfloat16"
    steps.write_text(json.dumps(doc))
    build_report([res, steps], tmp_path / "r2")
    data = page_data((tmp_path / "r2" / "items.html").read_text("utf-8"))
    assert all("fb" not in row for row in data["runs"][0])


def test_item_text_is_data_not_markup(toy, tmp_path):
    res = score_toy(evil_data(tmp_path / "evil.jsonl"), tmp_path / "toy.json", limit=6)
    build_report([res], tmp_path / "r")
    html = (tmp_path / "r" / "items.html").read_text("utf-8")
    assert html.count("</script>") == 2  # the data block's and the script's own
    assert "<script>window.pwned" not in html and "\\u003cscript\\u003ewindow.pwned" in html
    data = page_data(html)
    assert data["items"][0]["prompt"].startswith(EVIL) and data["items"][0]["template"] == EVIL


def test_gpt3_items_get_the_prompts_they_were_scored_on(toy, tmp_path):
    """The toy engine counts a prompt's UTF-8 bytes as its tokens, so each saved item's
    ``prompt_tokens`` checks the rebuilt prompt byte for byte in length; --max-context cuts some
    few-shot prompts to fewer demonstrations, which the rebuild must follow."""
    out = tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "toy:bigram",
                "--tasks",
                "2D+,CL,SAT",
                "--shots",
                "zero,one,few",
                "--limit",
                "3",
                "--max-context",
                "400",
                "--save-predictions",
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())["models"][0]["results"]["gpt3"]["rows"]
    assert any(r["shots"]["reduced"] for r in rows)
    build_report([out], tmp_path / "r")
    data = page_data((tmp_path / "r" / "items.html").read_text("utf-8"))
    assert data["notes"] == [] and len(data["runs"][0]) == sum(len(r["items"]) for r in rows)
    for row in rows:
        for it in row["items"]:
            (view,) = [
                data["items"][x["i"]] | x
                for x in data["runs"][0]
                if data["items"][x["i"]]["template"] == f"{row['code']} {row['setting']}"
                and data["items"][x["i"]]["id"] == f"{row['code']} #{it['index']}"
            ]
            assert len(view["prompt"].encode("utf-8")) == it["prompt_tokens"]
            assert bool(view["ok"]) == it["correct"]
            if row["code"] == "SAT":
                assert view["pr"] == "loglik" and view["p"] == it["prediction"] and len(view["endings"]) == 5
            else:
                assert view["pr"] == "generate" and view["gen"] == it["prediction"]
                assert view["gold"] == it["gold"] and view["parsed"] == it["prediction"].strip()
