"""The one results document (synthprobe.results): the committed files of the earlier layouts
read unchanged, a v2 file holds both benchmarks for many models, errors are located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.card import card_cells, card_header
from synthprobe.benchmarks.deeparithmark.layout import LAYOUTS
from synthprobe.benchmarks.gpt3.layout import ONE_MODEL as GPT3_V1
from synthprobe.errors import InputError
from synthprobe.report.reader import rows as read_rows
from synthprobe.results import SCHEMA, SCHEMA_VERSION, dumps_results, read_results

[DEEPARITHMARK_V1] = LAYOUTS
ROOT = Path(__file__).resolve().parents[1]
DA = ROOT / "tests" / "fixtures" / "results_v1" / "deeparithmark_smollm2-135m-instruct_2026-10.json"  # the first layout
GPT3 = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"


def _v2(tmp_path: Path) -> tuple[Path, dict, dict]:
    da = json.loads(DA.read_text(encoding="utf-8"))
    g = json.loads(GPT3.read_text(encoding="utf-8"))
    entry = da["models"][0]
    both = {**entry, "results": {**entry["results"], "gpt3": {"settings": g["settings"], "rows": g["results"]}}}
    gpt3_only = {
        "model": {**g["model"], "name": "other"},
        "settings": g["settings"],
        "results": {"gpt3": {"rows": g["results"]}},
    }
    doc = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "synthprobe": "0.1.0",
        "datasets": da["datasets"],
        "models": [both, gpt3_only],
    }
    path = tmp_path / "both.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, da, g


def test_committed_files_of_the_earlier_layouts_read_unchanged():
    da, g = read_results(DA), read_results(GPT3)
    assert da.layout == DEEPARITHMARK_V1 and g.layout == GPT3_V1
    assert [e.where for e in da.models] == ["models[0]"] and list(da.models[0].results) == ["deeparithmark"]
    assert da.dataset_sha256("deeparithmark").startswith("ecb834bf")
    assert g.models[0].where == "" and g.models[0].results["gpt3"].where == ""
    assert g.command.startswith("synthprobe score gpt3")
    [deep] = read_rows(DA, "deeparithmark")
    assert (deep.overall.correct, deep.overall.n) == (218, 1000)
    [gpt3] = read_rows(GPT3, "gpt3")
    assert len(gpt3.rows) == len(json.loads(GPT3.read_text(encoding="utf-8"))["results"])


def test_a_v2_file_holds_both_benchmarks_for_many_models(tmp_path):
    path, _, g = _v2(tmp_path)
    deep, gpt3 = (read_rows(path, "deeparithmark", required=False), read_rows(path, "gpt3", required=False))
    [old_deep], [old_gpt3] = read_rows(DA, "deeparithmark"), read_rows(GPT3, "gpt3")
    assert len(deep) == 1 and len(gpt3) == 2
    assert deep[0].by_depth == old_deep.by_depth and deep[0].settings == old_deep.settings
    assert gpt3[0].rows == old_gpt3.rows and gpt3[0].test_set == old_gpt3.test_set
    assert gpt3[1].model == "other" and gpt3[1].rows == old_gpt3.rows


def test_v2_errors_name_the_field_in_the_file(tmp_path):
    path, _, _ = _v2(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["models"][1]["results"]["gpt3"]["rows"][3]["correct"] = 10_000
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as err:
        (read_rows(path, "deeparithmark", required=False), read_rows(path, "gpt3", required=False))
    assert err.value.field == "models[1].results.gpt3.rows[3].correct"
    doc["models"][1]["results"] = {"lm-eval": {}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as err:
        (read_rows(path, "deeparithmark", required=False), read_rows(path, "gpt3", required=False))
    assert err.value.field == "models[1].results.lm-eval"
    doc["schema_version"] = 1
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as err:
        (read_rows(path, "deeparithmark", required=False), read_rows(path, "gpt3", required=False))
    assert err.value.field == "schema_version"


def test_dumps_results_keeps_each_item_on_one_line_and_reads_back():
    doc = json.loads(GPT3.read_text(encoding="utf-8"))
    assert dumps_results(doc) == GPT3.read_text(encoding="utf-8")
    nested = {"models": [{"results": {"gpt3": {"rows": [{"items": [{"index": 0}, {"index": 1}]}]}}}]}
    text = dumps_results(nested)
    assert json.loads(text) == nested and '                {"index": 1}' in text.splitlines()


def test_the_card_is_formatted_once():
    row = {
        "model": "m",
        "params": 1_300_000_000,
        "deep": 31.256,
        "soft": None,
        "d2": 40.04,
        "d3": None,
        "d4": 0.0,
        "d5": 100.0,
        "arithmark3": 30.0,
        "delta": -1.5,
        "p_vs_chance": 2.5e-7,
    }
    assert card_header() == [
        "Model",
        "Params",
        "Deep",
        "soft",
        "d2 %",
        "d3 %",
        "d4 %",
        "d5 %",
        "ArithMark-3",
        "Δ",
        "p vs chance",
    ]
    assert card_cells(row) == ["m", "1.30 B", "31.26 %", "—", "40.0", "—", "0.0", "100.0", "30.00 %", "−1.50", "2.5e−7"]


def test_the_generic_results_module_holds_no_deep_arithmark_card():
    """Deep Arithmark's card row lives in its own folder (``benchmarks/deeparithmark/card.py``);
    the results document's module keeps only what every benchmark uses."""
    import synthprobe.results as generic
    from synthprobe.benchmarks.deeparithmark import card

    for name in ("DEPTHS", "ANSWER_COLUMNS", "card_header", "card_cells", "card_has_compare", "card_has_answers"):
        assert not hasattr(generic, name) and hasattr(card, name), name
