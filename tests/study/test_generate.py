"""News-study generation: article loader, GPT-3 prompt layout, sample selection, the real model."""

from __future__ import annotations

import json

import pytest

from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.io.paths import resource_path
from synthprobe.study.articles import Article, build_prompt, load_articles, word_count
from synthprobe.study.generate import (
    LENGTHS,
    SELECT_COMPLETE,
    SELECT_TRUNCATED,
    Settings,
    closest_sample,
    pick_context,
    pick_sample,
    trim_to_sentence,
)
from synthprobe.study.items import load_items


def _art(i, words=5):
    return Article(f"a{i}", f"Title {i}", f"Sub {i}", " ".join(["w"] * words), i)


def test_prompt_layout_is_gpt3s():
    ctx = [
        Article("x", "Old News", "It happened", "First line.\n\nSecond line.", 1),
        Article("y", "More News", "Also", "Body.", 2),
    ]
    target = Article("z", "Target Title", "Target subtitle", "unused", 3)
    assert build_prompt(ctx, target) == (
        "Title: Old News\nSubtitle: It happened\nArticle: First line.\n\nSecond line.\n\n"
        "Title: More News\nSubtitle: Also\nArticle: Body.\n\n"
        "Title: Target Title\nSubtitle: Target subtitle\nArticle:"
    )
    assert build_prompt([], target) == "Title: Target Title\nSubtitle: Target subtitle\nArticle:"


def test_truncated_text_is_cut_back_to_its_last_full_sentence():
    assert trim_to_sentence("The vote passed. Members said the split was") == "The vote passed."
    assert trim_to_sentence('He said "no!" and the church agr') == 'He said "no!"'
    assert trim_to_sentence("It ended (as planned.) Then the") == "It ended (as planned.)"
    assert trim_to_sentence("Prices rose 3.5 per cent in the") == "Prices rose 3.5 per cent in the"  # no full sentence
    assert trim_to_sentence("Done.") == "Done."


def test_closest_word_count_selection():
    assert closest_sample([150, 190, 260, 205], 200) == 3
    assert closest_sample([190, 210], 200) == 0  # tie: the earlier sample
    assert closest_sample([0, 0, 3], 1) == 0
    assert closest_sample([500], 12) == 0
    with pytest.raises(ValueError):
        closest_sample([], 10)


def test_context_articles_are_other_articles_and_seeded():
    arts = [_art(i) for i in range(8)]
    for index in range(8):
        ctx = pick_context(arts, index, 3, seed=1)
        assert len({a.id for a in ctx}) == 3 and arts[index] not in ctx
    assert pick_context(arts, 2, 3, seed=1) == pick_context(arts, 2, 3, seed=1)
    assert any(pick_context(arts, i, 3, seed=1) != pick_context(arts, i, 3, seed=2) for i in range(8))
    with pytest.raises(InputError, match="conditions on 3 other"):
        pick_context(arts[:3], 0, 3, seed=0)
    assert LENGTHS[200].context_articles == 3 and LENGTHS[500].context_articles == 1


def test_settings_validate():
    assert Settings().sampling("model").temperature == 0.8
    assert Settings().sampling("control").temperature > Settings().sampling("model").temperature
    assert Settings(length=500).sampling("model").max_new_tokens == 900
    with pytest.raises(InputError, match="--length"):
        _ = Settings(length=300).variant
    with pytest.raises(InputError, match="top-p"):
        Settings(top_p=0).sampling("model")


def test_shipped_sample_is_labelled_and_valid():
    arts = load_articles()
    assert len(arts) == 8
    raw = [json.loads(x) for x in resource_path("study_sample.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all("synthprobe-written sample, not news" in r["source"] for r in raw)
    assert all(120 <= word_count(a.article) <= 260 for a in arts)


@pytest.mark.parametrize(
    "line, field, message",
    [
        ('{"title": "T", "subtitle": "S"}', "article", "missing"),
        ('{"title": "T", "subtitle": "S", "article": 3}', "article", "non-empty string"),
        ('{"title": "T\\nX", "subtitle": "S", "article": "a"}', "title", "single line"),
        ('{"title": "T", "subtitle": "S", "article": "a", "author": "me"}', "author", "unknown field"),
        ('{"title": "first title", "subtitle": "S", "article": "a"}', "title", "title repeats line 1"),
        ("[1, 2]", None, "expected a JSON object"),
    ],
)
def test_article_loader_names_line_and_field(tmp_path, line, field, message):
    p = tmp_path / "a.jsonl"
    p.write_text('{"title": "First  Title", "subtitle": "S", "article": "a b c"}\n' + line + "\n")
    with pytest.raises(InputError) as err:
        load_articles(p)
    assert err.value.line == 2 and err.value.field == field and message in str(err.value)
    assert str(p) in str(err.value)


def test_generate_cli_rejects_bad_input_before_loading_a_model(tmp_path, capsys):
    arts = tmp_path / "a.jsonl"
    arts.write_text("".join(json.dumps({"title": f"T{i}", "subtitle": "s", "article": "x y"}) + "\n" for i in range(3)))
    out = tmp_path / "study.jsonl"
    assert main(["study", "generate", "--articles", str(arts), "--out", str(out), "--model", "no-such-model-x"]) == 2
    assert "conditions on 3 other article(s)" in capsys.readouterr().err
    assert main(["study", "generate", "--articles", str(arts), "--out", str(out), "--conditions", "model,human"]) == 2
    assert "--conditions" in capsys.readouterr().err
    assert main(["study", "generate", "--articles", str(arts), "--out", str(out), "--samples", "0"]) == 2
    assert (
        main(["study", "generate", "--articles", str(arts), "--out", str(out), "--threads", "0", "--length", "500"])
        == 2
    )
    assert "field '--threads': expected 1..256, got 0" in capsys.readouterr().err
    assert not out.exists()


def test_selection_prefers_complete_samples():
    # the closest count (205) ran out of tokens: the closest complete sample (190) is shown instead
    assert pick_sample([150, 190, 260, 205], [True, True, True, False], 200) == (1, SELECT_COMPLETE)
    assert pick_sample([150, 190, 260, 205], [True] * 4, 200) == (3, SELECT_COMPLETE)
    assert pick_sample([150, 210, 190], [False, True, True], 200) == (1, SELECT_COMPLETE)  # tie: earlier
    assert pick_sample([120, 260], [False, True], 130) == (1, SELECT_COMPLETE)  # complete beats closer
    # none finished: the closest of all, and the item says the text is truncated
    assert pick_sample([150, 190, 260], [False] * 3, 200) == (1, SELECT_TRUNCATED)
    assert "truncated" in SELECT_TRUNCATED and "--max-new-tokens" in SELECT_TRUNCATED
    with pytest.raises(ValueError):
        pick_sample([1, 2], [True], 2)


@pytest.fixture
def one_torch_thread():
    """Tiny generation batches run faster on one thread than on cores shared with other jobs."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.slow
def test_generate_with_a_local_model_is_deterministic(tmp_path, one_torch_thread, capsys):
    from scoring_support import save_tiny_llama

    model = save_tiny_llama(tmp_path / "tiny-llama")
    arts = tmp_path / "a.jsonl"
    src = [
        Article(
            "pond",
            "Ducks Return to the Village Pond",
            "Volunteers cleaned the water last spring",
            "The ducks are back. After a year of work by volunteers, the village pond is clean again, "
            "and six families of ducks have moved in.",
            1,
        ),
        Article(
            "clock",
            "Church Clock Runs Again",
            "The bells ring on the hour for the first time in years",
            "The clock on St Anne's tower is working again. A retired watchmaker spent the winter "
            "repairing its gears, and the bells now ring every hour.",
            2,
        ),
    ]
    arts.write_text(
        "".join(
            json.dumps({"id": a.id, "title": a.title, "subtitle": a.subtitle, "article": a.article}) + "\n" for a in src
        )
    )
    outs = []
    for name in ("one.jsonl", "two.jsonl"):
        out = tmp_path / name
        assert (
            main(
                [
                    "study",
                    "generate",
                    "--articles",
                    str(arts),
                    "--out",
                    str(out),
                    "--length",
                    "500",
                    "--samples",
                    "3",
                    "--max-new-tokens",
                    "6",
                    "--seed",
                    "3",
                    "--quiet",
                    "--device",
                    "cpu",
                    "--model",
                    str(model),
                    "--bos",
                ]
            )
            == 0
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]  # same seed, same bytes
    assert "truncated" in capsys.readouterr().out  # 6 tokens: no sample can finish an article
    items = [json.loads(x) for x in outs[0].decode().splitlines()]
    assert [(it["article_id"], it["condition"]) for it in items] == [
        (src[0].id, "model"),
        (src[0].id, "control"),
        (src[1].id, "model"),
        (src[1].id, "control"),
    ]
    for it in items:
        assert len(it["samples_words"]) == len(it["samples_complete"]) == 3
        assert (it["chosen_sample"], it["selection"]) == pick_sample(
            it["samples_words"], it["samples_complete"], it["human"]["words"]
        )
        assert it["machine"]["complete"] == it["samples_complete"][it["chosen_sample"]]
        assert it["machine"]["words"] == it["samples_words"][it["chosen_sample"]] == word_count(it["machine"]["text"])
        assert it["human"]["words"] == word_count(it["human"]["text"])
        backend = it["backend"]  # which weights, how they ran
        assert len(backend["fingerprint"]) == 64 and backend["bos"] is True
        assert (backend["name"], backend["dtype"], backend["device"]) == (it["model"], "float32", "cpu")
        if it["condition"] == "control":
            assert it["context_ids"] == [] and it["sampling"]["temperature"] == 1.6
        else:
            assert it["context_ids"] == [a.id for a in src if a.id != it["article_id"]]
    assert not any(it["machine"]["complete"] for it in items)
    assert {it["selection"] for it in items} == {SELECT_TRUNCATED}
    # another seed draws other samples
    assert (
        main(
            [
                "study",
                "generate",
                "--articles",
                str(arts),
                "--out",
                str(tmp_path / "three.jsonl"),
                "--length",
                "500",
                "--samples",
                "3",
                "--max-new-tokens",
                "6",
                "--seed",
                "4",
                "--quiet",
                "--device",
                "cpu",
                "--model",
                str(model),
                "--bos",
            ]
        )
        == 0
    )
    assert (tmp_path / "three.jsonl").read_bytes() != outs[0]
    # the file feeds the rating app
    assert len(load_items(tmp_path / "one.jsonl")) == 4


@pytest.mark.slow
def test_generate_under_a_chat_template_asks_user_turns_and_records_them(tmp_path, one_torch_thread):
    """--chat-template / --system-prompt on study generate: each prompt is rendered as one user turn
    (the system turn first) before sampling, and every item records the template and prompt hashes."""
    import hashlib

    from scoring_support import save_tiny_llama, write_turns_template

    from synthprobe.backends import load_backend
    from synthprobe.backends.chat import ChatSetup
    from synthprobe.backends.decoding import generate
    from synthprobe.study.articles import STOP
    from synthprobe.study.generate import prompt_for

    model = save_tiny_llama(tmp_path / "tiny-llama")
    src = [
        Article("pond", "Ducks Return", "The pond is clean", "The ducks are back at the pond.", 1),
        Article("clock", "Clock Runs", "The bells ring again", "The clock on the tower works again.", 2),
    ]
    arts = tmp_path / "a.jsonl"
    arts.write_text(
        "".join(
            json.dumps({"id": a.id, "title": a.title, "subtitle": a.subtitle, "article": a.article}) + "\n" for a in src
        )
    )
    template = write_turns_template(tmp_path / "turns.jinja")
    out = tmp_path / "chat.jsonl"
    assert (
        main(
            [
                "study",
                "generate",
                "--articles",
                str(arts),
                "--out",
                str(out),
                "--length",
                "500",
                "--conditions",
                "model",
                "--samples",
                "2",
                "--max-new-tokens",
                "5",
                "--seed",
                "3",
                "--quiet",
                "--device",
                "cpu",
                "--model",
                str(model),
                "--chat-template",
                str(template),
                "--system-prompt",
                "Write news.",
            ]
        )
        == 0
    )
    items = [json.loads(x) for x in out.read_text().splitlines()]
    assert [it["chat"] for it in items] == [
        {
            "chat_template": str(template),
            "chat_template_name": "turns.jinja",
            "chat_template_sha256": hashlib.sha256(template.read_bytes()).hexdigest(),
            "system_prompt": "Write news.",
            "system_prompt_sha256": hashlib.sha256(b"Write news.").hexdigest(),
            "fewshot_layout": "single-turn",
        }
    ] * 2
    # the same samples as sampling the rendered conversation directly
    lm = load_backend(str(model), device="cpu", progress=False)
    setup = ChatSetup(source=str(template), text=template.read_text(), system_prompt="Write news.")
    settings = Settings(length=500, samples=2, max_new_tokens=5, seed=3)
    articles = load_articles(arts, minimum=2)
    for i, it in enumerate(items):
        prompt, _ = prompt_for(articles, i, "model", settings)
        (want,) = generate(lm, [prompt], settings.sampling("model"), seeds=[it["sample_seed"]], stop=STOP, chat=setup)
        assert it["samples_words"] == [word_count(g.text if g.finished else trim_to_sentence(g.text)) for g in want]
    assert len(load_items(out)) == 2
