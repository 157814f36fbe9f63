#!/usr/bin/env python3
"""How close the one-pass scorer comes to a plain dense forward of the same shapes.

For the first ``--n`` items of a Deep Arithmark file this plans the forwards exactly as the
scorer does (:func:`synthprobe.backends.hf.onepass.plan_batches`: sorted by row length,
packed by ``--token-budget`` padded tokens with at most ``--batch-size`` rows), then times,
alternating (ours, dense, ours, dense, ...) ``--repeats`` times:

* **ours**: :func:`score_onepass` on those items (tree masks, eager attention, logits only at
  ending positions, log-softmax and the per-ending sums included);
* **dense**: the model's own forward on ``[B, L]`` tensors of the same shapes (the same
  tokens, right-padded; the model's default attention with a plain causal mask, logits at the
  last position only), i.e. what the machine does with the same work and no scoring at all.

It prints the median seconds of each, tokens/s (ours counts only real tokens, dense counts
every fed position, padding included) and ours/dense: padding waste, the 4-D masks, eager
attention and the scoring bookkeeping all count against us. The issue's goal is >= 85 %.

    python bench/bench_packing.py [--n 200] [--batch-size 32] [--token-budget 4096] [--threads N]

``--sweep`` also prints ours at a few budgets and batch caps (one pass each).
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=ROOT / "data" / "deeparithmark-1.jsonl")
    p.add_argument("--model", default="smollm2-135m-instruct")
    p.add_argument("--n", type=int, default=200, help="items (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32, help="most rows a forward takes (default: %(default)s)")
    p.add_argument(
        "--token-budget", type=int, default=None, help="padded tokens a forward takes (default: the scorer's default)"
    )
    p.add_argument("--repeats", type=int, default=3, help="timed passes of each (default: %(default)s)")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: the backend's choice)")
    p.add_argument("--sweep", action="store_true", help="also time ours at other budgets / caps")
    args = p.parse_args(argv)

    import torch

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.encode import encode_items
    from synthprobe.backends.hf.onepass import DEFAULT_TOKEN_BUDGET, layout_item, plan_batches, score_onepass
    from synthprobe.formats.arithmark3 import load_arithmark3

    budget = args.token_budget or DEFAULT_TOKEN_BUDGET
    backend = load_backend(
        args.model,
        dtype=args.dtype,
        device="cpu",
        progress=False,
        **({"threads": args.threads} if args.threads else {}),
    )
    model, pad = backend.model, backend.pad_token_id
    items = load_arithmark3(args.data)[: args.n]
    enc = encode_items(backend.tokenizer, items, max_context=1024)
    layouts = [layout_item(e) for e in enc]
    batches = plan_batches([r.length for r in layouts], batch_size=args.batch_size, token_budget=budget)
    real = sum(r.length for r in layouts)
    shapes = [(len(b), max(layouts[i].length for i in b)) for b in batches]
    fed = sum(b * L for b, L in shapes)
    dense_ids = []
    for b, (B, L) in zip(batches, shapes):
        ids = torch.full((B, L), pad, dtype=torch.long)
        for k, i in enumerate(b):
            ids[k, : layouts[i].length] = torch.tensor(layouts[i].tokens)
        dense_ids.append(ids)

    def ours(batch_size=args.batch_size, token_budget=budget):
        score_onepass(model, enc, batch_size=batch_size, pad_id=pad, progress=False, token_budget=token_budget)

    def dense():
        with torch.inference_mode():
            for ids in dense_ids:
                model(input_ids=ids, use_cache=False, logits_to_keep=1)

    print(
        f"{backend.name}, {backend.dtype}, torch threads {torch.get_num_threads()}, {len(items)} items, "
        f"{len(batches)} forwards (cap {args.batch_size} rows, budget {budget} tokens), {real:,} real tokens, "
        f"{fed:,} fed with padding ({1 - real / fed:.2%} padding)"
    )
    ours(), dense()  # warm-up, untimed
    t_ours, t_dense = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        ours()
        t1 = time.perf_counter()
        dense()
        t2 = time.perf_counter()
        t_ours.append(t1 - t0)
        t_dense.append(t2 - t1)
    mo, md = statistics.median(t_ours), statistics.median(t_dense)
    print(f"ours : {mo:7.2f} s  {real / mo:8.0f} real tokens/s  {len(items) / mo:6.2f} items/s")
    print(f"dense: {md:7.2f} s  {fed / md:8.0f} fed tokens/s (same shapes, no scoring)")
    print(f"ours / dense tokens/s: {real / mo / (fed / md):.1%}  (goal >= 85 %; median of {args.repeats}, alternating)")
    if args.sweep:
        for bs, tb in ((8, None), (32, None), (64, 8192), (128, 8192), (256, 16384)):
            t0 = time.perf_counter()
            ours(bs, tb)
            dt = time.perf_counter() - t0
            print(f"  ours cap {bs:4d} budget {str(tb):>6}: {dt:6.2f} s  {real / dt:8.0f} real tokens/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
