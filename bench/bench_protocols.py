#!/usr/bin/env python3
"""Deep Arithmark's generation protocols vs inspect_ai's ``multiple_choice()``: whole processes, same run.

In process (``--arms process``): asks the first ``--n`` release items of the embedded model (its
plain HF folder, fp32, CPU, its own chat template, greedy) three ways, each as a separate process
timed from outside:

* ours, ``synthprobe score deeparithmark --protocol letters --chat-template auto`` (batched greedy
  generation, stopped at the first newline, at most 8 new tokens);
* ours, the same with ``--protocol free`` (at most 16 new tokens);
* inspect_ai's ``multiple_choice()`` solver and ``choice()`` scorer on the same items (the sentence
  as the question, the four endings as its choices, the correct one as target), through inspect's
  own Hugging Face provider (``hf/local``, ``model_path`` = the same folder, the tokenizer's chat
  template, ``do_sample=False``), ``max_connections`` = ``--batch-size`` (its generation batch),
  ``max_tokens`` = 8 as ours.

Through a server (``--arms server``): the same items and weights behind one real vLLM CPU server
(``tools/vllm_cpu.py``, the model's own chat template applied by the server), started once for the
three processes: ours with ``--model openai-chat:URL --protocol letters|free`` and
``--concurrency`` = ``--batch-size``, inspect's ``multiple_choice()`` through its ``openai-api``
provider (``openai-api/vllm/<model>``, ``model_base_url`` = the same URL, ``max_connections`` =
``--batch-size``, ``temperature`` 0, ``max_tokens`` 8). Both arms by default.

More arms run the other generative figures' scripts as their own processes, one after the
other, so that one command prints them all: ``client`` (``bench/bench_client_cost.py --n N``: the
client process's own CPU, memory and wall time per request through one vLLM server, ours against
inspect_ai and lm-eval ``local-chat-completions``), ``first`` (``bench/bench_first_token.py``:
``first_token`` against ``generate`` through a vLLM server's chat and completions endpoints, and
their letters' log-probabilities against the HF engine's), ``gpt3``
(``bench/bench_gpt3_generation.py``: GPT-3 arithmetic generation against lm-eval 0.4.13's HF
``generate_until``, whole processes and multiply-adds) and ``free``
(``bench/bench_free_generation.py``: ``--protocol free`` against lm-eval 0.4.13's HF
``generate_until`` on the same rendered prompts, whole processes and multiply-adds, the like-for-like
peer inspect's ``multiple_choice()`` is not)::

    .venv/bin/python bench/bench_protocols.py --n 64 --arms process,server,client,first,gpt3,free --account \
        --protocols letters,free,letterprob --inspect-python /tmp/inspect-venv/bin/python

inspect_ai pins its own dependencies, so it runs with the python of a separate virtualenv
(``--inspect-python``), e.g.::

    python -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install inspect-ai
    # inspect's hf provider needs torch and transformers: let that virtualenv see ours
    echo "$PWD/.venv/lib/python3.11/site-packages" > /tmp/inspect-venv/lib/python3.11/site-packages/synthprobe-torch.pth
    /tmp/inspect-venv/bin/pip install openai     # the openai-api provider (server arm)
    .venv/bin/python bench/bench_protocols.py --n 200 --inspect-python /tmp/inspect-venv/bin/python

It prints each process's wall time (model loading included), its accuracy, and the ratio of
inspect's wall time to each of ours. ``--protocols letters,free,letterprob`` picks ours
(``letterprob``, a prompt pass and one decoding step per row, is skipped with a note where
``synthprobe score`` refuses it). In process, inspect's ``hf`` provider is watched from inside
its own process: every generate batch's rows, their prompt lengths (its tokenizer, its prompt)
and the steps it ran. ``--account`` then runs ``bench/bench_generation_account.py`` on the same
items in this process (the matmul ceiling, a timer on every forward, the multiply-adds of
``bench/gen_multiply_adds.py``) and prints, per protocol, inspect / ours in wall time, in
generation time and in multiply-adds, the speed-up over the multiply-add ratio, the prompt
pass's share of the ceiling, and ``letterprob`` beside ``letters``::

    .venv/bin/python bench/bench_protocols.py --n 64 --arms process --account \
        --protocols letters,free,letterprob --inspect-python /tmp/inspect-venv/bin/python
 The processes run one after the other, so other load on a
shared machine moves the ratios from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "src"))

#: run by --inspect-python: reads the items, runs inspect's eval, prints accuracy and item count as JSON
INSPECT_SCRIPT = r"""
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

items = json.load(open(sys.argv[1]))
folder, batch, log_dir, url = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
record = []   # every generate batch of the hf provider: its rows' prompt lengths, its steps, its time
if url == "-":
    import time
    import inspect_ai.model._providers.hf as hf_provider
    generate_batch = hf_provider._generate_batch

    def recording(batch):
        tokens = batch[0].input.tokenizer([item.input.input for item in batch])["attention_mask"].sum(-1).tolist()
        t0 = time.perf_counter()
        generate_batch(batch)
        done = batch[0].future
        steps = done.result().output_tokens if done.done() and done.exception() is None else None
        texts = [item.input.input for item in batch]
        record.append({"lengths": tokens, "steps": steps, "s": time.perf_counter() - t0, "texts": texts})

    hf_provider._generate_batch = recording   # process_batches looks the name up at each call
samples = [Sample(input=it["question"], choices=it["choices"], target="ABCD"[it["label"]], id=it["id"])
           for it in items]
task = Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
if url == "-":   # in process: inspect's Hugging Face provider on the folder
    where = dict(model="hf/local", model_args={"model_path": folder, "device": "cpu", "do_sample": False})
else:            # the vLLM server: its OpenAI-compatible provider, greedy
    where = dict(model=f"openai-api/vllm/{folder}", model_base_url=url, temperature=0.0)
log = eval(task, **where, max_connections=batch, max_tokens=8, log_dir=log_dir, display="none")[0]
if log.status != "success":
    raise SystemExit(f"inspect eval ended with status {log.status}: {log.error}")
metrics = {k: v.value for s in log.results.scores for k, v in s.metrics.items()}
print(json.dumps({"accuracy": metrics.get("accuracy"), "n": log.results.completed_samples, "batches": record}))
"""


def _env() -> dict:
    return dict(
        os.environ,
        PYTHONPATH=str(ROOT / "src"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        INSPECT_LOG_LEVEL="warning",
        DO_NOT_TRACK="1",
        VLLM_API_KEY=os.environ.get("VLLM_API_KEY", "none"),
    )


def _run(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True)
    return time.perf_counter() - t0, done


def _timed(cmd: list[str]) -> tuple[float, str]:
    wall, done = _run(cmd)
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return wall, done.stdout


def ours(protocol: str, n: int, folder: str, batch: int, out: Path, url: str | None = None) -> dict | None:
    """One ``score deeparithmark`` process: in process on ``folder`` (its chat template), or
    through the server at ``url`` (which applies the template itself). None when ``letterprob``
    is refused (a synthprobe without it, or an engine that cannot read next-token probabilities)."""
    model = (
        ["--model", folder, "--dtype", "float32", "--chat-template", "auto"]
        if url is None
        else ["--model", f"openai-chat:{url}", "--concurrency", str(batch)]
    )
    cmd = [
        sys.executable,
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        *model,
        "--protocol",
        protocol,
        "--limit",
        str(n),
        "--batch-size",
        str(batch),
        "--no-cache",
        "--quiet",
        "--save-predictions",
        "--output",
        str(out),
    ]
    wall, done = _run(cmd)
    if done.returncode:
        if protocol == "letterprob":
            why = (done.stderr.strip().splitlines() or ["no message"])[-1]
            print(f"  ours letterprob: refused, skipped ({why[:160]})", flush=True)
            return None
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    entry = json.loads(out.read_text())["models"][0]
    block = entry["results"]["deeparithmark"]
    summary = block.get("summary", {}).get("metrics", {})
    return {
        "wall_s": wall,
        "accuracy": (summary.get("accuracy") or {}).get("acc"),
        "unparsed": (block.get("extraction") or {}).get("unparsed"),
        "eval_s": block["timing"]["eval_s"],
        "answers": {r["id"]: r.get("n_generated_tokens") for r in block.get("predictions") or []},
        "timing": block["timing"],
        "letterprob": block.get("letterprob"),
    }


def inspect(python: str, n: int, folder: str, batch: int, tmp: Path, url: str | None = None) -> dict:
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = [
        {
            "id": it.id,
            "question": f"Which option completes the sentence?\n\n{it.ctx.rstrip()} ...",
            "choices": [e.strip() for e in it.endings],
            "label": int(it.label),
        }
        for it in load_arithmark3(ROOT / "data" / "deeparithmark-1.jsonl")[:n]
    ]
    tmp.mkdir(parents=True, exist_ok=True)
    data, script = tmp / "items.json", tmp / "inspect_mc.py"
    data.write_text(json.dumps(items))
    script.write_text(INSPECT_SCRIPT)
    wall, stdout = _timed([python, str(script), str(data), folder, str(batch), str(tmp / "logs"), url or "-"])
    return {"wall_s": wall, **json.loads(stdout.strip().splitlines()[-1])}


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def arm(label: str, args, folder: str, tmp: Path, url: str | None = None) -> dict:
    """Ours (each of ``--protocols``) and inspect's, one process each, then their figures and ratios."""
    mine = {}
    for protocol in args.protocols:
        got = ours(protocol, args.n, folder, args.batch_size, tmp / f"{label}-{protocol}.json", url)
        if got is not None:
            mine[protocol] = got
    peer = inspect(args.inspect_python, args.n, folder, args.batch_size, tmp / label, url)
    how = (
        "in process: embedded model fp32 on CPU, chat template, greedy, batch"
        if url is None
        else "through one vLLM CPU server (its chat template), greedy, requests in flight"
    )
    print(f"{args.n} release items, {how} {args.batch_size}; whole processes, model loading included")
    for protocol, got in mine.items():
        print(
            f"  ours {protocol:<17}{got['wall_s']:7.1f} s  (generation {got['eval_s']:.1f} s)  "
            f"acc {_pct(got['accuracy'])}  unparsed {got['unparsed']}"
        )
    gen = sum(b["s"] for b in peer.get("batches") or []) or None
    print(
        f"  inspect_ai multiple_choice()  {peer['wall_s']:7.1f} s"
        + (f"  (generation {gen:.1f} s)" if gen else "")
        + f"  acc {_pct(peer['accuracy'])}  n {peer['n']}"
    )
    print(
        "  " + "   ".join(f"inspect / ours {p}: {peer['wall_s'] / got['wall_s']:.2f}x" for p, got in mine.items()),
        flush=True,
    )
    return {"ours": mine, "inspect": peer, "inspect_generation_s": gen}


def account_table(figs: dict, acct: dict) -> None:
    """Per protocol: inspect / ours in wall time and in multiply-adds, and the one over the other;
    ``letterprob`` beside ``letters``; the ceiling and the prompt pass's share of it."""
    peer = figs["inspect"]
    print(f"\nthe account (matmul ceiling {acct['ceiling_gflops']:.0f} GFLOP/s):")
    print(
        f"  {'protocol':<11}{'wall x':>8}{'MAC x':>8}{'wall/MAC':>10}{'prompt pass':>13}{'real tokens':>13}"
        f"{'answers same':>14}"
    )
    for protocol, got in figs["ours"].items():
        a = acct["protocols"].get(protocol)
        if a is None:
            continue
        mac = a["inspect_macs"] / a["ours_macs"] if "inspect_macs" in a else None
        wall_x = peer["wall_s"] / got["wall_s"]
        ids = list(got["answers"])
        same = sum(1 for i, (nt, _) in zip(ids, a["answers"]) if got["answers"][i] == nt)
        cells = [f"{wall_x:.2f}", "-" if mac is None else f"{mac:.2f}", "-" if mac is None else f"{wall_x / mac:.0%}"]
        print(
            f"  {protocol:<11}{cells[0]:>8}{cells[1]:>8}{cells[2]:>10}{a['prompt_share_of_ceiling']:>12.0%} "
            f"{a['prompt_useful_share_of_ceiling']:>12.0%} "
            + (f"{same:>6}/{len(ids)}" if any(v is not None for v in got["answers"].values()) else f"{'-':>8}")
        )
    print(
        "  (x: inspect_ai multiple_choice() over ours, whole processes; wall/MAC: the speed-up over the "
        "multiply-add ratio, the goal >= 95 %;\n   prompt pass: its GFLOP/s over the ceiling (real tokens: "
        "padding's work left out); answers same: token counts of the account's own run equal to the process "
        "run's. A results file's generation time leaves out "
        "the batch the run's plan\n   scores before the clock starts, so generation times are compared in one "
        "process below)"
    )
    rep = (acct["protocols"].get("letters") or {}).get("inspect_replay")
    if rep:
        lt = acct["protocols"]["letters"]
        x, mac = rep["inspect_s"] / rep["ours_s"], lt["inspect_macs"] / lt["ours_macs"]
        print(
            f"  letters, generation in one process (inspect's batches replayed with transformers generate): "
            f"{rep['inspect_s']:.1f} / {rep['ours_s']:.1f} s = {x:.2f}x against {mac:.2f}x the multiply-adds: "
            f"{x / mac:.0%}"
        )
    lp, lt = acct["protocols"].get("letterprob"), acct["protocols"].get("letters")
    if lp and lt and "letterprob" in figs["ours"] and "letters" in figs["ours"]:
        a, b = figs["ours"]["letterprob"], figs["ours"]["letters"]
        fell = {k: a["letterprob"][k] for k in ("certified", "fallback")} if a.get("letterprob") else {}
        print(
            f"  letterprob beside letters: wall {a['wall_s']:.1f} / {b['wall_s']:.1f} s, generation "
            f"{a['eval_s']:.1f} / {b['eval_s']:.1f} s, multiply-adds {lp['ours_macs'] / 1e9:,.1f} / "
            f"{lt['ours_macs'] / 1e9:,.1f} G ({lp['ours_macs'] / lt['ours_macs']:.2f}x; letterprob's one pass only)"
            + (f"; its run's certified rows and rows decoded on to a letters answer: {fell}" if fell else "")
        )
    elif "letterprob" in figs["ours"] or "letterprob" in acct["protocols"]:
        print("  letterprob beside letters: one of the two was skipped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="release items (default 200)")
    parser.add_argument("--batch-size", type=int, default=32, help="generation batch, both sides (default 32)")
    parser.add_argument(
        "--inspect-python", help="python of a virtualenv with inspect-ai (needed by the process and server arms)"
    )
    parser.add_argument(
        "--protocols",
        default="letters,free",
        help="ours, comma-separated: letters, free, letterprob (skipped when refused); default: letters,free",
    )
    parser.add_argument(
        "--account",
        action="store_true",
        help="in process: also count the multiply-adds and time the forwards (bench/bench_generation_account.py)",
    )
    parser.add_argument(
        "--arms",
        default="process,server",
        help=(
            "comma-separated: process (in-process engines), server (one vLLM CPU server), client "
            "(bench_client_cost.py), first (bench_first_token.py), gpt3 (bench_gpt3_generation.py), free "
            "(bench_free_generation.py); default: process,server"
        ),
    )
    args = parser.parse_args()
    arms = args.arms.split(",")
    args.protocols = args.protocols.split(",")
    if any(p not in ("letters", "free", "letterprob") for p in args.protocols):
        parser.error(f"--protocols: expected letters, free, letterprob, got {','.join(args.protocols)!r}")
    if not arms or any(a not in ARMS for a in arms):
        parser.error(f"--arms: expected one or more of {', '.join(ARMS)}, got {args.arms!r}")
    if {"process", "server"} & set(arms) and not args.inspect_python:
        parser.error("--inspect-python: needed by the process and server arms")
    import vllm_cpu

    folder = str(vllm_cpu.embedded_model_folder())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if "process" in arms:
            figs = arm("process", args, folder, tmp)
            if args.account:
                from bench_generation_account import account

                print()
                acct = account(args.protocols, args.n, args.batch_size, inspect_batches=figs["inspect"].get("batches"))
                account_table(figs, acct)
        if "server" in arms:
            with vllm_cpu.Server(Path(folder)) as server:
                arm("server", args, server.model_id, tmp, server.url)
    for name, script in (
        ("client", "bench_client_cost.py"),
        ("first", "bench_first_token.py"),
        ("gpt3", "bench_gpt3_generation.py"),
        ("free", "bench_free_generation.py"),
    ):
        if name in arms:  # its own process: it starts (and stops) its own server
            print(f"\n== {script} --n {args.n}", flush=True)
            # the environment as given: the script's own server and client agree on their API key
            env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), HF_HUB_OFFLINE="1")
            done = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--n", str(args.n)], cwd=ROOT, env=env)
            if done.returncode:
                raise SystemExit(f"bench/{script} failed ({done.returncode})")


#: The arms ``--arms`` may name.
ARMS = ("process", "server", "client", "first", "gpt3", "free")


if __name__ == "__main__":
    main()
