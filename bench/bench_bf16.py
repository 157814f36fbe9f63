#!/usr/bin/env python3
"""bfloat16 on the CPU against the fp32 reference: speed, and how many predictions flip.

Scores the first ``--n`` release items (default: all 1,000) with the embedded model loaded in
float32 and in bfloat16 (``--dtype bfloat16``; on a CPU with AVX512-BF16 or AMX the matmuls run
in bf16, elsewhere torch emulates them), one-pass scorer, same batches, chunk by chunk
alternating (fp32, bf16, fp32, ...) so machine load hits both alike. Prints items/s of each and
the ratio, then for ``acc`` (summed log-likelihood) and ``acc_norm`` (per token) the number of
items whose prediction differs, with each flip's fp32 margin (best minus the runner-up, in
nats) and the largest per-ending |Δ log-likelihood|. fp32 stays the default and the reference.

    python bench/bench_bf16.py [--n 1000] [--batch-size 32] [--threads N]
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


def cpu_flags() -> set[str]:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT / "data" / "deeparithmark-1.jsonl")
    p.add_argument("--model", default="smollm2-135m-instruct")
    p.add_argument("--n", type=int, default=1000, help="first N items (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=None)
    args = p.parse_args(argv)

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.loglik import score_items
    from synthprobe.formats.arithmark3 import load_arithmark3
    from synthprobe.metrics.choice import argmax_first

    items = load_arithmark3(args.data)[: args.n]
    extra = {"threads": args.threads} if args.threads else {}
    fp32 = load_backend(args.model, dtype="float32", device="cpu", progress=False, **extra)
    bf16 = load_backend(args.model, dtype="bfloat16", device="cpu", progress=False, **extra)
    flags = cpu_flags()
    print(
        f"{fp32.name}, {len(items)} items, batch {args.batch_size}; CPU bf16 support: "
        f"{', '.join(sorted(f for f in flags if 'bf16' in f or f.startswith('amx'))) or 'none (emulated)'}"
    )
    for b in (fp32, bf16):  # probe + warm-up outside the timing
        score_items(b, items[:2], batch_size=2, progress=False)
    s32, s16, t32, t16 = [], [], 0.0, 0.0
    for start in range(0, len(items), 4 * args.batch_size):
        part = items[start : start + 4 * args.batch_size]
        t0 = time.perf_counter()
        r32 = score_items(fp32, part, batch_size=args.batch_size, progress=False)
        t1 = time.perf_counter()
        r16 = score_items(bf16, part, batch_size=args.batch_size, progress=False)
        t2 = time.perf_counter()
        assert r32.scorer_used == "onepass" and r16.scorer_used == "onepass", (r32.fallback_reason, r16.fallback_reason)
        s32 += r32.scores
        s16 += r16.scores
        t32 += t1 - t0
        t16 += t2 - t1
    n = len(items)
    print(f"fp32: {n / t32:6.2f} items/s   bf16: {n / t16:6.2f} items/s   bf16 is {t32 / t16:.2f}x fp32")
    dmax = max(abs(a.logprob - b.logprob) for ra, rb in zip(s32, s16) for a, b in zip(ra, rb))
    print(f"largest per-ending |Δ log-likelihood| bf16 vs fp32: {dmax:.3f} nats")
    for metric, value in (("acc", lambda s: s.logprob), ("acc_norm", lambda s: s.logprob / max(1, s.n_tokens))):
        flips, right32, right16 = [], 0, 0
        for item, a, b in zip(items, s32, s16):
            va, vb = [value(s) for s in a], [value(s) for s in b]
            pa, pb = argmax_first(va), argmax_first(vb)
            right32 += pa == item.label
            right16 += pb == item.label
            if pa != pb:
                runner_up = max(v for j, v in enumerate(va) if j != pa)
                flips.append((va[pa] - runner_up, va[pa] - va[pb]))
        margins = ", ".join(f"{m:.3f}" for m, _ in sorted(flips)) or "-"
        print(
            f"{metric:9}: fp32 {right32 / n:.2%}, bf16 {right16 / n:.2%}; {len(flips)} of {n} predictions flip "
            f"({len(flips) / n:.1%}); fp32 margins of the flipped items (nats{'/token' if metric != 'acc' else ''}): "
            f"{margins}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
