"""Both HTTP engines (``openai:`` and ``openai-chat:``) against servers that misbehave in ways no real
server here can be made to: rate limits (429/503 with ``Retry-After``), prompt log-probabilities that
are NaN, above zero, not numbers or -inf, a server that echoes no prompt at all, a server that stops
answering, and a token budget running out against fixed ``usage`` figures.

Every server in this file is a STUB (:class:`Hostile`, a stdlib HTTP server on a loopback port),
because a real vLLM answers none of these; the engine's normal work (generation, usage, cache,
identity) is tested against the real vLLM CPU server in tests/backends/test_openai_chat_vllm_server.py.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"


class Hostile(BaseHTTPRequestHandler):
    """A stub OpenAI-compatible server whose misbehaviour is set per test (class attributes of a
    subclass made by the ``stub`` fixture)."""

    #: How many first POSTs are refused, with which status and Retry-After header value.
    refuse = 0
    refuse_status = 429
    retry_after: str | None = None
    #: What the last prompt token's log-probability is on /completions (a JSON value), and which
    #: prompts get it (None: every prompt; else prompts ending with one of these strings).
    poison: object = None
    poison_endings: tuple[str, ...] | None = None
    #: Echo nothing of the prompt (logprobs for the generated token only, no usage).
    no_echo = False
    #: Seconds a POST sleeps before it answers (only POSTs after the first ``hang_after``).
    hang = 0.0
    hang_after = 0
    #: Seconds GET /v1/models sleeps before it answers.
    hang_get = 0.0
    #: The chat reply text and the usage figures of every answer.
    reply = "42"
    usage = {"prompt_tokens": 10, "completion_tokens": 5}

    def log_message(self, *args):
        pass

    def _done(self) -> None:
        """The request leaves the in-flight count before its answer goes out: a client that sends
        its next request on reading this answer must not find it still counted."""
        if getattr(self, "_counted", False):
            self._counted = False
            with type(self).lock:
                type(self).in_flight -= 1

    def _send(self, status: int, doc: dict, headers: dict | None = None) -> None:
        body = json.dumps(doc).encode()  # allow_nan: NaN and Infinity go out as a broken server sends them
        self._done()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except BrokenPipeError:  # the client gave up waiting (the hanging-server test)
            pass

    def do_GET(self):
        if self.hang_get:
            time.sleep(self.hang_get)
        self._send(200, {"object": "list", "data": [{"id": "stub-model", "object": "model", "owned_by": "stub"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path not in ("/v1/completions", "/v1/chat/completions"):  # no /tokenize here
            self._send(404, {"error": {"message": "not found"}})
            return
        cls = type(self)
        with cls.lock:
            cls.posts += 1
            k = cls.posts
            cls.in_flight += 1
            cls.peak.append(cls.in_flight)
            self._counted = True
        try:
            if self.hang and k > self.hang_after:
                time.sleep(self.hang)
            if k <= self.refuse:
                headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
                self._send(self.refuse_status, {"error": {"message": "slow down"}}, headers)
                return
            cls.answered.append(body)
            if self.path.endswith("/chat/completions"):
                self._send(
                    200,
                    {
                        "object": "chat.completion",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": self.reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {**self.usage, "total_tokens": sum(self.usage.values())},
                    },
                )
                return
            prompt = body["prompt"]
            pieces = re.findall(r"\s*\S+|\s+$", prompt)
            offs, pos = [], 0
            for p in pieces:
                offs.append(pos)
                pos += len(p)
            lps: list = [None] + [-1.0] * (len(pieces) - 1)
            if self.poison is not None and (self.poison_endings is None or prompt.endswith(self.poison_endings)):
                lps[-1] = self.poison
            tops = [None] + [{p: -0.5} for p in pieces[1:]]
            if self.no_echo:
                logprobs = {
                    "tokens": [" the"],
                    "token_logprobs": [-1.5],
                    "top_logprobs": [{" the": -1.5}],
                    "text_offset": [len(prompt)],
                }
                self._send(
                    200, {"choices": [{"index": 0, "text": " the", "logprobs": logprobs, "finish_reason": "length"}]}
                )
                return
            logprobs = {
                "tokens": pieces + [" x"],
                "token_logprobs": lps + [-2.0],
                "top_logprobs": tops + [None],
                "text_offset": offs + [len(prompt)],
            }
            self._send(
                200,
                {
                    "choices": [{"index": 0, "text": " x", "logprobs": logprobs, "finish_reason": "length"}],
                    "usage": {"prompt_tokens": len(pieces), "completion_tokens": 1},
                },
            )
        finally:
            self._done()


@pytest.fixture
def stub():
    servers: list[ThreadingHTTPServer] = []

    def start(**behaviour):
        handler = type(
            "Stub",
            (Hostile,),
            {"lock": threading.Lock(), "posts": 0, "in_flight": 0, "peak": [], "answered": [], **behaviour},
        )
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", handler

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def synthprobe(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthprobe", *args],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def score(spec: str, out: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return synthprobe(
        "score",
        "deeparithmark",
        "--model",
        spec,
        "--limit",
        "2",
        "--output",
        str(out),
        "--no-progress",
        "--no-cache",
        *extra,
        timeout=timeout,
    )


def first_item():
    from synthprobe.formats.arithmark3 import load_arithmark3

    return load_arithmark3(DATA)[0]


# -- log-likelihoods a server must never be believed on ------------------------------------------


@pytest.mark.parametrize(
    "value, shown, why",
    [
        (float("nan"), "nan", "NaN"),
        (0.25, "0.25", "above zero"),
        ("-1.2", "'-1.2'", "not a number"),
        (True, "True", "not a number"),
    ],
)
def test_impossible_logprob_stops_the_run(stub, tmp_path, value, shown, why):
    # STUB: no real server returns NaN, a positive or a quoted log-probability.
    url, _ = stub(poison=value)
    out = tmp_path / "res.json"
    r = score(f"openai:{url}", out)
    assert r.returncode == 1, r.stderr
    line = next(x for x in r.stderr.splitlines() if x.startswith("synthprobe: error:"))
    assert f"{url} (model stub-model) returned a log-probability of {shown}" in line and why in line
    assert "no results file was written" in r.stderr and not out.exists()
    assert "Traceback" not in r.stderr


def test_minus_inf_for_every_ending_is_a_refused_tie(stub, tmp_path):
    # STUB: -inf for every ending would make the lowest index win silently.
    url, _ = stub(poison=float("-inf"))
    out = tmp_path / "res.json"
    r = score(f"openai:{url}", out)
    assert r.returncode == 1, r.stderr
    assert "returned a log-probability of -inf for every ending of item" in r.stderr
    assert "silent tie" in r.stderr and not out.exists()


def test_minus_inf_beside_finite_endings_is_an_impossible_ending(stub, tmp_path):
    # STUB: one ending impossible (-inf), the others finite: a true answer, scored as such.
    item = first_item()
    wrong = next(i for i in range(len(item.endings)) if i != item.label)
    url, _ = stub(poison=float("-inf"), poison_endings=(item.endings[wrong],))
    out = tmp_path / "res.json"
    r = score(f"openai:{url}", out, "--limit", "1", "--save-predictions")
    assert r.returncode == 0, r.stderr
    from synthprobe.results import read_json, read_results  # the strict reader: no NaN, no infinity

    read_results(out)
    doc = read_json(out)
    rec = doc["models"][0]["results"]["deeparithmark"]["predictions"][0]
    assert rec["logprob"][wrong] is None and rec["per_token"][wrong] is None  # -inf, which JSON cannot hold
    assert all(rec["logprob"][i] == -1.0 for i in range(len(item.endings)) if i != wrong)
    assert rec["pred_acc_norm"] != wrong


def test_server_that_echoes_nothing_says_so_and_what_to_do(stub, tmp_path):
    # STUB: a server that ignores echo and reports no usage (so the prompt's token count is unknown).
    url, _ = stub(no_echo=True)
    out = tmp_path / "res.json"
    r = score(f"openai:{url}", out)
    assert r.returncode == 1 and not out.exists()
    assert "echoed no prompt tokens at all for an echo request" in r.stderr
    assert "use a server that implements echo" in r.stderr and "--protocol letters" in r.stderr


# -- rate limits ---------------------------------------------------------------------------------


def _chat(url: str, **options):
    from synthprobe.backends import load_backend

    return load_backend(f"openai-chat:{url}", progress=False, **options)


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_seconds_is_waited_and_concurrency_lowered_then_raised(stub, capfd, status):
    # STUB: a real server here never rate-limits; this one refuses the first 8 requests.
    url, handler = stub(refuse=8, refuse_status=status, retry_after="1", hang=0.2)
    backend = _chat(url, concurrency=8)
    try:
        t0 = time.monotonic()
        out = backend.generate([f"question {i}" for i in range(60)], 4, details=True, progress=False)
        took = time.monotonic() - t0
        usage = backend.usage()
    finally:
        backend.close()
    err = capfd.readouterr().err
    assert [g.text for g in out] == ["42"] * 60
    assert took >= 1.0  # Retry-After: 1 was honoured
    assert f"server pushes back (HTTP {status}, Retry-After 1 s): requests in flight 8 -> 4" in err
    assert "server answers again: requests in flight 7 -> 8 (the set maximum)" in err
    assert usage["lowest_concurrency"] == 4 and usage["requests"] == 60
    assert usage["prompt_tokens"] == 600 and usage["completion_tokens"] == 300
    assert max(handler.peak) == 8


def test_retry_after_http_date_is_waited(stub):
    # STUB: the HTTP-date form of Retry-After, 2 s ahead in whole seconds (the header's resolution).
    # The client must not come back before that date; measured against the date itself, since on a
    # loaded machine part of the 2 s may pass before the first request is even sent.
    when = int(time.time()) + 2
    url, _ = stub(refuse=1, retry_after=formatdate(when, usegmt=True))
    backend = _chat(url, concurrency=1)
    try:
        assert backend.generate(["hi"], 4, progress=False) == ["42"]
        assert time.time() >= when - 0.05
    finally:
        backend.close()


def test_retry_after_parsing():
    from synthprobe.backends.openai import retry_after_seconds

    assert retry_after_seconds("7") == 7.0 and retry_after_seconds(" 0.5 ") == 0.5
    ahead = retry_after_seconds(formatdate(time.time() + 30, usegmt=True))
    assert 28 <= ahead <= 31
    assert retry_after_seconds(formatdate(time.time() - 30, usegmt=True)) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


# -- a server that stops answering -----------------------------------------------------------------


def test_hanging_server_is_reported_and_bounded(stub, tmp_path):
    # STUB: a server that holds every request for 5 s; short timeouts stand in for the defaults
    # (300 s per try, 900 s in all, a line after 60 s).
    url, handler = stub(hang=5.0)
    out = tmp_path / "res.json"
    t0 = time.monotonic()
    r = score(
        f"openai:{url}",
        out,
        "--model-arg",
        "timeout=1",
        "--model-arg",
        "max_retries=20",
        "--model-arg",
        "deadline=2.5",
        "--model-arg",
        "notice_after=0.5",
    )
    took = time.monotonic() - t0
    assert r.returncode == 1 and not out.exists()
    assert re.search(
        r"POST http://127\.0\.0\.1:\d+/v1/completions has had no answer for \d+ s \(try 1 of 21", r.stderr
    ), r.stderr
    assert "failed: no answer within 2.5 s (--model-arg deadline" in r.stderr
    assert took < 60


def test_a_server_silent_on_get_models_is_bounded_by_the_same_deadline(stub, tmp_path):
    # STUB: GET /v1/models held for 30 s; each try would wait 20 s and 21 tries are allowed, but
    # the request ends at its 2 s deadline (it used to wait out every try).
    url, handler = stub(hang_get=30.0)
    out = tmp_path / "res.json"
    t0 = time.monotonic()
    r = score(
        f"openai:{url}", out, "--model-arg", "timeout=20", "--model-arg", "max_retries=20", "--model-arg", "deadline=2"
    )
    took = time.monotonic() - t0
    assert r.returncode == 1 and not out.exists(), r.stderr
    assert re.search(
        r"GET http://127\.0\.0\.1:\d+/v1/models failed: no answer within 2 s \(--model-arg deadline", r.stderr
    ), r.stderr
    assert "Traceback" not in r.stderr and handler.posts == 0
    assert took < 15, took


def test_a_server_that_falls_silent_mid_run_keeps_what_it_answered(stub, tmp_path):
    # STUB: the first 12 POSTs are answered, then every request is held past the deadline; the
    # items whose answers came back are in the score cache and are not asked again.
    url, handler = stub(hang=30.0, hang_after=12)
    out = tmp_path / "res.json"
    env_cache = tmp_path / "cache"
    args = [
        "score",
        "deeparithmark",
        "--model",
        f"openai:{url}",
        "--limit",
        "8",
        "--batch-size",
        "1",
        "--concurrency",
        "1",
        "--no-progress",
        "--output",
        str(out),
        "--model-arg",
        "timeout=20",
        "--model-arg",
        "max_retries=3",
        "--model-arg",
        "deadline=1.5",
    ]

    def run():
        env = {**os.environ, "SYNTHPROBE_CACHE": str(env_cache)}
        return subprocess.run(
            [sys.executable, "-m", "synthprobe", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
        )

    r = run()
    assert r.returncode == 1 and not out.exists(), r.stderr
    m = re.search(
        r"no answer within 1\.5 s \(--model-arg deadline.*; (\d) of 8 items of .* are cached: run the same "
        r"command again to resume",
        r.stderr,
    )
    assert m and int(m.group(1)) >= 2, r.stderr  # each item takes 4 requests: 12 answers hold 3 items
    kept, asked = int(m.group(1)), handler.posts
    handler.hang = 0.0
    r = run()
    assert r.returncode == 0, r.stderr
    assert handler.posts - asked == 4 * (8 - kept)  # the cached items were not asked again


def test_help_names_the_wait_keys_and_the_docs_state_the_bound():
    from pathlib import Path

    from synthprobe.backends.openai import DEFAULTS

    r = synthprobe("score", "deeparithmark", "--help")
    text = " ".join(r.stdout.split())
    assert "timeout, max_retries, deadline" in text and "--max-tokens-total" in text
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "command-line.md").read_text().split())
    assert (
        f"a request waits at most {DEFAULTS['timeout']:g} s per try, {DEFAULTS['max_retries'] + 1} tries, "
        f"{DEFAULTS['deadline']:g} s in all; a line is printed when one has waited "
        f"{DEFAULTS['notice_after']:g} s"
    ) in docs


# -- the chat engine's refusals and the token budget ----------------------------------------------


def test_chat_engine_refuses_loglik_before_anything(tmp_path):
    # No server at all: the refusal comes from the check, before any request or file.
    out = tmp_path / "res.json"
    r = score("openai-chat:http://127.0.0.1:9/v1", out)
    assert r.returncode == 2, r.stderr
    assert "the openai-chat engine cannot score log-likelihoods" in r.stderr
    assert "--protocol letters" in r.stderr and "--protocol free" in r.stderr
    assert not out.exists() and "Traceback" not in r.stderr


def test_chat_engine_gpt3_log_likelihood_tasks_refused_before_loading(tmp_path):
    # No server at all: SAT (and --check is-greedy) need log-likelihoods; the engine's CAN set
    # refuses them before anything loads or is sent, naming what works instead.
    from synthprobe.backends import engine_can

    assert not engine_can("openai-chat:http://127.0.0.1:9/v1", "loglikelihood")
    assert engine_can("openai-chat:http://127.0.0.1:9/v1", "generate")
    assert engine_can("openai:http://127.0.0.1:9/v1", "loglikelihood") and engine_can("some/folder", "loglikelihood")
    out = tmp_path / "res.json"
    base = [
        "score",
        "gpt3",
        "--model",
        "openai-chat:http://127.0.0.1:9/v1",
        "--shots",
        "zero",
        "--limit",
        "2",
        "--no-progress",
        "--no-cache",
        "--output",
        str(out),
    ]
    r = synthprobe(*base, "--tasks", "2D+,SAT")
    assert r.returncode == 2 and not out.exists() and "Traceback" not in r.stderr, r.stderr
    assert (
        "SAT needs log-likelihoods, which the openai-chat engine cannot give; score it with --sat-protocol letters "
        "or --check generate"
    ) in r.stderr
    r = synthprobe(*base, "--tasks", "2D+,RI", "--check", "is-greedy")
    assert r.returncode == 2 and not out.exists(), r.stderr
    assert "2D+, RI need log-likelihoods, which the openai-chat engine cannot give" in r.stderr


def test_chat_engine_sends_messages_and_records_usage(stub):
    # STUB: fixed usage figures make the per-item and per-run accounting exact.
    url, handler = stub(reply="Paris", usage={"prompt_tokens": 12, "completion_tokens": 3})
    backend = _chat(url)
    try:
        conv = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}]
        gens = backend.generate(["Capital of France?", conv], 8, stop="\n", details=True, progress=False)
        with pytest.raises(TypeError, match="message 0 must be"):
            backend.generate([[{"role": "robot", "content": "x"}]], 8, progress=False)
        d = backend.describe()
    finally:
        backend.close()
    assert [g.text for g in gens] == ["Paris", "Paris"]
    assert [(g.prompt_tokens, g.n_tokens) for g in gens] == [(12, 3), (12, 3)]
    sent = sorted((b["messages"] for b in handler.answered), key=len)
    assert sent == [[{"role": "user", "content": "Capital of France?"}], conv]
    assert all(b["temperature"] == 0 and b["max_tokens"] == 8 and b["stop"] == ["\n"] for b in handler.answered)
    assert d["source"] == "openai-chat" and d["endpoint"] == "/chat/completions" and d["chat_template"] == "server"
    assert d["fingerprint"] == f"openai-chat:stub-model@{url}"


def test_token_budget_stops_cleanly_and_resumes(stub, tmp_path):
    # STUB: every answer costs exactly 15 tokens, so the stopping point is exact.
    url, handler = stub(reply="7", usage={"prompt_tokens": 10, "completion_tokens": 5})
    out = tmp_path / "res.json"
    args = [
        "score",
        "gpt3",
        "--model",
        f"openai-chat:{url}",
        "--tasks",
        "2D+",
        "--shots",
        "zero",
        "--limit",
        "8",
        "--batch-size",
        "2",
        "--concurrency",
        "1",
        "--no-progress",
        "--output",
        str(out),
    ]
    r = synthprobe(*args, "--max-tokens-total", "60")
    assert r.returncode == 1 and not out.exists()
    assert (
        "the token budget is spent: 60 tokens used (40 prompt + 20 completion) of --max-tokens-total 60" in r.stderr
    ), r.stderr
    assert "4 of 8 items of" in r.stderr and "are cached" in r.stderr
    assert handler.posts == 4  # nothing was sent once the budget was reached
    r = synthprobe(*args, "--max-tokens-total", "1000")
    assert r.returncode == 0, r.stderr
    assert handler.posts == 8  # the 4 cached items were not asked again
    assert "tokens (stub-model): 40 prompt + 20 completion = 60 in 4 requests (budget 1,000)" in r.stdout
    doc = json.loads(out.read_text())
    model = doc["models"][0]
    assert model["usage"]["total_tokens"] == 60 and model["model"]["source"] == "openai-chat"
    row = model["results"]["gpt3"]["rows"][0]
    assert row["usage"] == {"items": 8, "prompt_tokens": 80, "completion_tokens": 40}  # cached items keep theirs
    assert all(it["usage"] == {"prompt_tokens": 10, "completion_tokens": 5} for it in row["items"])
    assert not math.isnan(row["accuracy"])


def test_a_calibrated_run_counts_the_tokens_of_the_batch_it_scored_ahead(stub, tmp_path):
    # STUB: every answer costs exactly 15 tokens, so the run's accounting is exact. 60 items are
    # above the plan's calibration threshold: its first batch (32) is scored while planning and the
    # run takes those answers, so the run's usage must count them too.
    url, handler = stub(reply="A", usage={"prompt_tokens": 10, "completion_tokens": 5})
    out = tmp_path / "res.json"
    r = synthprobe(
        "score",
        "deeparithmark",
        "--model",
        f"openai-chat:{url}",
        "--protocol",
        "letters,free",
        "--limit",
        "60",
        "--no-cache",
        "--no-progress",
        "--output",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "estimate: " in r.stderr
    assert handler.posts == 120  # every item asked once per protocol, none twice
    for entry in json.loads(out.read_text())["models"]:
        assert entry["usage"]["requests"] == 60, entry["protocol"]
        assert (entry["usage"]["prompt_tokens"], entry["usage"]["completion_tokens"]) == (600, 300)
