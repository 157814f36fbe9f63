#!/usr/bin/env python3
"""Where a generation batch's time goes, pass by pass: one padded prompt pass and a few decoding
steps of the first ``--n`` release items under ``--protocol`` (the embedded model, fp32, its chat
template, one batch of ``--n`` rows as ``_decode_batch`` lays it out: left padding, explicit
positions, logits at the last position only; no shared opening, so the pass is the whole prompt).

1. The prompt pass at 2 and at 1 CPU threads, alternating, each beside the matmul ceiling
   measured just before it (``bench/profile_scorer.py``'s ``gemm_peak``): its GFLOP/s counted by
   ``bench/gen_multiply_adds.py`` and its share of the ceiling.
2. A ``torch.profiler`` table of one prompt pass (2 threads): the operators' shares.
3. Decoding steps (``--steps`` one-token passes on the prompt pass's cache, greedy) at 2 and at 1
   threads, alternating, ms a step; the tokens chosen must be the same at both.

    python bench/profile_generation.py [--n 32] [--protocol letters] [--rounds 2] [--steps 6]
"""

from __future__ import annotations

import argparse
import copy
import inspect
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=32)
    p.add_argument("--protocol", default="letters", choices=("letters", "free"))
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--rows", type=int, default=10, help="operators listed (default: %(default)s)")
    args = p.parse_args(argv)

    import gen_multiply_adds as gm
    import torch
    from bench_generation_account import gemm_ceiling, prompts
    from torch.profiler import ProfilerActivity, profile

    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3

    backend = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    model, pad = backend.model, backend.pad_token_id or 0
    items = load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[: args.n]
    _, _, enc = prompts(backend, items, args.protocol, args.n)
    rows, width = len(enc), max(map(len, enc))
    ids = torch.full((rows, width), pad, dtype=torch.long)
    mask = torch.zeros((rows, width), dtype=torch.long)
    for r, e in enumerate(enc):
        ids[r, width - len(e) :] = torch.tensor(e)
        mask[r, width - len(e) :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    macs = gm.count([gm.Forward(rows, width, 0, 1, int(mask.sum()), "prompt")], gm.Costs.from_config(model.config))
    kw = {"cache": None} if "cache" in inspect.signature(model.forward).parameters else {}
    print(
        f"{backend.name}, fp32, {args.protocol}: one batch of {rows} rows x {width} positions "
        f"({1 - int(mask.sum()) / (rows * width):.1%} padding), {2 * macs.total / 1e9:.0f} GFLOP; "
        f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )

    def prompt_pass():
        return model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True, logits_to_keep=1, **kw)

    with torch.inference_mode():
        prompt_pass()
        print("\n1. prompt pass")
        for _ in range(args.rounds):
            for threads in (2, 1):
                torch.set_num_threads(threads)
                ceiling, _ = gemm_ceiling(torch, model.config)
                t0 = time.perf_counter()
                prompt_pass()
                dt = time.perf_counter() - t0
                g = 2 * macs.total / dt / 1e9
                print(
                    f"   {threads} thread(s): {dt:6.2f} s, {g:4.0f} GFLOP/s; "
                    f"ceiling {ceiling:4.0f} = {g / ceiling:.0%}",
                    flush=True,
                )
        torch.set_num_threads(2)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            out = prompt_pass()
        stats = sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)
        total = sum(e.self_cpu_time_total for e in stats)
        print("\n2. one prompt pass, 2 threads, by operator (self time)")
        for e in stats[: args.rows]:
            print(f"   {e.key:<52}{e.self_cpu_time_total / total:7.1%}{e.count:6}")

        print(f"\n3. decoding steps ({args.steps} a run, {rows} rows)")
        base, first = out.past_key_values, out.logits[:, -1].argmax(-1)
        chosen, times = {}, {1: [], 2: []}
        for _ in range(args.rounds):
            for threads in (2, 1):
                torch.set_num_threads(threads)
                past, tok = copy.deepcopy(base), first[:, None]
                m, nxt, picked = torch.cat([mask, mask.new_ones((rows, 1))], 1), mask.sum(-1)[:, None], []
                t0 = time.perf_counter()
                for _ in range(args.steps):
                    o = model(
                        input_ids=tok,
                        attention_mask=m,
                        position_ids=nxt,
                        use_cache=True,
                        logits_to_keep=1,
                        **({"cache": past} if kw else {"past_key_values": past}),
                    )
                    past, tok = o.past_key_values, o.logits[:, -1].argmax(-1)[:, None]
                    picked.append(tok)
                    m, nxt = torch.cat([m, m.new_ones((rows, 1))], 1), nxt + 1
                times[threads].append((time.perf_counter() - t0) / args.steps)
                chosen[threads] = torch.cat(picked, 1)
        for threads in (2, 1):
            print(f"   {threads} thread(s): " + ", ".join(f"{t * 1e3:.0f}" for t in times[threads]) + " ms a step")
        print(f"   the same tokens at 1 and 2 threads: {torch.equal(chosen[1], chosen[2])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
