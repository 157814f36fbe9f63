#!/usr/bin/env python3
"""How much the char-3-gram classifier learns about Deep Arithmark's answers, across seeds.

The audit in ``deeparithmark.py audit`` cross-validates the classifier inside one 1,000-item
file, so each fold learns from only 800 items. This script measures the same leak three ways
over several freshly built seeds:

* **within file** — the audit's own figure, per seed;
* **across files** — trained on the other seeds' items, tested on this seed's (more training
  data, so closer to the leak a determined reader could exploit), and trained on just 800
  items of the next seed (the audit's training size without its fold structure);
* **per template** — the classifier cross-validated within each template on all seeds pooled,
  which names the families whose answers and decoys differ in how their numbers look;
* **no-leak reference** — the within-file figure on the same files with each item's correct
  option reassigned at random, so the text cannot know it: how far from 25 % the audit lands
  by chance alone, and how often it leaves 25 ± 2.7 even then.

A builder that balances a file against its own running counts can push the within-file figure
below chance while the across-file figure stays put; this is the check for that.

    python bench/leak_across_seeds.py [--seeds 1-10] [--n 1000]
    python bench/leak_across_seeds.py --seeds 11-50 --within-only   # many seeds, within file only
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def seed_list(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--seeds",
        type=seed_list,
        default=seed_list("1-10"),
        help="seeds to build, e.g. 1-10 or 3,7,20261027 (default: 1-10)",
    )
    p.add_argument("--n", type=int, default=1000, help="items per seed (default: %(default)s)")
    p.add_argument(
        "--within-only",
        action="store_true",
        help="skip the across-file columns and the per-template table (quick, for "
        "many seeds: the across-file fits grow with the number of seeds)",
    )
    args = p.parse_args(argv)
    if len(args.seeds) < 2:
        p.error("--seeds needs at least two seeds (the across-file rows train on the others)")

    import numpy as np
    from tqdm import tqdm

    from synthprobe.benchmarks.deeparithmark.audit import (
        AuditItem,
        audit_item,
        classifier_picks,
        classifier_pipeline,
        option_rows,
        picks_from_proba,
    )
    from synthprobe.benchmarks.deeparithmark.build import iter_items
    from synthprobe.seeding import derive_seed

    files: list[list[AuditItem]] = []
    for s in tqdm(args.seeds, desc="building", unit="seed"):
        files.append([audit_item(it["endings"], it["label"], it["metadata"]) for it in iter_items(s, args.n)])

    def accuracy(picks, items) -> float:
        return 100.0 * float(np.mean([pk == it.label for pk, it in zip(picks, items)]))

    def fit_and_pick(train: list[AuditItem], test: list[AuditItem]) -> list[int]:
        texts, y, _ = option_rows(train)
        model = classifier_pipeline().fit(texts, y)
        return picks_from_proba(test, model.predict_proba(option_rows(test)[0])[:, 1])

    def relabelled(seed: int, items: list[AuditItem]) -> list[AuditItem]:
        rng = random.Random(derive_seed("leak-bench/relabel", seed))
        return [replace(it, label=rng.randrange(len(it.endings))) for it in items]

    rows = []
    for i, (s, items) in enumerate(tqdm(list(zip(args.seeds, files)), desc="classifying", unit="seed")):
        within = accuracy(classifier_picks(items), items)
        null_items = relabelled(s, items)
        null = accuracy(classifier_picks(null_items), null_items)
        if args.within_only:
            across = across_small = float("nan")
        else:
            others = [x for j, f in enumerate(files) if j != i for x in f]
            across = accuracy(fit_and_pick(others, items), items)
            nxt = files[(i + 1) % len(files)]
            across_small = accuracy(fit_and_pick(nxt[: int(0.8 * len(nxt))], items), items)
        rows.append((s, within, across, across_small, null))

    def pct(x: float, width: int) -> str:
        return f"{'—':>{width}}  " if np.isnan(x) else f"{x:{width}.1f} %"

    print(
        f"{'seed':>10}  {'within file':>11}  {'across files':>12}  {'across, 800 train':>17}  {'no-leak reference':>17}"
    )
    for s, a, b, c, d in rows:
        print(f"{s:>10}  {pct(a, 10)}  {pct(b, 11)}  {pct(c, 16)}  {pct(d, 16)}")
    mean = np.mean([r[1:] for r in rows], axis=0)
    print(f"{'mean':>10}  {pct(mean[0], 10)}  {pct(mean[1], 11)}  {pct(mean[2], 16)}  {pct(mean[3], 16)}")
    sd = np.std([r[1] for r in rows]), np.std([r[4] for r in rows])
    print(f"{'sd':>10}  {sd[0]:10.1f}    {'':>11}    {'':>16}    {sd[1]:16.1f}")
    outside = sum(abs(r[1] - 25.0) > 2.7 for r in rows)
    null_outside = sum(abs(r[4] - 25.0) > 2.7 for r in rows)
    print(
        f"within-file figure outside 25 ± 2.7: {outside} of {len(rows)} seeds "
        f"(no-leak reference: {null_outside} of {len(rows)})\n"
    )
    if args.within_only:
        return 0

    by_template: dict[str, list[AuditItem]] = defaultdict(list)
    for f in files:
        for it in f:
            by_template[it.template].append(it)
    scored = [(accuracy(classifier_picks(its), its), t, len(its)) for t, its in by_template.items()]
    print(f"{'template (all seeds pooled)':<28}  {'items':>5}  classifier")
    for acc, t, n in sorted(scored, reverse=True):
        print(f"{t:<28}  {n:>5}  {acc:8.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
