#!/usr/bin/env python3
"""first_token against generate through a vLLM server, and its agreement with the HF engine.

For the first ``--n`` release items (default 32) asked under ``letters`` as user turns, it times,
through the chat endpoint (``openai-chat:``) and the completions endpoint (``openai:``, the
prompts rendered by the model's own template):

* ``generate`` with ``--max-new`` tokens (default 8, the letters budget) and stop ``\\n``;
* ``first_token`` with ``top_k`` 20 and 2 new tokens (how a first-token reader asks) and with
  ``--max-new`` tokens (the same decoding as ``generate``, plus the log-probabilities).

Each is run ``--repeats`` times in rotation after one untimed pass (the server's prefix cache is
then warm for all of them alike); the median wall time is printed. Then the candidates' ("A".."D")
log-probabilities of both endpoints are compared with the HF engine's ``first_token_chat``
(fp32, the model's own template): the largest |Δ|, top[0] and the generated texts.

    python bench/bench_first_token.py                          # starts a vLLM CPU server (tools/vllm_cpu.py)
    python bench/bench_first_token.py --url http://127.0.0.1:8000/v1 --n 32

Figures depend on the machine's load: the server and this process share the CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

LETTERS = ["A", "B", "C", "D"]


def conversations(n: int) -> list[list[dict]]:
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.prompts.protocols import prompt

    items = load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[:n]
    return [[{"role": "user", "content": prompt(it, "letters", chat=True)}] for it in items]


def largest_delta(want, got) -> float:
    return max(
        abs(w.candidates[c] - g.candidates[c])
        for w, g in zip(want, got)
        for c in LETTERS
        if w.candidates[c] is not None and g.candidates[c] is not None
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running vLLM server's /v1 URL (default: start one)")
    parser.add_argument("--n", type=int, default=32)
    parser.add_argument("--max-new", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args(argv)

    from synthprobe.backends import load_backend

    server = None
    if args.url is None:
        import vllm_cpu

        server = vllm_cpu.Server(vllm_cpu.embedded_model_folder()).start()
        args.url = server.url
    try:
        convs = conversations(args.n)
        hf = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
        t0 = time.perf_counter()
        want = hf.first_token_chat(convs, LETTERS, args.max_new, ["\n"], progress=False)
        hf_s = time.perf_counter() - t0
        rendered = hf.render_chat(convs)
        hf.close()
        kw = dict(concurrency=args.concurrency, progress=False)
        chat, comp = load_backend(f"openai-chat:{args.url}", **kw), load_backend(f"openai:{args.url}", **kw)
        runs = {
            "chat generate": lambda: chat.generate_chat(convs, args.max_new, ["\n"], progress=False, details=True),
            "chat first_token (2 new)": lambda: chat.first_token_chat(convs, LETTERS, 2, ["\n"], progress=False),
            f"chat first_token ({args.max_new} new)": lambda: chat.first_token_chat(
                convs, LETTERS, args.max_new, ["\n"], progress=False
            ),
            "completions generate": lambda: comp.generate(rendered, args.max_new, ["\n"], progress=False, details=True),
            "completions first_token (2 new)": lambda: comp.first_token(rendered, LETTERS, 2, ["\n"], progress=False),
            f"completions first_token ({args.max_new} new)": lambda: comp.first_token(
                rendered, LETTERS, args.max_new, ["\n"], progress=False
            ),
        }
        results = {name: run() for name, run in runs.items()}  # untimed: warms the prefix cache alike
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, run in runs.items():
                t0 = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - t0)
        print(f"{args.n} letters items, concurrency {args.concurrency}, median of {args.repeats} (s):")
        for name, ts in times.items():
            print(f"  {name:34s} {statistics.median(ts):7.3f}   ({', '.join(f'{t:.3f}' for t in ts)})")
        print(f"  (HF in process, first_token_chat {args.max_new} new, once: {hf_s:.3f} s)")
        long = f"({args.max_new} new)"
        for side in ("chat", "completions"):
            got = results[f"{side} first_token {long}"]
            gens = results[f"{side} generate"]
            print(
                f"{side}: largest |Δ logprob| A-D vs HF {largest_delta(want, got):.2e}; "
                f"top[0] same {sum(w.top[0][0] == g.top[0][0] for w, g in zip(want, got))}/{args.n}; "
                f"texts same as HF {sum(w.generation.text == g.generation.text for w, g in zip(want, got))}/{args.n}; "
                f"as its own generate {sum(g.generation.text == x.text for g, x in zip(got, gens))}/{args.n}"
            )
        chat.close()
        comp.close()
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
