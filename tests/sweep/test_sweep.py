"""``synthprobe sweep``: the grid, the seed-to-seed statistics, bad input, and (slow) real runs of
the embedded model on a local Ray with two CPU workers against a serial run, with one worker
killed midway."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED
from synthprobe.errors import InputError
from synthprobe.metrics.sweep import kendalls_w, seed_spread
from synthprobe.sweep.grid import make_grid, parse_seeds
from tests.support.cli import synthprobe

LIMIT = 8


# -- statistics ----------------------------------------------------------------------------------


def test_kendalls_w_matches_friedman_test_of_scipy():
    from scipy.stats import friedmanchisquare

    table = [[0.50, 0.40, 0.30, 0.30], [0.45, 0.45, 0.20, 0.25], [0.30, 0.50, 0.25, 0.10]]
    w, p = kendalls_w(table)
    # W = chi2_F / (m (n - 1)), both tie-corrected; scipy computes chi2_F its own way
    stat, p_scipy = friedmanchisquare(*zip(*table))
    assert w == pytest.approx(stat / (3 * 3))
    assert p == pytest.approx(p_scipy)


def test_kendalls_w_at_the_extremes():
    assert kendalls_w([[0.5, 0.4, 0.3]] * 4)[0] == pytest.approx(1.0)
    assert kendalls_w([[0.5, 0.4, 0.3], [0.3, 0.4, 0.5]])[0] == pytest.approx(0.0)
    assert kendalls_w([[0.5, 0.4, 0.3]]) == (None, None)  # one seed
    assert kendalls_w([[0.5], [0.4]]) == (None, None)  # one model
    assert kendalls_w([[0.3, 0.3], [0.2, 0.2]]) == (None, None)  # every seed ties every model


def test_seed_spread_mean_sd_and_rank_agreement():
    scores = {
        "a": {"release": 0.50, "1": 0.40, "2": 0.60},
        "b": {"release": 0.30, "1": 0.45, "2": 0.35},
        "c": {"release": 0.20, "1": 0.10},
    }
    s = seed_spread(scores)
    assert s["models"]["a"]["mean"] == pytest.approx(0.5)
    assert s["models"]["a"]["sd"] == pytest.approx(0.1)
    assert s["models"]["c"]["n_seeds"] == 2
    assert s["seeds_compared"] == ["release", "1"]  # seed 2 lacks model c
    # by the mean over release and 1: a (0.45) > b (0.375) > c (0.15); seed 1 puts b first
    assert [s["models"][m]["rank_by_mean"] for m in "abc"] == [1.0, 2.0, 3.0]
    assert s["seeds_matching_mean_ranking"] == 1
    assert s["share_matching_mean_ranking"] == 0.5
    assert [s["models"][m]["seeds_at_rank_by_mean"] for m in "abc"] == [1, 1, 2]


# -- the grid ------------------------------------------------------------------------------------


def test_seeds_parse_in_order_with_release():
    seeds = parse_seeds("release,1-3,7")
    assert [s.label for s in seeds] == ["release", "1", "2", "3", "7"]
    assert seeds[0].value == RELEASE_SEED
    for bad in ("1,1", "3-1", "x", "", f"release,{RELEASE_SEED}", "1-999999"):
        with pytest.raises(InputError):
            parse_seeds(bad)


def test_grid_file_and_command_line_combine(tmp_path):
    f = tmp_path / "grid.yaml"
    f.write_text("models:\n  - m1\n  - {spec: m1, label: m1-bf16, dtype: bfloat16}\nseeds: 1-2\nlimit: 5\n")
    grid = make_grid(grid_file=f, models=["toy:x"], seeds=None, tasks=None, limit=None)
    assert [m.label for m in grid.models] == ["m1", "m1-bf16", "toy:x"]
    assert grid.models[1].options == {"dtype": "bfloat16"}
    assert grid.limit == 5
    jobs = grid.jobs()
    assert [(j.model.label, j.seed.label) for j in jobs[:3]] == [("m1", "1"), ("m1", "2"), ("m1-bf16", "1")]
    assert make_grid(grid_file=f, models=None, seeds="release", tasks=None, limit=2).limit == 2


@pytest.mark.parametrize(
    "text, field",
    [
        ("models: [m1, m1]\n", "models"),  # two models share a label
        ("model: [m1]\n", "model"),  # unknown key
        ("models: [{spec: m1, colour: red}]\n", "models[0].colour"),
        ("seeds: 2-1\n", "seeds"),
        ("tasks: [lambada]\n", "tasks"),
        ('tasks: ["gpt3:nope"]\n', "tasks"),
        ('tasks: ["gpt3:2D+"]\nseeds: release,0\n', "seeds"),
        ("limit: 0\n", "limit"),
        ("- just a list\n", None),
    ],
)
def test_bad_grid_files_are_located(tmp_path, text, field):
    f = tmp_path / "grid.yaml"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        make_grid(grid_file=f, models=None, seeds=None, tasks=None, limit=None)
    assert err.value.path == str(f)
    assert err.value.field == field


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """The tests' one-file engine as kind ``toy`` (a CPU-only, not in-process kind for the sweep)."""
    from synthprobe.backends import ENGINES, register_engine

    monkeypatch.setenv("SYNTHPROBE_CACHE", str(tmp_path / "cache"))
    saved = dict(ENGINES)
    register_engine("toy", "toy_engine")
    yield
    ENGINES.clear()
    ENGINES.update(saved)


def _settings(tmp_path, **kw):
    from synthprobe.sweep.run import Settings

    return Settings(options={"dtype": None, "device": "auto", "progress": False}, data_dir=str(tmp_path / "data"), **kw)


def test_jobs_ask_for_a_gpu_only_for_an_in_process_model_on_cuda(toy, tmp_path):
    from synthprobe.sweep.grid import GridModel, Job, Seed
    from synthprobe.sweep.run import job_options, resources

    settings = _settings(tmp_path, cpus_per_job=3)
    seed = Seed("1", 1)

    def job(spec, **options):
        return Job(0, GridModel(spec, spec, options), "deeparithmark", seed, seed.value)

    hf = job("smollm2-135m-instruct")
    assert resources(hf, settings, cluster_has_gpu=False) == {"num_cpus": 3, "num_gpus": 0}
    assert resources(hf, settings, cluster_has_gpu=True) == {"num_cpus": 3, "num_gpus": 1}
    assert resources(job("smollm2-135m-instruct", device="cuda"), settings, cluster_has_gpu=False)["num_gpus"] == 1
    assert resources(job("smollm2-135m-instruct", device="cpu"), settings, cluster_has_gpu=True)["num_gpus"] == 0
    server = job("toy:served")  # an engine outside the process: one CPU, never a GPU
    assert resources(server, settings, cluster_has_gpu=True) == {"num_cpus": 1, "num_gpus": 0}
    # an in-process CPU model runs on cpus_per_job torch threads unless --threads says otherwise
    assert job_options(hf, settings)["threads"] == 3
    assert "threads" not in job_options(server, settings)


def test_serial_sweep_in_process_is_deterministic_and_summarised(toy, tmp_path):
    from synthprobe.report.sweep import parse as read_sweep
    from synthprobe.results import parse
    from synthprobe.sweep.run import document, prepare_data, run_serial

    grid = make_grid(grid_file=None, models=["toy:a", "toy:b"], seeds="release,1,2", tasks=None, limit=40)
    settings = _settings(tmp_path, limit=40, batch_size=7)
    prepare_data(grid, Path(settings.data_dir), progress=False)
    done = []
    docs = [
        document(
            grid, settings, [r["entry"] for r in run_serial(grid.jobs(), settings, lambda j, r: done.append(j.index))]
        )
        for _ in range(2)
    ]
    assert done == list(range(6)) * 2
    assert json.dumps(docs[0]) == json.dumps(docs[1])
    doc = docs[0]
    summary = doc["sweep"]["summary"]["deeparithmark"]
    accs = {
        (e["sweep"]["label"], e["sweep"]["seed_label"]): e["results"]["deeparithmark"]["summary"]["metrics"][
            "acc_norm"
        ]["correct"]
        / 40
        for e in doc["models"]
    }
    for label in ("toy:a", "toy:b"):
        values = [accs[(label, s)] for s in ("release", "1", "2")]
        assert summary["models"][label]["mean"] == pytest.approx(sum(values) / 3)
    # the report recomputes the same spread from the file's scores
    [table] = read_sweep(parse(json.loads(json.dumps(doc)), tmp_path / "sweep.json"))
    assert {"metric": "acc_norm", **table.summary} == summary
    assert "timing" not in doc["models"][0]["results"]["deeparithmark"]


def test_gpt3_tasks_in_a_sweep_score_as_score_gpt3_does(toy, tmp_path):
    from synthprobe.backends import load_backend
    from synthprobe.benchmarks.gpt3.registry import get_task
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig, run
    from synthprobe.report.sweep import parse as read_sweep
    from synthprobe.results import parse
    from synthprobe.sweep.run import document, run_serial

    grid = make_grid(grid_file=None, models=["toy:a", "toy:b"], seeds="release,1", tasks=["gpt3:2D+"], limit=12)
    assert grid.tasks == ["gpt3:arithmetic_2da"]
    settings = _settings(tmp_path, limit=12, batch_size=5)
    entries = [r["entry"] for r in run_serial(grid.jobs(), settings, lambda j, r: None)]
    assert [(e["sweep"]["label"], e["sweep"]["seed"]) for e in entries] == [
        ("toy:a", 0),
        ("toy:a", 1),
        ("toy:b", 0),
        ("toy:b", 1),
    ]  # 'release' is GPT-3's seed 0
    backend = load_backend("toy:b")
    direct = run(
        backend,
        EvalConfig(
            tasks=[get_task("2D+")],
            shots=["zero"],
            limit=12,
            seed=1,
            batch_size=5,
            save_items=False,
            progress=False,
            cache=False,
        ),
    )
    for row in direct:
        for key in ("cached_items", "seconds", "items_per_s"):
            row.pop(key)
    assert entries[3]["results"]["gpt3"]["rows"] == direct
    doc = document(grid, settings, entries)
    # the sweep records the context its GPT-3 jobs were given (score gpt3's, not --max-context)
    assert settings.max_context == 1024
    assert doc["sweep"]["settings"]["gpt3_max_context"] == EvalConfig(tasks=[get_task("2D+")]).max_context == 2048
    summary = doc["sweep"]["summary"]["gpt3:arithmetic_2da"]
    assert summary["metric"] == "accuracy"
    assert summary["models"]["toy:b"]["mean"] == pytest.approx(
        (entries[2]["results"]["gpt3"]["rows"][0]["correct"] + direct[0]["correct"]) / 24
    )
    [table] = read_sweep(parse(json.loads(json.dumps(doc)), tmp_path / "sweep.json"))
    assert table.task == "gpt3:arithmetic_2da"
    assert {"metric": "accuracy", **table.summary} == summary


def _cli(args, cwd, env=None, **kw):
    """``synthprobe sweep ARGS`` through the shared runner."""
    return synthprobe("sweep", *args, cwd=cwd, extra_env=env, **kw)


def test_bad_grid_input_exits_2_and_writes_nothing(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text("models: [smollm2-135m-instruct]\nseeds: [release, oops]\n")
    cases = [
        ["--grid", str(grid)],
        ["--seeds", "1,1"],
        ["--grid", str(tmp_path / "missing.yaml")],
        ["--task", "lambada"],
        ["--model", "smollm2-135m-instruct", "--model-arg", "colour=red"],
    ]
    for args in cases:
        r = _cli(
            [*args, "--serial", "--output", str(tmp_path / "out.json"), "--data-dir", str(tmp_path / "d")], tmp_path
        )
        assert r.returncode == 2, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp_path / "out.json").exists() and not (tmp_path / "d").exists()
    (tmp_path / "out.json").write_text("{}")
    r = _cli(["--serial", "--output", str(tmp_path / "out.json")], tmp_path)
    assert r.returncode == 2 and "--overwrite" in r.stderr
    assert (tmp_path / "out.json").read_text() == "{}"


# -- real runs: serial, Ray, Ray with a worker killed --------------------------------------------


def _env(tmp_path: Path, name: str) -> dict:
    """A fresh score cache (so every run really scores) that shares the converted weights."""
    from synthprobe.backends.spec import cache_root

    root = tmp_path / name
    root.mkdir()
    for sub in ("models", "digests"):
        if (cache_root() / sub).is_dir():
            (root / sub).symlink_to(cache_root() / sub)
    return {**os.environ, "SYNTHPROBE_CACHE": str(root)}


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    (d / "grid.yaml").write_text(
        "models:\n"
        "  - smollm2-135m-instruct\n"
        "  - {spec: smollm2-135m-instruct, label: smollm2-bos, model_args: {bos: true}}\n"
        f"seeds: release,1\nlimit: {LIMIT}\n"
    )
    return d


def _sweep(d: Path, env: dict, out: str, *extra: str, **kw):
    return _cli(
        [
            "--grid",
            str(d / "grid.yaml"),
            "--batch-size",
            "1",
            "--no-progress",
            "--data-dir",
            str(d / "data"),
            "--output",
            str(d / out),
            *extra,
        ],
        d,
        env=env,
        **kw,
    )


@pytest.fixture(scope="module")
def serial(sweep_dir, tmp_path_factory):
    r = _sweep(sweep_dir, _env(tmp_path_factory.mktemp("c"), "serial"), "serial.json", "--serial", timeout=1200)
    assert r.returncode == 0, r.stderr
    return sweep_dir / "serial.json"


@pytest.mark.slow
def test_serial_sweep_document_and_report(serial, sweep_dir):
    from synthprobe.results import read_results

    doc = json.loads(serial.read_text())
    keys = [(e["sweep"]["label"], e["sweep"]["seed_label"]) for e in doc["models"]]
    assert keys == [
        ("smollm2-135m-instruct", "release"),
        ("smollm2-135m-instruct", "1"),
        ("smollm2-bos", "release"),
        ("smollm2-bos", "1"),
    ]
    assert len(read_results(serial).models) == 4
    release = doc["models"][0]["results"]["deeparithmark"]["dataset"]
    assert release["sha256"] == "6bc14eb787488885b66824d37252c01bb8c0cc9a2e028398d2b2bd192b2b3f83"
    assert {e["results"]["deeparithmark"]["summary"]["n"] for e in doc["models"]} == {LIMIT}
    summary = doc["sweep"]["summary"]["deeparithmark"]
    accs = [e["results"]["deeparithmark"]["summary"]["metrics"]["acc_norm"] for e in doc["models"]]
    mean = (accs[0]["correct"] / LIMIT + accs[1]["correct"] / LIMIT) / 2
    assert summary["models"]["smollm2-135m-instruct"]["mean"] == pytest.approx(mean)
    assert summary["seeds_compared"] == ["release", "1"]
    # BOS changes the contexts, so the two specs are two models with their own scores
    soft = [e["results"]["deeparithmark"]["summary"]["metrics"]["soft"] for e in doc["models"]]
    assert soft[0] != soft[2]

    out = sweep_dir / "report"
    r = subprocess.run(
        [sys.executable, "-m", "synthprobe", "report", str(serial), "--out", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    md = (out / "leaderboard.md").read_text()
    assert "## Sweep: spread across seeds" in md
    assert "smollm2-bos · seed release" in md
    sd = summary["models"]["smollm2-bos"]["sd"]
    assert f"| smollm2-bos | 2 | {100 * summary['models']['smollm2-bos']['mean']:.2f} | {100 * sd:.2f} |" in md
    assert "Sweep: spread across seeds" in (out / "index.html").read_text()


@pytest.mark.slow
def test_ray_sweep_with_two_workers_equals_serial(serial, sweep_dir, tmp_path):
    r = _sweep(sweep_dir, _env(tmp_path, "ray"), "ray.json", "--workers", "2", timeout=1200)
    assert r.returncode == 0, r.stderr
    assert "on a local Ray with 2 CPUs" in r.stderr
    assert (sweep_dir / "ray.json").read_bytes() == serial.read_bytes()


def _job_processes() -> dict[int, int]:
    """pid → job index of every Ray worker now running a sweep job (Ray titles the process
    ``ray::synthprobe-sweep-job-<index>``)."""
    from synthprobe.sweep.run import TASK_NAME

    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace").strip()
        except OSError:
            continue
        prefix = f"ray::{TASK_NAME}-"
        if cmd.startswith(prefix) and cmd[len(prefix) :].isdigit():
            found[int(name)] = int(cmd[len(prefix) :])
    return found


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


@pytest.mark.slow
def test_ray_sweep_survives_a_killed_worker(serial, sweep_dir, tmp_path):
    env = _env(tmp_path, "kill")
    scores = Path(env["SYNTHPROBE_CACHE"]) / "scores"
    args = [
        "--grid",
        str(sweep_dir / "grid.yaml"),
        "--batch-size",
        "1",
        "--no-progress",
        "--data-dir",
        str(sweep_dir / "data"),
        "--output",
        str(sweep_dir / "killed.json"),
        "--workers",
        "2",
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "synthprobe", "sweep", *args],
        cwd=sweep_dir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    try:
        deadline = time.monotonic() + 900
        while proc.poll() is None and killed is None and time.monotonic() < deadline:
            running = _job_processes()
            midway = [f for f in scores.glob("*.jsonl") if 2 <= _lines(f) < LIMIT]
            # every running job has cached at least two items and none has finished: kill one
            if running and len(midway) >= len(running):
                pid = min(running)
                os.kill(pid, signal.SIGKILL)
                killed = (pid, running[pid])
            time.sleep(0.05)
        out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert killed is not None, "no job was caught midway"
    assert proc.returncode == 0, err
    assert (sweep_dir / "killed.json").read_bytes() == serial.read_bytes()
    pid, job = killed
    line = next(x for x in out.splitlines() + err.splitlines() if x.startswith(f"job {job}: "))
    # the retried job ran in another worker and read back what the killed one had cached
    assert f"pid {pid})" not in line
    cached = int(line.split("(")[-1].split(" cached")[0])
    assert cached >= 2, line


def test_a_sweep_under_a_chat_template_scores_as_score_deeparithmark_does(tmp_path, _isolated_score_cache):
    """--chat-template / --system-prompt on a sweep (serial, a tiny random model): each job asks
    its items under the template, so `score deeparithmark` with the same template on the same file
    finds every score in the cache, and the entry records the template."""
    from scoring_support import save_tiny_llama, write_turns_template

    from synthprobe.cli import main

    model = save_tiny_llama(tmp_path / "tiny")
    template = write_turns_template(tmp_path / "turns.jinja")
    chat = ["--chat-template", str(template), "--system-prompt", "Be exact."]
    common = [
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--threads",
        "1",
        "--no-progress",
        "--batch-size",
        "4",
    ]
    out, data = tmp_path / "sweep.json", tmp_path / "data"
    assert (
        main(
            [
                "sweep",
                *common,
                *chat,
                "--seeds",
                "1",
                "--limit",
                "6",
                "--serial",
                "--data-dir",
                str(data),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    [entry] = doc["models"]
    assert entry["chat"]["chat_template_name"] == "turns.jinja"
    assert entry["chat"]["system_prompt"] == "Be exact."
    [variant] = data.glob("*.jsonl")
    scored = tmp_path / "score.json"
    assert (
        main(
            ["score", "deeparithmark", "--data", str(variant), "--limit", "6", *common, *chat, "--output", str(scored)]
        )
        == 0
    )
    [again] = json.loads(scored.read_text())["models"]
    assert again["results"]["deeparithmark"]["cached_items"] == 6
    assert again["results"]["deeparithmark"]["summary"] == entry["results"]["deeparithmark"]["summary"]
