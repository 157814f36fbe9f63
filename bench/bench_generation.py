"""Batched greedy generation against one prompt at a time, like for like, on the same items in one run.

    python bench/bench_generation.py [--model smollm2-135m-instruct] [--n 48] [--batch-size 16] [--shots 1]

Builds ``--n`` ``--shots``-shot prompts spread over the GPT-3 generation tasks (``--shots 50``
gives the paper's long few-shot arithmetic prompts) and decodes every prompt three ways:

1. ``hf``: plain ``transformers`` ``model.generate``, one prompt at a time, greedy, always
   ``--max-new-tokens`` tokens (it has no stop at the newline), then cut at the newline;
2. ``ours, batch 1``: :func:`synthprobe.backends.hf.generate.greedy_generate` one prompt at a
   time, with the same newline early stop as the batched run;
3. ``ours, batched``: the same function, ``--batch-size`` prompts at a time (what
   ``synthprobe score gpt3`` runs).

It prints items/s of each and the batched run's speed-up over both: over (1), the whole gain
against a plain loop; over (2), the gain of batching alone, with the same stop rule.

Batching changes the order of floating-point sums (padding changes the matrix shapes), so a
continuation can differ where the two best next tokens are within float noise of each
other. Every disagreement with (1) is therefore explained: the script finds the first step
where the texts part and prints run (1)'s gap between its two best logits there. It exits 1
if any disagreement happens at a gap above ``--tie`` (default 1e-4), i.e. is not a numerical tie.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _nonneg(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct", help="model spec (default: the embedded model)")
    ap.add_argument("--n", type=_positive, default=48, help="number of prompts (default 48)")
    ap.add_argument("--batch-size", type=_positive, default=16, help="batch size of the batched run (default 16)")
    ap.add_argument(
        "--shots",
        type=_nonneg,
        default=1,
        help="demonstrations per prompt (default 1; 50 gives GPT-3's few-shot arithmetic prompts, about 1,000 tokens)",
    )
    ap.add_argument("--tasks", default="arithmetic,words", help="tasks to draw prompts from (default arithmetic,words)")
    ap.add_argument("--max-new-tokens", type=_positive, default=12, help="new tokens per prompt (default 12)")
    ap.add_argument(
        "--threads",
        type=_positive,
        default=None,
        help="torch CPU threads (default: the backend's, one per physical core)",
    )
    ap.add_argument(
        "--tie", type=float, default=1e-4, help="largest top-2 logit gap counted as a numerical tie (default 1e-4)"
    )
    args = ap.parse_args(argv)

    import torch
    from tqdm.auto import tqdm

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.generate import cut_at_stop, greedy_generate
    from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, resolve_tasks
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompt

    backend = load_backend(args.model, dtype="float32", **({"threads": args.threads} if args.threads else {}))
    model, tok = backend.model, backend.tokenizer

    tasks = [t for t in resolve_tasks(args.tasks) if t.kind == "generate"]
    pool_n = max(200, args.shots + 1 + args.n // max(len(tasks), 1))
    pools = {t.name: build_items(BuildConfig(t.name, n=min(pool_n, t.max_n or pool_n))) for t in tasks}
    prompts = []
    for i in range(args.n):
        task = tasks[i % len(tasks)]
        prompts.append(
            build_prompt(task, pools[task.name], i // len(tasks), PromptConfig(shots=args.shots, max_context=None)).text
        )
    lengths = [len(tok(p, add_special_tokens=False)["input_ids"]) for p in prompts]
    limit = backend.max_positions
    if limit and max(lengths) + args.max_new_tokens > limit:
        print(
            f"the longest prompt has {max(lengths)} tokens; with --max-new-tokens it exceeds the model's "
            f"{limit} positions: lower --shots",
            file=sys.stderr,
        )
        return 2

    # 1. transformers' generate, one prompt at a time, no stop: always max_new_tokens tokens
    hf, runs = [], []
    start = time.perf_counter()
    with torch.inference_mode():
        for p in tqdm(prompts, desc="hf generate, one at a time", unit="prompt"):
            ids = tok(p, add_special_tokens=False, return_tensors="pt").input_ids.to(model.device)
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=args.max_new_tokens,
                do_sample=False,
                pad_token_id=tok.eos_token_id,
                output_scores=True,
                return_dict_in_generate=True,
            )
            new = out.sequences[0, ids.shape[1] :].tolist()
            hf.append(cut_at_stop(tok.decode(new, skip_special_tokens=True), "\n"))
            runs.append((new, out.scores))
    t_hf = time.perf_counter() - start

    # 2. our greedy code path, one prompt at a time, stopping at the newline
    start = time.perf_counter()
    single = greedy_generate(
        model, tok, prompts, max_new_tokens=args.max_new_tokens, stop="\n", batch_size=1, desc="ours, batch 1"
    )
    t_single = time.perf_counter() - start

    # 3. our greedy code path, batched
    start = time.perf_counter()
    batched = greedy_generate(
        model,
        tok,
        prompts,
        max_new_tokens=args.max_new_tokens,
        stop="\n",
        batch_size=args.batch_size,
        desc="ours, batched",
    )
    t_batched = time.perf_counter() - start

    worst = 0.0
    for i, (a, b) in enumerate(zip(batched, hf)):
        if a == b:
            continue
        new, scores = runs[i]
        step = next(
            s
            for s in range(len(new))
            if not a.startswith(cut_at_stop(tok.decode(new[: s + 1], skip_special_tokens=True), "\n"))
        )
        top = torch.topk(scores[step][0].float(), 2).values
        gap = float(top[0] - top[1])
        worst = max(worst, gap)
        print(
            f"prompt {i}: batched {a!r} vs hf {b!r}; they part at new token {step}, "
            f"where the two best logits differ by {gap:.2e}"
        )

    n = args.n
    print(
        f"model {backend.name}, {n} prompts ({args.shots}-shot, {min(lengths)}-{max(lengths)} tokens, "
        f"mean {sum(lengths) / n:.0f}), max_new_tokens {args.max_new_tokens}, torch threads "
        f"{torch.get_num_threads()}"
    )
    print(f"  1. hf generate, one at a time, no stop:  {n / t_hf:8.2f} items/s  ({t_hf:.1f} s)")
    print(f"  2. ours, one at a time, newline stop:    {n / t_single:8.2f} items/s  ({t_single:.1f} s)")
    print(f"  3. ours, batched ({args.batch_size:>3}), newline stop: {n / t_batched:8.2f} items/s  ({t_batched:.1f} s)")
    print(
        f"speed-up of 3: {t_hf / t_batched:.2f}x over 1, {t_single / t_batched:.2f}x over 2 "
        f"(2 over 1: {t_hf / t_single:.2f}x)"
    )
    print(
        f"identical continuations: 3 = 1 in {sum(a == b for a, b in zip(batched, hf))}/{n}, "
        f"3 = 2 in {sum(a == b for a, b in zip(batched, single))}/{n}, "
        f"2 = 1 in {sum(a == b for a, b in zip(single, hf))}/{n}"
        + (
            f" (the 3-1 differences part at numerical ties, top-2 logit gap <= {worst:.1e})"
            if worst and worst <= args.tie
            else ""
        )
    )
    return 0 if worst <= args.tie else 1


if __name__ == "__main__":
    sys.exit(main())
