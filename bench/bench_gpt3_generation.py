#!/usr/bin/env python3
"""GPT-3 arithmetic generation: ours against lm-eval 0.4.13's HF ``generate_until``, whole
processes timed from outside, with the multiply-add account of the same prompts and answers.

Each round runs, as separate processes, in the order A B:

A. ``python -m synthprobe score gpt3 --tasks 2D+,3D+ --shots 1 --limit N --dtype float32
   --batch-size 32 --no-cache --save-predictions --no-progress --output TMP``
B. ``lm_eval --model hf --model_args pretrained=<the embedded model's HF folder>,dtype=float32
   --tasks synthprobe_arithmetic_2da_gen,synthprobe_arithmetic_3da_gen --include_path <YAMLs
   from synthprobe export lm-eval> --num_fewshot 1 --limit N --batch_size 32 --device cpu
   --log_samples --output_path TMP``

Both generate greedily up to a newline on the same first N items of each task (built with seed 0,
GPT-3's layout; the one-shot demonstration drawn by synthprobe's own draw on both sides), fp32,
batch 32. Then it checks, item by item, that lm-eval's prompt (``--log_samples``' context) is the
prompt ``synthprobe score gpt3`` builds, and that the two greedy answers are the same text.

The multiply-adds (``bench/gen_multiply_adds.py``) are counted on those prompts (tokenised with
the model's tokenizer) and those answers' lengths:

* ours: the items in chunks of ``--batch-size``, longest prompt in tokens first (ties: item
  order), as ``score_task`` forms them; per chunk the shared opening once, the rest left-padded,
  one position per live row per step, a row leaving when its line ends or its budget is spent;
* lm-eval's ``generate_until`` (read in ``lm_eval/models/huggingface.py``): requests grouped by
  their generation kwargs (so one task at a time: 2D+ and 3D+ have different ``max_gen_toks``),
  sorted longest context in tokens first (ties: the context text), ``--batch_size`` a batch,
  one transformers ``generate`` call per batch with ``max_length`` = padded context +
  ``max_gen_toks``; its stop criteria (``until`` plus the end-of-sequence token) mark rows done
  but transformers keeps every row in the batch until the last one is done, no prefix reuse.

An answer's length in tokens is its text tokenised alone: a row that stopped at the newline took
that many passes plus one (the token holding the newline); one whose text fills the budget took
the budget. (A re-tokenised text could differ from the tokens generated; ``--check-layout`` runs
both generations again in this process, untimed, with a hook on every forward, and checks the
passes each side really made against the layouts counted, and each row's real tokens and finish
against the passes its text gave.)

    python bench/bench_gpt3_generation.py [--n 100] [--tasks 2D+,3D+] [--shots 1] [--repeats 2]
        [--warmup] [--check-layout] [--outputs OURS_JSON LM_EVAL_DIR]

Prints each round's wall times, the medians and lm-eval / ours, the multiply-add ratio, and the
speed-up over the multiply-add ratio (the share of the layout's saving the wall time shows; above
100 %: faster than the arithmetic alone explains, e.g. start-up or Python per step).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gen_multiply_adds as gm  # noqa: E402
from bench_whole_process import _env, embedded_folder, timed  # noqa: E402


def lm_eval_name(task) -> str:
    return f"synthprobe_{task.name}_gen"


def commands(work: Path, tasks, n: int, shots: int, batch: int, folder: Path, run: int) -> dict:
    py = sys.executable
    lm_eval = shutil.which("lm_eval", path=str(Path(py).parent)) or "lm_eval"
    a_out, b_out = work / f"a{run}.json", work / f"b{run}"
    return {
        "A": (
            [py, "-m", "synthprobe", "score", "gpt3", "--tasks", ",".join(t.code for t in tasks)]
            + ["--shots", str(shots), "--limit", str(n), "--dtype", "float32", "--batch-size", str(batch)]
            + ["--no-cache", "--save-predictions", "--no-progress", "--overwrite", "--output", str(a_out)],
            a_out,
        ),
        "B": (
            [lm_eval, "--model", "hf", "--model_args", f"pretrained={folder},dtype=float32"]
            + ["--tasks", ",".join(lm_eval_name(t) for t in tasks), "--include_path", str(work / "lmeval")]
            + ["--num_fewshot", str(shots), "--limit", str(n), "--batch_size", str(batch), "--device", "cpu"]
            + ["--log_samples", "--output_path", str(b_out)],
            b_out,
        ),
    }


def ours_answers(path: Path) -> dict[str, dict[int, dict]]:
    """Per task name, per item index: our row (prediction, prompt_tokens, n_shots)."""
    doc = json.loads(path.read_text())
    out: dict[str, dict[int, dict]] = {}
    for row in doc["models"][0]["results"]["gpt3"]["rows"]:
        out[row["task"]] = {it["index"]: it for it in row["items"]}
    return out


def lm_eval_samples(out: Path, tasks) -> dict[str, dict[int, dict]]:
    """Per task name, per doc id: lm-eval's logged sample (its context and its raw answer)."""
    res = {}
    for t in tasks:
        files = sorted(glob.glob(str(out / "**" / f"samples_{lm_eval_name(t)}_*.jsonl"), recursive=True))
        if not files:
            sys.exit(f"no lm-eval samples for {lm_eval_name(t)} under {out}")
        rows = [json.loads(line) for line in Path(files[-1]).read_text().splitlines() if line.strip()]
        res[t.name] = {int(r["doc_id"]): r for r in rows}
    return res


def sample_context(sample: dict) -> str:
    args = sample["arguments"]
    first = args["gen_args_0"] if isinstance(args, dict) else args[0]
    return first["arg_0"] if isinstance(first, dict) else first[0]


def sample_answer(sample: dict) -> str:
    r = sample["resps"][0]
    return r[0] if isinstance(r, list) else r


def our_prompts(task, n: int, shots: int, count_tokens) -> list:
    """The prompts ``synthprobe score gpt3`` builds for the first ``n`` items (seed 0, openai)."""
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig, build_prompts
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items

    pool = build_items(BuildConfig(task.name, seed=0, format="openai"))
    conf = PromptConfig(shots=shots, format="openai", max_context=2048, seed=0, reserve=task.max_new_tokens)
    return build_prompts(task, pool, range(min(n, len(pool))), conf, count_tokens)


def passes_of(tok, text: str, budget: int) -> int:
    n = len(tok(text, add_special_tokens=False)["input_ids"])
    return budget if n >= budget else n + 1


def lm_eval_layout(encoded: list[list[int]], texts: list[str], passes: list[int], batch: int) -> list:
    """One task's ``generate_until`` batches: longest context first (ties by text), ``batch`` a
    batch, every row until the batch's last."""
    order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i]), texts[i]))
    out = []
    for chunk in gm.chunks(order, batch):
        out += gm.padded_forwards([encoded[i] for i in chunk], max(passes[i] for i in chunk))
    return out


def check_peer_layout(folder: Path, prompts: list[str], answers: list[str], budget: int, batch: int, tok) -> bool:
    """lm-eval's ``HFLM.generate_until`` in this process on one task's prompts, with a hook on the
    model's forwards: are its passes those :func:`lm_eval_layout` counts, and its answers ours?"""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(folder), dtype="float32", batch_size=batch, device="cpu")
    seen: list[tuple[int, int, int]] = []

    def pre(module, args, kwargs):
        ids = kwargs.get("input_ids")
        cache = kwargs.get("past_key_values", kwargs.get("cache"))  # transformers 5 calls it ``cache``
        past = cache.get_seq_length() if cache is not None and hasattr(cache, "get_seq_length") else 0
        seen.append((ids.shape[0], ids.shape[1], int(past)))

    handle = lm.model.register_forward_pre_hook(pre, with_kwargs=True)
    kwargs = {"until": ["\n"], "do_sample": False, "max_gen_toks": budget}
    reqs = [Instance("generate_until", {}, (p, dict(kwargs)), i) for i, p in enumerate(prompts)]
    try:
        got = lm.generate_until(reqs, disable_tqdm=True)
    finally:
        handle.remove()
    encoded = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
    passes = [passes_of(tok, a, budget) for a in answers]
    counted = [(f.rows, f.width, f.past) for f in lm_eval_layout(encoded, prompts, passes, batch)]
    same = sum(a == b for a, b in zip(got, answers))
    print(
        f"  lm-eval's generate_until in this process: {len(seen)} forwards, the layout counted "
        f"{'exactly' if seen == counted else 'NOT: ' + str(seen) + ' against ' + str(counted)}; answers as ours "
        f"{same} of {len(prompts)}"
    )
    return seen == counted and same == len(prompts)


def check_our_layout(backend, prompts: list[str], answers: list[str], budget: int, batch: int, tok) -> bool:
    """Our generation in this process on one task's prompts, chunked as ``score_task`` chunks them,
    with a hook on the model's forwards (``bench_generation_account.Timers``): are its passes
    those :func:`gen_multiply_adds.ours_run` counts, its answers the run's, and each row's passes
    (from its tokens and finish) those the answer texts gave?"""
    from bench_generation_account import Timers

    from synthprobe.benchmarks.gpt3.scoring.score import STOP

    encoded = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
    order = sorted(range(len(prompts)), key=lambda i: (-len(encoded[i]), i))
    gens: list = [None] * len(prompts)
    timers = Timers(backend.model)
    try:
        for chunk in gm.chunks(order, batch):
            got = backend.generate(
                [prompts[i] for i in chunk], budget, STOP, batch_size=batch, progress=False, details=True
            )
            for i, g in zip(chunk, got):
                gens[i] = g
    finally:
        timers.close()
    seen = [(r["rows"], r["width"], r["past"]) for r in timers.records]
    passes = [passes_of(tok, a, budget) for a in answers]
    real = [gm.row_passes(g.n_tokens, g.finish) for g in gens]
    counted = [(f.rows, f.width, f.past) for f in gm.ours_run(encoded, passes, [len(e) for e in encoded], batch)]
    same = sum(g.text == a for g, a in zip(gens, answers))
    print(
        f"  our generation in this process: {len(seen)} forwards, the layout counted "
        f"{'exactly' if seen == counted else 'NOT: ' + str(seen) + ' against ' + str(counted)}; answers as the "
        f"run's {same} of {len(prompts)}; rows whose passes from the answer text are their real ones: "
        f"{sum(a == b for a, b in zip(passes, real))}"
    )
    return seen == counted and same == len(prompts) and passes == real


def print_walls(walls: dict[str, list[float]], mac: float, *, goal: str = "") -> None:
    """The timed rounds against the multiply-add ratio ``mac`` (lm-eval / ours): the medians,
    lm-eval / ours, its share of ``mac``, and each round's ratio (A then B ran back to back, under
    about the same load). Nothing when no round was timed."""
    if not walls:
        return
    a_med, b_med = statistics.median(walls["A"]), statistics.median(walls["B"])
    speed = b_med / a_med
    print(f"wall, median of {len(walls['A'])}: ours {a_med:.1f} s, lm-eval {b_med:.1f} s: lm-eval / ours {speed:.2f}x")
    print(f"speed-up / multiply-add ratio: {speed / mac:.0%}{goal}")
    per_round = [b / a for a, b in zip(walls["A"], walls["B"])]
    mid = statistics.median(per_round)
    print(
        f"each round's lm-eval / ours: {', '.join(f'{r:.2f}x' for r in per_round)}; median {mid:.2f}x = "
        f"{mid / mac:.0%} of the multiply-add ratio (each round's pair ran back to back, under about "
        f"the same load)"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=100, help="first N items of each task (default: %(default)s)")
    p.add_argument("--tasks", default="2D+,3D+", help="GPT-3 arithmetic tasks (default: %(default)s)")
    p.add_argument("--shots", type=int, default=1, help="demonstrations, 0 or 1 (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--repeats", type=int, default=2, help="timed rounds of A B (default: %(default)s)")
    p.add_argument("--warmup", action="store_true", help="one untimed round first")
    p.add_argument("--keep", type=Path, default=None, help="keep the outputs and logs in this folder")
    p.add_argument(
        "--outputs",
        nargs=2,
        type=Path,
        metavar=("OURS_JSON", "LM_EVAL_DIR"),
        help="no runs: check and count two finished runs' outputs (the same --n, --tasks, --shots)",
    )
    p.add_argument(
        "--check-layout",
        action="store_true",
        help="after the account, run our generation and lm-eval's generate_until in this process with "
        "a hook on every forward and check their passes against the layouts counted (untimed)",
    )
    args = p.parse_args(argv)

    from synthprobe.benchmarks.gpt3.registry import get_task

    tasks = [get_task(c.strip()) for c in args.tasks.split(",") if c.strip()]
    folder = embedded_folder()
    if args.outputs:
        return account(args, tasks, folder, *args.outputs, None)
    work = Path(tempfile.mkdtemp(prefix="bench_gpt3gen_")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "synthprobe", "export", "lm-eval", "--out", str(work / "lmeval")]
        + ["--gpt3-tasks", ",".join(t.code for t in tasks), "--quiet", "--overwrite"],
        check=True,
        env=_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    print(
        f"{args.n} items each of {', '.join(t.code for t in tasks)}, {args.shots}-shot, fp32, batch "
        f"{args.batch_size}, CPU threads: each runner's default; model folder {folder}"
    )
    print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    walls: dict[str, list[float]] = {"A": [], "B": []}
    rounds = ([-1] if args.warmup else []) + list(range(args.repeats))
    for run in rounds:
        for w in "AB":
            cmd, _ = commands(work, tasks, args.n, args.shots, args.batch_size, folder, run)[w]
            wall, peak = timed(cmd, work / f"{w}{run}.log")
            if run >= 0:
                walls[w].append(wall)
            name = "synthprobe score gpt3" if w == "A" else "lm_eval (hf)"
            tag = "warm-up" if run < 0 else f"round {run + 1}"
            print(f"  {tag} {w} {name:<22} {wall:7.1f} s  {peak / 2**30:5.2f} GiB", flush=True)
    print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    last = rounds[-1]
    _, a_out = commands(work, tasks, args.n, args.shots, args.batch_size, folder, last)["A"]
    _, b_out = commands(work, tasks, args.n, args.shots, args.batch_size, folder, last)["B"]
    status = account(args, tasks, folder, a_out, b_out, walls)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return status


def account(args, tasks, folder: Path, a_out: Path, b_out: Path, walls: dict | None) -> int:
    """Check prompts and answers of the two runs' outputs, count the multiply-adds, print the ratios."""
    from transformers import AutoConfig, AutoTokenizer

    ours = ours_answers(a_out)
    theirs = lm_eval_samples(b_out, tasks)
    tok = AutoTokenizer.from_pretrained(folder)
    costs = gm.Costs.from_config(AutoConfig.from_pretrained(folder))
    count_tokens = lambda s: len(tok(s, add_special_tokens=False)["input_ids"])  # noqa: E731
    ours_f, peer_f = [], []
    backend = None
    ok = True
    for t in tasks:
        prompts = our_prompts(t, args.n, args.shots, count_tokens)
        mine, peer = ours[t.name], theirs[t.name]
        same_prompt = sum(sample_context(peer[i]) == pr.text for i, pr in enumerate(prompts) if i in peer)
        same_answer = sum(i in peer and sample_answer(peer[i]) == mine[i]["prediction"] for i in range(len(prompts)))
        same_len = sum(count_tokens(pr.text) == mine[i]["prompt_tokens"] for i, pr in enumerate(prompts))
        ok &= same_prompt == same_answer == len(prompts) == len(peer)
        print(
            f"{t.code}: {len(prompts)} items; lm-eval's prompt = ours for {same_prompt}, the same greedy answer "
            f"for {same_answer}; prompt lengths as our run counted them: {same_len}; correct: ours "
            f"{sum(mine[i]['correct'] for i in range(len(prompts)))}, lm-eval "
            f"{sum(bool(peer[i].get('exact_match', 0)) for i in peer)}"
        )
        if prompts:
            print(f"  item 0, ours: {prompts[0].text!r}\n  item 0, lm-eval: {sample_context(peer[0])!r}")
            print(f"  item 0 answers: ours {mine[0]['prediction']!r}, lm-eval {sample_answer(peer[0])!r}")
        encoded = [tok(pr.text, add_special_tokens=False)["input_ids"] for pr in prompts]
        passes = [passes_of(tok, mine[i]["prediction"], t.max_new_tokens) for i in range(len(prompts))]
        if args.check_layout:
            if backend is None:
                from synthprobe.backends import load_backend

                backend = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
            ok &= check_our_layout(
                backend,
                [pr.text for pr in prompts],
                [mine[i]["prediction"] for i in range(len(prompts))],
                t.max_new_tokens,
                args.batch_size,
                tok,
            )
            ok &= check_peer_layout(
                folder,
                [pr.text for pr in prompts],
                [mine[i]["prediction"] for i in range(len(prompts))],
                t.max_new_tokens,
                args.batch_size,
                tok,
            )
        ours_f += gm.ours_run(encoded, passes, [len(e) for e in encoded], args.batch_size)
        peer_f += lm_eval_layout(encoded, [pr.text for pr in prompts], passes, args.batch_size)
        print(
            f"  answer passes: mean {statistics.mean(passes):.2f}, at the budget ({t.max_new_tokens}) "
            f"{sum(x == t.max_new_tokens for x in passes)} rows; prompt tokens {min(map(len, encoded))}-"
            f"{max(map(len, encoded))}"
        )
    mine_c, peer_c = gm.count(ours_f, costs), gm.count(peer_f, costs)
    mac = peer_c.total / mine_c.total
    print(
        f"\nmultiply-adds: ours {mine_c.total / 1e9:.2f} G ({mine_c.passes} forwards, padding "
        f"{mine_c.padding / mine_c.total:.1%}), lm-eval generate_until {peer_c.total / 1e9:.2f} G "
        f"({peer_c.passes} forwards, padding {peer_c.padding / peer_c.total:.1%}): {mac:.2f}x"
    )
    for name, c in (("ours", mine_c), ("lm-eval", peer_c)):
        parts = ", ".join(f"{k} {v / 1e9:.1f} G" for k, v in c.by_kind.items())
        print(
            f"  {name}: {parts}; layers {c.linear / 1e9:.1f}, LM head {c.head / 1e9:.1f}, "
            f"attention {c.attention / 1e9:.1f}"
        )
    print_walls(walls, mac)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
