"""Calibrate the answer-shape table of :mod:`synthprobe.benchmarks.deeparithmark.answer_shape` (a maintainer's tool).

For every family, repeat ``--rounds`` times: draw ``--n`` items exactly as the build does
(ranks 0–3 equally often, the current table applied), count how often each shape appears
among the answers and among the decoys (a third of the decoy count, so both are per item),
and multiply each shape's weight by ``((decoys + a) / (answers + a)) ** step``. Weights are
then scaled so that the highest-weighted shapes holding a tenth of the answers
(``KEEP_SHARE``) are kept outright, and clipped to ``[MIN_WEIGHT, 1]``. A fixed point is an answer distribution that
the answer → decoy step
leaves unchanged, which is what the char-3-gram reader must not be able to tell apart.

Every round draws from its own seeds (never a release or test seed), so the table does not
fit one sample's noise; the output is deterministic, and the JSON it writes is what the build
reads. Regenerate it after changing a family:

    python tools/deeparithmark_calibrate_shape.py --write
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.answer_shape import WEIGHTS_RESOURCE, answer_shape
from synthprobe.benchmarks.deeparithmark.build import BuildStats, draw, load_families
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS, TEMPLATES
from synthprobe.benchmarks.deeparithmark.item import make_item
from synthprobe.commandline import positive_int
from synthprobe.io.write import atomic_write_text
from synthprobe.seeding import derive_seed

#: the repository root, found from this script's own place (tools/ sits at the top)
ROOT = Path(__file__).resolve().parents[1]

#: Smallest weight a shape can get (so no reachable answer becomes impossible).
MIN_WEIGHT = 0.05
#: Pseudo-count added to both counts of a shape before their ratio is taken.
SMOOTHING = 2.0
#: Exponent applied to a round's ratio (below 1 damps the iteration).
STEP = 0.8
#: Share of answers whose shapes are kept outright (weight 1) after rescaling.
KEEP_SHARE = 0.10

DEFAULT_ROUNDS = 8
DEFAULT_N = 6000


def counts(template: str, table: dict[str, dict[str, float]], seed: int, n: int) -> tuple[Counter, Counter]:
    """Answer and decoy shape counts of ``n`` items of ``template`` drawn as the build does."""
    fam = load_families()[template]
    stats = BuildStats()
    answers: Counter = Counter()
    decoys: Counter = Counter()
    for k in range(n):
        rank = k % N_OPTIONS
        problem, rng, _key, sets = draw(fam, template, seed, k, rank, set(), stats, table)
        item = make_item(problem, sets, template=template, ind=k, slot=0, rank=rank, rng=rng)
        for v in item["metadata"]["option_values"][1:]:
            decoys[answer_shape(problem, v)] += 1
        answers[answer_shape(problem)] += 1
    return answers, decoys


def update(weights: dict[str, float], answers: Counter, decoys: Counter) -> dict[str, float]:
    """One damped step of the fixed-point iteration, rescaled and clipped."""
    per = N_OPTIONS - 1
    shapes = set(weights) | set(answers) | set(decoys)
    new = {s: weights.get(s, 1.0) * ((decoys[s] / per + SMOOTHING) / (answers[s] + SMOOTHING)) ** STEP for s in shapes}
    # rescale so that the top KEEP_SHARE of answers (by weight) sit at weight 1
    ranked = sorted(((new[s], answers[s]) for s in shapes), reverse=True)
    total, acc, top = sum(answers.values()), 0, ranked[0][0]
    for w, a in ranked:
        acc += a
        top = w
        if acc >= KEEP_SHARE * total:
            break
    return {s: round(min(1.0, max(MIN_WEIGHT, w / top)), 4) for s, w in sorted(new.items())}


def calibrate_family(template: str, rounds: int, n: int, verbose: bool = False) -> tuple[dict[str, float], list[float]]:
    """The table row of one family and its answer/decoy mismatch (total variation) per round."""
    weights: dict[str, float] = {}
    gaps: list[float] = []
    for r in range(rounds + 1):
        seed = derive_seed("deeparithmark/calibrate-shape", r)
        answers, decoys = counts(template, {template: weights}, seed, n)
        na, nd = sum(answers.values()), sum(decoys.values())
        gaps.append(0.5 * sum(abs(answers[s] / na - decoys[s] / nd) for s in set(answers) | set(decoys)))
        if verbose:
            print(f"{template} round {r}: total variation {gaps[-1]:.3f}", file=sys.stderr)
        if r < rounds:
            weights = update(weights, answers, decoys)
    return weights, gaps


def _one(args):
    return args[0], calibrate_family(*args)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python tools/deeparithmark_calibrate_shape.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--rounds", type=positive_int, default=DEFAULT_ROUNDS, help="iterations per family (default: %(default)s)"
    )
    p.add_argument(
        "--n", type=positive_int, default=DEFAULT_N, help="items drawn per family and round (default: %(default)s)"
    )
    p.add_argument(
        "--families",
        nargs="+",
        metavar="NAME",
        choices=[t.name for t in TEMPLATES],
        help="only these families (default: all fifteen)",
    )
    p.add_argument("--jobs", type=positive_int, default=2, help="processes (default: %(default)s)")
    p.add_argument("--write", action="store_true", help=f"write the table to synthprobe/resources/{WEIGHTS_RESOURCE}")
    p.add_argument("-v", "--verbose", action="store_true", help="print each round's mismatch")
    args = p.parse_args(argv)
    names = args.families or [t.name for t in TEMPLATES]
    jobs = [(name, args.rounds, args.n, args.verbose) for name in names]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = dict(pool.map(_one, jobs))
    for name in names:
        _, gaps = results[name]
        print(f"{name:<28} answer/decoy shape mismatch {gaps[0]:.3f} -> {gaps[-1]:.3f}")
    if args.write:
        doc = {
            "about": "Deep Arithmark answer-shape acceptance weights; regenerate with "
            "python tools/deeparithmark_calibrate_shape.py --write",
            "rounds": args.rounds,
            "n": args.n,
            "weights": {name: results[name][0] for name in names},
        }
        out = ROOT / "src" / "synthprobe" / "resources" / WEIGHTS_RESOURCE
        atomic_write_text(out, json.dumps(doc, indent=1, sort_keys=False) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
