#!/usr/bin/env python3
"""A standalone per-ending scorer of the ArithMark 3.0 protocol, for timing against ours.

Written from the protocol as /work/shared/reference/arithmark3-protocol.md describes ArithMark
3.0's own script (``bencharithmark-3.py``), with plain transformers and nothing from synthprobe,
so that ``bench/bench_whole_process.py`` can time it as a separate process:

* the context and each ending are tokenised separately, no special tokens; the request is
  ``ctx_ids + ending_ids``, the context left-truncated to ``max_context - len(ending)``;
* items sorted by their longest request (longest first); a batch is ``--batch-size`` items
  with their endings flattened, **one row per ending**, right-padded with a 2-D attention mask,
  ``use_cache=False``;
* per ending token, log-prob = -cross-entropy of the fp32 logits at the previous position;
  raw = the sum (``acc``), normalised = raw / number of ending tokens (``acc_norm``); ties go to
  the lowest index.

One difference, stated: the protocol loads the slow tokenizer (``use_fast=False``); the
embedded model's cached folder only has ``tokenizer.json`` (a byte-level BPE, for which the slow
and fast tokenizers agree), so the fast one is used when no slow one can be built.

    python bench/arithmark3_per_ending.py --model FOLDER --data FILE [--n 200] [--batch-size 32]
        [--dtype float32] --output preds.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="a local transformers model folder")
    p.add_argument("--data", required=True, help="ArithMark-format JSONL")
    p.add_argument("--n", type=int, default=None, help="the first N items (default: all)")
    p.add_argument("--batch-size", type=int, default=32, help="items per batch (default: %(default)s)")
    p.add_argument("--max-context", type=int, default=1024)
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    p.add_argument("--output", required=True, help="per-item predictions (JSON)")
    args = p.parse_args(argv)

    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t_start = time.perf_counter()
    items = []
    with open(args.data, encoding="utf-8-sig") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                items.append((r["ctx"], list(r["endings"]), int(r["label"])))
            if args.n is not None and len(items) >= args.n:
                break
    try:
        tok = AutoTokenizer.from_pretrained(args.model, use_fast=False)
    except Exception:  # no slow tokenizer files: see the module docstring
        tok = AutoTokenizer.from_pretrained(args.model)
    pad = tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=getattr(torch, args.dtype)).eval()

    requests = []  # per item: list of (ids, n_ending_tokens)
    for ctx, endings, _ in items:
        c = tok(ctx, add_special_tokens=False)["input_ids"]
        reqs = []
        for e in endings:
            e_ids = tok(e, add_special_tokens=False)["input_ids"]
            keep = args.max_context - len(e_ids)
            reqs.append((c[len(c) - keep :] + e_ids if keep < len(c) else c + e_ids, len(e_ids)))
        requests.append(reqs)
    order = sorted(range(len(items)), key=lambda i: (-max(len(r[0]) for r in requests[i]), i))
    raw: list[list[float] | None] = [None] * len(items)
    t_eval = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(order), args.batch_size):
            batch = order[start : start + args.batch_size]
            rows = [r for i in batch for r in requests[i]]
            L = max(len(ids) for ids, _ in rows)
            input_ids = torch.full((len(rows), L), pad, dtype=torch.long)
            mask = torch.zeros((len(rows), L), dtype=torch.long)
            for k, (ids, _) in enumerate(rows):
                input_ids[k, : len(ids)] = torch.tensor(ids)
                mask[k, : len(ids)] = 1
            logits = model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits
            scores = []
            for k, (ids, n_end) in enumerate(rows):
                n = len(ids)
                pred = logits[k, n - n_end - 1 : n - 1].float()
                target = input_ids[k, n - n_end : n]
                scores.append(-F.cross_entropy(pred, target, reduction="sum").item())
            k = 0
            for i in batch:
                m = len(requests[i])
                raw[i] = scores[k : k + m]
                k += m
    eval_s = time.perf_counter() - t_eval

    def first_max(v):
        return max(range(len(v)), key=lambda j: (v[j], -j))

    out = []
    for i, (_, _, label) in enumerate(items):
        norm = [s / max(1, n) for s, (_, n) in zip(raw[i], requests[i])]
        out.append(
            {"index": i, "label": label, "raw": raw[i], "pred_acc": first_max(raw[i]), "pred_acc_norm": first_max(norm)}
        )
    acc = sum(o["pred_acc"] == o["label"] for o in out) / len(out)
    acc_norm = sum(o["pred_acc_norm"] == o["label"] for o in out) / len(out)
    with open(args.output, "w", encoding="utf-8") as fh:
        json.dump(
            {
                "acc": acc,
                "acc_norm": acc_norm,
                "eval_s": eval_s,
                "total_s": time.perf_counter() - t_start,
                "items": out,
            },
            fh,
        )
    print(f"raw {acc:.2%} normalized {acc_norm:.2%} ({len(out)} items, eval {eval_s:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
