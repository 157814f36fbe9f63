"""``score deeparithmark --protocol letterprob``: how one item's first-token record is read (the
tokenisation with the larger letter mass, the most likely letter in it, certification, a server's
missing letters), the flags it refuses (exit 2, nothing written), and an end-to-end run of the
embedded model beside ``letters`` (the block, the fallbacks counted, the figures consistent with
the predictions and with the letters run, the protocol effect's agreement, the cache resume)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.benchmarks.deeparithmark.scoring.letterprob import certified, letterprob_block, read_letters
from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "data" / "deeparithmark-1.jsonl"


def _first(probs: dict[str, float | None], top: str, text: str, finish: str, top_k: int | None = None) -> dict:
    cands = {c: (math.log(p) if p else None) for c, p in probs.items()}
    return {
        "candidates": cands,
        "top": [[top, math.log(0.5)]],
        "text": text,
        "finish": finish,
        "n_tokens": 2,
        "top_k": top_k,
    }


BARE = {"A": 0.05, "B": 0.5, "C": 0.1, "D": 0.05}
SPACED = {" A": 0.2, " B": 0.01, " C": 0.01, " D": 0.01}


def test_the_tokenisation_with_the_larger_mass_is_read_and_its_likeliest_letter_answers():
    r = read_letters(_first({**BARE, **SPACED}, "B", "B", "eos"), 4)
    assert r["tokenisation"] == "A" and r["pred"] == 1
    assert r["mass"] == pytest.approx(0.7) and r["mass_other"] == pytest.approx(0.23)
    assert r["probs"] == pytest.approx([0.05, 0.5, 0.1, 0.05]) and r["letters_missing"] == 0
    # the spaced letters hold more: " A" is read although "B" alone is the likeliest bare letter
    r = read_letters(_first({**{k: v / 10 for k, v in BARE.items()}, **SPACED}, " A", " A", "stop"), 4)
    assert r["tokenisation"] == " A" and r["pred"] == 0


@pytest.mark.parametrize(
    "top,text,finish,ok",
    [
        ("B", "B", "eos", True),  # the letter, then the end of the answer
        ("B", "B", "stop", True),  # the letter, then the stop string
        ("B", "B.", "length", False),  # "B." goes on: a letters answer might name another option
        ("B", "B ", "length", False),  # the budget of 2 ran out: the answer did not end
        (" B", " B", "eos", False),  # the top token is not the letter in the tokenisation read
        ("The", "The", "length", False),  # no letter first
    ],
)
def test_certified_needs_the_read_letter_first_and_the_answer_ending_after_it(top, text, finish, ok):
    rec = _first({**BARE, **SPACED}, top, text, finish)
    assert certified(rec, read_letters(rec, 4)) is ok


def test_a_server_top_k_without_some_letters_gives_a_lower_bound_and_says_so():
    rec = _first(
        {"A": None, "B": 0.3, "C": None, "D": None, " A": None, " B": None, " C": None, " D": None}, "B", "B", "eos", 5
    )
    r = read_letters(rec, 4)
    assert r["pred"] == 1 and (r["letters_missing"], r["other_missing"]) == (3, 4) and r["mass"] == pytest.approx(0.3)
    none = _first(dict.fromkeys(["A", "B", "C", "D", " A", " B", " C", " D"]), "The", "The", "length", 5)
    assert read_letters(none, 4)["pred"] is None  # no letter among the server's tokens: no answer


def test_the_block_counts_certified_items_fallbacks_and_low_mass():
    def rec(certified_: bool, mass: float, agrees: bool, right: bool) -> dict:
        return {
            "certified": certified_,
            "mass": mass,
            "tokenisation": "A",
            "letters_missing": 0,
            "pred": 0,
            "top_token": "A",
            "n_endings": 4,
            "correct": right,
            "agrees_with_letters": agrees,
            "same_letter_written": True,
            "letters": {"outcome": "answered" if agrees else "inconsistent", "correct": right and agrees},
        }

    block = letterprob_block(
        [rec(True, 0.9, True, True), rec(False, 0.3, False, True), rec(False, 0.6, True, False)], top_k=None
    )
    assert block["certified"] == 1 and block["fallback"] == 2 and block["certified_share"] == pytest.approx(1 / 3)
    assert block["mass"]["median"] == pytest.approx(0.6) and block["mass"]["below_half"] == 1
    assert block["agreement"]["all"] == {"n": 3, "agree": 2, "share": pytest.approx(2 / 3), "written": 3}
    assert block["agreement"]["certified"]["agree"] == 1 and block["agreement"]["fallback"]["agree"] == 1
    assert block["as_letters"]["accuracy"]["correct"] == 1 and block["as_letters"]["outcomes"]["inconsistent"] == 1


@pytest.fixture
def fixed():
    register_engine("fixed", "fixed_answer_engine")
    yield
    ENGINES.pop("fixed", None)


def score(*extra: str) -> list[str]:
    return ["score", "deeparithmark", "--data", str(DATA), "--limit", "8", "--no-progress", *extra]


@pytest.mark.parametrize(
    "flags,message",
    [
        (["--protocol", "letterprob", "--cot"], "letterprob reads the letter as the answer's first token"),
        (["--protocol", "letters,letterprob", "--cot"], "letterprob reads the letter as the answer's first token"),
        (["--protocol", "letterprob,guess"], "expected one or more of loglik, letters, free, letterprob"),
        (["--protocol", "letterprob", "--resolve", "letter-first"], "add --protocol letters"),
    ],
)
def test_bad_letterprob_flags_exit_2_and_write_nothing(tmp_path, capsys, fixed, flags, message):
    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--output", str(out), *flags)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_an_engine_without_first_token_is_refused_before_it_loads(tmp_path, capsys, fixed, monkeypatch):
    import fixed_answer_engine

    monkeypatch.setattr(fixed_answer_engine, "CAN", frozenset({"generate", "sample"}), raising=False)
    loaded = []
    monkeypatch.setattr(fixed_answer_engine, "load", lambda *a, **k: loaded.append(a), raising=True)
    out = tmp_path / "r.json"
    assert main(score("--model", "fixed:x", "--protocol", "letters,letterprob", "--output", str(out))) == 2
    err = capsys.readouterr().err
    assert "--protocol letterprob reads the probabilities of the answer's first token" in err
    assert "the fixed engine cannot return them" in err
    assert not loaded and not out.exists()


@pytest.mark.model
def test_letters_and_letterprob_end_to_end_on_the_embedded_model(tmp_path, capsys):
    out = tmp_path / "r.json"
    args = score("--protocol", "letters,letterprob", "--chat-template", "auto", "--batch-size", "4")
    assert main([*args, "--output", str(out)]) == 0
    console = capsys.readouterr().out
    doc = json.loads(out.read_text())
    letters, one = (e["results"]["deeparithmark"] for e in doc["models"])
    assert one["protocol"] == "letterprob" and one["max_new_tokens"] == 8 and "fallback_max_new_tokens" not in one
    assert one["candidates"] == ["A", "B", "C", "D", " A", " B", " C", " D"] and one["stop"] == ["\n"]
    lp, preds = one["letterprob"], one["predictions"]
    assert len(preds) == 8 and all(r["pred"] is not None for r in preds)  # every item has a letter
    # SmolLM2 answers "A." under letters' stop: its items fall back, and are counted as such
    back = [r for r in preds if not r["certified"]]
    assert lp["fallback"] == len(back) > 0 and lp["certified"] + lp["fallback"] == 8
    assert "fast_path_s" not in one["timing"]  # one decoding loop: uncertified rows decode on
    assert all(r["letters"]["fallback"] for r in back)
    # the accuracy is the one-pass letter's; the letters-equivalent answers are the letters run's
    acc = one["summary"]["metrics"]["accuracy"]
    assert acc["correct"] == sum(r["pred"] == r["label"] for r in preds) and acc["total"] == 8
    gen = {r["id"]: r for r in letters["predictions"]}
    for r in preds:
        assert r["letters"]["raw"] == gen[r["id"]]["raw"] and r["letters"]["pred"] == gen[r["id"]]["pred"]
        assert r["agrees_with_letters"] == (r["letters"]["pred"] == r["pred"])
        assert 0 < r["mass"] <= 1 + 1e-6 and r["tokenisation"] in ("A", " A")
    assert lp["as_letters"]["accuracy"]["correct"] == letters["summary"]["metrics"]["accuracy"]["correct"]
    agree = sum(r["agrees_with_letters"] for r in preds)
    assert lp["agreement"]["all"]["agree"] == agree
    (effect,) = doc["protocol_effect"]
    assert effect["agreement"]["n"] == 8 and effect["agreement"]["agree"] == agree
    assert effect["agreement"]["written"] >= agree  # an inconsistent "A. $6966" wrote its letter
    assert f"same letter in both on {agree} of 8 items" in console
    assert f"certified {lp['certified']} of 8" in console and "letter mass: median" in console
    # resumed from the score cache: nothing scored again, the same answers
    again = tmp_path / "again.json"
    assert (
        main(
            [
                *score("--protocol", "letterprob", "--chat-template", "auto", "--batch-size", "4"),
                "--save-predictions",
                "--output",
                str(again),
            ]
        )
        == 0
    )
    block = json.loads(again.read_text())["models"][0]["results"]["deeparithmark"]
    assert block["cached_items"] == 8
    assert [r["pred"] for r in block["predictions"]] == [r["pred"] for r in preds]
    assert block["letterprob"]["certified"] == lp["certified"]
    # the report page shows the pair and its agreement
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "same letter in both" in page and "certified (one pass)" in page
    board = (tmp_path / "report" / "leaderboard.md").read_text()
    assert "One pass (letterprob): " in board and f"fell back to letters {lp['fallback']}" in board


def test_a_ruled_out_letter_is_kept_as_null_and_read_as_probability_zero():
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import finite_first as _finite_first

    rec = _finite_first(_first({**BARE, **SPACED}, "B", "B", "eos"))
    rec["candidates"]["A"] = float("-inf")
    rec = _finite_first(rec)
    assert rec["candidates"]["A"] is None and json.loads(json.dumps(rec, allow_nan=False)) == rec
    r = read_letters(rec, 4)
    assert r["probs"][0] == 0.0 and r["pred"] == 1 and r["letters_missing"] == 0  # exact: nothing missing
