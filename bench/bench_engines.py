#!/usr/bin/env python3
"""Engines side by side on the same items in one run: our HF one-pass engine, a vLLM server
through the openai engine at several concurrencies, and (a hook) the in-process vLLM engine.

For the first ``--n`` items of the release (default 200) it prints, per engine, items/s and the
ratio to the HF one-pass engine, and for every engine against HF: the largest per-ending
|Δ log-likelihood|, the share of items with the same acc and acc_norm prediction, and every
disagreement with its margin (how far apart the two best endings are in each engine). Then the
GPT-3 2D+ greedy answers of ``--gpt3-n`` items (one-shot) through HF and the server.

    python bench/bench_engines.py                              # starts a vLLM CPU server (tools/vllm_cpu.py)
    python bench/bench_engines.py --url http://127.0.0.1:8000/v1 --n 50 --concurrency 1,16
    python bench/bench_engines.py --vllm-python ~/.cache/synthprobe/envs/vllm-cpu-.../bin/python

The in-process vLLM row (``--model vllm:DIR``, another part's engine) runs only with
``--vllm-python`` (the vLLM virtualenv's python, which has the engine's dependencies): it is
``synthprobe score deeparithmark --model vllm:DIR`` run there, its timing and predictions read
from the results file. Figures depend on the machine's load: the server and this process share
the CPU, so run nothing else beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


# -- shared with tests/backends/test_openai_vllm_server.py ---------------------------------------------------


def predictions(scores) -> tuple[list[int], list[int]]:
    """acc (argmax of the summed log-likelihood) and acc_norm (per-token mean) predictions."""
    from synthprobe.metrics.choice import argmax_first

    return (
        [argmax_first([s.logprob for s in row]) for row in scores],
        [argmax_first([s.per_token for s in row]) for row in scores],
    )


def _margin(row, key) -> float:
    values = sorted((key(s) for s in row), reverse=True)
    return values[0] - values[1] if len(values) > 1 else float("inf")


def agreement(reference, other) -> dict:
    """How ``other``'s per-ending scores agree with ``reference``'s (HF) on the same items."""
    max_delta = max(abs(a.logprob - b.logprob) for ra, rb in zip(reference, other) for a, b in zip(ra, rb))
    acc_r, norm_r = predictions(reference)
    acc_o, norm_o = predictions(other)
    same = [a == b and c == d for a, b, c, d in zip(acc_r, acc_o, norm_r, norm_o)]
    disagreements = []
    for i, ok in enumerate(same):
        if not ok:
            disagreements.append(
                {
                    "item": i,
                    "acc": (acc_r[i], acc_o[i]),
                    "acc_norm": (norm_r[i], norm_o[i]),
                    "margin_acc": (_margin(reference[i], lambda s: s.logprob), _margin(other[i], lambda s: s.logprob)),
                    "margin_norm": (
                        _margin(reference[i], lambda s: s.per_token),
                        _margin(other[i], lambda s: s.per_token),
                    ),
                }
            )
    return {
        "n": len(same),
        "max_abs_delta": max_delta,
        "same_share": sum(same) / len(same),
        "disagreements": disagreements,
    }


def gpt3_answers(spec: str, n: int, out_dir: Path, *model_args: str, env: dict | None = None) -> list[str]:
    """Greedy answers of the first ``n`` GPT-3 2D+ items (one-shot) through ``synthprobe score gpt3``."""
    out = out_dir / f"gpt3-{abs(hash((spec, model_args))) % 10**8}.json"
    cmd = [
        sys.executable,
        "-m",
        "synthprobe",
        "score",
        "gpt3",
        "--tasks",
        "2D+",
        "--shots",
        "one",
        "--limit",
        str(n),
        "--model",
        spec,
        *model_args,
        "--save-predictions",
        "--no-progress",
        "--no-cache",
        "--output",
        str(out),
        "--overwrite",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **(env or {})}
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    doc = json.loads(out.read_text())
    (row,) = doc["models"][0]["results"]["gpt3"]["rows"]
    return [item["prediction"] for item in sorted(row["items"], key=lambda it: it["index"])]


# -- the bench ----------------------------------------------------------------------------------------


def _timed(backend, items, **kw):
    t0 = time.perf_counter()
    run = backend.run_choices(items, progress=False, **kw)
    return run.scores, time.perf_counter() - t0


def _print_agreement(label: str, a: dict) -> None:
    print(
        f"  {label}: largest |Δ loglik| {a['max_abs_delta']:.2e} nats; same acc and acc_norm prediction on "
        f"{a['same_share'] * 100:.1f} % of {a['n']} items"
    )
    for d in a["disagreements"]:
        print(
            f"    item {d['item']}: acc {d['acc'][0]} vs {d['acc'][1]}, acc_norm {d['acc_norm'][0]} vs "
            f"{d['acc_norm'][1]}; margins (HF, other): acc {d['margin_acc'][0]:.2e} / {d['margin_acc'][1]:.2e}, "
            f"acc_norm {d['margin_norm'][0]:.2e} / {d['margin_norm'][1]:.2e}"
        )


def _inprocess_vllm(python: str, model_dir: Path, n: int, data: Path, tmp: Path):
    """The in-process vLLM engine's row, run by the vLLM virtualenv's python (another part's engine)."""
    from synthprobe.backends.base import EndingScore

    out = tmp / "vllm-inprocess.json"
    cmd = [
        python,
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--model",
        f"vllm:{model_dir}",
        "--data",
        str(data),
        "--limit",
        str(n),
        "--save-predictions",
        "--no-cache",
        "--no-progress",
        "--output",
        str(out),
    ]
    done = subprocess.run(
        cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, capture_output=True, text=True
    )
    if done.returncode:
        return None, f"failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}"
    block = json.loads(out.read_text())["models"][0]["results"]["deeparithmark"]
    scores = [
        [EndingScore(*e) for e in zip(p["logprob"], p["n_tokens"], p["n_chars"], p["is_greedy"])]
        for p in block["predictions"]
    ]
    return (block["timing"].get("items_per_s"), scores), None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT / "data" / "deeparithmark-1.jsonl")
    p.add_argument("--n", type=int, default=200, help="items (default: %(default)s)")
    p.add_argument("--url", default=None, help="a running server's /v1 URL (default: start a vLLM CPU server)")
    p.add_argument("--concurrency", default="1,4,16", help="requests in flight to try (default: %(default)s)")
    p.add_argument("--gpt3-n", type=int, default=50, help="GPT-3 2D+ items to compare (default: %(default)s; 0 skips)")
    p.add_argument("--threads", type=int, default=1, help="torch threads of the HF engine (default: %(default)s)")
    p.add_argument(
        "--vllm-python", default=None, help="python of the vLLM virtualenv, to add the in-process vLLM engine's row"
    )
    args = p.parse_args(argv)

    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(args.data)[: args.n]
    server = None
    if args.url is None:
        import vllm_cpu

        server = vllm_cpu.Server(vllm_cpu.embedded_model_folder()).start()
        url = server.url
    else:
        url = args.url
    try:
        print(f"{len(items)} items of {args.data.name}; CPU load from other processes moves every figure")
        hf = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", threads=args.threads, progress=False)
        hf_scores, hf_s = _timed(hf, items, batch_size=32, scorer="onepass")
        hf_rate = len(items) / hf_s
        hf.close()
        print(f"HF one-pass (fp32, batch 32, {args.threads} thread(s)): {hf_rate:.2f} items/s")
        last = None
        for c in [int(x) for x in args.concurrency.split(",")]:
            backend = load_backend(f"openai:{url}", concurrency=c, progress=False)
            scores, secs = _timed(backend, items)
            backend.close()
            rate = len(items) / secs
            print(
                f"vLLM server, openai engine, concurrency {c:>2}: {rate:.2f} items/s "
                f"({rate / hf_rate:.2f}× HF one-pass)"
            )
            _print_agreement(f"vs HF (concurrency {c})", agreement(hf_scores, scores))
            last = scores
        from synthprobe.backends import ENGINES

        if args.vllm_python and "vllm" not in ENGINES:
            print("vLLM in-process (--model vllm:DIR): not run (this checkout has no 'vllm' engine yet)")
        elif args.vllm_python:
            from vllm_cpu import embedded_model_folder

            with tempfile.TemporaryDirectory() as tmp:
                row, err = _inprocess_vllm(args.vllm_python, embedded_model_folder(), args.n, args.data, Path(tmp))
            if err:
                print(f"vLLM in-process (--model vllm:DIR): {err}")
            else:
                rate, scores = row
                print(
                    f"vLLM in-process (--model vllm:DIR): {rate} items/s"
                    + (f" ({rate / hf_rate:.2f}× HF one-pass)" if rate else "")
                )
                if scores:
                    _print_agreement("vs HF", agreement(hf_scores, scores))
        else:
            print("vLLM in-process (--model vllm:DIR): not run (pass --vllm-python)")
        if args.gpt3_n and last is not None:
            with tempfile.TemporaryDirectory() as tmp:
                ref = gpt3_answers("smollm2-135m-instruct", args.gpt3_n, Path(tmp), "--dtype", "float32")
                got = gpt3_answers(f"openai:{url}", args.gpt3_n, Path(tmp))
            same = sum(a == b for a, b in zip(ref, got))
            print(f"GPT-3 2D+ one-shot greedy answers: {same}/{len(ref)} identical to HF")
            for i, (a, b) in enumerate(zip(ref, got)):
                if a != b:
                    print(f"  item {i}: HF {a!r} vs server {b!r}")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
