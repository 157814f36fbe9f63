#!/usr/bin/env python3
"""Deep Arithmark's generative protocols: the multiply-add account, the matmul ceiling beside it,
and where the generation time goes. In one process, on the first ``--n`` release items, the
embedded model (fp32, CPU, its own chat template, greedy, batch ``--batch-size``):

1. **The matmul ceiling**: fp32 GFLOP/s of plain ``torch.matmul`` at the model's projection
   shapes (``bench/profile_scorer.py``'s ``gemm_peak``, 4,096 rows), best of a few runs.
2. **Each protocol's generation**, run as ``generate_dataset`` runs it (same prompts, chunks and
   batches), with a timer on every model forward and on the LM head: prompt passes (the shared
   opening and the padded prompts), decoding steps, the LM head, what is left (Python, stop
   checks, cache bookkeeping) per step; the prompt pass's achieved GFLOP/s against the ceiling.
   Every forward's shape is checked against the layout :mod:`gen_multiply_adds` counts.
3. **The multiply-adds** (``gen_multiply_adds``): ours from the real tokens and the real answer
   lengths; lm-eval 0.4.13's HF ``generate_until`` on the same prompts and answers (padded, no
   prefix reuse, every row until the batch's longest stops); inspect_ai's ``multiple_choice()``
   through its ``hf`` provider from the batches its own run recorded (``--inspect-batches``,
   written by ``bench/bench_protocols.py``), its own prompt and its own answer lengths.

    python bench/bench_generation_account.py [--n 64] [--protocols letters,free,letterprob]
        [--inspect-batches FILE.json] [--rounds R]

``--rounds R`` runs each protocol R times, each run just after a ceiling reading of its own, and
prints every round's prompt pass over the ceiling read beside it, and their median: the ceiling
moves with the machine's load by more than the figure's distance from its goal.

``letterprob`` (a prompt pass and one decoding step per row, ``Backend.first_token`` with the
protocol's candidates) is run when the installed synthprobe knows the protocol, else skipped with
a note; its fallback (an uncertified row decoding on to its ``letters`` answer in the same loop,
which makes a ``letterprob`` run cost what a ``letters`` run costs) is not in this account
(``bench/bench_protocols.py`` prints how many items fell back in its own run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gen_multiply_adds as gm  # noqa: E402


def letterprob_known() -> bool:
    from synthprobe.prompts import protocols as proto

    return "letterprob" in getattr(proto, "PROTOCOLS", ())


class Timers:
    """Timers and shapes of every forward of ``model`` and of its LM head."""

    def __init__(self, model):
        self.records: list[dict] = []
        self.head_s = 0.0
        self._t0 = self._h0 = 0.0
        self.handles = [
            model.register_forward_pre_hook(self._pre, with_kwargs=True),
            model.register_forward_hook(self._post),
            model.get_output_embeddings().register_forward_pre_hook(self._hpre),
            model.get_output_embeddings().register_forward_hook(self._hpost),
        ]

    def _pre(self, module, args, kwargs):
        ids = kwargs.get("input_ids")
        cache = kwargs.get("past_key_values", kwargs.get("cache"))
        past = cache.get_seq_length() if cache is not None and hasattr(cache, "get_seq_length") else 0
        self.records.append({"rows": ids.shape[0], "width": ids.shape[1], "past": int(past)})
        self._t0 = time.perf_counter()

    def _post(self, module, args, output):
        self.records[-1]["s"] = time.perf_counter() - self._t0

    def _hpre(self, module, args):
        self._h0 = time.perf_counter()

    def _hpost(self, module, args, output):
        self.head_s += time.perf_counter() - self._h0

    def close(self):
        for h in self.handles:
            h.remove()


def kinds(records: list[dict]) -> list[str]:
    """``prefix`` for a multi-position pass followed by another (a batch's shared opening),
    ``prompt`` for the padded prompts, ``decode`` for one position per row."""
    out = []
    for i, r in enumerate(records):
        if r["width"] == 1 and r["past"] > 0:
            out.append("decode")
        elif i + 1 < len(records) and records[i + 1]["width"] > 1 and records[i + 1]["past"] == r["width"]:
            out.append("prefix")
        else:
            out.append("prompt")
    return out


def prompts(backend, items, protocol: str, batch_size: int):
    """What ``generate_dataset`` feeds for ``protocol``: the question texts (their lengths order
    the chunks), the rendered prompts, and their token ids."""
    from synthprobe.backends.hf.generate import encode_prompts
    from synthprobe.prompts import protocols as proto

    asked = "letters" if protocol == "letterprob" else protocol
    texts = [proto.prompt(it, asked, chat=True) for it in items]
    rendered = backend.render_chat([[{"role": "user", "content": t}] for t in texts])
    encoded = encode_prompts(
        backend.tokenizer,
        rendered,
        max_new_tokens=0,
        batch_size=batch_size,
        add_special_tokens=False,
        bos_id=backend.bos_token_id if backend.bos else None,
        limit=None,
    )
    return texts, rendered, encoded


def run_protocol(backend, items, protocol: str, batch_size: int):
    """Generate as ``generate_dataset`` does, timed; ``(answers, wall, timers)``: answers as
    ``(n_tokens, finish)`` per item, in item order."""
    from synthprobe.prompts import protocols as proto

    texts, rendered, _ = prompts(backend, items, protocol, batch_size)
    lengths = backend.prompt_lengths(texts)  # what generate_dataset orders its batches by
    order = sorted(range(len(items)), key=lambda i: (-lengths[i], i))
    answers: list = [None] * len(items)
    timers = Timers(backend.model)
    t0 = time.perf_counter()
    try:
        for s in range(0, len(order), batch_size):
            chunk = order[s : s + batch_size]
            part = [rendered[i] for i in chunk]
            if protocol == "letterprob":
                got = backend.first_token(
                    part,
                    list(proto.letter_candidates(4)),
                    proto.LETTERPROB_FAST_TOKENS,
                    ["\n"],
                    batch_size=batch_size,
                    progress=False,
                )
                gens = [g.generation for g in got]
            else:
                budget = proto.MAX_NEW_TOKENS[protocol, False]
                gens = backend.generate(part, budget, ["\n"], batch_size=batch_size, progress=False, details=True)
            for i, g in zip(chunk, gens):
                answers[i] = (g.n_tokens, g.finish, g.text)
        wall = time.perf_counter() - t0
    finally:
        timers.close()
    return answers, wall, timers


def replay_inspect(backend, batches: list[dict], *, echo=print) -> dict:
    """inspect_ai's generation again, in this process: each recorded batch's prompts as its ``hf``
    provider sends them (its tokenizer, left padding with the end-of-sequence token, greedy
    ``generate``, ``max_tokens`` 8), timed, each batch's steps checked against its own run's."""
    import torch

    tok, model = backend.tokenizer, backend.model
    eos = tok.eos_token_id
    wall, same = 0.0, 0
    for b in batches:
        enc = [tok(t)["input_ids"] for t in b["texts"]]
        width = max(map(len, enc))
        ids = torch.full((len(enc), width), eos, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, e in enumerate(enc):
            ids[r, width - len(e) :] = torch.tensor(e)
            mask[r, width - len(e) :] = 1
        t0 = time.perf_counter()
        with torch.inference_mode():
            got = model.generate(
                input_ids=ids, attention_mask=mask, max_new_tokens=8, do_sample=False, pad_token_id=eos
            )
        wall += time.perf_counter() - t0
        same += int(got.shape[1] - width == b["steps"] and sorted(map(len, enc)) == sorted(b["lengths"]))
    echo(
        f"    inspect_ai's batches replayed here (transformers generate, its prompts): {wall:.2f} s; "
        f"{same} of {len(batches)} batches ran the steps and lengths inspect's own run did"
    )
    return {"inspect_s": wall, "batches_same": same, "batches": len(batches)}


def gemm_ceiling(torch, cfg) -> tuple[float, dict]:
    from profile_scorer import gemm_peak

    hidden, inter = cfg.hidden_size, cfg.intermediate_size
    head_dim = getattr(cfg, "head_dim", None) or hidden // cfg.num_attention_heads
    q_out, kv_out = cfg.num_attention_heads * head_dim, cfg.num_key_value_heads * head_dim
    shapes = sorted({(hidden, q_out), (hidden, kv_out), (q_out, hidden), (hidden, inter), (inter, hidden)})
    peaks = gemm_peak(torch, 4096, shapes, repeats=5)
    return max(peaks.values()), peaks


def account(
    protocols: list[str],
    n: int,
    batch_size: int,
    *,
    model: str = "smollm2-135m-instruct",
    threads: int | None = None,
    inspect_batches: list[dict] | None = None,
    rounds: int = 1,
    echo=print,
) -> dict:
    """Run the account; prints it with ``echo`` and returns its figures per protocol."""
    import torch

    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3

    backend = load_backend(
        model, dtype="float32", device="cpu", progress=False, **({"threads": threads} if threads else {})
    )
    cfg = backend.model.config
    costs = gm.Costs.from_config(cfg)
    items = load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[:n]
    echo(
        f"{backend.name}, fp32, torch {torch.__version__}, {torch.get_num_threads()} threads; {n} release items, "
        f"batch {batch_size}; load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    echo(
        f"per position: {costs.body / 1e6:.1f} M multiply-adds in the layers, {costs.head / 1e6:.1f} M in the LM "
        f"head; {costs.pair / 1e3:.1f} k per attention (query, key) pair"
    )
    ceiling, peaks = gemm_ceiling(torch, cfg)
    echo(
        "matmul ceiling, fp32, 4,096 rows: "
        + ", ".join(f"{k}x{m} {g:.0f}" for (k, m), g in peaks.items())
        + f" GFLOP/s (best {ceiling:.0f})"
    )
    # warm-up: one small batch through the loop (first-call allocations, kernels chosen)
    backend.generate(["Hello"] * 2, 2, ["\n"], batch_size=2, progress=False)

    out: dict = {"ceiling_gflops": ceiling, "protocols": {}}
    for protocol in protocols:
        if protocol == "letterprob" and not letterprob_known():
            echo("\nletterprob: not a protocol of this synthprobe (the other branch has not landed): skipped")
            continue
        again, _ = gemm_ceiling(torch, cfg)  # the load moves: the ceiling is the best seen, just before the run
        ceiling = max(ceiling, again)
        out["ceiling_gflops"] = ceiling
        answers, wall, timers = run_protocol(backend, items, protocol, batch_size)
        texts, _, encoded = prompts(backend, items, protocol, batch_size)
        passes = [gm.row_passes(nt, fin) for nt, fin, _ in answers]
        lengths = backend.prompt_lengths(texts)
        ours_f = gm.ours_run(encoded, passes, lengths, batch_size)
        recorded = [(r["rows"], r["width"], r["past"]) for r in timers.records]
        counted = [(f.rows, f.width, f.past) for f in ours_f]
        if recorded != counted:
            raise SystemExit(f"{protocol}: the forwards run differ from the layout counted:\n{recorded}\n{counted}")
        ours = gm.count(ours_f, costs)
        lm_eval = gm.count(gm.lm_eval_run(encoded, passes, batch_size), costs)
        every = gm.count(gm.ours_run(encoded, [2] * len(encoded), lengths, batch_size), costs)

        ks = kinds(timers.records)
        t_kind = {
            k: sum(r["s"] for r, kk in zip(timers.records, ks) if kk == k) for k in ("prefix", "prompt", "decode")
        }
        fwd_s = sum(t_kind.values())
        by_kind = {k: [f for f in ours_f if f.kind == k] for k in ("prefix", "prompt", "decode")}
        prompt_count = gm.count(by_kind["prompt"], costs)
        prefix_count = gm.count(by_kind["prefix"], costs)
        decode_count = gm.count(by_kind["decode"], costs)
        steps = len(by_kind["decode"])
        prompt_gflops = 2 * prompt_count.total / t_kind["prompt"] / 1e9
        # the same pass counting only the work on real tokens: padding is work done for nothing
        useful_gflops = 2 * (prompt_count.total - prompt_count.padding) / t_kind["prompt"] / 1e9
        prompt_pad = sum(f.padding for f in by_kind["prompt"]) / max(1, sum(f.positions for f in by_kind["prompt"]))
        n_tok = sum(nt for nt, _, _ in answers)
        echo(
            f"\n{protocol}: {wall:.2f} s generation, {n_tok} tokens written, {ours.passes} forwards "
            f"({len(by_kind['prefix'])} shared openings, {len(by_kind['prompt'])} prompt passes, "
            f"{steps} decoding steps)"
        )
        echo(
            f"  (matmul ceiling just before: {again:.0f} GFLOP/s, best so far {ceiling:.0f})\n"
            f"  prompt passes   {t_kind['prompt']:7.2f} s {t_kind['prompt'] / wall:6.1%}  "
            f"{2 * prompt_count.total / 1e9:8.1f} GFLOP  {prompt_gflops:5.0f} GFLOP/s = {prompt_gflops / ceiling:.0%} "
            f"of the ceiling; padding {prompt_pad:.1%} of their positions (~{prompt_pad * t_kind['prompt']:.2f} s)\n"
            f"                  on real tokens only (padding's layer work left out): {useful_gflops:5.0f} GFLOP/s "
            f"= {useful_gflops / ceiling:.0%} of the ceiling"
        )
        echo(
            f"  shared openings {t_kind['prefix']:7.2f} s {t_kind['prefix'] / wall:6.1%}  "
            f"{2 * prefix_count.total / 1e9:8.1f} GFLOP"
        )
        echo(
            f"  decoding steps  {t_kind['decode']:7.2f} s {t_kind['decode'] / wall:6.1%}  "
            f"{2 * decode_count.total / 1e9:8.1f} GFLOP  "
            f"{2 * decode_count.total / max(t_kind['decode'], 1e-9) / 1e9:5.0f} GFLOP/s; "
            f"{t_kind['decode'] / max(steps, 1) * 1e3:.0f} ms a step"
        )
        echo(
            f"  LM head (inside the above) {timers.head_s:.2f} s {timers.head_s / wall:6.1%}; outside the model "
            f"(Python, stop checks, cache bookkeeping) {wall - fwd_s:.2f} s {(wall - fwd_s) / wall:6.1%}, "
            f"{(wall - fwd_s) / max(steps + len(by_kind['prompt']), 1) * 1e3:.0f} ms a forward"
        )
        echo(
            f"  multiply-adds: ours {ours.total / 1e9:,.1f} G (layers {ours.linear / 1e9:,.1f}, LM head "
            f"{ours.head / 1e9:,.1f}, attention {ours.attention / 1e9:,.1f}; padding {ours.padding / ours.total:.1%})"
        )
        echo(
            f"    lm-eval generate_until, same prompts and answers: {lm_eval.total / 1e9:,.1f} G = "
            f"{lm_eval.total / ours.total:.2f}x ours ({lm_eval.passes} forwards, "
            f"attention {lm_eval.attention / 1e9:,.1f} G)"
        )
        if protocol == "letterprob":
            echo(
                f"    prompt pass + 1 step for every row (no early stop): {every.total / 1e9:,.1f} G = "
                f"{every.total / ours.total:.3f}x the run's"
            )
        fig = {
            "wall_s": wall,
            "prompt_s": t_kind["prompt"],
            "prefix_s": t_kind["prefix"],
            "decode_s": t_kind["decode"],
            "head_s": timers.head_s,
            "outside_s": wall - fwd_s,
            "prompt_gflops": prompt_gflops,
            "prompt_share_of_ceiling": prompt_gflops / ceiling,
            "prompt_share_beside": prompt_gflops / again,
            "prompt_useful_share_of_ceiling": useful_gflops / ceiling,
            "prompt_padding": prompt_pad,
            "ours_macs": ours.total,
            "ours_attention": ours.attention,
            "lm_eval_macs": lm_eval.total,
            "answers": [a[:2] for a in answers],
        }
        if inspect_batches is not None and protocol in ("letters", "free"):
            peer = gm.count(gm.logged_run(inspect_batches), costs)
            rows = sum(len(b["lengths"]) for b in inspect_batches)
            echo(
                f"    inspect_ai multiple_choice() (its prompt, its answers, its {len(inspect_batches)} batches, "
                f"{rows} rows): {peer.total / 1e9:,.1f} G = {peer.total / ours.total:.2f}x ours"
            )
            fig["inspect_macs"] = peer.total
            if protocol == "letters" and all(b.get("texts") for b in inspect_batches):
                fig["inspect_replay"] = replay_inspect(backend, inspect_batches, echo=echo)
                fig["inspect_replay"]["ours_s"] = wall
        if rounds > 1:
            fig["rounds"] = [{"ceiling": again, "prompt_gflops": prompt_gflops, "useful_gflops": useful_gflops}]
            for _ in range(rounds - 1):  # each round: the ceiling read, then the run at once
                beside, _ = gemm_ceiling(torch, cfg)
                _, _, again_timers = run_protocol(backend, items, protocol, batch_size)
                t = sum(r["s"] for r, kk in zip(again_timers.records, kinds(again_timers.records)) if kk == "prompt")
                fig["rounds"].append(
                    {
                        "ceiling": beside,
                        "prompt_gflops": 2 * prompt_count.total / t / 1e9,
                        "useful_gflops": 2 * (prompt_count.total - prompt_count.padding) / t / 1e9,
                    }
                )
            shares = [r["prompt_gflops"] / r["ceiling"] for r in fig["rounds"]]
            useful = [r["useful_gflops"] / r["ceiling"] for r in fig["rounds"]]
            fig["prompt_share_beside_median"] = statistics.median(shares)
            fig["prompt_useful_share_beside_median"] = statistics.median(useful)
            echo(
                f"  {rounds} rounds, each prompt pass beside the ceiling read just before it: "
                + ", ".join(f"{r['prompt_gflops']:.0f}/{r['ceiling']:.0f}" for r in fig["rounds"])
                + f" GFLOP/s = {', '.join(f'{x:.0%}' for x in shares)} (median {statistics.median(shares):.0%}); "
                f"real tokens only {', '.join(f'{x:.0%}' for x in useful)} (median {statistics.median(useful):.0%})"
            )
        out["protocols"][protocol] = fig
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=64, help="first N release items (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--protocols", default="letters,free,letterprob")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run each protocol this many times, each run just after its own ceiling reading, and print "
        "each round's prompt pass over that ceiling and the median (default: %(default)s)",
    )
    p.add_argument("--inspect-batches", type=Path, default=None, help="JSON written by bench_protocols.py")
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = p.parse_args(argv)
    batches = json.loads(args.inspect_batches.read_text()) if args.inspect_batches else None
    figs = account(
        args.protocols.split(","),
        args.n,
        args.batch_size,
        threads=args.threads,
        inspect_batches=batches,
        rounds=args.rounds,
    )
    if args.json:
        args.json.write_text(json.dumps(figs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
