"""A run says what it is about to do: its plan (what x settings x items), an estimate from a
short calibration on the loaded model, and a long run waits for --yes instead of starting.
One mechanism (synthprobe.plan) for every command that scores a model."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def _command(name: str, out, n: int, tmp_path) -> list[str]:
    """``name`` on the toy engine, about ``n`` items to score, results to ``out``."""
    return {
        "score deeparithmark": ["score", "deeparithmark", "--limit", str(n), "--batch-size", "8"],
        "score gpt3": ["score", "gpt3", "--tasks", "2D+", "--shots", "0", "--limit", str(n), "--batch-size", "8"],
        "probe steps": ["probe", "steps", "--limit", str(max(1, n // 3)), "--batch-size", "8"],
        "probe number-format": [
            "probe",
            "number-format",
            "--n",
            str(n),
            "--tasks",
            "none",
            "--formats",
            "comma",
            "--batch-size",
            "8",
        ],
        "sweep": ["sweep", "--serial", "--limit", str(n), "--batch-size", "8", "--data-dir", str(tmp_path / "data")],
    }[name] + ["--model", "toy:bigram", "--quiet", "--output", str(out)]


COMMANDS = ["score deeparithmark", "score gpt3", "probe steps", "probe number-format", "sweep"]


def _without_timing(doc):
    """A results document less what differs between any two runs (seconds, rates)."""
    if isinstance(doc, dict):
        return {
            k: _without_timing(v)
            for k, v in doc.items()
            if k not in ("timing", "seconds", "load_s", "items_per_s", "eval_s")
        }
    if isinstance(doc, list):
        return [_without_timing(v) for v in doc]
    return doc


@pytest.mark.parametrize("name", COMMANDS)
def test_every_scoring_command_prints_its_plan_and_estimate_then_scores(toy, tmp_path, capsys, name):
    out = tmp_path / "r.json"
    assert main(_command(name, out, 60, tmp_path)) == 0
    cap = capsys.readouterr()
    plan = [line for line in cap.err.splitlines() if line.startswith("plan: ")]
    estimate = [line for line in cap.err.splitlines() if line.startswith("estimate: ")]
    assert len(plan) == 1 and len(estimate) == 1, cap.err
    assert estimate[0].startswith("estimate: about ") and "kept for the run" in estimate[0], estimate
    assert cap.out.rstrip().splitlines()[-1] == f"results: {out}" and out.is_file()


@pytest.mark.parametrize("name", COMMANDS)
def test_a_run_estimated_over_the_limit_waits_for_yes_and_writes_nothing(toy, tmp_path, capsys, monkeypatch, name):
    import synthprobe.plan as run_plan

    monkeypatch.setattr(run_plan, "CONFIRM_ABOVE_S", 0.0)  # the toy engine is fast: make any run "long"
    out = tmp_path / "r.json"
    args = _command(name, out, 60, tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "plan: " in err and "estimate: " in err and "pass --yes to start it" in err, err
    # every kind of cell was timed: the figure is an estimate, not a lower bound
    assert "estimate: about " in err and "stopped timing" not in err, err
    assert "--limit N" in err or "--n N" in err, err
    assert not out.exists()
    assert main([*args, "--yes"]) == 0 and out.is_file()


def test_timing_stops_once_past_the_limit_and_says_the_figure_is_a_lower_bound(toy, tmp_path, capsys, monkeypatch):
    import synthprobe.plan as run_plan

    monkeypatch.setattr(run_plan, "CONFIRM_ABOVE_S", 0.0)
    out = tmp_path / "r.json"
    # two kinds of cells (Deep Arithmark, the GPT-3 task): the first one timed is past the limit
    assert (
        main(
            [
                "probe",
                "number-format",
                "--n",
                "60",
                "--tasks",
                "4D+",
                "--gpt3-n",
                "60",
                "--model",
                "toy:bigram",
                "--quiet",
                "--output",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "estimate: over " in err and "stopped timing once past the limit" in err, err
    assert "pass --yes to start it, or score less with --n N, --gpt3-n N or --tasks" in err and not out.exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_a_small_run_is_planned_without_a_calibration(toy, tmp_path, capsys, name):
    out = tmp_path / "r.json"
    assert main(_command(name, out, 5, tmp_path)) == 0
    err = capsys.readouterr().err
    assert "plan: " in err and "estimate" not in err, err


def test_two_models_of_a_few_items_each_are_estimated_for_all_their_items(toy, tmp_path, capsys):
    # 30 items is below the calibration threshold for one model; two models score 60
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--model",
                "a=toy:bigram",
                "--model",
                "b=toy:bigram",
                "--limit",
                "30",
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "estimate: about" in err and "for 2 models: the other at about" in err, err


def test_gpt3_plan_names_tasks_settings_and_items(toy, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "toy:bigram",
                "--tasks",
                "2D+,CL",
                "--shots",
                "0,1",
                "--limit",
                "120",
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "plan: 2 tasks (2D+, CL) x 2 settings = 4 runs, 480 items (zero 240, one 240)" in err, err
    assert "estimate: about" in err


@pytest.mark.parametrize("name", COMMANDS)
def test_the_calibration_changes_no_score(toy, tmp_path, monkeypatch, name):
    """The items a calibration times are kept for the run: the results are the same bytes (less
    the timings) as a run without a calibration, with the score cache off and on."""
    import synthprobe.plan as run_plan

    docs = {}
    for cache in ("--no-cache", None):
        for calibrated in (True, False):
            monkeypatch.setattr(run_plan, "CALIBRATE_ABOVE", 48 if calibrated else 10**9)
            monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / f"cache-{cache}-{calibrated}"))
            out = tmp_path / f"{cache}-{calibrated}.json"
            extra = [cache] if cache else []
            if name in ("score deeparithmark", "score gpt3"):
                extra.append("--save-predictions")
            assert main([*_command(name, out, 60, tmp_path), *extra]) == 0
            docs[cache, calibrated] = json.loads(out.read_text())
    for cache in ("--no-cache", None):
        assert _without_timing(docs[cache, True]) == _without_timing(docs[cache, False]), (name, cache)


def test_the_calibrated_batch_goes_to_the_score_cache_and_cached_items_cost_nothing(toy, tmp_path, capsys):
    out1, out2 = tmp_path / "a.json", tmp_path / "b.json"
    base = _command("score deeparithmark", out1, 60, tmp_path)
    assert main(base) == 0
    block = json.loads(out1.read_text())["models"][0]["results"]["deeparithmark"]
    assert block["cached_items"] == 0
    capsys.readouterr()
    assert main([*base[:-1], str(out2)]) == 0  # the same run again: every item is cached
    err = capsys.readouterr().err
    assert "estimate: about 0 s" in err and "60 items already in the score cache cost ~0" in err, err
    assert json.loads(out2.read_text())["models"][0]["results"]["deeparithmark"]["cached_items"] == 60


def test_several_models_multiply_the_estimate_and_protocols_are_cells(toy, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--model",
                "toy:a",
                "--model",
                "toy:b",
                "--protocol",
                "loglik,letters",
                "--limit",
                "30",
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "x 2 protocols (loglik, letters), for 2 models" in err, err
    assert "for 2 models: the other at about " in err and err.count("estimate: ") == 1
    # two kinds of cells to time: each says so while it is being timed
    assert re.findall(r"^timing (\d)/2: deeparithmark · (\w+) \(the first batch on the loaded model\)$", err, re.M) == [
        ("1", "loglik"),
        ("2", "letters"),
    ], err


def test_a_cached_first_model_does_not_make_the_next_models_free(toy, tmp_path, capsys, monkeypatch):
    """The estimate and the one-hour guard count every model: with the first model's items all in
    the score cache, the second (new) model is reckoned at the first one's time per item."""
    import synthprobe.plan as run_plan

    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    first = ["score", "deeparithmark", "--model", "toy:bigram", "--limit", "60", "--batch-size", "8", "--quiet"]
    assert main([*first, "--output", str(tmp_path / "a.json")]) == 0  # every item of toy:bigram now cached
    capsys.readouterr()
    monkeypatch.setattr(run_plan, "CONFIRM_ABOVE_S", 0.0)  # any run that costs anything is "long"
    out = tmp_path / "b.json"
    assert main([*first, "--model", "toy:a", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("estimate: ")]
    assert "60 items already in the score cache cost ~0" in line and "8 cached items timed again" in line, line
    assert "for 2 models: the other at about " in line and "pass --yes to start it" in err and not out.exists()
    assert main([*first, "--model", "toy:a", "--output", str(out), "--yes"]) == 0 and out.is_file()


def test_gpt3_timing_shows_which_task_and_setting_it_is_on(toy, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "score",
                "gpt3",
                "--model",
                "toy:bigram",
                "--tasks",
                "2D+,CL",
                "--shots",
                "0,1",
                "--limit",
                "30",
                "--quiet",
                "--no-cache",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    timing = [ln for ln in err if ln.startswith("timing ")]
    # one line per kind timed (a family and setting), before the estimate it makes
    assert timing == [
        "timing 1/4: 2D+ zero (the first batch on the loaded model)",
        "timing 2/4: 2D+ one (the first batch on the loaded model)",
        "timing 3/4: CL zero (the first batch on the loaded model)",
        "timing 4/4: CL one (the first batch on the loaded model)",
    ], err
    assert err.index(timing[-1]) < next(i for i, ln in enumerate(err) if ln.startswith("estimate: "))


def test_sweep_estimate_says_how_jobs_are_reckoned(toy, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "sweep",
                "--model",
                "toy:a",
                "--model",
                "toy:b",
                "--seeds",
                "release,1",
                "--limit",
                "30",
                "--serial",
                "--quiet",
                "--data-dir",
                str(tmp_path / "data"),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "plan: 4 jobs (2 models x 1 task x 2 seeds) in this process, 120 items" in err, err
    assert "each job reckoned at the first model's time for its task" in err


@pytest.mark.parametrize("probe", ["grammar", "novel-words"])
def test_the_generation_probes_print_their_plan(toy, tmp_path, capsys, probe):
    """The two chained probes generate a handful of items one after another (no score cache, no
    calibration): they say what they will generate before the model loads."""
    assert main(["probe", probe, "--model", "toy:bigram", "--quiet", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert re.search(rf"^plan: {probe} x \d+ items x 1 sample \(chained, one item at a time\)$", err, re.M), err


def test_a_long_generation_probe_is_estimated_from_its_first_item_and_waits_for_yes(toy, tmp_path, capsys, monkeypatch):
    import synthprobe.plan as run_plan

    items = tmp_path / "grammar.jsonl"
    lines = [{"input": "She goed home.", "output": "She went home."}]
    lines += [{"input": f"There is {n} book on the table."} for n in range(60)]
    items.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    args = [
        "probe",
        "grammar",
        "--items",
        str(items),
        "--model",
        "toy:bigram",
        "--quiet",
        "--out",
        str(tmp_path / "out"),
    ]
    monkeypatch.setattr(run_plan, "CONFIRM_ABOVE_S", 0.0)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "plan: grammar x 60 items x 1 sample (chained, one item at a time)" in err, err
    assert "estimate: about " in err and "(1 item timed on the loaded model)" in err, err
    assert "pass --yes to start it, or score less with a shorter --items file" in err
    assert not (tmp_path / "out" / "grammar.json").exists()
    assert main([*args, "--yes"]) == 0 and (tmp_path / "out" / "grammar.json").is_file()


def test_yes_is_documented_on_every_scoring_command(capsys):
    for name in [*COMMANDS, "probe grammar", "probe novel-words"]:
        with pytest.raises(SystemExit):
            main([*name.split(), "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "--yes start a run estimated at over an hour" in text, name


@pytest.mark.slow
def test_real_model_calibration_times_a_batch_and_keeps_the_scores(tmp_path):
    """The embedded model: the estimate comes from a real one-pass batch, and the results with a
    calibration equal those without one (less timings)."""
    docs, errs = [], []
    for threshold in ("48", "1000000000"):
        out = tmp_path / f"r{threshold}.json"
        code = (
            "import synthprobe.plan as p, sys; p.CALIBRATE_ABOVE = int(sys.argv[1]); "
            "from synthprobe.cli import main; sys.exit(main(sys.argv[2:]))"
        )
        res = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                threshold,
                "score",
                "deeparithmark",
                "--limit",
                "64",
                "--batch-size",
                "16",
                "--no-cache",
                "--save-predictions",
                "--quiet",
                "--output",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=tmp_path,
        )
        assert res.returncode == 0, res.stderr
        docs.append(json.loads(out.read_text()))
        errs.append(res.stderr)
    assert "estimate: about" in errs[0] and "(16 items timed on the loaded model" in errs[0], errs[0]
    assert "estimate" not in errs[1]
    assert _without_timing(docs[0]) == _without_timing(docs[1])


@pytest.mark.slow
def test_score_gpt3_with_no_tasks_shows_the_whole_grid_and_does_not_start(tmp_path):
    out = tmp_path / "r.json"
    res = subprocess.run(
        [sys.executable, "-m", "synthprobe", "score", "gpt3", "--quiet", "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=tmp_path,
    )
    assert res.returncode == 2, res.stderr
    assert "plan: 16 tasks" in res.stderr and "x 3 settings = 48 runs" in res.stderr, res.stderr
    assert "estimate: over" in res.stderr and "pass --yes to start it" in res.stderr
    assert not out.exists()


def test_a_few_long_few_shot_prompts_are_estimated_too(toy, tmp_path, capsys):
    """20 few-shot items (50 demonstrations each) are few items but many tokens: the threshold
    counts planned tokens as well as items, so the run is timed and estimated; the same 20 items
    zero-shot stay below both and are planned only."""
    from synthprobe.plan import CALIBRATE_ABOVE, CALIBRATE_ABOVE_TOKENS

    few = ["score", "gpt3", "--tasks", "2D+", "--limit", "20", "--model", "toy:bigram", "--quiet", "--no-cache"]
    assert 20 <= CALIBRATE_ABOVE
    assert main([*few, "--shots", "few", "--output", str(tmp_path / "few.json")]) == 0
    err = capsys.readouterr().err
    assert "estimate: about" in err, err
    assert main([*few, "--shots", "zero", "--output", str(tmp_path / "zero.json")]) == 0
    err = capsys.readouterr().err
    assert "plan: " in err and "estimate" not in err, err
    # the count behind it: the cell's planned tokens, from the model's own tokenizer
    from synthprobe.backends import load_backend
    from synthprobe.benchmarks.gpt3.registry import resolve_tasks
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig, plan, planned_tokens

    backend = load_backend("toy:bigram")
    pools: dict = {}
    for shots, above in (("few", True), ("zero", False)):
        config = EvalConfig(tasks=resolve_tasks("2D+"), shots=[shots], limit=20)
        (cell,) = plan(config, pools)
        tokens = planned_tokens(cell, pools[cell.task.name], backend.count_tokens, config.max_context)
        assert (tokens > CALIBRATE_ABOVE_TOKENS) is above, (shots, tokens)


def test_the_estimate_is_refreshed_from_the_pace_the_run_keeps(toy, tmp_path, capsys, monkeypatch):
    """A calibration during a load spike made the demo's estimate 19 minutes for a 5.5-minute
    run: the run proper says, once, how long is left at the pace it keeps."""
    import synthprobe.plan as run_plan

    monkeypatch.setattr(run_plan, "REFRESH_AFTER_S", 0.0)  # refresh as soon as the run has scored
    assert main(_command("score deeparithmark", tmp_path / "r.json", 60, tmp_path)) == 0
    err = capsys.readouterr().err
    shape = r"^estimate now: about \d+ s left \([1-9][\d,]* items? scored so far took [\d.]+ x the calibration's"
    refreshed = re.findall(shape, err, re.M)
    assert len(refreshed) == 1, err
    assert err.index("estimate: ") < err.index("estimate now: ")


def test_a_later_models_cached_items_shorten_the_estimate_as_it_starts(toy, tmp_path, capsys, monkeypatch):
    """A cached second model was estimated at 74 s and took 32: the estimate reckons the models
    after the loaded one as work, and says the run is shorter once a model finds its items cached."""
    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    one = ["score", "deeparithmark", "--limit", "60", "--batch-size", "8", "--quiet"]
    assert main([*one, "--model", "toy:a", "--output", str(tmp_path / "a.json")]) == 0  # toy:a cached
    capsys.readouterr()
    assert main([*one, "--model", "toy:bigram", "--model", "toy:a", "--output", str(tmp_path / "b.json")]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("estimate now: ")]
    assert lines == [
        "estimate now: about 0 s left (toy:a has 60 of 60 items of deeparithmark in the score "
        "cache; the estimate had counted them as work)"
    ], err
    # the loaded model's own cached items were counted as cached from the start, and a new model
    # finds nothing: no such line
    capsys.readouterr()
    assert main([*one, "--model", "toy:a", "--model", "toy:c", "--output", str(tmp_path / "c.json")]) == 0
    assert "estimate now: " not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score deeparithmark", "score gpt3", "probe number-format"])
def test_a_later_models_cached_items_are_counted_before_the_run(toy, tmp_path, capsys, monkeypatch, command):
    """A cached second model was estimated at 74 s and took 32: where its engine can tell its
    identity without loading it (the HF engine's identify; here the toy engine given one), the
    estimate printed before the run counts its cached items as cached, the one-hour guard with it,
    and the run proper does not take them off a second time."""
    import toy_engine

    import synthprobe.plan as run_plan

    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    base = _command(command, None, 60, tmp_path)[:-5] + ["--quiet"]  # less its model and output
    assert main([*base, "--model", "toy:a", "--output", str(tmp_path / "a.json")]) == 0  # toy:a cached
    capsys.readouterr()
    two = [*base, "--model", "toy:bigram", "--model", "toy:a"]
    # without an identify the engine cannot tell: reckoned in full
    assert main([*two, "--output", str(tmp_path / "b.json")]) == 0
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("estimate: ")]
    assert "for 2 models: the other at about " in line and "none of its items cached" in line, line
    # with one: counted before the run, and the run proper says nothing more
    monkeypatch.setattr(toy_engine, "identify", toy_engine.load, raising=False)
    seen: list = []
    real = run_plan.calibrate
    monkeypatch.setattr(run_plan, "calibrate", lambda *a, **k: seen.append((real(*a, **k), a[0])) or seen[-1][0])
    assert main([*two, "--output", str(tmp_path / "c.json")]) == 0
    err = capsys.readouterr().err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("estimate: ")]
    ((est, cells),) = seen  # the loaded model's cells: what each model of the run scores
    (name, seconds, held, total), n = est.others[0], sum(c.items for c in cells)
    assert seconds == 0.0, est
    assert (name, held, total) == ("toy:a", n, n) and n > 0 and est.each_other > 0, est
    assert f"for 2 models: toy:a at about 0 s ({n:,} of its {n:,} items in its score cache)" in line, line
    assert "estimate now: " not in err, err
    # the whole estimate is the loaded model's: nothing of toy:a's is reckoned as work
    assert est.seconds <= est.each_other, est
    # a model whose engine cannot tell its identity (None), or whose stand-in lacks what a cell
    # asks for before the runner (a bare object), is reckoned in full
    for k, stand in enumerate([lambda spec, **_: None, lambda spec, **_: object()]):
        monkeypatch.setattr(toy_engine, "identify", stand, raising=False)
        seen.clear()
        assert main([*two, "--output", str(tmp_path / f"d{k}.json")]) == 0
        assert seen[0][0].others == [] and "the other at about " in capsys.readouterr().err


def test_a_sweeps_other_models_cached_jobs_are_counted_before_the_run(toy, tmp_path, capsys, monkeypatch):
    """The sweep reckons each other model's jobs at the first model's time: less the items its
    own score cache holds, counted on a stand-in of the model (its part's identify)."""
    import toy_engine

    import synthprobe.plan as run_plan

    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    base = _command("sweep", None, 40, tmp_path)[:-5] + ["--quiet"]
    assert main([*base, "--model", "toy:a", "--output", str(tmp_path / "a.json")]) == 0  # toy:a's jobs cached
    capsys.readouterr()
    two = [*base, "--model", "toy:bigram", "--model", "toy:a"]
    seen: list = []
    real = run_plan.calibrate
    monkeypatch.setattr(run_plan, "calibrate", lambda *a, **k: seen.append((real(*a, **k), a[0])) or seen[-1][0])
    assert main([*two, "--output", str(tmp_path / "b.json")]) == 0  # the toy engine cannot identify: in full
    ((est, cells),) = seen
    mine = sum(c.items for c in cells if c.score is None)  # toy:a's jobs
    assert mine > 0 and est.cached == 0, est
    # a sweep's estimate covers every job (Estimate.each_other: all of them at the timed pace):
    # the loaded model's untimed jobs and all of toy:a's, more than half of it
    assert est.seconds > est.each_other / 2 > 0, est
    capsys.readouterr()
    monkeypatch.setattr(toy_engine, "identify", toy_engine.load, raising=False)
    seen.clear()
    new_first = [*base, "--model", "toy:c", "--model", "toy:a"]  # toy:bigram's jobs are cached by now
    assert main([*new_first, "--output", str(tmp_path / "c.json")]) == 0
    ((est, _),) = seen
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("estimate: ")]
    assert est.cached == mine and f"{mine:,} items already in the score cache cost ~0" in line, line
    assert est.seconds <= est.each_other / 2, est  # the loaded model's untimed jobs alone: toy:a's cost ~0


def test_the_refreshed_pace_is_read_over_whole_batches():
    """A batch's items arrive together, the first carrying the batch's time: the pace is read
    before such an item is added, never with one batch's time set against one item's share
    (seen on the embedded model: "1 item scored so far took 24.98 x", "about 15 min left" for a
    run of 36 s)."""
    import synthprobe.plan as run_plan

    lines: list[str] = []
    ahead = run_plan.Ahead()
    ahead.begin(64.0, lines.append)  # 64 items planned at 1 s each
    for _batch in range(3):  # batches of 8 items, each batch 8 s, as timed
        ahead.scored_item(1.0, 8.0)
        for _ in range(7):
            ahead.scored_item(1.0, 1e-6)
    assert lines == []  # 24 s scored: past REFRESH_AFTER_S, but no item that carries time yet
    ahead.scored_item(1.0, 8.0)  # the fourth batch's first item
    assert lines == [
        "estimate now: about 40 s left (24 items scored so far took 1.00 x the calibration's time per item)"
    ]
