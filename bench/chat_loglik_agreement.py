"""Deep Arithmark log-likelihood under a chat template: synthprobe against lm-eval, item by item.

Runs, on the first N release items and the embedded SmolLM2-135M-Instruct's dequantised weights
(fp32, CPU):

A. ``synthprobe score deeparithmark --chat-template auto --save-predictions``
B. ``lm_eval --model hf --apply_chat_template --tasks deeparithmark --include_path <YAMLs from
   synthprobe export lm-eval> --log_samples``

and prints how many items get the same prediction: ``acc`` (argmax of the summed
log-likelihood; the same definition on both sides) and lm-eval's ``acc_norm`` (per character)
against synthprobe's ``acc_char``. lm-eval moves the newline that ends the rendered context
(``<|im_start|>assistant\\n``) into every continuation, so its sums carry one more term, the
same for all four endings of an item: the ``acc`` argmax cannot change, the per-character
one can in principle (the figure says whether it did). Exit status 1 when an ``acc`` prediction
differs.

    .venv/bin/python bench/chat_loglik_agreement.py --n 200
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_whole_process import DATA, ROOT, _env, embedded_folder, first_max  # noqa: E402


def lm_eval_predictions(out: Path) -> dict[str, list[int]]:
    samples = sorted(out.rglob("samples_deeparithmark_*.jsonl"))
    rows = sorted(
        (json.loads(line) for line in samples[-1].read_text().splitlines() if line.strip()), key=lambda r: r["doc_id"]
    )
    acc, norm, ctx = [], [], []
    for r in rows:
        ll = [float(x[0]) for x in r["filtered_resps"]]
        acc.append(first_max(ll))
        norm.append(first_max([v / len(e) for v, e in zip(ll, r["doc"]["endings"])]))
        args = r.get("arguments")
        ctx.append(args["gen_args_0"]["arg_0"] if isinstance(args, dict) else args[0][0])
    return {"acc": acc, "acc_char": norm, "ctx": ctx}


def agreement(n: int, work: Path, *, system_prompt: str | None = None) -> dict:
    """Run both sides on ``n`` items in ``work``; returns the counts and the seconds each took."""
    folder = embedded_folder()
    env = _env()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "synthprobe",
            "export",
            "lm-eval",
            "--out",
            str(work / "lmeval"),
            "--data",
            str(DATA),
            "--gpt3-tasks",
            "none",
            "--quiet",
            "--overwrite",
        ],
        check=True,
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    ours = work / "ours.json"
    cmd_a = [
        sys.executable,
        "-m",
        "synthprobe",
        "score",
        "deeparithmark",
        "--data",
        str(DATA),
        "--model",
        "smollm2-135m-instruct",
        "--dtype",
        "float32",
        "--no-cache",
        "--limit",
        str(n),
        "--batch-size",
        "32",
        "--chat-template",
        "auto",
        "--save-predictions",
        "--no-progress",
        "--output",
        str(ours),
        "--overwrite",
    ]
    cmd_b = [
        str(Path(sys.executable).parent / "lm_eval"),
        "--model",
        "hf",
        "--model_args",
        f"pretrained={folder},dtype=float32",
        "--tasks",
        "deeparithmark",
        "--include_path",
        str(work / "lmeval"),
        "--batch_size",
        "32",
        "--limit",
        str(n),
        "--apply_chat_template",
        "--log_samples",
        "--output_path",
        str(work / "lm_eval"),
        "--device",
        "cpu",
    ]
    if system_prompt is not None:
        cmd_a += ["--system-prompt", system_prompt]
        cmd_b += ["--system_instruction", system_prompt]
    secs = {}
    for key, cmd in (("synthprobe", cmd_a), ("lm_eval", cmd_b)):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
        secs[key] = round(time.perf_counter() - t0, 1)
        if proc.returncode != 0:
            raise RuntimeError(f"{key} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    doc = json.loads(ours.read_text())
    recs = doc["models"][0]["results"]["deeparithmark"]["predictions"]
    theirs = lm_eval_predictions(work / "lm_eval")
    a_acc = [r["pred_acc"] for r in recs]
    a_char = [r["pred_acc_char"] for r in recs]
    return {
        "n": len(recs),
        "n_lm_eval": len(theirs["acc"]),
        "acc_same": sum(x == y for x, y in zip(a_acc, theirs["acc"])),
        "acc_char_same": sum(x == y for x, y in zip(a_char, theirs["acc_char"])),
        "acc_differs": [recs[i]["id"] for i, (x, y) in enumerate(zip(a_acc, theirs["acc"])) if x != y],
        "ours_acc": sum(r["correct_acc"] for r in recs) / len(recs),
        "lm_eval_context": theirs["ctx"][0],
        "chat": doc["models"][0]["chat"],
        "seconds": secs,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200, help="first N release items (default: %(default)s)")
    p.add_argument("--system-prompt", default=None, help="also pass a system prompt to both sides")
    p.add_argument("--keep", type=Path, default=None, help="keep the outputs in this folder")
    args = p.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="chat_agree_")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    try:
        got = agreement(args.n, work, system_prompt=args.system_prompt)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(
        f"{got['n']} items (lm-eval {got['n_lm_eval']}), chat template {got['chat']['chat_template_name']} "
        f"sha256 {got['chat']['chat_template_sha256']}"
    )
    print(
        f"acc predictions identical: {got['acc_same']} / {got['n']}"
        + (f" (differ: {', '.join(got['acc_differs'])})" if got["acc_differs"] else "")
    )
    print(f"acc_char (lm-eval acc_norm) identical: {got['acc_char_same']} / {got['n']}")
    print(f"synthprobe acc {100 * got['ours_acc']:.2f} %; seconds {got['seconds']}")
    print(f"lm-eval's first context: {got['lm_eval_context']!r}")
    return 0 if got["acc_same"] == got["n"] == got["n_lm_eval"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
