#!/usr/bin/env python3
"""How often an anagram's scrambled middle is a left rotation of the word's middle.

GPT-3's released A1 and A2 files scramble with "shuffle the middle once; if the word came back
unchanged, rotate the middle left by one". For a middle of three distinct letters (six
arrangements) that gives the left rotation in 1/3 of words: 1/6 from the shuffle itself, 1/6
from the shuffles that left the word unchanged. "Reshuffle until changed" gives 1/5 instead.
This script measures the share in synthprobe's built A1 and A2 files (or in any file in
OpenAI's format, e.g. the released ``mid_word_1_anagrams.jsonl``):

    python bench/anagram_rotation_share.py                       # our A1 and A2, seed 0
    python bench/anagram_rotation_share.py --seed 3
    python bench/anagram_rotation_share.py --file A1=path/to/mid_word_1_anagrams.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

#: Letters kept at each end: A1 keeps one, A2 two.
KEEP = {"A1": 1, "A2": 2}


def rotation_share(pairs, keep: int) -> tuple[int, int]:
    """``(rotated, n)`` over ``(scrambled, word)`` pairs whose middle has three letters, all
    distinct: ``rotated`` counts those whose scrambled middle is the middle rotated left by one."""
    rotated = n = 0
    for scrambled, word in pairs:
        middle = word[keep : len(word) - keep]
        if len(middle) != 3 or len(set(middle)) != 3:
            continue
        n += 1
        rotated += scrambled[keep : len(scrambled) - keep] == middle[1:] + middle[:1]
    return rotated, n


def pairs_of_items(items) -> list[tuple[str, str]]:
    """``(scrambled, word)`` of items whose context is ``"\\n<scrambled> ="`` and completion ``" <word>"``."""
    return [(it.context.strip().removesuffix("=").strip(), it.completion.strip()) for it in items]


def pairs_of_file(path: Path) -> list[tuple[str, str]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                obj = json.loads(line)
                out.append((obj["context"].strip().removesuffix("=").strip(), obj["completion"].strip()))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0, help="seed of synthprobe's build (default 0)")
    ap.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="A1=PATH",
        help="measure a file in OpenAI's format instead (A1=PATH or A2=PATH; repeatable)",
    )
    args = ap.parse_args(argv)
    if args.file:
        sources = []
        for spec in args.file:
            code, _, path = spec.partition("=")
            if code not in KEEP or not path:
                ap.error(f"expected A1=PATH or A2=PATH, got {spec!r}")
            sources.append((code, path, pairs_of_file(Path(path))))
    else:
        from synthprobe.benchmarks.gpt3 import BuildConfig, build_items

        sources = [
            (
                code,
                f"synthprobe build {code} --seed {args.seed}",
                pairs_of_items(build_items(BuildConfig(code, seed=args.seed))),
            )
            for code in KEEP
        ]
    for code, where, pairs in sources:
        rotated, n = rotation_share(pairs, KEEP[code])
        share = rotated / n if n else float("nan")
        sd = math.sqrt(share * (1 - share) / n) if n else float("nan")
        print(
            f"{code} ({where}): {rotated:,} of {n:,} three-distinct-letter middles are a left rotation "
            f"= {share:.3f} (± {1.96 * sd:.3f}); 1/3 = shuffle once then rotate, 1/5 = reshuffle until changed"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
