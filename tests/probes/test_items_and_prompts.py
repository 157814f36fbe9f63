"""Novel-word and grammar probes: item files, GPT-3's prompt formats, the word-use proxy, scoring, HTML."""

from __future__ import annotations

import json

import pytest

from synthprobe.backends.decoding import Sampling
from synthprobe.errors import InputError
from synthprobe.probes import grammar, novel_words, report
from synthprobe.probes.items import GrammarItem, NovelWord, load_grammar, load_novel_words


def test_novel_word_prompt_matches_figure_3_16():
    demo = NovelWord(
        "whatpu",
        "noun",
        "a small, furry animal native to Tanzania",
        "We were traveling in Africa and we saw these very cute whatpus.",
        1,
    )
    far = NovelWord("farduddle", "verb", "jump up and down really fast.", None, 2)
    screeg = NovelWord("screeg", "verb-object", "swing a sword at it", None, 3)
    assert novel_words.build_prompt([(demo, demo.sentence)], far) == (
        'A "whatpu" is a small, furry animal native to Tanzania. An example of a sentence that uses the word '
        "whatpu is:\nWe were traveling in Africa and we saw these very cute whatpus.\n"
        'To do a "farduddle" means to jump up and down really fast. An example of a sentence that uses the word '
        "farduddle is:\n"
    )
    # each later definition is appended after the previous answer
    p = novel_words.build_prompt([(demo, demo.sentence), (far, "She did a farduddle.")], screeg)
    assert p.endswith(
        'farduddle is:\nShe did a farduddle.\nTo "screeg" something is to swing a sword at it. '
        "An example of a sentence that uses the word screeg is:\n"
    )


def test_grammar_prompt_matches_figure_3_17():
    demos = [
        GrammarItem("I eated the purple berries.", "I ate the purple berries.", None, 1),
        GrammarItem(
            "I'd be more than happy to work with you in another project.",
            "I'd be more than happy to work with you on another project.",
            None,
            2,
        ),
    ]
    assert grammar.build_prompt(demos, GrammarItem("The patient was died.", None, "The patient died.", 3)) == (
        "Poor English input: I eated the purple berries.\n"
        "Good English output: I ate the purple berries.\n"
        "Poor English input: I'd be more than happy to work with you in another project.\n"
        "Good English output: I'd be more than happy to work with you on another project.\n"
        "Poor English input: The patient was died.\n"
        "Good English output:"
    )


def test_grammar_chained_prompt_appends_each_input_after_the_previous_completion():
    """Figure 3.17: the demonstrations, then every earlier input with the model's completion."""
    demos = [GrammarItem("I eated the purple berries.", "I ate the purple berries.", None, 1)]
    first = GrammarItem("The patient was died.", None, "The patient died.", 2)
    second = GrammarItem("We think that Leslie likes ourselves.", None, None, 3)
    third = GrammarItem("Janet broke Bill on the finger.", None, None, 4)
    assert grammar.build_prompt(demos, third, [(first, "The patient died."), (second, "")]) == (
        "Poor English input: I eated the purple berries.\n"
        "Good English output: I ate the purple berries.\n"
        "Poor English input: The patient was died.\n"
        "Good English output: The patient died.\n"
        "Poor English input: We think that Leslie likes ourselves.\n"
        "Good English output:\n"  # an empty completion leaves the bare label
        "Poor English input: Janet broke Bill on the finger.\n"
        "Good English output:"
    )
    assert grammar.build_prompt(demos, third, []) == grammar.build_prompt(demos, third)


@pytest.mark.parametrize(
    "sentence, word, form",
    [
        ("We saw these very cute whatpus.", "whatpu", "whatpus"),
        ("She started doing these crazy farduddles.", "farduddle", "farduddles"),
        ("He farduddled all the way home.", "farduddle", "farduddled"),
        ("They were farduddling again.", "farduddle", "farduddling"),
        ("The screegers met at dawn.", "screeg", "screegers"),
        ("I screeged him.", "screeg", "screeged"),
        ("It tarpopped twice.", "tarpop", "tarpopped"),  # consonant-vowel-consonant: doubled
        ("Two glibbies sat there.", "glibby", "glibbies"),
        ("The Whatpu's tail was long.", "whatpu", "whatpu's"),
        ("A yalubalu-shaped vegetable.", "yalubalu", "yalubalu"),
        ("We saw a cute animal.", "whatpu", None),
        ("The whatpuddle was large.", "whatpu", None),  # a longer word that merely starts with it
        ("A what pu.", "whatpu", None),
    ],
)
def test_uses_the_new_word(sentence, word, form):
    assert novel_words.used_form(sentence, word) == form


def test_grammar_scores_with_chrf_and_exact_match():
    s = grammar.score(
        ["The patient died.", "I ate berries .", "Nothing alike"],
        ["The patient  died.", "I ate the berries.", "The cat sat."],
    )
    assert s["scored"] == 3 and s["exact_match"] == 1 and s["exact_match_rate"] == pytest.approx(1 / 3, abs=1e-4)
    # sacrebleu's chrF: an identical sentence scores 100 (whitespace is ignored by chrF's defaults)
    assert s["sentence_chrf"][0] == 100.0
    assert 0 < s["sentence_chrf"][2] < s["sentence_chrf"][1] < 100
    from sacrebleu.metrics import CHRF

    assert s["chrf"] == round(
        CHRF()
        .corpus_score(
            ["The patient died.", "I ate berries .", "Nothing alike"],
            [["The patient  died.", "I ate the berries.", "The cat sat."]],
        )
        .score,
        4,
    )
    assert grammar.score([], []) == {"scored": 0}


def test_sampling_settings_are_checked():
    with pytest.raises(InputError, match="--samples 1"):
        Sampling(temperature=0, n=3)
    with pytest.raises(InputError, match="top-p"):
        Sampling(temperature=1, top_p=1.5)
    assert Sampling(temperature=0.7, top_p=0.9, n=3).to_dict()["decoding"].startswith("sampling")


def test_shipped_sets_load():
    words = load_novel_words()
    assert words[0].sentence and all(w.sentence is None for w in words[1:]) and len(words) >= 5
    assert {w.pos for w in words} == {"noun", "verb", "verb-object"}
    items = load_grammar()
    demos = [g for g in items if g.output]
    assert len(demos) == 3 and all(g.reference for g in items[3:])


@pytest.mark.parametrize(
    "lines, line, field, message",
    [
        (['{"word": "zib", "pos": "noun", "definition": "a cat"}'], 1, "sentence", "worked example"),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "zab", "pos": "adjective", "definition": "x"}',
            ],
            2,
            "pos",
            "noun, verb, verb-object",
        ),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "ZIB", "pos": "noun", "definition": "x"}',
            ],
            2,
            "word",
            "already appears on line 1",
        ),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "two words", "pos": "noun", "definition": "x"}',
            ],
            2,
            "word",
            "single word",
        ),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "zob", "pos": "noun", "definition": "x"}',
                '{"word": "zub", "pos": "noun", "definition": "x", "sentence": "late"}',
            ],
            3,
            "sentence",
            "come first",
        ),
        (
            ['{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib.", "colour": 1}'],
            1,
            "colour",
            "unknown field",
        ),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "a", "pos": "noun", "definition": "x"}',
            ],
            2,
            "word",
            "shorter than 3 letters",
        ),
        (
            [
                '{"word": "zib", "pos": "noun", "definition": "a cat", "sentence": "A zib."}',
                '{"word": "z-o", "pos": "verb", "definition": "x"}',
            ],
            2,
            "word",
            "shorter than 3 letters",
        ),
    ],
)
def test_novel_words_loader_errors(tmp_path, lines, line, field, message):
    p = tmp_path / "w.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        load_novel_words(p)
    assert (err.value.line, err.value.field) == (line, field) and message in str(err.value)


def test_grammar_loader_errors(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text('{"input": "a", "output": "b", "reference": "c"}\n')
    with pytest.raises(InputError, match="not both") as err:
        load_grammar(p)
    assert err.value.line == 1
    p.write_text('{"input": "a", "reference": "b"}\n')
    with pytest.raises(InputError, match="no demonstration"):
        load_grammar(p)
    p.write_text('{"input": "a", "output": "b"}\n{"input": ""}\n')
    with pytest.raises(InputError) as err:
        load_grammar(p)
    assert (err.value.line, err.value.field) == (2, "input")


def test_html_reports_escape_everything():
    evil = "<script>alert(1)</script>"
    nw = {
        "model": "m<i>",
        "items_file": "f",
        "seed": 0,
        "sampling": Sampling(temperature=0.5, n=2).to_dict(),
        "demonstrations": [{"word": "zib", "sentence": evil}],
        "results": [
            {
                "word": "zob",
                "prompt": evil + "\n",
                "new_text": evil,
                "generations": [evil, "a zob"],
                "uses_word": [False, True],
                "used_form": [None, "zob"],
                "finished": [True, False],
            }
        ],
        "summary": {"words": 1, "uses_word_first_sample": 0},
    }
    html = report.novel_words_html(nw)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "m&lt;i&gt;" in html
    assert html.count("<th>Generation ") == 2  # two generations side by side
    assert "does not use the word" in html and "uses the word (zob)" in html
    assert html.count("truncated: reached --max-new-tokens") == 1  # the second generation only
    gr = {
        "model": "m",
        "items_file": "f",
        "seed": 0,
        "sampling": Sampling().to_dict(),
        "demonstrations": [{"input": evil, "output": "ok"}],
        "results": [
            {
                "input": evil,
                "prompt": evil,
                "generations": ["fixed"],
                "reference": evil,
                "exact_match": [False],
                "chrf": 10.0,
            }
        ],
        "summary": {
            "items": 1,
            "with_reference": 1,
            "scored": 1,
            "chrf": 10.0,
            "exact_match": 0,
            "exact_match_rate": 0.0,
        },
    }
    html = report.grammar_html(gr)
    assert "<script>" not in html and html.count("&lt;script&gt;") == 4
    json.dumps(gr)
