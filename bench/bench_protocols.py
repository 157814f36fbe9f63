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
The client's own CPU and memory per request through such a server: ``bench/bench_client_cost.py``.

inspect_ai pins its own dependencies, so it runs with the python of a separate virtualenv
(``--inspect-python``), e.g.::

    python -m venv /tmp/inspect-venv && /tmp/inspect-venv/bin/pip install inspect-ai
    # inspect's hf provider needs torch and transformers: let that virtualenv see ours
    echo "$PWD/.venv/lib/python3.11/site-packages" > /tmp/inspect-venv/lib/python3.11/site-packages/synthprobe-torch.pth
    /tmp/inspect-venv/bin/pip install openai     # the openai-api provider (server arm)
    .venv/bin/python bench/bench_protocols.py --n 200 --inspect-python /tmp/inspect-venv/bin/python

It prints each process's wall time (model loading included), its accuracy, and the ratio of
inspect's wall time to each of ours. The processes run one after the other, so other load on a
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
print(json.dumps({"accuracy": metrics.get("accuracy"), "n": log.results.completed_samples}))
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


def _timed(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    return wall, done.stdout


def ours(protocol: str, n: int, folder: str, batch: int, out: Path, url: str | None = None) -> dict:
    """One ``score deeparithmark`` process: in process on ``folder`` (its chat template), or
    through the server at ``url`` (which applies the template itself)."""
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
        "--output",
        str(out),
    ]
    wall, _ = _timed(cmd)
    entry = json.loads(out.read_text())["models"][0]
    block = entry["results"]["deeparithmark"]
    return {
        "wall_s": wall,
        "accuracy": block["summary"]["metrics"]["accuracy"]["acc"],
        "unparsed": block["extraction"]["unparsed"],
        "eval_s": block["timing"]["eval_s"],
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


def arm(label: str, args, folder: str, tmp: Path, url: str | None = None) -> None:
    """Ours (letters, free) and inspect's, one process each, then their figures and ratios."""
    letters = ours("letters", args.n, folder, args.batch_size, tmp / f"{label}-letters.json", url)
    free = ours("free", args.n, folder, args.batch_size, tmp / f"{label}-free.json", url)
    peer = inspect(args.inspect_python, args.n, folder, args.batch_size, tmp / label, url)
    how = (
        "in process: embedded model fp32 on CPU, chat template, greedy, batch"
        if url is None
        else "through one vLLM CPU server (its chat template), greedy, requests in flight"
    )
    print(f"{args.n} release items, {how} {args.batch_size}; whole processes, model loading included")
    print(
        f"  ours letters          {letters['wall_s']:7.1f} s  (generation {letters['eval_s']:.1f} s)  "
        f"acc {letters['accuracy']:.1%}  unparsed {letters['unparsed']}"
    )
    print(
        f"  ours free             {free['wall_s']:7.1f} s  (generation {free['eval_s']:.1f} s)  "
        f"acc {free['accuracy']:.1%}  unparsed {free['unparsed']}"
    )
    print(f"  inspect_ai multiple_choice()  {peer['wall_s']:7.1f} s  acc {peer['accuracy']:.1%}  n {peer['n']}")
    print(
        f"  inspect / ours letters: {peer['wall_s'] / letters['wall_s']:.2f}x   "
        f"inspect / ours free: {peer['wall_s'] / free['wall_s']:.2f}x",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=200, help="release items (default 200)")
    parser.add_argument("--batch-size", type=int, default=32, help="generation batch, both sides (default 32)")
    parser.add_argument("--inspect-python", required=True, help="python of a virtualenv with inspect-ai")
    parser.add_argument(
        "--arms",
        default="process,server",
        help="comma-separated: process (in-process engines), server (one vLLM CPU server); default: both",
    )
    args = parser.parse_args()
    arms = args.arms.split(",")
    if not arms or any(a not in ("process", "server") for a in arms):
        parser.error(f"--arms: expected process, server or both, got {args.arms!r}")
    import vllm_cpu

    folder = str(vllm_cpu.embedded_model_folder())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if "process" in arms:
            arm("process", args, folder, tmp)
        if "server" in arms:
            with vllm_cpu.Server(Path(folder)) as server:
                arm("server", args, server.model_id, tmp, server.url)


if __name__ == "__main__":
    main()
