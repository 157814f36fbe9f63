#!/usr/bin/env python3
"""Whole processes, timed from outside, as a user times them: ours, lm-eval, ArithMark 3.0's protocol.

Each repeat runs, as separate processes in the order A B C (then A B C again, ...):

A. ``python -m synthprobe score deeparithmark --model smollm2-135m-instruct --dtype float32
   --no-cache --limit N --batch-size 32 --save-predictions --output TMP``
B. ``lm_eval --model hf --model_args pretrained=<the embedded model's cached HF folder>,dtype=float32
   --tasks deeparithmark --include_path <YAMLs from synthprobe export lm-eval> --batch_size 32
   --limit N --log_samples --output_path TMP``
C. ``python bench/arithmark3_per_ending.py --model <the same folder> --limit N --batch-size 32``:
   a standalone per-ending scorer of the ArithMark 3.0 protocol (plain transformers, one row
   per ending).

All three score the same first N release items with the same fp32 weights. For each it prints
the median wall time, the peak resident memory (``ru_maxrss`` of the child from ``os.wait4``),
and ours' ratio against the others; then it checks that the per-item predictions agree: ``acc``
(argmax of the summed log-likelihood) across all three, ``acc_norm`` per token between ours and
C, and lm-eval's per-character ``acc_norm`` against our ``acc_char``.

    python bench/bench_whole_process.py [--n 200] [--repeats 3] [--skip B,C]

Last it prints each runner's multiply-adds and the GFLOP/s its median implies (start-up
included): the per-ending protocol needs ~3.8-3.9x ours on these items, so that ratio is what
the whole-process ratio tends to once start-up stops mattering, if both sides run at the
machine's arithmetic limit (``bench/profile_scorer.py`` shows that ours does).

Untimed set-up: the YAML export, and one warm-up run of each (so page cache and the cached
weights are in place for all three alike); ``--no-warmup`` leaves it out. The score cache is off
(``--no-cache``), the one-pass verdict kept on disk is not (as for any second run of ours).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
DATA = ROOT / "data" / "deeparithmark-1.jsonl"
NAMES = {"A": "synthprobe score", "B": "lm_eval (hf)", "C": "ArithMark 3.0 protocol"}


def _env() -> dict:
    env = dict(os.environ)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["PYTHONPATH"] = str(ROOT / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def timed(cmd: list[str], log: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process; a failure stops the benchmark."""
    with open(log, "w") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=_env(), cwd=ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{log.read_text()[-3000:]}")
    return wall, usage.ru_maxrss * 1024


def embedded_folder() -> Path:
    from synthprobe.backends.hf.gguf import cached_folder
    from synthprobe.backends.spec import resolve_spec

    folder = cached_folder(resolve_spec("smollm2-135m-instruct").gguf_path)
    if folder is None:
        sys.exit("the embedded model is not converted yet: run `synthprobe score deeparithmark --limit 1` once")
    return folder


def commands(work: Path, n: int, folder: Path, run: int) -> dict[str, tuple[list[str], Path]]:
    py = sys.executable
    lm_eval = shutil.which("lm_eval", path=str(Path(sys.executable).parent)) or "lm_eval"
    a_out, b_out, c_out = work / f"a{run}.json", work / f"b{run}", work / f"c{run}.json"
    return {
        "A": (
            [
                py,
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
                "--save-predictions",
                "--no-progress",
                "--output",
                str(a_out),
            ],
            a_out,
        ),
        "B": (
            [
                lm_eval,
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
                "--log_samples",
                "--output_path",
                str(b_out),
                "--device",
                "cpu",
            ],
            b_out,
        ),
        "C": (
            [
                py,
                str(ROOT / "bench" / "arithmark3_per_ending.py"),
                "--model",
                str(folder),
                "--data",
                str(DATA),
                "--n",
                str(n),
                "--batch-size",
                "32",
                "--dtype",
                "float32",
                "--output",
                str(c_out),
            ],
            c_out,
        ),
    }


def _find(obj, key):
    """The first list stored under ``key`` anywhere in a JSON document."""
    if isinstance(obj, dict) and isinstance(obj.get(key), list):
        return obj[key]
    for v in obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ():
        found = _find(v, key)
        if found is not None:
            return found
    return None


def first_max(v) -> int:
    return max(range(len(v)), key=lambda j: (v[j], -j))


def predictions(which: str, out: Path) -> dict[str, list[int]]:
    if which == "A":
        recs = _find(json.loads(out.read_text()), "predictions")
        return {
            "acc": [r["pred_acc"] for r in recs],
            "acc_norm_tokens": [r["pred_acc_norm"] for r in recs],
            "acc_norm_chars": [r["pred_acc_char"] for r in recs],
        }
    if which == "C":
        recs = json.loads(out.read_text())["items"]
        return {"acc": [r["pred_acc"] for r in recs], "acc_norm_tokens": [r["pred_acc_norm"] for r in recs]}
    samples = sorted(out.rglob("samples_deeparithmark_*.jsonl"))
    rows = sorted(
        (json.loads(line) for line in samples[-1].read_text().splitlines() if line.strip()), key=lambda r: r["doc_id"]
    )
    acc, norm = [], []
    for r in rows:
        ll = [float(x[0]) for x in r["filtered_resps"]]
        acc.append(first_max(ll))
        norm.append(first_max([v / len(e) for v, e in zip(ll, r["doc"]["endings"])]))
    return {"acc": acc, "acc_norm_chars": norm}


def arithmetic(n: int, medians: dict[str, float]) -> None:
    """Each runner's multiply-adds (``bench/multiply_adds.py``) and the rate its median wall time
    implies, start-up included; their ratio is the whole-process ratio that equal efficiency gives."""
    from multiply_adds import count

    from synthprobe.backends import load_backend
    from synthprobe.backends.hf.encode import encode_items
    from synthprobe.formats.arithmark3 import load_arithmark3

    backend = load_backend("smollm2-135m-instruct", dtype="float32", device="cpu", progress=False)
    enc = encode_items(
        backend.tokenizer,
        load_arithmark3(DATA)[:n],
        max_context=1024,
        bos_id=backend.bos_token_id if backend.bos else None,
    )
    macs = count(backend.model.config, enc, batch_size=32)
    work = {"A": macs.ours, "B": macs.peer, "C": macs.peer}
    print(
        f"multiply-adds: ours {macs.ours / 1e9:,.0f} G, the per-ending protocol (B, C) {macs.peer / 1e9:,.0f} G "
        f"= {macs.ratio:.2f}x ours (python bench/profile_scorer.py: where the time goes)"
    )
    for w, wall in medians.items():
        print(f"  {w} {NAMES[w]:<24} {2 * work[w] / wall / 1e9:6.0f} GFLOP/s over the whole process")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=200, help="first N release items (default: %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="timed rounds of A B C (default: %(default)s)")
    p.add_argument("--skip", default="", help="comma-separated runners to leave out, e.g. B")
    p.add_argument("--no-warmup", action="store_true", help="leave out the untimed warm-up round")
    p.add_argument("--keep", type=Path, default=None, help="keep the outputs and logs in this folder")
    args = p.parse_args(argv)
    which = [w for w in "ABC" if w not in {s.strip().upper() for s in args.skip.split(",") if s.strip()}]

    folder = embedded_folder()
    work = Path(tempfile.mkdtemp(prefix="bench_whole_")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
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
        env=_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    print(f"{args.n} items of {DATA.name}, fp32, batch 32, CPU threads: each runner's default; model folder {folder}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    walls = {w: [] for w in which}
    peaks = {w: [] for w in which}
    preds = {}
    rounds = ([-1] if not args.no_warmup else []) + list(range(args.repeats))
    for run in rounds:
        for w in which:
            cmd, out = commands(work, args.n, folder, run)[w]
            wall, peak = timed(cmd, work / f"{w}{run}.log")
            if run >= 0:
                walls[w].append(wall)
                peaks[w].append(peak)
                print(f"  round {run + 1} {w} {NAMES[w]:<24} {wall:7.1f} s  {peak / 2**30:5.2f} GiB", flush=True)
            preds[w] = predictions(w, out)
    print()
    print(f"{'':2}{'command':<26}{'median wall':>12}{'peak RSS':>10}{'ours is':>10}")
    med = {w: statistics.median(walls[w]) for w in which}
    for w in which:
        ratio = "" if w == "A" or "A" not in med else f"{med[w] / med['A']:.2f}x"
        print(f"{w:2}{NAMES[w]:<26}{med[w]:10.1f} s{max(peaks[w]) / 2**30:7.2f} GiB{ratio:>10}")
    arithmetic(args.n, {w: med[w] for w in which})
    ok = True
    for metric in ("acc", "acc_norm_tokens", "acc_norm_chars"):
        have = [w for w in which if metric in preds[w]]
        for w in have[1:]:
            diff = sum(a != b for a, b in zip(preds[have[0]][metric], preds[w][metric]))
            same = diff == 0 and len(preds[have[0]][metric]) == len(preds[w][metric])
            ok &= same
            print(f"predictions {metric:<16} {have[0]} vs {w}: {'identical' if same else f'{diff} differ'}")
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
