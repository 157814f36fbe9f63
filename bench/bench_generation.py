"""Batched greedy generation vs one prompt at a time, on the same items in one run.

    python bench/bench_generation.py [--model smollm2-135m-instruct] [--n 48] [--batch-size 16]

Builds ``--n`` one-shot prompts spread over the GPT-3 generation tasks, then decodes them
(1) with :func:`synthprobe.models.generation.greedy_generate` in batches and (2) one prompt at
a time with plain ``transformers`` ``model.generate`` (greedy, cut at the newline), and prints
items/s of both, the speed-up and how many continuations agree.

Batching changes the order of floating-point sums (padding changes the matrix shapes), so a
continuation can differ where the two best next tokens are within float noise of each
other. Every disagreement is therefore explained: the script finds the first step where the
texts part and prints the one-at-a-time run's gap between its two best logits there. It
exits 1 if any disagreement happens at a gap above ``--tie`` (default 1e-4), i.e. is not a
numerical tie.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct", help="model spec (default: the embedded model)")
    ap.add_argument("--n", type=int, default=48, help="number of prompts (default 48)")
    ap.add_argument("--batch-size", type=int, default=16, help="batch size of the batched run (default 16)")
    ap.add_argument("--shots", type=int, default=1, help="demonstrations per prompt (default 1)")
    ap.add_argument("--tasks", default="arithmetic,words", help="tasks to draw prompts from (default arithmetic,words)")
    ap.add_argument("--max-new-tokens", type=int, default=12, help="new tokens per prompt (default 12)")
    ap.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    ap.add_argument("--tie", type=float, default=1e-4,
                    help="largest top-2 logit gap counted as a numerical tie (default 1e-4)")
    args = ap.parse_args(argv)

    import torch
    from tqdm.auto import tqdm

    from synthprobe.models import load_backend
    from synthprobe.models.generation import cut_at_stop, greedy_generate
    from synthprobe.tasks.gpt3 import BuildConfig, build_items, resolve_tasks
    from synthprobe.tasks.gpt3.prompts import PromptConfig, build_prompt

    if args.threads:
        torch.set_num_threads(args.threads)
    backend = load_backend(args.model, dtype="float32")
    model, tok = backend.model, backend.tokenizer

    tasks = [t for t in resolve_tasks(args.tasks) if t.kind == "generate"]
    pools = {t.name: build_items(BuildConfig(t.name, n=200)) for t in tasks}
    prompts = []
    for i in range(args.n):
        task = tasks[i % len(tasks)]
        prompts.append(build_prompt(task, pools[task.name], i // len(tasks), PromptConfig(shots=args.shots)).text)
    lengths = [len(tok(p, add_special_tokens=False)["input_ids"]) for p in prompts]

    start = time.perf_counter()
    batched = greedy_generate(model, tok, prompts, max_new_tokens=args.max_new_tokens, stop="\n",
                              batch_size=args.batch_size, desc="batched")
    t_batched = time.perf_counter() - start

    single, runs = [], []
    start = time.perf_counter()
    with torch.inference_mode():
        for p in tqdm(prompts, desc="one at a time", unit="prompt"):
            ids = tok(p, add_special_tokens=False, return_tensors="pt").input_ids.to(model.device)
            out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=args.max_new_tokens,
                                 do_sample=False, pad_token_id=tok.eos_token_id, output_scores=True,
                                 return_dict_in_generate=True)
            new = out.sequences[0, ids.shape[1]:].tolist()
            single.append(cut_at_stop(tok.decode(new, skip_special_tokens=True), "\n"))
            runs.append((new, out.scores))
    t_single = time.perf_counter() - start

    agree = sum(a == b for a, b in zip(batched, single))
    worst = 0.0
    for i, (a, b) in enumerate(zip(batched, single)):
        if a == b:
            continue
        new, scores = runs[i]
        step = next(s for s in range(len(new))
                    if not a.startswith(cut_at_stop(tok.decode(new[:s + 1], skip_special_tokens=True), "\n")))
        top = torch.topk(scores[step][0].float(), 2).values
        gap = float(top[0] - top[1])
        worst = max(worst, gap)
        print(f"prompt {i}: batched {a!r} vs one at a time {b!r}; they part at new token {step}, "
              f"where the two best logits differ by {gap:.2e}")
    print(f"model {backend.name}, {args.n} prompts ({args.shots}-shot, {min(lengths)}-{max(lengths)} tokens), "
          f"max_new_tokens {args.max_new_tokens}, torch threads {torch.get_num_threads()}")
    print(f"batched (batch {args.batch_size}):  {args.n / t_batched:8.2f} items/s  ({t_batched:.1f} s)")
    print(f"one at a time:          {args.n / t_single:8.2f} items/s  ({t_single:.1f} s)")
    print(f"speed-up: {t_single / t_batched:.2f}x; identical continuations: {agree}/{args.n}"
          + (f" (the others part at numerical ties, top-2 logit gap <= {worst:.1e})"
             if agree < args.n and worst <= args.tie else ""))
    return 0 if worst <= args.tie else 1


if __name__ == "__main__":
    sys.exit(main())
