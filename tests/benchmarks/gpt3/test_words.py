"""GPT-3 word tasks: word-set rules from Norvig's list, transformations, exact layout."""

from __future__ import annotations

import importlib.resources
import json
import random
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthprobe.benchmarks.gpt3 import BuildConfig, build_items, get_task
from synthprobe.benchmarks.gpt3.words import (
    INSERTIONS,
    INSTRUCTION,
    anagram_1,
    anagram_2,
    cycle_letters,
    norvig_words,
    random_insertion,
    reversed_word,
    word_set,
)
from synthprobe.seeding import item_rng

CODES = ("CL", "A1", "A2", "RI", "RW")


@pytest.fixture(scope="module")
def tasks():
    return {code: build_items(BuildConfig(code)) for code in CODES}


def _scrambled(item) -> str:
    assert item.context.startswith("\n") and item.context.endswith(" =")
    return item.context[1:-2]


def _word(item) -> str:
    assert item.completion.startswith(" ")
    return item.completion[1:]


# --------------------------------------------------------------------------------------
# Word sets
# --------------------------------------------------------------------------------------


def test_word_list_is_read_from_the_installed_package():
    path = importlib.resources.files("wordsegment") / "unigrams.txt"
    first = path.read_text(encoding="utf-8").splitlines()[:3]
    assert [line.split("\t")[0] for line in first] == list(norvig_words()[:3]) == ["the", "of", "and"]
    assert len(norvig_words()) == 333_213


def test_word_sets_match_the_released_files_figures():
    a1 = word_set(5, 15)
    six = word_set(6, 15)
    assert len(a1) == len(set(a1)) == 10_000 and len(six) == len(set(six)) == 10_000
    assert a1[0] == "about" and six[0] == "search"
    assert len(set(a1) & set(six)) == 8_279
    assert all(5 <= len(w) <= 15 for w in a1) and all(6 <= len(w) <= 15 for w in six)
    mix = Counter(len(w) for w in six)
    assert [mix[n] for n in range(6, 16)] == [2241, 2210, 1894, 1440, 1010, 611, 347, 169, 53, 25]
    assert sum(1 for w in a1 if len(w) == 5) == 1_721
    assert all(re.fullmatch(r"[a-z]+", w) for w in a1 + six)
    assert {"acdbline", "winamp", "aaliyah"} <= set(six)  # web tokens, no extra filter


def test_no_count_ties_at_the_cut_offs():
    path = importlib.resources.files("wordsegment") / "unigrams.txt"
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    for lo, words in ((5, word_set(5, 15)), (6, word_set(6, 15))):
        eligible = [(w, int(c)) for w, c in rows if lo <= len(w) <= 15]
        assert [w for w, _ in eligible[:10_000]] == list(words)
        assert eligible[9_999][1] != eligible[10_000][1]


def test_each_task_uses_its_word_set_in_random_order(tasks):
    for code, items in tasks.items():
        words = [_word(it) for it in items]
        expected = word_set(5 if code == "A1" else 6, 15)
        assert len(items) == 10_000 and sorted(words) == sorted(expected), code
        assert words[:50] != list(expected[:50])  # shuffled rows
    # CL, A2, RI and RW share one set
    assert len({frozenset(_word(it) for it in tasks[c]) for c in ("CL", "A2", "RI", "RW")}) == 1


def test_exact_layout(tasks):
    for _code, items in tasks.items():
        for item in items[:200]:
            line = item.to_json()
            assert list(json.loads(line)) == ["context", "completion"]
            assert re.fullmatch(r'\{"context": "\\n[a-z ./!]+ =", "completion": " [a-z]+"\}', line), line
    assert INSTRUCTION == "Please unscramble the letters into a word, and write that word:"


# --------------------------------------------------------------------------------------
# Transformations on the built files
# --------------------------------------------------------------------------------------


def test_cycle_letters_is_a_rotation_never_the_word(tasks):
    shifts = Counter()
    for item in tasks["CL"]:
        s, w = _scrambled(item), _word(item)
        assert s != w and len(s) == len(w)
        rotations = [r for r in range(1, len(w)) if w[r:] + w[:r] == s]
        assert rotations, (s, w)
        shifts[(len(w), min(rotations) / len(w) < 0.5)] += 1
    # r is uniform over 1..len-1: both halves of the range occur at every common length
    for n in range(6, 12):
        assert shifts[(n, True)] > 0 and shifts[(n, False)] > 0


#: sha256 of ``synthprobe build CL --seed 0``: no seed-0 word needs a redrawn rotation, so the
#: file is the same as with a single draw per word.
CL_SEED0_SHA256 = "721882625b626bc6002bede971ee83518b3507fea03101942c840372ebff1cbf"


def test_cycle_letters_seed_0_file_is_unchanged(tasks):
    import hashlib

    from synthprobe.benchmarks.gpt3 import serialize

    assert hashlib.sha256(serialize(tasks["CL"]).encode("utf-8")).hexdigest() == CL_SEED0_SHA256


@pytest.mark.parametrize("seed,word", [(11, "searchsearch"), (21, "phonephone")])
def test_cycle_letters_redraws_a_rotation_that_gives_the_word_back(seed, word):
    # at these seeds the first draw rotates a repeated-block word by one block length
    items = build_items(BuildConfig("CL", seed=seed))
    assert len(items) == 10_000
    assert [_word(it) for it in items if _scrambled(it) == _word(it)] == []
    (item,) = [it for it in items if _word(it) == word]
    s = _scrambled(item)
    assert s != word and any(word[r:] + word[:r] == s for r in range(1, len(word)))


def test_cycle_letters_of_one_repeated_letter_is_the_word():
    rng = random.Random(0)
    assert cycle_letters("aaaaaa", rng) == "aaaaaa"
    assert cycle_letters("abab", random.Random(1)) == "baba"  # only rotation that changes it


@pytest.mark.parametrize("code,keep", [("A1", 1), ("A2", 2)])
def test_anagrams_keep_the_ends_and_change_the_middle_where_possible(tasks, code, keep):
    unchanged = 0
    for item in tasks[code]:
        s, w = _scrambled(item), _word(item)
        assert s[:keep] == w[:keep] and s[-keep:] == w[-keep:]
        assert sorted(s[keep:-keep]) == sorted(w[keep:-keep])
        can_change = len(set(w[keep:-keep])) > 1
        assert (s != w) == can_change, (s, w)
        unchanged += s == w
    assert unchanged == {"A1": 0, "A2": 193}[code]  # as in the released files


def test_random_insertion_puts_one_char_between_every_pair(tasks):
    counts = Counter()
    for item in tasks["RI"]:
        s, w = _scrambled(item), _word(item)
        assert len(s) == 2 * len(w) - 1
        assert s[::2] == w
        assert all(ch in INSERTIONS for ch in s[1::2])
        counts.update(s[1::2])
    total = sum(counts.values())
    assert total == 71_327  # sum of (len - 1) over the set
    assert set(counts) == set(INSERTIONS)
    assert all(0.24 < n / total < 0.26 for n in counts.values()), counts


def test_reversed_words(tasks):
    same = []
    for item in tasks["RW"]:
        s, w = _scrambled(item), _word(item)
        assert s == w[::-1]
        if s == w:
            same.append(w)
    assert same == ["hannah"]


# --------------------------------------------------------------------------------------
# Transformations as functions, on arbitrary words
# --------------------------------------------------------------------------------------

words = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=15),
    # repeated blocks (searchsearch) equal some of their rotations; one letter repeated equals all
    st.builds(
        lambda block, times: block * times, st.text(alphabet="abc", min_size=1, max_size=5), st.integers(2, 5)
    ).filter(lambda w: len(w) >= 5),
)


@settings(max_examples=300, deadline=None)
@given(word=words, seed=st.integers(0, 2**32))
def test_transform_properties(word, seed):
    rng = random.Random(seed)
    c = cycle_letters(word, rng)
    assert any(word[r:] + word[:r] == c for r in range(1, len(word)))
    assert (c != word) == (len(set(word)) > 1)
    a1 = anagram_1(word, rng)
    assert a1[0] == word[0] and a1[-1] == word[-1] and sorted(a1) == sorted(word)
    assert (a1 != word) == (len(set(word[1:-1])) > 1)
    a2 = anagram_2(word, rng)
    assert a2[:2] == word[:2] and a2[-2:] == word[-2:] and sorted(a2) == sorted(word)
    assert (a2 != word) == (len(set(word[2:-2])) > 1)
    ri = random_insertion(word, rng)
    assert ri[::2] == word and len(ri) == 2 * len(word) - 1
    assert reversed_word(word) == word[::-1]


def test_transforms_are_deterministic_per_item():
    a = [anagram_1("corruption", item_rng("anagrams1", 0, i)) for i in range(20)]
    b = [anagram_1("corruption", item_rng("anagrams1", 0, i)) for i in range(20)]
    assert a == b and len(set(a)) > 10


def test_prefix_stable_and_aliases():
    assert build_items(BuildConfig("RI", n=300)) == build_items(BuildConfig("random_insertion"))[:300]
    assert get_task("mid_word_1_anagrams").code == "A1"
    assert get_task("cycle_letters_in_word").code == "CL"
    assert get_task("reversed_words").code == "RW"
    assert build_items(BuildConfig("A2", n=50, seed=3)) != build_items(BuildConfig("A2", n=50, seed=4))
