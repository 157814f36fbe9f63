"""GPT-3's anagram rule in the word tasks: shuffle the middle once, rotate it left by one if the word
came back (the share of rotations in the built pools, measured by ``bench/anagram_rotation_share.py``)."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import pytest

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items
from synthprobe.benchmarks.gpt3.words import anagram_1, anagram_2

ROOT = Path(__file__).resolve().parents[3]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "anagram_rotation_share", ROOT / "bench" / "anagram_rotation_share.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------------------
# 1. GPT-3's anagram rule: shuffle once, rotate left by one if the word came back
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("code", ["A1", "A2"])
def test_left_rotation_share_is_gpt3s_one_third(code):
    """Words whose middle is three distinct letters: the left rotation comes out in 1/3 of them
    under GPT-3's rule (the released files), 1/5 under "reshuffle until changed"."""
    bench = _bench()
    rotated, n = bench.rotation_share(bench.pairs_of_items(build_items(BuildConfig(code))), bench.KEEP[code])
    assert n > 1_400  # about 1,465 (A1) and 1,885 (A2)
    share = rotated / n
    # 3.5 standard errors of a binomial share of 1/3 at this n: about +-0.043 (A1), +-0.038 (A2);
    # 1/5 lies more than 7 standard errors away
    tolerance = 3.5 * math.sqrt((1 / 3) * (2 / 3) / n)
    assert abs(share - 1 / 3) <= tolerance, (code, rotated, n, share)
    assert abs(share - 1 / 5) > 2 * tolerance  # the test tells the two rules apart


def test_shuffle_that_gives_the_word_back_becomes_a_left_rotation():
    # find seeds whose single shuffle of "abc" returns "abc": the rule rotates instead of redrawing
    word = "xabcy"
    identity_seeds = []
    for seed in range(200):
        letters = list("abc")
        random.Random(seed).shuffle(letters)
        if letters == list("abc"):
            identity_seeds.append(seed)
    assert identity_seeds
    for seed in identity_seeds:
        assert anagram_1(word, random.Random(seed)) == "xbcay"
        assert anagram_2("x" + word + "y", random.Random(seed)) == "xxbcayy"
    # any other seed: exactly one shuffle of the middle, as random.shuffle gives it
    for seed in set(range(200)) - set(identity_seeds):
        letters = list("abc")
        random.Random(seed).shuffle(letters)
        assert anagram_1(word, random.Random(seed)) == "x" + "".join(letters) + "y"


def test_unchanged_counts_stay_those_of_the_released_files():
    for code, expected in (("A1", 0), ("A2", 193)):
        keep = 1 if code == "A1" else 2
        unchanged = [
            it
            for it in build_items(BuildConfig(code))
            if it.context.strip().removesuffix(" =") == it.completion.strip()
        ]
        assert len(unchanged) == expected, code
        assert all(len(set(it.completion.strip()[keep:-keep])) == 1 for it in unchanged)
