"""The openai engine (``--model openai:URL``) against what a user can meet without a working server:
a server that ignores ``echo`` (the one stub allowed: it answers like llama.cpp's ``llama-server``),
a port where nobody listens, bad options. Everything else runs against a real vLLM server
(tests/backends/test_openai_vllm_server.py)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from json_handler import JSONHandler

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-secret-4f1c9a7e0b2d"


class LlamaServerLike(JSONHandler):
    """Answers /v1/completions as current llama-server does: ``echo`` is ignored and logprobs cover
    the generated token only (``shape="legacy"``), or come in the chat-style ``logprobs.content``
    shape (``shape="content"``)."""

    shape = "legacy"
    seen: list[dict] = []
    #: path -> how many first requests to it get 503 "Loading model", as llama-server answers while it loads.
    loading: dict[str, int] = {}

    def _still_loading(self) -> bool:
        if self.loading.get(self.path, 0) <= 0:
            return False
        self.loading[self.path] -= 1
        body = b'{"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return True

    def do_GET(self):
        self.seen.append({"path": self.path, "auth": self.headers.get("Authorization")})
        if self._still_loading():
            return
        self._send({"object": "list", "data": [{"id": "smollm2-135m.gguf", "object": "model", "owned_by": "llamacpp"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if self._still_loading():
            return
        prompt = body["prompt"]
        n_prompt = len(prompt.split())
        if self.shape == "content":
            logprobs = {
                "content": [{"token": " the", "logprob": -1.5, "top_logprobs": [{"token": " the", "logprob": -1.5}]}]
            }
        else:
            logprobs = {
                "tokens": [" the"],
                "token_logprobs": [-1.5],
                "top_logprobs": [{" the": -1.5}],
                "text_offset": [len(prompt)],
            }
        self._send(
            {
                "id": "cmpl-1",
                "object": "text_completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "text": " the", "logprobs": logprobs, "finish_reason": "length"}],
                "usage": {"prompt_tokens": n_prompt, "completion_tokens": 1, "total_tokens": n_prompt + 1},
            }
        )


@pytest.fixture
def stub():
    def start(shape: str, loading: dict | None = None):
        handler = type("Handler", (LlamaServerLike,), {"shape": shape, "seen": [], "loading": dict(loading or {})})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", handler

    servers: list[ThreadingHTTPServer] = []
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def synthprobe(*args: str, env_extra: dict | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "synthprobe", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def score(url: str, out: Path, *extra: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    return synthprobe(
        "score",
        "deeparithmark",
        "--model",
        f"openai:{url}",
        "--limit",
        "2",
        "--output",
        str(out),
        "--no-progress",
        *extra,
        env_extra=env_extra,
    )


def test_llama_server_refused_with_clear_message(stub, tmp_path):
    url, handler = stub("legacy")
    out = tmp_path / "res.json"
    r = score(url, out, env_extra={"OPENAI_API_KEY": SECRET})
    assert r.returncode == 1, r.stderr
    err = r.stderr
    assert f"{url} (model smollm2-135m.gguf) returned log-probabilities for 1 generated token only" in err
    assert "it does not implement echo (llama.cpp's llama-server is known to do this)" in err
    assert "would be chance" in err and "no results file was written" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []
    # The first request ran alone and was the only one: nothing else was sent to a broken endpoint.
    posts = [s for s in handler.seen if s["path"] == "/v1/completions"]
    assert len(posts) == 1 and posts[0]["body"]["echo"] is True and posts[0]["body"]["logprobs"] == 1
    # The key went to the server as a bearer token and nowhere else.
    assert all(s["auth"] == f"Bearer {SECRET}" for s in handler.seen)
    assert SECRET not in r.stdout + r.stderr


def test_content_shape_refused(stub, tmp_path):
    url, _ = stub("content")
    out = tmp_path / "res.json"
    r = score(url, out)
    assert r.returncode == 1
    assert f"{url} (model smollm2-135m.gguf) answered in the chat-style 'logprobs.content' shape" in r.stderr
    assert not out.exists()


def test_connection_refused_names_url_without_credentials(tmp_path):
    port = closed_port()
    out = tmp_path / "res.json"
    r = score(f"http://alice:{SECRET}@127.0.0.1:{port}/v1?api_key={SECRET}", out, env_extra={"OPENAI_API_KEY": SECRET})
    assert r.returncode == 1, r.stderr
    assert f"GET http://127.0.0.1:{port}/v1/models failed: connection refused" in r.stderr
    assert "is the server running?" in r.stderr
    assert SECRET not in r.stdout + r.stderr and "alice" not in r.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args, field",
    [
        (["--model-arg", f"api_key={SECRET}"], "--model-arg api_key"),
        (["--model-arg", "concurrency=0"], "--model-arg concurrency"),
        (["--model-arg", "timeout=-1"], "--model-arg timeout"),
        (["--model-arg", "colour=blue"], "--model-arg"),
        (["--dtype", "float16"], "--dtype"),
        (["--model-arg", "api_key_env=SYNTHPROBE_TEST_UNSET_KEY"], "--model-arg api_key_env"),
    ],
)
def test_bad_options_exit_2_before_any_request(args, field, tmp_path):
    port = closed_port()  # nothing listens: an option error must come before any connection
    out = tmp_path / "res.json"
    r = score(f"http://127.0.0.1:{port}/v1", out, *args)
    assert r.returncode == 2, r.stderr
    assert f"field '{field}'" in r.stderr and "connection" not in r.stderr
    assert SECRET not in r.stderr
    assert not out.exists()


def test_bad_url_exit_2(tmp_path):
    r = score("ftp://127.0.0.1/v1", tmp_path / "res.json")
    assert r.returncode == 2 and "http:// or https:// URL" in r.stderr


def test_fingerprint_and_describe_keep_credentials_out(stub):
    from synthprobe.backends import load_backend

    url, _ = stub("legacy")
    port = url.split(":")[2].split("/")[0]
    backend = load_backend(f"openai:http://bob:hunter22@127.0.0.1:{port}/v1?token=xyz123")
    try:
        d = backend.describe()
        assert backend.fingerprint == f"openai:smollm2-135m.gguf@http://127.0.0.1:{port}/v1"
        assert d["weights_fingerprinted"] is False and d["server_url"] == f"http://127.0.0.1:{port}/v1"
        assert d["server_model"] == "smollm2-135m.gguf"
        text = json.dumps(d)
        assert "hunter22" not in text and "xyz123" not in text and "bob" not in text
    finally:
        backend.close()


def test_503_while_loading_is_retried_with_backoff(stub, tmp_path):
    url, handler = stub("legacy", loading={"/v1/models": 2, "/v1/completions": 1})
    r = score(url, _out := tmp_path / "res.json")
    assert r.returncode == 1 and "generated token only" in r.stderr  # it got through to the echo check
    assert [s["path"] for s in handler.seen] == ["/v1/models"] * 3 + ["/v1/completions"] * 2


def test_503_beyond_max_retries_fails_naming_the_url(stub, tmp_path):
    url, handler = stub("legacy", loading={"/v1/models": 100})
    r = score(url, out := tmp_path / "res.json", "--model-arg", "max_retries=1")
    assert r.returncode == 1 and not out.exists()
    assert f"GET {url}/models failed: HTTP 503" in r.stderr and "Loading model" in r.stderr
    assert "(after 2 tries)" in r.stderr and len(handler.seen) == 2


def test_concurrency_flag_reaches_the_engine(stub):
    import argparse

    from synthprobe.commandline import add_model_args, load_backend_or_exit

    url, _ = stub("legacy")
    p = argparse.ArgumentParser()
    add_model_args(p)
    args = p.parse_args(["--model", f"openai:{url}", "--concurrency", "3"])
    backend = load_backend_or_exit(args.model, args)
    try:
        assert backend.concurrency == 3 and backend.describe()["concurrency"] == 3
    finally:
        backend.close()
    with pytest.raises(SystemExit) as exc:
        p.parse_args(["--concurrency", "0"])
    assert exc.value.code == 2


def test_concurrency_is_refused_by_an_in_process_engine(tmp_path):
    r = synthprobe(
        "score",
        "deeparithmark",
        "--concurrency",
        "4",
        "--limit",
        "2",
        "--no-progress",
        "--output",
        str(tmp_path / "res.json"),
    )
    assert r.returncode == 2 and "no option concurrency" in r.stderr, r.stderr
    assert not (tmp_path / "res.json").exists()
