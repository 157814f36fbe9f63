#!/usr/bin/env python3
"""Where the one-pass scorer's time goes, and how far the per-ending peers can fall behind it.

For the first ``--n`` release items this prints three things, all measured in one process:

1. **The machine's matrix-multiply ceiling**: fp32 GFLOP/s of plain ``torch.matmul`` at the
   model's own GEMM shapes (4,096 rows x each projection), the best of a few runs.
2. **A profile of one scoring pass** (``torch.profiler``, CPU): the share of each operator in
   the scorer's time, the matrix products' share, and the GFLOP/s they reached, counted from
   the multiply-adds the pass needs (every fed position, padding included, through the 30
   decoder layers' projections; the LM head only at the positions that predict ending
   tokens). When the products run at the ceiling and take most of the time, the scorer is
   bound by arithmetic, and only less arithmetic makes it faster.
3. **The arithmetic of the per-ending protocol** that lm-eval and the ArithMark 3.0 script
   follow: one row per ending, ``ctx + ending`` minus its last token fed, logits at every
   position. Its multiply-adds divided by ours is the speed-up a peer running at the same
   efficiency would show: the ceiling of the whole-process ratio once start-up stops
   mattering (``bench/bench_whole_process.py`` measures the ratio itself). It is a lower bound
   of the peers' work: their padding is not counted.

    python bench/profile_scorer.py [--n 200] [--batch-size 32] [--threads N] [--rows 25]
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


def gemm_peak(torch, rows: int, shapes, repeats: int = 7) -> dict[tuple[int, int], float]:
    """Best-of-``repeats`` fp32 GFLOP/s of ``[rows, k] @ [k, n]`` for each ``(k, n)``."""
    out = {}
    for k, n in shapes:
        a, b = torch.randn(rows, k), torch.randn(k, n)
        for _ in range(3):
            a @ b
        best = 0.0
        for _ in range(repeats):
            reps = 10
            t0 = time.perf_counter()
            for _ in range(reps):
                a @ b
            dt = (time.perf_counter() - t0) / reps
            best = max(best, 2 * rows * k * n / dt / 1e9)
        out[k, n] = best
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT / "data" / "deeparithmark-1.jsonl")
    p.add_argument("--model", default="smollm2-135m-instruct")
    p.add_argument("--n", type=int, default=200, help="first N items (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32, help="most rows a forward takes (default: %(default)s)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: the backend's choice)")
    p.add_argument("--rows", type=int, default=12, help="operators listed in the profile (default: %(default)s)")
    args = p.parse_args(argv)

    import torch
    from multiply_adds import count
    from torch.profiler import ProfilerActivity, profile

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.encode import encode_items
    from synthprobe.backends.hf.onepass import DEFAULT_TOKEN_BUDGET, layout_item, plan_batches, score_onepass
    from synthprobe.formats.arithmark3 import load_arithmark3

    backend = load_backend(
        args.model, dtype="float32", device="cpu", progress=False, **({"threads": args.threads} if args.threads else {})
    )
    model, pad = backend.model, backend.pad_token_id
    cfg = model.config
    items = load_arithmark3(args.data)[: args.n]
    enc = encode_items(backend.tokenizer, items, max_context=1024, bos_id=backend.bos_token_id if backend.bos else None)
    macs = count(cfg, enc, batch_size=args.batch_size)
    body, head, ours_mac, peer_mac = macs.body, macs.head, macs.ours, macs.peer
    fed, padded, kept = macs.fed, macs.padded, macs.kept
    hidden, inter, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    head_dim = getattr(cfg, "head_dim", None) or hidden // cfg.num_attention_heads
    q_out, kv_out = cfg.num_attention_heads * head_dim, cfg.num_key_value_heads * head_dim
    batches = plan_batches(
        [layout_item(e).length for e in enc], batch_size=args.batch_size, token_budget=DEFAULT_TOKEN_BUDGET
    )

    print(
        f"{backend.name}, fp32, torch {torch.__version__}, {torch.get_num_threads()} threads; "
        f"{len(items)} items, {len(batches)} forwards"
    )
    print(
        f"model: {layers} layers, hidden {hidden}, MLP {inter}, vocab {cfg.vocab_size}: "
        f"{body / 1e6:.1f} M multiply-adds a token in the layers, {head / 1e6:.1f} M in the LM head"
    )

    shapes = sorted({(hidden, q_out), (hidden, kv_out), (q_out, hidden), (hidden, inter), (inter, hidden)})
    peaks = gemm_peak(torch, 4096, shapes)
    peak = max(peaks.values())
    print(
        "\n1. matmul ceiling, fp32, 4,096 rows: "
        + ", ".join(f"{k}x{n} {g:.0f}" for (k, n), g in peaks.items())
        + f" GFLOP/s (best {peak:.0f})"
    )

    score_onepass(model, enc[: min(len(enc), 32)], batch_size=args.batch_size, pad_id=pad, progress=False)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        score_onepass(model, enc, batch_size=args.batch_size, pad_id=pad, progress=False)
        wall = time.perf_counter() - t0
    stats = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
    total_us = sum(e.self_cpu_time_total for e in stats)
    mm_us = sum(e.self_cpu_time_total for e in stats if e.key in ("aten::mm", "aten::addmm"))
    print(
        f"\n2. one scoring pass: {wall:.2f} s wall, {len(items) / wall:.2f} items/s; "
        f"{fed:,} tokens fed, {padded:,} with padding ({1 - fed / padded:.1%}), "
        f"{kept:,} positions through the LM head"
    )
    print(f"   {'operator':<24}{'share':>8}{'seconds':>10}{'calls':>8}")
    for e in stats[: args.rows]:
        print(f"   {e.key:<24}{e.self_cpu_time_total / total_us:>8.1%}{e.self_cpu_time_total / 1e6:>10.2f}{e.count:>8}")
    mm_gflops = 2 * ours_mac / (mm_us / 1e6) / 1e9
    print(
        f"   matrix products (aten::mm): {mm_us / total_us:.1%} of the profiled time, "
        f"{2 * ours_mac / 1e12:.2f} TFLOP at {mm_gflops:.0f} GFLOP/s = {mm_gflops / peak:.0%} of the ceiling"
    )
    print(
        f"   everything else (norms, rotary, attention, activation, log-softmax, bookkeeping): "
        f"{1 - mm_us / total_us:.1%}"
    )

    print(
        f"\n3. multiply-adds: ours {ours_mac / 1e9:,.0f} G; the per-ending protocol {peer_mac / 1e9:,.0f} G "
        f"({macs.peer_fed:,} fed tokens, logits at each) = {peer_mac / ours_mac:.2f}x ours"
    )
    print(
        f"   ceiling of the whole-process ratio against a peer as efficient as we are: {peer_mac / ours_mac:.2f}x "
        f"(plus the difference in start-up); even with nothing but matrix products, ours would take "
        f"{2 * ours_mac / (peak * 1e9):.1f} s of this pass's {wall:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
