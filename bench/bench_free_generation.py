#!/usr/bin/env python3
"""Deep Arithmark's ``free`` protocol: ours against lm-eval 0.4.13's HF ``generate_until`` on the
same rendered prompts, whole processes timed from outside, with the multiply-add account of the
same prompts and answers, in one run.

Each round runs, as separate processes, in the order A B:

A. ``python -m synthprobe score deeparithmark --protocol free --limit N --chat-template auto
   --dtype float32 --batch-size 32 --no-cache --save-predictions --no-progress --output TMP``
   (the embedded model, its own chat template, greedy, stopped at the first newline, at most 16
   new tokens: the settings ``bench/bench_generation_account.py`` counts);
B. ``lm_eval --model hf --model_args pretrained=<the embedded model's HF folder>,dtype=float32
   --tasks synthprobe_free_peer --include_path TMP/lmeval --batch_size 32 --device cpu
   --log_samples --output_path TMP``: a task written for the run (:func:`peer_task`) whose
   documents are our prompts already rendered under the chat template, as text
   (``doc_to_text: prompt``, no ``--apply_chat_template``), ``generate_until`` with
   ``until: ["\\n"]``, ``max_gen_toks: 16``, ``do_sample: false``.

Then it checks, item by item, that lm-eval's prompt (``--log_samples``' context) is the prompt
our run fed (``bench_generation_account.prompts``: the question as a user turn under the model's
chat template) and that the two greedy answers are the same text.

The multiply-adds (``bench/gen_multiply_adds.py``) are counted on those prompts' tokens and our
run's answers (each row's passes from its token count and finish, ``gm.row_passes``):

* ours: ``gm.ours_run`` (chunks of ``--batch-size``, longest question text first; per chunk the
  shared opening once, the rest left-padded, a row leaving when its line ends), as
  ``bench_generation_account.py`` counts it;
* lm-eval's ``generate_until``: ``bench_gpt3_generation.lm_eval_layout`` (longest context in
  tokens first, ties by the context text, ``--batch-size`` a batch, every row until the batch's
  last, no prefix reuse); the account's ``gm.lm_eval_run`` (ties by item order) is printed beside
  it. ``--check-layout`` runs lm-eval's ``generate_until`` again in this process, untimed, with a
  hook on every forward, and checks its passes against the layout counted.

    python bench/bench_free_generation.py [--n 64] [--repeats 2] [--warmup] [--check-layout]
        [--keep DIR] [--outputs OURS_JSON LM_EVAL_DIR]

The timed section (every round of A and B) holds ``flock /tmp/bench.lock`` (``--lock``), so that
other benchmarks on the machine do not run beside it. Prints each round's wall times, the medians
and lm-eval / ours, the multiply-add ratio, and the speed-up over the multiply-add ratio (the
goal: >= 95 %).
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gen_multiply_adds as gm  # noqa: E402
from bench_gpt3_generation import (  # noqa: E402
    check_peer_layout,
    lm_eval_layout,
    print_walls,
    sample_answer,
    sample_context,
)  # noqa: E402
from bench_whole_process import embedded_folder, timed  # noqa: E402

#: the lm-eval task the peer runs
TASK = "synthprobe_free_peer"
#: the protocol's stop, as ``synthprobe.prompts.protocols.stop_strings("free")`` gives it
STOP = ["\n"]


def budget() -> int:
    from synthprobe.prompts import protocols as proto

    return proto.MAX_NEW_TOKENS["free", False]


def peer_task(folder: Path, prompts: list[str], targets: list[str], max_gen_toks: int) -> Path:
    """Write the lm-eval task (a YAML and its JSONL of ``{prompt, target}``) into ``folder``, for
    ``--include_path``: the document's ``prompt`` is the whole context, as text."""
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    data.write_text("".join(json.dumps({"prompt": p, "target": t}) + "\n" for p, t in zip(prompts, targets)))
    until = ", ".join(json.dumps(s) for s in STOP)
    (folder / f"{TASK}.yaml").write_text(
        f"task: {TASK}\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        "doc_to_text: prompt\n"
        "doc_to_target: target\n"
        'target_delimiter: ""\n'
        f"generation_kwargs:\n  until: [{until}]\n  max_gen_toks: {max_gen_toks}\n  do_sample: false\n"
        "metric_list:\n  - metric: exact_match\n    aggregation: mean\n    higher_is_better: true\n"
    )
    return folder


def our_prompts(n: int, batch: int):
    """The first ``n`` release items, and what our ``free`` run feeds for them
    (``bench_generation_account.prompts``): question texts, rendered prompts, token ids."""
    from bench_generation_account import prompts

    from synthprobe.backends import load_backend
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[:n]
    backend = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    texts, rendered, encoded = prompts(backend, items, "free", batch)
    return items, texts, rendered, encoded


def commands(work: Path, n: int, batch: int, folder: Path, run: int) -> dict:
    py = sys.executable
    lm_eval = shutil.which("lm_eval", path=str(Path(py).parent)) or "lm_eval"
    a_out, b_out = work / f"a{run}.json", work / f"b{run}"
    return {
        "A": (
            [py, "-m", "synthprobe", "score", "deeparithmark", "--protocol", "free", "--limit", str(n)]
            + ["--chat-template", "auto", "--dtype", "float32", "--batch-size", str(batch)]
            + ["--no-cache", "--save-predictions", "--no-progress", "--overwrite", "--output", str(a_out)],
            a_out,
        ),
        "B": (
            [lm_eval, "--model", "hf", "--model_args", f"pretrained={folder},dtype=float32"]
            + ["--tasks", TASK, "--include_path", str(work / "lmeval")]
            + ["--batch_size", str(batch), "--device", "cpu", "--log_samples", "--output_path", str(b_out)],
            b_out,
        ),
    }


def ours_rows(path: Path) -> tuple[list[dict], dict]:
    """Our run's predictions (in item order) and its extraction block (the unparsed count)."""
    block = json.loads(path.read_text())["models"][0]["results"]["deeparithmark"]
    return block["predictions"], block.get("extraction") or {}


def peer_samples(out: Path) -> dict[int, dict]:
    files = sorted(glob.glob(str(out / "**" / f"samples_{TASK}_*.jsonl"), recursive=True))
    if not files:
        sys.exit(f"no lm-eval samples for {TASK} under {out}")
    rows = [json.loads(line) for line in Path(files[-1]).read_text().splitlines() if line.strip()]
    return {int(r["doc_id"]): r for r in rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=64, help="first N release items (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--repeats", type=int, default=2, help="timed rounds of A B (default: %(default)s)")
    p.add_argument("--warmup", action="store_true", help="one untimed round first")
    p.add_argument("--keep", type=Path, default=None, help="keep the outputs and logs in this folder")
    p.add_argument("--lock", default="/tmp/bench.lock", help="flock this file around the timed rounds ('' : none)")
    p.add_argument(
        "--outputs",
        nargs=2,
        type=Path,
        metavar=("OURS_JSON", "LM_EVAL_DIR"),
        help="no runs: check and count two finished runs' outputs (the same --n)",
    )
    p.add_argument(
        "--check-layout",
        action="store_true",
        help="after the account, run lm-eval's generate_until in this process with a hook on every forward "
        "and check its passes against the layout counted (untimed)",
    )
    args = p.parse_args(argv)
    folder = embedded_folder()
    items, texts, rendered, encoded = our_prompts(args.n, args.batch_size)
    if args.outputs:
        return account(args, folder, items, texts, rendered, encoded, *args.outputs, None)
    work = Path(tempfile.mkdtemp(prefix="bench_freegen_")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    targets = [str(it.endings[int(it.label)]).strip() for it in items]
    peer_task(work / "lmeval", rendered, targets, budget())
    print(
        f"{args.n} release items, protocol free (chat template: the model's own, at most {budget()} new tokens, "
        f"stop at a newline), fp32, batch {args.batch_size}, CPU threads: each runner's default; model folder "
        f"{folder}"
    )
    walls: dict[str, list[float]] = {"A": [], "B": []}
    rounds = ([-1] if args.warmup else []) + list(range(args.repeats))
    lock = open(args.lock, "a") if args.lock else None
    try:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # the whole timed section
        print(f"load average at start: {', '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
        for run in rounds:
            for w in "AB":
                cmd, _ = commands(work, args.n, args.batch_size, folder, run)[w]
                wall, peak = timed(cmd, work / f"{w}{run}.log")
                if run >= 0:
                    walls[w].append(wall)
                name = "synthprobe --protocol free" if w == "A" else "lm_eval (hf) generate_until"
                tag = "warm-up" if run < 0 else f"round {run + 1}"
                print(f"  {tag} {w} {name:<28} {wall:7.1f} s  {peak / 2**30:5.2f} GiB", flush=True)
        print(f"load average at end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
    _, a_out = commands(work, args.n, args.batch_size, folder, rounds[-1])["A"]
    _, b_out = commands(work, args.n, args.batch_size, folder, rounds[-1])["B"]
    status = account(args, folder, items, texts, rendered, encoded, a_out, b_out, walls)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return status


def account(args, folder: Path, items, texts, rendered, encoded, a_out: Path, b_out: Path, walls) -> int:
    """Check prompts and answers of the two runs' outputs, count the multiply-adds, print the ratios."""
    from transformers import AutoConfig, AutoTokenizer

    mine, extraction = ours_rows(a_out)
    peer = peer_samples(b_out)
    n = len(items)
    same_prompt = sum(i in peer and sample_context(peer[i]) == rendered[i] for i in range(n))
    same_answer = sum(i in peer and sample_answer(peer[i]) == mine[i]["raw"] for i in range(n))
    same_stripped = sum(i in peer and sample_answer(peer[i]).strip() == mine[i]["raw"].strip() for i in range(n))
    print(
        f"\n{n} items; lm-eval's prompt = ours for {same_prompt}; the same greedy answer text for {same_answer} "
        f"({same_stripped} once stripped of outer white space); lm-eval logged {len(peer)} samples; our run's "
        f"unparsed answers {extraction.get('unparsed')} of {n}"
    )
    if n:
        print(f"  item 0, ours: {rendered[0]!r}\n  item 0, lm-eval: {sample_context(peer[0])!r}")
        print(f"  item 0 answers: ours {mine[0]['raw']!r}, lm-eval {sample_answer(peer[0])!r}")
    for i in range(n):
        if i in peer and sample_answer(peer[i]) != mine[i]["raw"]:
            print(f"  differs, item {i}: ours {mine[i]['raw']!r}, lm-eval {sample_answer(peer[i])!r}")

    tok = AutoTokenizer.from_pretrained(folder)
    costs = gm.Costs.from_config(AutoConfig.from_pretrained(folder))
    ids = [tok(r, add_special_tokens=False)["input_ids"] for r in rendered]
    # what our run ordered its batches by: the engine's prompt_lengths, the questions' tokens
    question_lengths = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    same_ids = sum(a == list(b) for a, b in zip(ids, encoded))
    passes = [gm.row_passes(r["n_generated_tokens"], r["finish"]) for r in mine]
    ours_c = gm.count(gm.ours_run(encoded, passes, question_lengths, args.batch_size), costs)
    peer_c = gm.count(lm_eval_layout(ids, rendered, passes, args.batch_size), costs)
    acct_c = gm.count(gm.lm_eval_run(encoded, passes, args.batch_size), costs)
    mac = peer_c.total / ours_c.total
    print(
        f"  prompt tokens {min(map(len, encoded))}-{max(map(len, encoded))} (the folder's tokenizer gives our "
        f"run's ids for {same_ids}); answer passes: mean {statistics.mean(passes):.2f}, at the budget "
        f"({budget()}) {sum(x == budget() for x in passes)} rows"
    )
    print(
        f"\nmultiply-adds: ours {ours_c.total / 1e9:.1f} G ({ours_c.passes} forwards, padding "
        f"{ours_c.padding / ours_c.total:.1%}), lm-eval generate_until {peer_c.total / 1e9:.1f} G "
        f"({peer_c.passes} forwards, padding {peer_c.padding / peer_c.total:.1%}): {mac:.2f}x "
        f"(the account's gm.lm_eval_run, ties by item order: {acct_c.total / 1e9:.1f} G = "
        f"{acct_c.total / ours_c.total:.2f}x)"
    )
    ok = same_prompt == same_answer == n == len(peer)
    if args.check_layout:
        ok &= check_peer_layout(folder, rendered, [r["raw"] for r in mine], budget(), args.batch_size, tok)
    print_walls(walls, mac, goal=" (goal >= 95 %)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
