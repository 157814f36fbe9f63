"""The messages of inputs given in the wrong place, run through the real command line: a results
file where a data file goes, an lm-eval results file or a folder of synthprobe results given to
``report``, a JSON syntax error, and a hub model that cannot be had offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from synthprobe.cli import main
from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[2]
DEEP = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
GPT3 = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def lm_eval_folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lm") / "lm-eval-out"
    assert main(["export", "lm-eval-results", str(DEEP), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("results", [DEEP, GPT3])
def test_a_results_file_given_as_data_says_what_it_is(results, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["score", "deeparithmark", "--data", str(results), "--limit", "1", "--output", str(out)]) == 2
    line = _error(capsys)
    assert line.startswith(f"synthprobe: error: {results}: this is a synthprobe results file")
    assert "not a data file; expected JSONL, one JSON object per line" in line and not out.exists()


def test_a_results_file_on_one_line_given_as_data_says_the_same(tmp_path, capsys):
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(json.loads(DEEP.read_text(encoding="utf-8"))) + "\n", encoding="utf-8")
    assert (
        main(["score", "deeparithmark", "--data", str(compact), "--limit", "1", "--output", str(tmp_path / "r.json")])
        == 2
    )
    assert "this is a synthprobe results file (schema synthprobe/" in _error(capsys)


def test_an_lm_eval_results_file_given_as_data_says_what_it_is(lm_eval_folder, tmp_path, capsys):
    [results] = lm_eval_folder.rglob("results_*.json")
    assert (
        main(["score", "deeparithmark", "--data", str(results), "--limit", "1", "--output", str(tmp_path / "r.json")])
        == 2
    )
    assert "this is an lm-evaluation-harness results file, not a data file" in _error(capsys)


def test_a_json_document_that_is_no_results_is_named_as_not_jsonl(tmp_path, capsys):
    doc = tmp_path / "doc.json"
    doc.write_text('{\n  "items": []\n}\n', encoding="utf-8")
    assert (
        main(["score", "deeparithmark", "--data", str(doc), "--limit", "1", "--output", str(tmp_path / "r.json")]) == 2
    )
    assert _error(capsys).endswith(
        f"{doc}: is one JSON object over several lines; expected JSONL, one JSON object per line"
    )


def test_lm_eval_results_file_renamed_is_refused_with_pass_its_folder(lm_eval_folder, tmp_path, capsys):
    [results] = lm_eval_folder.rglob("results_*.json")
    renamed = tmp_path / "lm.json"
    shutil.copy(results, renamed)
    assert main(["report", str(renamed), "--out", str(tmp_path / "r")]) == 2
    line = _error(capsys)
    assert f"{renamed}: this is an lm-evaluation-harness results file" in line and "pass its folder" in line
    assert not (tmp_path / "r").exists()


def test_lm_eval_results_file_away_from_its_samples_says_pass_its_folder(lm_eval_folder, tmp_path, capsys):
    [results] = lm_eval_folder.rglob("results_*.json")
    alone = tmp_path / "alone" / results.name
    alone.parent.mkdir()
    shutil.copy(results, alone)
    assert main(["report", str(alone), "--out", str(tmp_path / "r")]) == 2
    line = _error(capsys)
    assert "has no samples file" in line and "this is an lm-eval results file" in line and "pass its folder" in line
    # beside its samples the one file reads, and so does its folder
    assert main(["report", str(results), "--out", str(tmp_path / "ok")]) == 0
    assert (tmp_path / "ok" / "index.html").is_file()


def test_a_folder_of_synthprobe_results_asks_for_the_files(tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    shutil.copy(DEEP, folder / DEEP.name)
    shutil.copy(GPT3, folder / GPT3.name)
    assert main(["report", str(folder), "--out", str(tmp_path / "r")]) == 2
    line = _error(capsys)
    assert f"{folder}: is a folder of synthprobe results files" in line
    assert f"pass the files themselves (e.g. {folder / '*.json'})" in line and "lm_eval" not in line.split(";")[1]
    assert not (tmp_path / "r").exists()
    empty = tmp_path / "empty"
    empty.mkdir()  # a folder of nothing stays lm-eval's message
    assert main(["report", str(empty), "--out", str(tmp_path / "r")]) == 2
    assert "holds no results_<time>.json file" in _error(capsys)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"a": "b',
            "invalid JSON (Unterminated string starting at column 7); the text ends before the JSON value "
            "does: the record looks cut short",
        ),
        (
            '{"a": "b\tc"}\n',
            "invalid JSON (Invalid control character at column 9); a raw control character ('\\t') inside a "
            "string: a line break or tab that is not escaped, as when a record is cut in two and its rest "
            "moved to the next line",
        ),
        ('{"a": }\n', "invalid JSON (Expecting value at column 7)"),
    ],
)
def test_json_errors_name_the_column_once(text, message, tmp_path, capsys):
    """Python's message with its column once, and in words what a truncated or broken line means."""
    data = tmp_path / "bad.jsonl"
    data.write_text(text, encoding="utf-8")
    assert (
        main(["score", "deeparithmark", "--data", str(data), "--limit", "1", "--output", str(tmp_path / "r.json")]) == 2
    )
    line = _error(capsys)
    assert line == f"synthprobe: error: {data}:1: {message}" and "at at" not in line


def test_a_hub_model_that_cannot_be_had_offline_is_explained_once(tmp_path):
    env = {"HF_HOME": str(tmp_path / "hf"), "SYNTHPROBE_CACHE": str(tmp_path / "cache")}
    argv = ["score", "deeparithmark", "--model", "SomeOrg/missing-model", "--limit", "1", "--no-cache"]
    res = synthprobe(*argv, "--output", tmp_path / "r.json", timeout=300, extra_env=env)
    assert res.returncode == 1, res.stderr
    assert res.stderr.count("not in the local Hugging Face cache") == 1, res.stderr
    assert res.stderr.count("hub cannot be reached") == 1 and "HF_HUB_OFFLINE is set" in res.stderr
    # said before anything loads, with what else was looked for: a local folder of that name
    assert "no local folder of that name exists" in res.stderr, res.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_missing_checkpoint_folder_typed_like_a_hub_id_is_refused_at_once(tmp_path):
    """``checkpoints/final`` before the run that writes it: no folder, no cached hub repository; the
    command says both, in the check made before any model loads."""
    argv = ["score", "deeparithmark", "--model", "checkpoints/final", "--output", tmp_path / "r.json"]
    res = synthprobe(*argv, timeout=120, cwd=tmp_path, extra_env={"SYNTHPROBE_CACHE": str(tmp_path / "cache")})
    assert res.returncode == 1, res.stderr
    assert f"no local folder of that name exists ({tmp_path / 'checkpoints' / 'final'})" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "r.json").exists()
    assert "download it where the hub is reachable" in res.stderr and not (tmp_path / "r.json").exists()
