#!/usr/bin/env python3
"""The report's item viewer at size: 10 models × 1,000 items, its folder size and load time.

Builds one results document with ``--models`` models (default 10), each with saved predictions
on all 1,000 items of the Deep Arithmark release (``data/deeparithmark-1.jsonl``, real items and
their named mistakes). The per-model scores are *synthetic*: the embedded model's committed
predictions (``benchmarks/deeparithmark_smollm2-135m-instruct.json``) with seeded Gaussian noise
added to every ending's log-likelihood, so each model picks differently; only the viewer's size
and speed are measured, not any model. Then it renders the report (``build_report``) and opens
it in headless Chromium (Playwright, Debian's ``chromium``) from disk:

* **items.html load**: navigation start to the table drawn (the page's ``viewerReadyMs``, set
  after the data is parsed, the controls filled and the first rows drawn), median of
  ``--repeats`` fresh pages;
* **filter**: one filter change (depth) redrawn, in the page, median;
* **comparator**: the report's own ``index.html`` (figures embedded, no script) opened the same
  way, navigation start to its load event; the ratio is items.html / index.html.

It prints the folder's total size, the viewer page's size, and the times.

    python bench/bench_viewer.py [--models 10] [--repeats 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def synthetic_document(n_models: int, seed: int = 0) -> dict:
    """The committed one-model document with ``n_models`` noisy copies of its predictions."""
    from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise
    from synthprobe.benchmarks.deeparithmark.scoring.results import table_row
    from synthprobe.metrics.choice import argmax_first, softmax

    doc = json.loads(BENCH.read_text("utf-8"))
    base = doc["models"][0]
    rng = random.Random(seed)
    models = []
    for m in range(n_models):
        noise = 0.15 * (m + 1)
        records = []
        for rec in base["results"]["deeparithmark"]["predictions"]:
            r = dict(rec)
            r["logprob"] = [x + rng.gauss(0, noise * n) for x, n in zip(rec["logprob"], rec["n_tokens"])]
            r["per_token"] = [x / n for x, n in zip(r["logprob"], rec["n_tokens"])]
            r["per_char"] = [x / n for x, n in zip(r["logprob"], rec["n_chars"])]
            for metric, scores in (("acc", r["logprob"]), ("acc_norm", r["per_token"]), ("acc_char", r["per_char"])):
                r[f"pred_{metric}"] = argmax_first(scores)
                r[f"correct_{metric}"] = r[f"pred_{metric}"] == r["label"]
            r["soft"] = softmax(r["per_token"])[r["label"]]
            r["chosen_source"] = r["option_sources"][r["pred_acc_norm"]]
            r["protocol"] = "loglik"
            records.append(r)
        entry = json.loads(json.dumps({k: v for k, v in base.items() if k != "results"}))
        entry["model"]["name"] = f"synthetic-{m + 1:02d}"
        entry["model"]["spec"] = f"synthetic-{m + 1:02d}"
        entry["model"]["fingerprint"] = f"synthetic-{m + 1:02d}"
        block = {k: v for k, v in base["results"]["deeparithmark"].items() if k != "predictions"}
        block["summary"] = summarise(records)
        block["predictions"] = records
        entry["results"] = {"deeparithmark": block}
        entry["row"] = table_row(entry)
        models.append(entry)
    doc["models"] = models
    return doc


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples):.0f} ms (min {min(samples):.0f}, max {max(samples):.0f})"


def measure(folder: Path, repeats: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {"items": [], "index": [], "filter": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(repeats):
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))  # noqa: B023
            page.goto((folder / "items.html").as_uri())
            page.wait_for_selector("body[data-ready='1']")
            out["items"].append(page.evaluate("window.viewerReadyMs"))
            out["filter"].append(
                page.evaluate("""() => {
                const s = document.getElementById('f-depth'); s.value = '4';
                const t0 = performance.now(); s.dispatchEvent(new Event('change'));
                return performance.now() - t0; }""")
            )
            if errors:
                raise SystemExit(f"the viewer raised: {errors}")
            page.close()
            page = browser.new_page()
            page.goto((folder / "index.html").as_uri(), wait_until="load")
            out["index"].append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
            page.close()
        browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--keep", type=Path, default=None, help="write the results file and the report here")
    args = ap.parse_args(argv)
    if shutil.which(CHROMIUM) is None:
        print(f"needs Debian's chromium at {CHROMIUM}", file=sys.stderr)
        return 2
    from synthprobe.report.build import build_report
    from synthprobe.results import dumps_results

    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-viewer-"))
    work.mkdir(parents=True, exist_ok=True)
    doc = synthetic_document(args.models)
    res = work / "results.json"
    res.write_text(dumps_results(doc), encoding="utf-8")
    rep = work / "report"
    t0 = time.perf_counter()
    build_report([res], rep, progress=False, overwrite=True, data_files=[ROOT / "data" / "deeparithmark-1.jsonl"])
    build_s = time.perf_counter() - t0
    sizes = {p.name: p.stat().st_size for p in rep.iterdir()}
    n_items = len(doc["models"][0]["results"]["deeparithmark"]["predictions"])
    times = measure(rep, args.repeats)
    print(f"{args.models} models × {n_items:,} items (real release items, synthetic per-model scores)")
    print(f"results file:       {res.stat().st_size / 2**20:.2f} MiB")
    print(f"report build:       {build_s:.1f} s (all figures and pages)")
    print(
        f"report folder:      {sum(sizes.values()) / 2**20:.2f} MiB in {len(sizes)} files; "
        f"items.html {sizes['items.html'] / 2**20:.2f} MiB, index.html {sizes['index.html'] / 2**20:.2f} MiB"
    )
    print(f"items.html load:    {_median_ms(times['items'])} to the table drawn")
    print(f"index.html load:    {_median_ms(times['index'])} to the load event (comparator)")
    print(
        f"ratio:              {statistics.median(times['items']) / statistics.median(times['index']):.2f}x "
        "the report page's own load"
    )
    print(
        f"one filter change:  {_median_ms(times['filter'])} ({args.models * n_items:,} rows filtered, first 200 drawn)"
    )
    if args.keep is None:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
