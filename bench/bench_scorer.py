#!/usr/bin/env python3
"""One-pass scorer vs the per-ending reference on the same items, same model, same run.

Scores the first ``--n`` items of a Deep Arithmark file with both scorers on the embedded
model (fp32, CPU by default) and prints items/s of each, the speed-up, the forward tokens
each fed through the model, the largest per-ending |log-likelihood difference| and whether
the predictions agree. The work is interleaved chunk by chunk (reference, one-pass,
reference, ...) so that load from other processes hits both scorers alike.

    python bench/bench_scorer.py [--n 64] [--batch-size 32] [--invariance] [--threads N]

``--invariance`` also re-scores with the one-pass scorer at batch sizes 1 and 8 and prints
the largest difference to batch size 32.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def max_diff(a, b) -> float:
    return max(abs(x.logprob - y.logprob) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--data",
        type=Path,
        default=ROOT / "data" / "deeparithmark-1.jsonl",
        help="ArithMark-format JSONL file (default: %(default)s)",
    )
    p.add_argument("--model", default="smollm2-135m-instruct", help="model spec (default: %(default)s)")
    p.add_argument("--n", type=int, default=64, help="items to score (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32, help="items per forward (default: %(default)s)")
    p.add_argument("--dtype", default="float32", help="default: %(default)s")
    p.add_argument("--device", default="cpu", help="default: %(default)s")
    p.add_argument("--invariance", action="store_true", help="also compare one-pass batch sizes 1 and 8 with 32")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads (default: the backend's, one per physical core); on a CPU shared "
        "with other jobs, 1 thread is often faster than 2 that wait for each other",
    )
    args = p.parse_args(argv)

    import torch

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.encode import encode_items
    from synthprobe.backends.hf.onepass import forward_tokens, score_onepass
    from synthprobe.backends.hf.reference import score_reference
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.metrics.choice import argmax_first

    items = load_arithmark3(args.data)[: args.n]
    backend = load_backend(
        args.model,
        dtype=args.dtype,
        device=args.device,
        progress=False,
        **({"threads": args.threads} if args.threads else {}),
    )
    enc = encode_items(backend.tokenizer, items, max_context=1024)
    pad = backend.pad_token_id
    print(
        f"model {backend.name} ({backend.n_params:,} params, {backend.dtype}, {backend.device}), "
        f"torch threads {torch.get_num_threads()}, {len(items)} items from {args.data.name}, "
        f"batch {args.batch_size}"
    )

    # Warm-up (first-call allocations, kernel selection) outside the timing.
    score_reference(backend.model, enc[:2], batch_size=2, pad_id=pad, progress=False)
    score_onepass(backend.model, enc[:2], batch_size=2, pad_id=pad, progress=False)

    ref, one = [], []
    t_ref = t_one = 0.0
    chunk = args.batch_size
    for start in range(0, len(enc), chunk):
        part = enc[start : start + chunk]
        t0 = time.perf_counter()
        ref += score_reference(backend.model, part, batch_size=args.batch_size, pad_id=pad, progress=False)
        t1 = time.perf_counter()
        one += score_onepass(backend.model, part, batch_size=args.batch_size, pad_id=pad, progress=False)
        t2 = time.perf_counter()
        t_ref += t1 - t0
        t_one += t2 - t1
        print(
            f"  {start + len(part):>5} items: reference {len(ref) / t_ref:6.2f} items/s, "
            f"one-pass {len(one) / t_one:6.2f} items/s",
            flush=True,
        )

    n = len(enc)
    ref_tokens = sum(e.reference_tokens for e in enc)
    one_tokens = forward_tokens(enc)
    same_norm = all(
        argmax_first([s.per_token for s in a]) == argmax_first([s.per_token for s in b]) for a, b in zip(ref, one)
    )
    same_raw = all(
        argmax_first([s.logprob for s in a]) == argmax_first([s.logprob for s in b]) for a, b in zip(ref, one)
    )
    print(f"reference: {n / t_ref:.2f} items/s ({t_ref:.1f} s, {ref_tokens:,} forward tokens)")
    print(f"one-pass:  {n / t_one:.2f} items/s ({t_one:.1f} s, {one_tokens:,} forward tokens)")
    print(f"speed-up:  {t_ref / t_one:.2f}x  (forward tokens {ref_tokens / one_tokens:.2f}x fewer)")
    print(
        f"max |delta loglik| one-pass vs reference: {max_diff(ref, one):.2e} nats; identical predictions: "
        f"acc {same_raw}, acc_norm {same_norm}"
    )
    if args.invariance:
        for bs in (1, 8):
            other = score_onepass(backend.model, enc, batch_size=bs, pad_id=pad, progress=False)
            print(f"batch {bs} vs {args.batch_size}: max |delta loglik| {max_diff(other, one):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
