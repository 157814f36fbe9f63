"""Throughput of `synthprobe contamination`: MB/s of the single-machine scan and of the Ray Data
scan (a local Ray started for the run) on the same generated corpus, in one run.

The corpus: English-like text drawn from the release's own vocabulary plus filler words (so
many windows are looked up, the slow path), split into text and JSONL files, with a few
release prompts planted; both runs must flag exactly the planted items.

    python bench/bench_contamination.py --mb 200            # ~200 MB corpus, local and Ray
    python bench/bench_contamination.py --mb 20 --no-ray    # quick, local only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from synthprobe.contamination import ngrams as ng  # noqa: E402
from synthprobe.contamination import run as cr  # noqa: E402
from synthprobe.contamination.tasks import load_task  # noqa: E402

RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def make_corpus(folder: Path, mb: float, files: int, seed: int = 0) -> set[int]:
    """~``mb`` MB in ``files`` files (alternately text and JSONL); returns the planted item indices."""
    task = load_task(str(RELEASE))
    vocab = sorted({t for it in task.texts for t in ng.tokens(it.prompt)})
    words = vocab + [w * 2 for w in vocab[:2000]]
    rng = random.Random(seed)
    planted = set(rng.sample(range(len(task.texts)), 20))
    per_file = int(mb * 1e6 / files)
    plants = sorted(planted)
    for k in range(files):
        jsonl = k % 2 == 1
        path = folder / (f"part{k:03d}.jsonl" if jsonl else f"part{k:03d}.txt")
        mine = plants[k::files]
        with open(path, "w", encoding="utf-8") as fh:
            written = 0
            line_no = 0
            while written < per_file:
                line = " ".join(rng.choices(words, k=rng.randint(20, 120))) + "."
                if mine and line_no % 997 == 500:
                    line = line + " " + task.texts[mine.pop()].prompt
                out = (json.dumps({"text": line}) if jsonl else line) + "\n"
                fh.write(out)
                written += len(out)
                line_no += 1
            for i in mine:  # files too small to reach line 500
                line = task.texts[i].prompt
                fh.write((json.dumps({"text": line}) if jsonl else line) + "\n")
    return planted


def scan(folder: Path, out: Path, use_ray: bool, shard_mb: int) -> tuple[dict, float]:
    config = cr.Config(
        corpus=[str(folder)],
        tasks=[str(RELEASE)],
        output=out,
        ray=use_ray,
        overwrite=True,
        shard_bytes=shard_mb << 20,
        progress=False,
    )
    t0, c0 = time.perf_counter(), time.process_time()
    doc = cr.run(config)
    doc["cpu_s"] = time.process_time() - c0  # this process only (not Ray's workers)
    return doc, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200.0, help="corpus size in MB (default: %(default)s)")
    ap.add_argument("--files", type=int, default=8, help="corpus files (default: %(default)s)")
    ap.add_argument("--shard-mb", type=int, default=16, help="MiB per shard (default: %(default)s)")
    ap.add_argument("--no-ray", action="store_true", help="the single-machine scan only")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        t0 = time.perf_counter()
        planted = make_corpus(folder, args.mb, args.files)
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(
            f"corpus: {size / 1e6:.1f} MB in {args.files} files (text and JSONL), generated in "
            f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs"
        )
        doc, local_s = scan(folder, Path(tmp) / "local.json", False, args.shard_mb)
        flagged = {it["index"] for it in doc["contamination"]["tasks"][0]["items"]}
        assert flagged == planted, sorted(flagged ^ planted)
        local = size / 1e6 / local_s
        print(
            f"single machine (one process): {local_s:.1f} s, {local:.2f} MB/s "
            f"(scan only: {doc['contamination']['run']['mb_per_s']:.2f} MB/s); CPU time {doc['cpu_s']:.1f} s = "
            f"{size / 1e6 / doc['cpu_s']:.2f} MB per CPU-second (what an unloaded core would do); "
            f"flagged {len(flagged)}/20 planted"
        )
        if not args.no_ray:
            rdoc, ray_s = scan(folder, Path(tmp) / "ray.json", True, args.shard_mb)
            same = rdoc["contamination"]["tasks"] == doc["contamination"]["tasks"]
            ray = size / 1e6 / ray_s
            print(
                f"Ray Data (local Ray, started for the run): {ray_s:.1f} s, {ray:.2f} MB/s "
                f"(scan only: {rdoc['contamination']['run']['mb_per_s']:.2f} MB/s); results identical: {same}"
            )
            print(f"ratio Ray / single machine: {ray / local:.2f}x")
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
