"""A real ``synthprobe score deeparithmark`` process, stopped mid-run, then resumed from the score cache.

Each test starts the console command on the embedded model (fp32, CPU) over the first
``N_ITEMS`` items of the release, waits until the per-item cache holds some but not all
items, and stops the process with SIGKILL or SIGINT (Ctrl-C). The stopped run must leave no
results file and only whole records in the cache; the same command run again must score
only the missing items and give exactly the per-item scores and summary of an uninterrupted
``--no-cache`` run. A last test delivers Ctrl-C between the items of one batch, in process on
a tiny model, to show that the finished items of a cut-short batch are kept as well.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from scoring_support import RELEASE, save_tiny_llama, write_fixture

import synthprobe.benchmarks.deeparithmark.scoring.workloads as scoring_run
from synthprobe.cli import main
from synthprobe.scoring.cache import ScoreCache

#: Items in the slice. At 3-6 items/s the signal lands with 4-8 s of work left.
N_ITEMS = 32
BATCH = 4
#: Cached records to wait for before the signal: two whole batches.
STOP_AT = 2 * BATCH
#: Seconds any one wait may take before the test fails instead of hanging.
TIMEOUT = 600

_SCRIPT = Path(sys.executable).with_name("synthprobe")
#: The installed console command; the same entry point through the interpreter otherwise.
COMMAND = (
    [str(_SCRIPT)]
    if _SCRIPT.is_file()
    else [sys.executable, "-c", "import sys; from synthprobe.cli import main; sys.exit(main())"]
)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    lines = RELEASE.read_text(encoding="utf-8").splitlines()[:N_ITEMS]
    assert len(lines) == N_ITEMS, f"{RELEASE} holds fewer than {N_ITEMS} items"
    out = tmp_path_factory.mktemp("data") / "slice.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _args(data: Path, out: Path, *extra: str) -> list[str]:
    return [
        *COMMAND,
        "score",
        "deeparithmark",
        "--data",
        str(data),
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--device",
        "cpu",
        "--batch-size",
        str(BATCH),
        "--save-predictions",
        "--no-progress",
        "--output",
        str(out),
        *extra,
    ]


def _env(cache_root: Path) -> dict[str, str]:
    # One torch thread: on a CPU shared with other work, two spinning threads ran the embedded
    # model at 0.7-1.1 items/s against 3.6 with one (the scores are identical either way).
    return {**os.environ, "HF_HUB_OFFLINE": "1", "SYNTHPROBE_CACHE": str(cache_root), "OMP_NUM_THREADS": "1"}


def _block(path: Path) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert len(doc["models"]) == 1
    return doc["models"][0]["results"]["deeparithmark"]


def _run(args: list[str], env: dict[str, str], log: Path) -> None:
    with open(log, "wb") as fh:
        p = subprocess.run(args, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=TIMEOUT)
    assert p.returncode == 0, log.read_text(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def fresh(data, tmp_path_factory, _real_cache_root) -> dict:
    """One uninterrupted run without the cache: the reference both tests compare with."""
    tmp = tmp_path_factory.mktemp("fresh")
    root = tmp / "cache"
    root.mkdir()
    for name in ("models", "digests"):  # the converted weights are shared, scores are not
        (root / name).symlink_to(_real_cache_root / name, target_is_directory=True)
    out = tmp / "fresh.json"
    _run(_args(data, out, "--no-cache"), _env(root), tmp / "fresh.log")
    assert not (root / "scores").exists()  # --no-cache wrote nothing
    block = _block(out)
    assert block["cached_items"] == 0 and block["summary"]["n"] == N_ITEMS
    return block


def _stop_mid_run(args: list[str], env: dict[str, str], scores: Path, sig: int, log: Path):
    """Start the command, wait for ``STOP_AT`` cached records, send ``sig``; return (process, cache file).

    Its stdout goes to ``log`` + ``.out``, its stderr to ``log`` + ``.err``.
    """
    out_fh, err_fh = open(f"{log}.out", "wb"), open(f"{log}.err", "wb")
    proc = subprocess.Popen(args, stdout=out_fh, stderr=err_fh, env=env)
    try:
        deadline = time.monotonic() + TIMEOUT
        while True:
            if proc.poll() is not None:
                err_fh.flush()
                tail = Path(f"{log}.err").read_text(errors="replace")[-3000:]
                pytest.fail(
                    f"the run ended (exit {proc.returncode}) before {STOP_AT} items were cached; use a "
                    f"larger slice or a smaller batch:\n{tail}"
                )
            files = list(scores.glob("*.jsonl")) if scores.is_dir() else []
            if files and files[0].read_bytes().count(b"\n") >= STOP_AT:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"no {STOP_AT} cached items within {TIMEOUT} s")
            time.sleep(0.05)
        proc.send_signal(sig)
        proc.wait(timeout=TIMEOUT)
    finally:
        if proc.poll() is None:  # only after a failure above
            proc.kill()
            proc.wait(timeout=60)
        out_fh.close()
        err_fh.close()
    assert len(files) == 1
    return proc, files[0]


def _whole_records(path: Path, fresh: dict) -> dict[str, dict]:
    """Every line of the cache is one complete record whose scores equal the uninterrupted run's."""
    raw = path.read_bytes()
    assert raw.endswith(b"\n"), "the cache ends in a torn record"
    lines = raw.decode("utf-8").splitlines()
    recs = [json.loads(line) for line in lines]
    by_id = {p["id"]: p for p in fresh["predictions"]}
    for rec in recs:
        pred = by_id[rec["id"]]
        assert [row[0] for row in rec["scores"]] == pred["logprob"]
        assert [row[1] for row in rec["scores"]] == pred["n_tokens"]
        assert [row[2] for row in rec["scores"]] == pred["n_chars"]
        assert [row[3] for row in rec["scores"]] == pred["is_greedy"]
    assert len({r["id"] for r in recs}) == len(recs)  # no item twice
    assert ScoreCache(path.stem, path.parent).load() == {r["id"]: r for r in recs}
    return {r["id"]: r for r in recs}


def _resume_equals_fresh(args, env, cache_file: Path, n_cached: int, fresh: dict, tmp_path: Path, out: Path) -> dict:
    _run(args, env, tmp_path / "resumed.log")
    resumed = _block(out)
    assert resumed["cached_items"] == n_cached
    # The rerun appended exactly the items that were missing, and scored them like a fresh run.
    assert len(_whole_records(cache_file, fresh)) == N_ITEMS
    assert len(cache_file.read_bytes().splitlines()) == N_ITEMS
    assert resumed["predictions"] == fresh["predictions"]  # exact, per item and per ending
    assert resumed["summary"] == fresh["summary"]
    assert resumed["truncated"] == fresh["truncated"]
    assert resumed["scorer_used"] == fresh["scorer_used"] == "onepass"
    return resumed


def _no_results(out: Path) -> None:
    assert not out.exists()
    assert not list(out.parent.glob(f".{out.name}.*"))  # nor a temporary file beside it


@pytest.mark.slow
def test_sigkill_mid_run_then_the_same_command_resumes_exactly(data, fresh, tmp_path, _isolated_score_cache):
    root = _isolated_score_cache
    out = tmp_path / "results.json"
    args, env = _args(data, out), _env(root)
    proc, cache_file = _stop_mid_run(args, env, root / "scores", signal.SIGKILL, tmp_path / "killed.log")
    assert proc.returncode == -signal.SIGKILL
    _no_results(out)
    cached = _whole_records(cache_file, fresh)
    n_cached = len(cached)
    assert STOP_AT <= n_cached < N_ITEMS, "the run finished before the kill; use a larger slice"
    assert n_cached % BATCH == 0  # one append and fsync per batch: a kill loses at most the batch in flight
    print(f"SIGKILL: {n_cached} of {N_ITEMS} items cached at the kill; resume scores {N_ITEMS - n_cached}")
    _resume_equals_fresh(args, env, cache_file, n_cached, fresh, tmp_path, out)


@pytest.mark.slow
def test_ctrl_c_mid_run_says_what_is_cached_then_the_same_command_resumes_exactly(
    data, fresh, tmp_path, _isolated_score_cache
):
    root = _isolated_score_cache
    out = tmp_path / "results.json"
    args, env = _args(data, out), _env(root)
    log = tmp_path / "interrupted"
    proc, cache_file = _stop_mid_run(args, env, root / "scores", signal.SIGINT, log)
    text = Path(f"{log}.err").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    assert Path(f"{log}.out").read_bytes() == b""  # nothing half-reported on stdout
    _no_results(out)
    cached = _whole_records(cache_file, fresh)  # finished items of a cut-short batch are kept too
    n_cached = len(cached)
    assert STOP_AT <= n_cached < N_ITEMS, "the run finished before Ctrl-C; use a larger slice"
    messages = [line for line in text.splitlines() if line.startswith("synthprobe:")]
    assert len(messages) == 1, text
    msg = messages[0]
    assert msg.startswith(f"synthprobe: interrupted after {n_cached} items (deeparithmark · "), msg
    assert f"{n_cached} of {N_ITEMS} items are cached, run the same command again to resume" in msg, msg
    assert msg.endswith("no results file was written"), msg
    print(f"SIGINT: {n_cached} of {N_ITEMS} items cached at Ctrl-C; resume scores {N_ITEMS - n_cached}")
    _resume_equals_fresh(args, env, cache_file, n_cached, fresh, tmp_path, out)


def test_ctrl_c_between_the_items_of_a_batch_keeps_the_finished_ones(
    tmp_path, capsys, monkeypatch, _isolated_score_cache
):
    """A real SIGINT lands after the fifth or sixth item of eight (batch 4): those items stay cached."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    tiny = save_tiny_llama(tmp_path / "tiny-llama", seed=3)
    data = write_fixture(tmp_path / "deep.jsonl")
    base = [
        "score",
        "deeparithmark",
        "--data",
        str(data),
        "--model",
        str(tiny),
        "--no-progress",
        "--save-predictions",
        "--batch-size",
        "4",
    ]
    assert main(base + ["--no-cache", "--output", str(tmp_path / "fresh.json")]) == 0
    fresh = _block(tmp_path / "fresh.json")
    n_items = fresh["summary"]["n"]
    assert n_items == 8

    original, calls = scoring_run.cache_record, []

    def record_then_ctrl_c(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 6:  # first batch on disk, the second one half done
            signal.raise_signal(signal.SIGINT)
        return original(*args, **kwargs)

    monkeypatch.setattr(scoring_run, "cache_record", record_then_ctrl_c)
    out = tmp_path / "results.json"
    capsys.readouterr()
    assert main(base + ["--output", str(out)]) == 130
    err = capsys.readouterr().err
    monkeypatch.setattr(scoring_run, "cache_record", original)
    _no_results(out)
    (cache_file,) = (_isolated_score_cache / "scores").glob("*.jsonl")
    cached = _whole_records(cache_file, fresh)
    n_cached = len(cached)
    assert n_cached in (5, 6) and set(cached) <= set(calls)  # not a multiple of the batch size
    assert [line for line in err.splitlines() if line.startswith("synthprobe:")] == [
        f"synthprobe: interrupted after {n_cached} items (deeparithmark · tiny-llama); {n_cached} of {n_items} "
        "items are cached, run the same command again to resume; no results file was written"
    ], err
    assert "Traceback" not in err
    # The rest is scored in a batch that the uninterrupted run never formed: still equal.
    resumed = out.with_name("resumed.json")
    assert main(base + ["--output", str(resumed)]) == 0
    r = _block(resumed)
    assert r["cached_items"] == n_cached
    assert r["predictions"] == fresh["predictions"] and r["summary"] == fresh["summary"]
    assert len(cache_file.read_bytes().splitlines()) == n_items
