#!/usr/bin/env python3
"""What the client costs per request through one real vLLM server: ours vs inspect_ai and lm-eval.

One vLLM CPU server (``tools/vllm_cpu.py``, the embedded model, its own chat template applied by
the server) serves three clients, each run as a separate process on the same first ``--n``
release items with the same number of requests in flight (``--concurrency``), greedy, at most 8
new tokens, stopped at a newline where the client sends stop strings:

* ``ours``: ``python -m synthprobe score deeparithmark --model openai-chat:URL --protocol letters
  --concurrency C --no-cache --quiet --output TMP`` (one user turn per item: the sentence, the
  four endings as options A-D, "Reply with the letter of the correct option only");
* ``inspect``: inspect_ai's ``multiple_choice()`` + ``choice()`` through its ``openai-api``
  provider (``bench_protocols.INSPECT_SCRIPT``, ``max_connections`` = C, ``max_tokens`` 8,
  temperature 0). Its own template wraps the same question and endings ("Answer the following
  multiple choice question ... ANSWER: $LETTER", choices as ``A) ...``), a longer prompt, and it
  sends no stop string;
* ``lm-eval``: ``lm_eval --model local-chat-completions --apply_chat_template`` (0.4.13,
  ``num_concurrent`` = C, ``tokenized_requests=False``, no tokenizer) on a ``generate_until``
  task written here whose ``doc_to_text`` is, item by item, the very user turn ours sends
  (``synthprobe.prompts.protocols.prompt(item, "letters", chat=True)``), ``until: ["\\n"]``,
  ``max_gen_toks: 8``, temperature 0. ``synthprobe export lm-eval`` writes only the
  log-likelihood task for Deep Arithmark, which a chat endpoint cannot score. Its body differs
  from ours by ``"seed": 1234`` (ours: ``"n": 1``); messages, ``max_tokens``, ``temperature``
  and ``stop`` are the same.

For every process it records, from ``os.wait4``: the client's CPU seconds (user + system, its
reaped children included), its peak resident memory (``ru_maxrss``) and its wall time; and, from
the server's access log, the requests it sent (``POST /v1/chat/completions`` and anything else).
Each client runs twice per round: on 1 item (start-up: imports, set-up, one request, writing its
output) and on ``--n`` items; per-request CPU = (CPU(n) - CPU(1)) / (n - 1). Rounds rotate the
order of the clients; the figures are medians over ``--rounds``.

    .venv/bin/python bench/bench_client_cost.py [--n 64] [--concurrency 8] [--rounds 2]
        [--inspect-python /tmp/inspect-venv/bin/python] [--lock /tmp/bench.lock] [--url URL --server-log LOG]

``--lock PATH`` takes an exclusive ``flock`` on PATH around each client process, warm-up
included (as ``flock PATH cmd`` does), so timed runs of other jobs that take the same lock never
overlap them; the server's start is outside it. ``--url`` (with ``--server-log``, the server's
log file) uses a server that is already running instead of starting one.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
DATA = ROOT / "data" / "deeparithmark-1.jsonl"
CLIENTS = ("ours", "inspect", "lm-eval")

#: the lm-eval task: the letters protocol's user turn, greedy, 8 tokens, newline stop
LM_EVAL_YAML = """\
task: deeparithmark_letters_chat
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{target}}}}"
target_delimiter: ""
generation_kwargs:
  until: ["\\n"]
  max_gen_toks: 8
  do_sample: false
  temperature: 0
filter_list:
  - name: letter
    filter:
      - function: regex
        regex_pattern: "([ABCD])"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""


def _env() -> dict:
    env = dict(os.environ)
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        INSPECT_LOG_LEVEL="warning",
        DO_NOT_TRACK="1",
        TOKENIZERS_PARALLELISM="false",
        VLLM_API_KEY=os.environ.get("VLLM_API_KEY", "none"),
        OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "none"),
    )
    env["PYTHONPATH"] = str(ROOT / "src")
    return env


def write_inputs(work: Path, n: int) -> dict[int, Path]:
    """Per item count: inspect's items JSON and lm-eval's data + task folder (same first items)."""
    from bench_protocols import INSPECT_SCRIPT

    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts.protocols import prompt

    items = load_arithmark3(DATA)
    (work / "inspect_mc.py").write_text(INSPECT_SCRIPT)
    out = {}
    for k in sorted({1, n}):
        d = work / f"n{k}"
        (d / "lmeval").mkdir(parents=True, exist_ok=True)
        first = items[:k]
        (d / "items.json").write_text(
            json.dumps(
                [
                    {
                        "id": it.id,
                        "question": f"Which option completes the sentence?\n\n{it.ctx.rstrip()} ...",
                        "choices": [e.strip() for e in it.endings],
                        "label": int(it.label),
                    }
                    for it in first
                ]
            )
        )
        data = d / "lmeval" / "letters.jsonl"
        data.write_text(
            "".join(
                json.dumps({"id": it.id, "prompt": prompt(it, "letters", chat=True), "target": "ABCD"[int(it.label)]})
                + "\n"
                for it in first
            )
        )
        (d / "lmeval" / "deeparithmark_letters_chat.yaml").write_text(LM_EVAL_YAML.format(data=json.dumps(str(data))))
        out[k] = d
    return out


def command(client: str, k: int, d: Path, work: Path, args, url: str, model: str, tag: str) -> list[str]:
    out = work / "out" / tag
    if client == "ours":
        return [
            sys.executable,
            "-m",
            "synthprobe",
            "score",
            "deeparithmark",
            "--model",
            f"openai-chat:{url}",
            "--protocol",
            "letters",
            "--concurrency",
            str(args.concurrency),
            "--limit",
            str(k),
            "--no-cache",
            "--quiet",
            "--output",
            str(out.with_suffix(".json")),
        ]
    if client == "inspect":
        return [
            args.inspect_python,
            str(work / "inspect_mc.py"),
            str(d / "items.json"),
            model,
            str(args.concurrency),
            str(out),
            url,
        ]
    return [
        args.lm_eval,
        "--model",
        "local-chat-completions",
        "--model_args",
        f"model={model},base_url={url}/chat/completions,num_concurrent={args.concurrency},"
        "tokenized_requests=False,max_retries=3",
        "--apply_chat_template",
        "--tasks",
        "deeparithmark_letters_chat",
        "--include_path",
        str(d / "lmeval"),
        "--output_path",
        str(out),
        "--log_samples",
    ]


class ServerLog:
    """Counts the requests in the server's access log since the last mark."""

    LINE = re.compile(r'"(GET|POST) (\S+) HTTP/[\d.]+" (\d+)')

    def __init__(self, path: Path):
        self.path = Path(path)
        self.offset = self.path.stat().st_size

    def since_mark(self) -> dict[str, int]:
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            text = f.read().decode("utf-8", "replace")
            self.offset = f.tell()
        counts: dict[str, int] = {}
        for method, path, status in self.LINE.findall(text):
            if path == "/health":
                continue
            key = f"{method} {path} {status}"
            counts[key] = counts.get(key, 0) + 1
        return counts


@contextlib.contextmanager
def locked(path: str | None):
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def timed(cmd: list[str], log: Path, lock: str | None, served: ServerLog | None = None) -> dict:
    """One client process: wall seconds, CPU seconds (user, system; reaped children included) and
    peak RSS from ``os.wait4``, and the requests the server logged meanwhile (counted from when
    the lock is held, so another job's requests while this one waits for it are not counted);
    a failure stops the benchmark."""
    with locked(lock), open(log, "w") as out:
        if served is not None:
            served.since_mark()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=out, stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        requests = served.since_mark() if served is not None else {}
    if proc.returncode:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n" + log.read_text()[-3000:])
    return {
        "wall": wall,
        "user": ru.ru_utime,
        "sys": ru.ru_stime,
        "cpu": ru.ru_utime + ru.ru_stime,
        "rss_mib": ru.ru_maxrss / 1024,
        "requests": requests,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=64, help="release items per run (default 64)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight, all clients (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (1 item, n items) per client (default 2)")
    parser.add_argument("--clients", default=",".join(CLIENTS), help=f"comma-separated subset of {', '.join(CLIENTS)}")
    parser.add_argument(
        "--inspect-python", default="/tmp/inspect-venv/bin/python", help="python with inspect-ai + openai"
    )
    parser.add_argument("--lm-eval", default=str(Path(sys.executable).parent / "lm_eval"), help="the lm_eval script")
    parser.add_argument("--lock", help="flock this file around each timed process (e.g. /tmp/bench.lock)")
    parser.add_argument("--url", help="a running server's /v1 URL (default: start one)")
    parser.add_argument("--server-log", type=Path, help="with --url: that server's log file")
    parser.add_argument("--no-warmup", action="store_true", help="skip the untimed 1-item run of each client")
    args = parser.parse_args()
    clients = args.clients.split(",")
    if any(c not in CLIENTS for c in clients) or args.n < 2:
        parser.error("--clients: a subset of ours, inspect, lm-eval; --n at least 2")
    if args.url and not args.server_log:
        parser.error("--url needs --server-log")
    import vllm_cpu

    # the folder's look-up imports torch: done in a child, so that this process stays small (a
    # child's peak RSS starts from its parent's resident memory at the fork)
    folder = Path(
        subprocess.run(
            [sys.executable, "-c", "import sys, vllm_cpu; print(vllm_cpu.embedded_model_folder())"],
            cwd=ROOT / "tools",
            env=_env(),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    with contextlib.ExitStack() as stack, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "out").mkdir()
        dirs = write_inputs(work, args.n)
        if args.url:
            url, model, log_path = args.url.rstrip("/"), str(folder), args.server_log
        else:
            server = stack.enter_context(vllm_cpu.Server(folder))
            url, model, log_path = server.url, server.model_id, server.log_path
        served = ServerLog(log_path)
        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"server {url}, model {model}; this process {own:.0f} MiB; load average {os.getloadavg()}", flush=True)
        if not args.no_warmup:  # page cache, .pyc files and the server's first request, for all alike
            for c in clients:
                timed(command(c, 1, dirs[1], work, args, url, model, f"warm-{c}"), work / f"warm-{c}.log", args.lock)
        runs: dict[tuple[str, int], list[dict]] = {}
        for r in range(args.rounds):
            order = clients[r % len(clients) :] + clients[: r % len(clients)]
            for k in (1, args.n):
                for c in order:
                    tag = f"{c}-{k}-{r}"
                    res = timed(
                        command(c, k, dirs[k], work, args, url, model, tag), work / f"{tag}.log", args.lock, served
                    )
                    res["load"] = os.getloadavg()[0]
                    runs.setdefault((c, k), []).append(res)
                    print(
                        f"  round {r} {c:8s} n={k:<4d} wall {res['wall']:6.2f} s  cpu {res['cpu']:6.2f} s "
                        f"(user {res['user']:.2f}, sys {res['sys']:.2f})  peak {res['rss_mib']:6.1f} MiB  "
                        f"load {res['load']:.2f}  requests {res['requests']}",
                        flush=True,
                    )

    def med(c: str, k: int, key: str) -> float:
        return statistics.median(x[key] for x in runs[(c, k)])

    n = args.n
    print(f"\n{n} release items, {args.concurrency} requests in flight, medians of {args.rounds} rounds")
    print(
        f"{'client':10s} {'wall n':>8s} {'cpu n':>7s} {'cpu 1':>7s} {'spread 1':>9s} {'ms/req':>7s}  "
        f"{'ms/req all':>10s} {'peak MiB':>9s}  requests"
    )
    table = {}
    for c in clients:
        cpu_n, cpu_1 = med(c, n, "cpu"), med(c, 1, "cpu")
        per = (cpu_n - cpu_1) / (n - 1) * 1000
        # the run-to-run spread of the start-up: a per-request figure below it is noise
        spread = max(x["cpu"] for x in runs[(c, 1)]) - min(x["cpu"] for x in runs[(c, 1)])
        noisy = cpu_n - cpu_1 <= spread
        chat = statistics.median(x["requests"].get("POST /v1/chat/completions 200", 0) for x in runs[(c, n)])
        other = sorted({key for x in runs[(c, n)] for key in x["requests"] if not key.startswith("POST /v1/chat")})
        table[c] = {"wall": med(c, n, "wall"), "cpu": cpu_n, "cpu1": cpu_1, "per": per, "noisy": noisy}
        print(
            f"{c:10s} {med(c, n, 'wall'):8.2f} {cpu_n:7.2f} {cpu_1:7.2f} {spread:9.2f} "
            f"{per:7.2f}{'?' if noisy else ' '} {cpu_n / n * 1000:10.1f} "
            f"{med(c, n, 'rss_mib'):9.1f}  {chat:g} chat posts" + (f", also {', '.join(other)}" if other else "")
        )
    if "ours" in table:
        o = table["ours"]
        for c in clients:
            if c == "ours":
                continue
            p = table[c]
            per = "within noise" if o["noisy"] or p["noisy"] else f"{o['per'] / p['per']:.2f}x"
            print(
                f"ours / {c}: wall {o['wall'] / p['wall']:.2f}x, client cpu {o['cpu'] / p['cpu']:.2f}x, "
                f"start-up (1 item) {o['cpu1'] / p['cpu1']:.2f}x, per request {per}"
            )
    print(
        "cpu n / cpu 1: client CPU seconds (user + system) of an n-item / 1-item process; spread 1: max - min "
        "of the 1-item runs; ms/req: (cpu n - cpu 1) / (n - 1), '?' when cpu n - cpu 1 is within that spread; "
        "ms/req all: cpu n / n"
    )
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
