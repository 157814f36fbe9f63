"""``first_token`` through a server that returns no log-probabilities: one clear error.

A stub server, and only for this: a real vLLM server always returns the log-probabilities it is
asked for (tests/backends/test_first_token_vllm_server.py), but other OpenAI-compatible servers
ignore ``logprobs`` / ``top_logprobs`` and answer with the text alone. The first request of a
run goes alone, so the error comes before any other request is sent.
"""

from __future__ import annotations

import json
import threading
from http.server import ThreadingHTTPServer

import pytest
from json_handler import JSONHandler


class TextOnly(JSONHandler):
    """Answers /v1/completions and /v1/chat/completions with a text and no ``logprobs``."""

    posts: list[dict] = []

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": "text-only", "object": "model", "owned_by": "stub"}]})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.posts.append({"path": self.path, "body": body})
        if self.path.endswith("/chat/completions"):
            choice = {"index": 0, "message": {"role": "assistant", "content": "A"}, "logprobs": None}
        else:
            choice = {"index": 0, "text": "A", "logprobs": None}
        choice["finish_reason"] = "stop"
        self._send({"choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 1}})


@pytest.fixture
def text_only():
    handler = type("Handler", (TextOnly,), {"posts": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "engine, asked, missing",
    [
        ("openai", "logprobs: top_k", "choices[0].logprobs.top_logprobs[0]"),
        ("openai-chat", "logprobs: true, top_logprobs: top_k", "choices[0].logprobs.content[0].top_logprobs"),
    ],
)
def test_no_logprobs_is_one_clear_error(text_only, engine, asked, missing):
    from synthprobe.backends import ScoringError, load_backend

    url, handler = text_only
    backend = load_backend(f"{engine}:{url}", concurrency=4, progress=False)
    try:
        with pytest.raises(ScoringError) as err:
            backend.first_token(["Question one?", "Question two?", "Question three?"], ["A", "B"], progress=False)
    finally:
        backend.close()
    message = str(err.value)
    print("\n" + message)
    assert message.startswith(f"{url} (model text-only) returned no log-probabilities for the first generated token")
    assert f"asked with {asked}; {missing} is missing" in message
    # the first request went alone and asked for them; nothing else was sent
    assert len(handler.posts) == 1
    body = handler.posts[0]["body"]
    assert body["temperature"] == 0 and body["max_tokens"] == 2
    assert (body["logprobs"], body.get("top_logprobs")) == ((20, None) if engine == "openai" else (True, 20))


def test_bad_arguments_are_refused_before_any_request(text_only):
    from synthprobe.backends import load_backend

    url, handler = text_only
    backend = load_backend(f"openai:{url}", progress=False)
    try:
        with pytest.raises(ValueError, match="top_k must be an integer >= 1"):
            backend.first_token(["Q?"], ["A"], top_k=0, progress=False)
        with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
            backend.first_token(["Q?"], ["A"], 0, progress=False)
        with pytest.raises(ValueError, match="candidates must be non-empty strings"):
            backend.first_token(["Q?"], [""], progress=False)
    finally:
        backend.close()
    assert handler.posts == []
