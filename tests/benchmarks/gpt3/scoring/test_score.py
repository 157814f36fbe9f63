"""Scoring the GPT-3 tasks: exact match, choice rule, the paper table, real-model runs, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpt3_model import embedded_backend, one_torch_thread

from synthprobe.benchmarks.gpt3 import get_task, resolve_tasks, task_names
from synthprobe.benchmarks.gpt3.paper import (
    ROW_NOTES,
    SIZES,
    TABLE_H1,
    TOO_FEW,
    land_position,
    paper_row,
    where_it_lands,
)
from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig, format_table, run
from synthprobe.errors import InputError
from synthprobe.metrics.choice import exact_match, pick_choice
from synthprobe.metrics.stats import wilson_percent as interval
from synthprobe.results import SCHEMA, SCHEMA_VERSION, read_results


def env() -> dict:
    """The environment at the call (conftest's per-test cache and the guard's test id included;
    a copy taken at import would carry neither into the commands a test runs)."""
    return {**os.environ, "HF_HUB_OFFLINE": "1"}


_one_thread = pytest.fixture(autouse=True, scope="module")(one_torch_thread)


# --------------------------------------------------------------------------------------
# Pure parts
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prediction,gold,ok",
    [
        (" 143", " 143", True),
        ("143", " 143", True),
        (" 143 ", " 143", True),
        (" -38097", " -38097", True),
        (" 1430", " 143", False),
        (" 14", " 143", False),
        ("", " 143", False),
        (" 143.", " 143", False),
        (" inevitably", " inevitably", True),
        (" Inevitably", " inevitably", False),
        (" inevit ably", " inevitably", False),
    ],
)
def test_exact_match(prediction, gold, ok):
    assert exact_match(prediction, gold) is ok


def test_pick_choice_takes_the_first_of_equal_scores():
    assert pick_choice([-2.0, -1.0, -3.0]) == 1
    assert pick_choice([-1.0, -1.0, -0.5, -0.5]) == 2
    assert pick_choice([-4.0]) == 0
    with pytest.raises(ValueError):
        pick_choice([])


def test_registry_holds_the_fifteen_tasks_in_paper_order():
    import synthprobe.benchmarks.gpt3.sat  # noqa: F401  (import order must not matter)
    import synthprobe.benchmarks.gpt3.words  # noqa: F401

    assert [get_task(n).code for n in task_names()] == [
        "2D+",
        "2D−",
        "3D+",
        "3D−",
        "4D+",
        "4D−",
        "5D+",
        "5D−",
        "2Dx",
        "1DC",
        "CL",
        "A1",
        "A2",
        "RI",
        "RW",
        "SAT",
    ]
    assert [t.code for t in resolve_tasks("words")] == ["CL", "A1", "A2", "RI", "RW"]
    assert len(resolve_tasks("arithmetic")) == 10 and len(resolve_tasks("all")) == 16
    assert [t.code for t in resolve_tasks("2D+, CL,2D+")] == ["2D+", "CL"]
    with pytest.raises(InputError, match="unknown task"):
        resolve_tasks("2D+,nope")


def test_paper_table():
    assert len(TABLE_H1) == 16 * 3
    assert all(len(row) == len(SIZES) == 8 for row in TABLE_H1.values())
    assert paper_row("2D+", "few")[-1].value == 100.0
    assert paper_row("2D\u2212", "few")[-1].value == 98.9
    assert paper_row("SAT", "few")[-1].value == 65.2 and paper_row("SAT", "zero")[0].value == 35.6
    assert paper_row("CL", "few")[-1].value == 37.9 and paper_row("RW", "one")[-1].value == 0.48
    cell = paper_row("2Dx", "few")[6]
    assert cell.doubtful and cell.value == 7.05 and cell.alt == 17.05 and cell.render() == "7.05†"
    assert not paper_row("2Dx", "few")[7].doubtful
    assert all(c.doubtful for c in paper_row("1DC", "few")[:7]) and not paper_row("1DC", "few")[7].doubtful
    assert ("4D-", "one") in ROW_NOTES
    doubtful = sum(c.doubtful for row in TABLE_H1.values() for c in row)
    assert doubtful == 20 + 7 + 3 * 7  # single cells + the 4D- one row + the three 1DC rows
    # the 175B column equals Tables 3.9/3.10 (few-shot)
    assert [paper_row(c, "few")[-1].value for c in ("3D+", "4D+", "5D+", "2Dx", "1DC", "A1", "A2", "RI")] == [
        80.4,
        25.5,
        9.3,
        29.2,
        21.3,
        15.1,
        39.7,
        67.2,
    ]


def test_where_it_lands():
    row = paper_row("2D+", "zero")  # 0.70 0.65 0.70 0.85 1.10 2.54 15.4 76.9
    assert where_it_lands(0.0, row) == "< 125M"
    assert where_it_lands(0.7, row) == "≥ 760M"
    assert where_it_lands(0.0, paper_row("5D+", "few")) == "0, as ≤ 6.7B"
    assert where_it_lands(0.0, paper_row("4D-", "zero")) == "0, as ≤ 6.7B"
    assert where_it_lands(0.1, paper_row("5D+", "few")) == "≥ 13B"
    assert where_it_lands(2.0, row) == "≥ 2.7B"
    assert where_it_lands(100.0, row) == "≥ 175B"
    assert where_it_lands(0.1, paper_row("CL", "zero")) == "< 125M"  # 1.3B's 0.00 does not count


def test_where_it_lands_says_when_the_interval_cannot_place_the_model():
    row = paper_row("2D+", "zero")  # 0.70 0.65 0.70 0.85 1.10 2.54 15.4 76.9
    # 1 of 50: 2 %, but the interval 0.35-10.5 % reaches from below 125M past 6.7B
    z, n, ph = 1.959964, 50, 1 / 50  # Wilson's formula, by hand
    centre, half = (ph + z * z / (2 * n)), z * (ph * (1 - ph) / n + z * z / (4 * n * n)) ** 0.5
    assert interval(1, 50) == pytest.approx(
        [100 * (centre - half) / (1 + z * z / n), 100 * (centre + half) / (1 + z * z / n)], abs=1e-3
    )
    assert where_it_lands(2.0, row, tuple(interval(1, 50))) == TOO_FEW == "n too small"
    # 2,000 of 100,000: the same 2 %, tight enough to stay between 2.7B (1.10) and 6.7B (2.54)
    assert where_it_lands(2.0, row, tuple(interval(2_000, 100_000))) == "≥ 2.7B"
    # crossing one neighbouring cell keeps the verdict; crossing two does not
    assert where_it_lands(2.0, row, (1.0, 2.4)) == "≥ 2.7B"
    assert where_it_lands(2.0, row, (1.2, 3.0)) == "≥ 2.7B"
    assert where_it_lands(2.0, row, (1.0, 3.0)) == TOO_FEW
    assert where_it_lands(20.0, row, (10.0, 40.0)) == "≥ 13B"
    assert where_it_lands(20.0, row, (10.0, 80.0)) == TOO_FEW
    # 0 of 50 on 5D+ few-shot: GPT-3 scored 0 up to 6.7B and 0.05 at 13B; the interval (0-7.1 %)
    # holds both the zeros and 13B's 0.05, so it cannot place the model among them
    assert where_it_lands(0.0, paper_row("5D+", "few"), tuple(interval(0, 50))) == TOO_FEW
    # 0 of 10,000 (interval 0-0.04 %) holds only the zeros: the tie at zero stands
    assert where_it_lands(0.0, paper_row("5D+", "few"), tuple(interval(0, 10_000))) == "0, as ≤ 6.7B"
    # 0 of 2 on CL zero-shot: anything from below 125M to beyond 175B
    assert where_it_lands(0.0, paper_row("CL", "zero"), tuple(interval(0, 2))) == TOO_FEW
    # the position never falls as accuracy grows
    for r in TABLE_H1.values():
        positions = [land_position(a / 10, r) for a in range(0, 1001)]
        assert positions == sorted(positions) and positions[-1] == 8


def _prompts(k: int, n_shots: list[int], drawn: int | None = None):
    from synthprobe.benchmarks.gpt3.prompts import Prompt

    return [
        Prompt(
            index=i,
            text="...",
            n_shots=m,
            requested=k,
            drawn=k if drawn is None else drawn,
            demos=tuple(range(m)),
            n_tokens=100 + m,
        )
        for i, m in enumerate(n_shots)
    ]


def _items(prompts, correct: list[bool]):
    return [
        {
            "index": p.index,
            "n_shots": p.n_shots,
            "prompt_tokens": p.n_tokens,
            "gold": " 1",
            "prediction": " 1" if ok else " 2",
            "correct": ok,
        }
        for p, ok in zip(prompts, correct)
    ]


def test_rows_carry_an_interval_and_honest_paper_notes():
    from synthprobe.benchmarks.gpt3.scoring.metrics import SAT_SAMPLE_NOTE, summarise

    sat = get_task("SAT")
    prompts = _prompts(20, [15] * 16, drawn=15)
    row = summarise(
        sat,
        "few",
        20,
        prompts,
        _items(prompts, [True] * 9 + [False] * 7),
        seconds=1.0,
        max_new_tokens=None,
        save_items=False,
        sat_sample=True,
    )
    assert row["accuracy"] == 56.25 and row["ci95"] == pytest.approx(interval(9, 16))
    assert row["ci95"][0] < 56.25 < row["ci95"][1]
    assert row["lands"] is None and row["paper_note"] == SAT_SAMPLE_NOTE and "real SAT set" in SAT_SAMPLE_NOTE
    assert set(row["paper"]) == set(SIZES)  # the figures stay, for reference
    # a user's SAT file (not the sample) gets a verdict, and the note says the pool was short of K
    row = summarise(
        sat,
        "few",
        20,
        prompts,
        _items(prompts, [True] * 9 + [False] * 7),
        seconds=1.0,
        max_new_tokens=None,
        save_items=False,
        sat_sample=False,
    )
    assert row["lands"] == TOO_FEW and "only 15 other items" in row["paper_note"]

    # --max-context cut the demonstrations below K
    task = get_task("2D+")
    prompts = _prompts(50, [50, 31, 12, 50])
    row = summarise(
        task,
        "few",
        50,
        prompts,
        _items(prompts, [True, False, False, False]),
        seconds=1.0,
        max_new_tokens=7,
        save_items=False,
    )
    assert row["shots"] == {"mean": 35.75, "min": 12, "max": 50, "reduced": 2}
    assert "--max-context cut the demonstrations to 35.75 on average, below K=50" in row["paper_note"]
    assert "2 of 4 items" in row["paper_note"]
    # all K used: no note (2D+ has no row note of its own)
    prompts = _prompts(50, [50] * 4)
    row = summarise(
        task, "few", 50, prompts, _items(prompts, [True] * 4), seconds=1.0, max_new_tokens=7, save_items=False
    )
    assert "paper_note" not in row and row["lands"] == TOO_FEW and row["ci95"][1] == 100.0
    # the table prints the interval, the note and a "—" for a row without a verdict
    sat_row = summarise(
        sat,
        "one",
        1,
        _prompts(1, [1] * 16),
        _items(_prompts(1, [1] * 16), [True] * 16),
        seconds=1.0,
        max_new_tokens=None,
        save_items=False,
        sat_sample=True,
    )
    table = format_table([row, sat_row], "SmolLM2-135M-Instruct (a rather long model name)")
    assert table.splitlines()[0] == "model: SmolLM2-135M-Instruct (a rather long model name)"
    head = table.splitlines()[2].split()
    assert head[:6] == ["task", "setting", "K", "n", "model", "95%"] and head[-1] == "lands"
    sat_line = next(line for line in table.splitlines() if line.startswith("SAT"))
    assert sat_line.rstrip().endswith("—") and "80.6-100.0" in sat_line
    assert f"Note (SAT one): {SAT_SAMPLE_NOTE}." in table


def test_rows_always_keep_each_items_shots_and_prompt_size():
    import json

    from synthprobe.benchmarks.gpt3.scoring.metrics import summarise
    from synthprobe.benchmarks.gpt3.scoring.score import dumps_results

    task = get_task("CL")
    prompts = _prompts(100, [100, 97, 100])
    items = _items(prompts, [True, False, True])
    lean = summarise(task, "few", 100, prompts, items, seconds=1.0, max_new_tokens=20, save_items=False)
    # correctness is always kept too: the paired comparison of models needs it
    assert lean["items"] == [
        {"index": 0, "n_shots": 100, "prompt_tokens": 200, "correct": True},
        {"index": 1, "n_shots": 97, "prompt_tokens": 197, "correct": False},
        {"index": 2, "n_shots": 100, "prompt_tokens": 200, "correct": True},
    ]
    full = summarise(task, "few", 100, prompts, items, seconds=1.0, max_new_tokens=20, save_items=True)
    assert full["items"] == items and full["items"][1]["prediction"] == " 2"
    # in the file every item sits on one line and the JSON reads back the same
    doc = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "models": [{"model": {"name": "m"}, "results": {"gpt3": {"rows": [lean, full, {**lean, "items": []}]}}}],
    }
    text = dumps_results(doc)
    assert json.loads(text) == doc
    lines = text.splitlines()
    pad = " " * 14  # models[0].results.gpt3.rows[i].items
    assert (
        f'{pad}"items": [' in lines
        and f'{pad}  {{"index": 1, "n_shots": 97, "prompt_tokens": 197, "correct": false}},' in lines
    )
    assert sum(line.strip().startswith('{"index": ') for line in lines) == 6
    assert f'{pad}"items": []' in lines


def test_is_sample(tmp_path):
    from synthprobe.benchmarks.gpt3.sat import is_sample, sample_path

    copy = tmp_path / "copy.txt"
    copy.write_bytes(sample_path().read_bytes())
    other = tmp_path / "other.txt"
    other.write_bytes(sample_path().read_bytes() + b"\n")
    assert is_sample(None) and is_sample(str(copy)) and not is_sample(other)


def test_limits():
    config = EvalConfig(tasks=resolve_tasks("2D+,SAT"), limit=20, limit_few=2).validate()
    assert config.limit_for(0, get_task("2D+")) == config.limit_for(1, get_task("CL")) == 20
    assert config.limit_for(50, get_task("2D+")) == config.limit_for(100, get_task("RI")) == 2
    assert config.limit_for(20, get_task("SAT")) == 20  # SAT's few-shot prompts are short
    assert EvalConfig(tasks=resolve_tasks("2D+"), limit=5).limit_for(50, get_task("2D+")) == 5


def test_eval_config_validation():
    tasks = resolve_tasks("2D+")
    for kwargs, field in (
        ({"shots": ["many"]}, "--shots"),
        ({"limit": 0}, "--limit"),
        ({"check": "fuzzy"}, "--check"),
        ({"max_context": 4}, "--max-context"),
        ({"batch_size": 0}, "--batch-size"),
        ({"format": "x"}, "--format"),
        ({"sat_file": "/nonexistent/sat.txt"}, "--sat-file"),
    ):
        with pytest.raises(InputError) as err:
            EvalConfig(tasks=tasks, **kwargs).validate()
        assert err.value.field == field


# --------------------------------------------------------------------------------------
# The real embedded model
# --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_real_model_zero_and_one_shot_on_every_task():
    backend = embedded_backend()
    config = EvalConfig(tasks=resolve_tasks("all"), shots=["zero", "one"], limit=2, progress=False)
    results = run(backend, config)
    assert len(results) == 16 * 2
    for r in results:
        task = get_task(r["task"])
        assert r["n"] == 2 and len(r["items"]) == 2 and 0 <= r["accuracy"] <= 100
        assert r["correct"] == sum(it["correct"] for it in r["items"])
        assert set(r["paper"]) == set(SIZES) and (r["lands"] is None) == (r["code"] == "SAT")
        assert r["ci95"] == pytest.approx(interval(r["correct"], r["n"]))
        k = 0 if r["setting"] == "zero" else 1
        assert r["k"] == k and all(it["n_shots"] == k for it in r["items"])
        for it in r["items"]:
            if task.kind == "generate":
                assert "\n" not in it["prediction"]
                assert it["correct"] == exact_match(it["prediction"], it["gold"])
            else:
                means = it["per_token_logprob"]
                assert len(means) == 5 and it["prediction"] == pick_choice(means)
    assert "2D+" in format_table(results) and "175B" in format_table(results)


@pytest.mark.slow
def test_real_model_few_shot_fits_max_context():
    backend = embedded_backend()
    config = EvalConfig(tasks=resolve_tasks("2D+,RI"), shots=["few"], limit=2, max_context=160, progress=False)
    results = run(backend, config)
    tok = backend.tokenizer
    for r in results:
        assert r["k"] == get_task(r["task"]).k_few
        assert r["shots"]["reduced"] == 2 and 0 < r["shots"]["max"] < r["k"]
        assert f"--max-context cut the demonstrations to {r['shots']['mean']:g} on average" in r["paper_note"]
        for it in r["items"]:
            assert it["prompt_tokens"] + r["max_new_tokens"] <= 160
    # the recorded prompt size is the real tokenizer's count of the real prompt
    from synthprobe.benchmarks.gpt3 import BuildConfig, build_items
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

    task = get_task("2D+")
    pool = build_items(BuildConfig("2D+"))
    p = build_prompt(
        task,
        pool,
        0,
        PromptConfig(shots=50, max_context=160, reserve=task.max_new_tokens),
        count_tokens=lambda t: len(tok(t, add_special_tokens=False)["input_ids"]),
    )
    assert p.n_shots == results[0]["items"][0]["n_shots"]
    assert p.n_tokens == len(tok(p.text, add_special_tokens=False)["input_ids"])


@pytest.mark.slow
def test_real_model_sat_few_shot_and_is_greedy_check():
    backend = embedded_backend()
    (sat,) = run(backend, EvalConfig(tasks=resolve_tasks("SAT"), shots=["few"], limit=4, progress=False))
    assert sat["k"] == 20 and sat["shots"]["mean"] == 15 and sat["shots"]["reduced"] == 0
    # the choice rule is the per-token mean of the backend's log-likelihoods
    from synthprobe.benchmarks.gpt3 import BuildConfig, build_items
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

    pool = build_items(BuildConfig("SAT"))
    p = build_prompt(get_task("SAT"), pool, 1, PromptConfig(shots=20))
    scores = backend.loglikelihood([(p.text, e) for e in pool[1].endings], max_context=2048)
    means = [s.logprob / s.n_tokens for s in scores]
    assert sat["items"][1]["per_token_logprob"] == pytest.approx(means, abs=1e-4)
    assert sat["items"][1]["prediction"] == pick_choice(means)

    (greedy,) = run(
        backend, EvalConfig(tasks=resolve_tasks("2D+"), shots=["one"], limit=6, check="is-greedy", progress=False)
    )
    (generated,) = run(backend, EvalConfig(tasks=resolve_tasks("2D+"), shots=["one"], limit=6, progress=False))
    # SmolLM2 writes " 143" as a space then one token per digit, so "the gold tokens are the
    # argmax at every step" is "greedy generation starts with the gold completion"
    for g, e in zip(greedy["items"], generated["items"]):
        assert g["correct"] == e["prediction"].startswith(g["gold"]) and g["logprob"] <= 0
    assert greedy["max_new_tokens"] is None


@pytest.mark.slow
def test_interrupted_run_resumes_from_the_score_cache(monkeypatch):
    """Ctrl-C after two batches keeps those items; the rerun scores only the rest and equals
    a run without the cache, for generation and for the choice task alike."""
    import signal

    from synthprobe.scoring.cache import ScoreCache
    from synthprobe.scoring.runner import ScoringInterrupted

    backend = embedded_backend()
    cfg = dict(tasks=resolve_tasks("2D+,CL,SAT"), shots=["one"], limit=6, batch_size=2, progress=False)
    fresh = run(backend, EvalConfig(**cfg, cache=False))
    original, appended = ScoreCache.append, []

    def append_then_ctrl_c(self, records):
        n = original(self, records)
        appended.append(n)
        if len(appended) == 2:
            signal.raise_signal(signal.SIGINT)
        return n

    monkeypatch.setattr(ScoreCache, "append", append_then_ctrl_c)
    with pytest.raises(ScoringInterrupted, match=r"interrupted after 4 items \(2D\+ one\); 4 of 6 items are cached"):
        run(backend, EvalConfig(**cfg))
    monkeypatch.setattr(ScoreCache, "append", original)
    assert appended == [2, 2, 0]  # the Ctrl-C handler saves what is not on disk: nothing here

    resumed = run(backend, EvalConfig(**cfg))
    assert [r["cached_items"] for r in resumed] == [4, 0, 0]

    def same(r):
        return {k: v for k, v in r.items() if k not in ("seconds", "items_per_s", "cached_items")}

    assert [same(r) for r in resumed] == [same(r) for r in fresh]
    again = run(backend, EvalConfig(**cfg))
    assert all(r["cached_items"] == 6 and r["items_per_s"] is None for r in again)
    assert [same(r) for r in again] == [same(r) for r in fresh]


@pytest.mark.model  # the default model: the embedded SmolLM2, scored through the command line
def test_cli_score_writes_results_and_prints_the_table(tmp_path):
    out = tmp_path / "res.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe.cli",
            "score",
            "gpt3",
            "--tasks",
            "2D+,SAT",
            "--shots",
            "0,1",
            "--limit",
            "2",
            "--output",
            str(out),
            "--quiet",
            "--threads",
            "1",
        ],
        capture_output=True,
        text=True,
        env=env(),
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    # the one results document: one model entry, the rows in its gpt3 block
    assert (doc["schema"], doc["schema_version"]) == (SCHEMA, SCHEMA_VERSION) and "benchmark" not in doc
    assert doc["command"].startswith("synthprobe score gpt3 --tasks 2D+,SAT")
    (entry,) = doc["models"]
    assert entry["settings"]["limits"]["zero_one_shot"] == 2
    assert entry["settings"]["threads"] == 1 and entry["model"]["params"] > 100_000_000
    assert set(entry["seconds"]) == {"load", "total"}
    rows = entry["results"]["gpt3"]["rows"]
    assert [(r["code"], r["setting"]) for r in rows] == [
        ("2D+", "zero"),
        ("2D+", "one"),
        ("SAT", "zero"),
        ("SAT", "one"),
    ]
    read = read_results(out)
    assert read.layout == SCHEMA and read.command == doc["command"]
    assert [e.results["gpt3"].data["rows"] for e in read.models] == [rows]
    for r in rows:
        # without --save-predictions every item still keeps its index, shots, prompt size and
        # correctness (for the paired comparison of models)
        assert [list(it) for it in r["items"]] == [["index", "n_shots", "prompt_tokens", "correct"]] * 2
        assert [it["index"] for it in r["items"]] == [0, 1]
        assert all(it["n_shots"] == r["k"] and it["prompt_tokens"] > 0 for it in r["items"])
        lo, hi = r["ci95"]
        assert 0 <= lo <= r["accuracy"] <= hi <= 100 and hi - lo > 30  # two items say little
        if r["code"] == "SAT":  # the shipped sample: no verdict against the real SAT set
            assert r["lands"] is None and "real SAT set" in r["paper_note"]
        else:
            assert r["lands"] == "n too small"
    assert sum(line.lstrip().startswith('{"index": ') for line in out.read_text().splitlines()) == 8
    lines = proc.stdout.splitlines()
    # the full model name (longer than a column) above the table, a short column title inside it
    assert lines[0] == f"model: {entry['model']['name']}" and len(entry["model"]["name"]) > 24
    assert lines[2].split()[4:6] == ["model", "95%"]
    assert "175B" in proc.stdout and "76.9" in proc.stdout and "53.7" in proc.stdout


def test_cli_bad_input_writes_nothing(tmp_path):
    out = tmp_path / "res.json"
    base = [sys.executable, "-m", "synthprobe.cli", "score", "gpt3", "--output", str(out), "--quiet"]
    for extra, words in (
        (["--tasks", "9D+"], "unknown task"),
        (["--shots", "lots"], "--shots"),
        (["--model", str(tmp_path / "missing.gguf")], "missing.gguf"),
    ):
        proc = subprocess.run(base + extra, capture_output=True, text=True, env=env())
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr
    assert not out.exists()


def test_cli_model_that_fails_to_load_exits_1(tmp_path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "no-such-architecture"}')
    (folder / "tokenizer_config.json").write_text("{}")  # past the tokenizer check: the load itself fails
    out = tmp_path / "res.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe.cli",
            "score",
            "gpt3",
            "--tasks",
            "2D+",
            "--model",
            str(folder),
            "--output",
            str(out),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env(),
    )
    assert proc.returncode == 1, proc.stderr
    assert "could not load model" in proc.stderr and not out.exists()


def test_cli_build_bad_values(tmp_path):
    out = tmp_path / "x.jsonl"
    for extra in (["2D+", "--n", "0"], ["2D+", "--n", "20000"], ["CL", "--format", "gpt"], ["2D+", "--seed", "-3"]):
        proc = subprocess.run(
            [sys.executable, "-m", "synthprobe.cli", "build", *extra, "--out", str(out)],
            capture_output=True,
            text=True,
            env=env(),
        )
        assert proc.returncode == 2, (extra, proc.stderr)
    assert not out.exists()


def test_cli_help_is_true_to_the_defaults():
    from synthprobe.benchmarks.gpt3.registry import ordered_tasks

    proc = subprocess.run(
        [sys.executable, "-m", "synthprobe.cli", "score", "gpt3", "--help"],
        capture_output=True,
        text=True,
        env={**env(), "COLUMNS": "400"},
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "tokens to generate per item" in x)
    groups = {
        int(n): codes.split()
        for n, codes in (g.split(" for ") for g in line.split("default per task: ")[1].rstrip(")").split("; "))
    }
    generate = [t for t in ordered_tasks() if t.kind == "generate"]
    assert sorted(c for codes in groups.values() for c in codes) == sorted(t.code for t in generate)
    for t in generate:
        assert t.code in groups[t.max_new_tokens], t.code
    assert {"2Dx", "1DC"} <= set(groups[8])
    # the layout's difference from lm-eval is told in the docs the help points to
    assert "docs/command-line.md" in proc.stdout
    doc = " ".join((Path(__file__).resolve().parents[4] / "docs" / "command-line.md").read_text().split())
    assert "differs from lm-eval's unscramble layout" in doc


def test_task_names_in_any_case(tmp_path):
    assert [t.code for t in resolve_tasks("2d+,cl,Arithmetic_2DA,sat")] == ["2D+", "CL", "SAT"]
    outs = {}
    for name in ("2D+", "2d+", "arithmetic_2DA"):
        proc = subprocess.run(
            [sys.executable, "-m", "synthprobe.cli", "build", name, "--n", "3", "--out", "-"],
            capture_output=True,
            text=True,
            env=env(),
        )
        assert proc.returncode == 0, (name, proc.stderr)
        outs[name] = proc.stdout
    assert len(set(outs.values())) == 1 and outs["2D+"].count("\n") == 3
    proc = subprocess.run(
        [sys.executable, "-m", "synthprobe.cli", "build", "9d+", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        env=env(),
    )
    assert proc.returncode == 2 and "invalid choice: '9d+'" in proc.stderr and "'2D+'" in proc.stderr


def test_sat_file_without_a_sat_task_is_an_error(tmp_path):
    from synthprobe.benchmarks.gpt3.sat import sample_path

    with pytest.raises(InputError, match="only the SAT task reads a source file") as err:
        EvalConfig(tasks=resolve_tasks("2D+,CL"), sat_file=str(sample_path())).validate()
    assert err.value.field == "--sat-file"
    EvalConfig(tasks=resolve_tasks("2D+,SAT"), sat_file=str(sample_path())).validate()
    for verb in (
        ["score", "gpt3", "--output", str(tmp_path / "r.json")],
        ["build", "gpt3", "--out-dir", str(tmp_path)],
    ):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "synthprobe.cli",
                *verb,
                "--tasks",
                "2D+",
                "--sat-file",
                str(sample_path()),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            env=env(),
        )
        assert proc.returncode == 2, proc.stderr
        assert "--sat-file" in proc.stderr and "selects none (2D+)" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_plan_line_counts_one_run_as_one_run():
    from synthprobe.benchmarks.gpt3.registry import resolve_tasks
    from synthprobe.benchmarks.gpt3.scoring.score import PlanCell, plan_text

    task = resolve_tasks("arithmetic")[0]
    one = plan_text([PlanCell(task, "zero-shot", 0, 20)])
    assert "= 1 run, 20 items" in one and "1 task (" in one and "1 setting " in one
    two = plan_text([PlanCell(task, "zero-shot", 0, 20), PlanCell(task, "one-shot", 1, 20)])
    assert "= 2 runs, 40 items" in two and "2 settings" in two
