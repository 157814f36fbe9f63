"""Training throughput of ``synthprobe validate``'s choice head, against this machine's matmul ceiling.

Trains the LoRA choice head (:mod:`synthprobe.backends.hf.train`) on N fresh Deep Arithmark items,
endings alone (the adversary's input) and with the context (learnability), and prints for each:
wall time, items/s, tokens/s, and the achieved fp32 GFLOP/s as a share of the machine's ceiling
(plain ``torch.matmul`` at the model's own projection shapes, measured in the same run,
:func:`profile_scorer.gemm_peak`). It also times a forward-only pass over the same prompts, to say
where the time goes: the forward through all layers, against the backward through the top ones.

FLOPs counted: 2 per weight per token through every decoder layer (forward), plus 4 per weight per
token through the LoRA-carrying top layers (the backward's activation gradients: LoRA's own weight
gradients are rank-8 and left out); the LM head is not run (four letter rows only).

    .venv/bin/python bench/bench_training.py --n 256
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="smollm2-135m-instruct")
    p.add_argument("--n", type=int, default=256, help="training items (default: %(default)s)")
    p.add_argument("--top-layers", type=int, default=6)
    args = p.parse_args(argv)

    import torch
    from profile_scorer import gemm_peak

    from synthprobe.backends import load_backend
    from synthprobe.validity import sources
    from synthprobe.validity.curve import LETTERS, prompt

    backend = load_backend(args.model, dtype="float32")
    cfg = backend.model.config
    layers = backend.model.get_decoder().layers
    per_layer = sum(p.numel() for p in layers[0].parameters())
    n_layers = len(layers)
    top = n_layers if args.top_layers <= 0 else min(args.top_layers, n_layers)
    items = sources.collect(sources.deeparithmark_builder(None), n=args.n, seed=1, purpose="bench", exclude=set())
    hidden, inter = cfg.hidden_size, cfg.intermediate_size
    head_dim = getattr(cfg, "head_dim", None) or hidden // cfg.num_attention_heads
    q_out, kv_out = cfg.num_attention_heads * head_dim, cfg.num_key_value_heads * head_dim
    peaks = gemm_peak(
        torch, 4096, sorted({(hidden, q_out), (hidden, kv_out), (q_out, hidden), (hidden, inter), (inter, hidden)})
    )
    peak = max(peaks.values())
    print(
        f"{backend.name}, fp32, torch {torch.__version__}, {torch.get_num_threads()} threads; {n_layers} layers of "
        f"{per_layer / 1e6:.2f} M weights, LoRA on the top {top}; {args.n} items"
    )
    print(f"matmul ceiling, fp32, 4,096 rows: best {peak:.0f} GFLOP/s")
    for kind in ("endings", "context"):
        prompts = [prompt(it, kind) for it in items]
        t0 = time.perf_counter()
        backend.pick_choices(prompts, LETTERS[:4], batch_size=16)
        fwd = time.perf_counter() - t0
        run = backend.train_choices(
            prompts,
            [it.label for it in items],
            choices=LETTERS[:4],
            checkpoints=[args.n],
            settings={"top_layers": args.top_layers},
        )
        flops = run.tokens * (2 * per_layer * n_layers + 4 * per_layer * top)
        achieved = flops / run.seconds / 1e9
        print(
            f"\n{kind}: {run.seconds:.1f} s, {args.n / run.seconds:.2f} items/s, {run.tokens_per_s:.0f} tokens/s "
            f"({run.tokens / args.n:.1f} tokens an item)"
        )
        print(f"  {achieved:.0f} GFLOP/s = {100 * achieved / peak:.0f} % of the {peak:.0f} GFLOP/s ceiling")
        print(
            f"  a forward-only pass over the same prompts: {fwd:.1f} s = {100 * fwd / run.seconds:.0f} % of the "
            f"training time (the rest: the backward through {top} layers, AdamW, padding)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
