"""The probes' generation on real models: a tiny random Llama (fast) and the embedded model (CLI).

Generation goes through synthprobe's backend: greedy runs are the backend's batched greedy
decoding, sampling draws all samples of a prompt in one batch from a seeded torch Generator.
"""

from __future__ import annotations

import json

import pytest
from scoring_support import save_tiny_llama, write_turns_template

from synthprobe.backends import load_backend
from synthprobe.backends.decoding import Sampling, generate
from synthprobe.backends.hf.generate import _accepts, _decode_batch, greedy_generate
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.probes import grammar, novel_words
from synthprobe.probes.items import load_grammar, load_novel_words

pytestmark = pytest.mark.slow

WORDS = [
    {
        "word": "brindlewick",
        "pos": "noun",
        "definition": "a small lantern made from a hollowed-out gourd",
        "sentence": "We hung a brindlewick on the porch so the path would glow.",
    },
    {"word": "snorvel", "pos": "verb", "definition": "hum loudly while eating"},
    {"word": "grumbast", "pos": "verb-object", "definition": "polish it with sand"},
]
GRAMMAR = [
    {"input": "I eated the apple.", "output": "I ate the apple."},
    {"input": "She goed home.", "reference": "She went home."},
    {"input": "They was here.", "reference": "They were here."},
    {"input": "Me and him is late."},
]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny generation batches run faster on one thread than on cores shared with other jobs."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return save_tiny_llama(tmp_path_factory.mktemp("tiny") / "tiny-llama")


@pytest.fixture(scope="module")
def tiny(tiny_folder):
    return load_backend(str(tiny_folder), device="cpu", progress=False)


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_grammar_prompts_are_chained_by_default(tiny, tmp_path):
    items = load_grammar(_jsonl(tmp_path / "g.jsonl", GRAMMAR))
    sampling = Sampling(max_new_tokens=6)
    doc = grammar.run(tiny, items, sampling, seed=0, progress=False)
    r1, r2, r3 = doc["results"]
    a1, a2 = r1["generations"][0], r2["generations"][0]
    assert a1 and a2
    assert r3["prompt"] == (
        "Poor English input: I eated the apple.\n"
        "Good English output: I ate the apple.\n"
        "Poor English input: She goed home.\n"
        f"Good English output: {a1}\n"
        "Poor English input: They was here.\n"
        f"Good English output: {a2}\n"
        "Poor English input: Me and him is late.\n"
        "Good English output:"
    )
    assert [r["earlier_answers"] for r in doc["results"]] == [0, 1, 2] and doc["summary"]["chained"] is True
    # --no-chain: every item after the demonstrations only, decoded in one batch by the backend
    free = grammar.run(tiny, items, sampling, seed=0, chain=False, progress=False)
    assert [r["prompt"] for r in free["results"]] == [grammar.build_prompt(items[:1], g) for g in items[1:]]
    want = tiny.generate([r["prompt"] for r in free["results"]], 6, "\n", progress=False, skip_leading_whitespace=True)
    assert [r["generations"][0] for r in free["results"]] == [w.strip() for w in want]
    assert free["results"][0] == {**r1, "earlier_answers": 0}  # the first prompt is the same either way


def test_greedy_runs_use_the_backend_and_bos(tiny, tiny_folder):
    prompts = ['A "zib" is a cat. An example of a sentence that uses the word zib is:\n', "Hello", "1, 2, 3,"]
    got = generate(tiny, prompts, Sampling(max_new_tokens=5), stop=["\n"])
    assert [len(r) for r in got] == [1, 1, 1]
    plain = greedy_generate(
        tiny.model,
        tiny.tokenizer,
        prompts,
        max_new_tokens=5,
        stop="\n",
        batch_size=1,
        progress=False,
        skip_leading_whitespace=True,
    )
    assert [r[0].text for r in got] == [p.strip() for p in plain]
    # every continuation here used the whole budget without a line break or EOS: truncated
    assert all(r[0].finish == "length" and not r[0].finished and r[0].n_tokens == 5 for r in got)
    with_bos = load_backend(str(tiny_folder), device="cpu", bos=True, progress=False)
    assert with_bos.describe()["bos"] is True and with_bos.fingerprint == tiny.fingerprint
    bos_texts = [r[0].text for r in generate(with_bos, prompts, Sampling(max_new_tokens=5), stop=["\n"])]
    want = greedy_generate(
        tiny.model,
        tiny.tokenizer,
        prompts,
        max_new_tokens=5,
        stop="\n",
        progress=False,
        bos_id=tiny.tokenizer.bos_token_id,
        skip_leading_whitespace=True,
    )
    assert bos_texts == [w.strip() for w in want] and bos_texts != [r[0].text for r in got]


def test_sampling_is_batched_seeded_and_reproducible(tiny):
    sampling = Sampling(temperature=1.0, top_p=0.9, n=4, max_new_tokens=6)
    prompts = ["Title: Ducks Return\nSubtitle: The pond is clean\nArticle:", "Short"]
    first = generate(tiny, prompts, sampling, seeds=[7, 8])
    assert first == generate(tiny, prompts, sampling, seeds=[7, 8])  # same seeds, same samples
    assert [len(r) for r in first] == [4, 4]
    assert len({g.text for g in first[0]}) > 1  # four different samples
    assert generate(tiny, prompts[:1], sampling, seeds=[7]) == first[:1]  # not tied to its batch-mates
    assert generate(tiny, prompts[:1], sampling, seeds=[9]) != first[:1]
    greedy = generate(tiny, prompts[:1], Sampling(max_new_tokens=6))[0][0].text
    cold = generate(tiny, prompts[:1], Sampling(temperature=1e-4, n=2, max_new_tokens=6), seeds=[1])[0]
    assert [g.text for g in cold] == [greedy, greedy]  # temperature -> 0 is greedy
    with pytest.raises(InputError, match="exceeds the model's 512 positions"):
        generate(tiny, ["word " * 600], sampling, seeds=[1])


def test_finish_reasons_and_leading_whitespace(tiny):
    """The decoding loop says why each row ended; leading whitespace does not end an answer."""
    tok = tiny.tokenizer
    nl, eos = tok("\n", add_special_tokens=False).input_ids, tok.eos_token_id
    answer = tok(" She did it.", add_special_tokens=False).input_ids
    script = {
        0: nl + answer + nl + answer,  # newline first, then an answer and a line break
        1: answer + [eos] + answer,  # an answer, then end-of-sequence
        2: answer + answer + answer,
    }  # runs out of budget

    def scripted(logits, rows, live):
        step = scripted.step
        scripted.step += 1
        return [script[r][step] for r in rows]

    prompt = tok("Q:", add_special_tokens=False).input_ids
    kw = dict(
        device="cpu",
        pad=0,
        eos={eos},
        stops=("\n",),
        max_new_tokens=len(answer) * 2,
        keep_last=True,
        cache_kw="cache" if _accepts(tiny.model, "cache") else "past_key_values",
    )
    scripted.step = 0
    skip = _decode_batch(tiny.model, tok, [prompt] * 3, choose=scripted, skip_leading_whitespace=True, **kw)
    assert [(g.text, g.finish) for g in skip] == [
        ("She did it.", "stop"),
        ("She did it.", "eos"),
        ("She did it. She did it.", "length"),
    ]
    assert [g.finished for g in skip] == [True, True, False]
    assert [g.n_tokens for g in skip] == [len(answer) + 2, len(answer), 2 * len(answer)]
    scripted.step = 0
    plain = _decode_batch(tiny.model, tok, [prompt] * 3, choose=scripted, **kw)
    assert [(g.text, g.finish) for g in plain][0] == ("", "stop")  # without skipping: an empty answer


def test_novel_words_chain_and_seeded_sampling(tiny, tmp_path):
    words = load_novel_words(_jsonl(tmp_path / "words.jsonl", WORDS))
    sampling = Sampling(temperature=0.9, top_p=0.95, n=2, max_new_tokens=10)
    first = novel_words.run(tiny, words, sampling, seed=11, progress=False)
    again = novel_words.run(tiny, words, sampling, seed=11, progress=False)
    assert first == again  # same seed, same samples
    r1, r2 = first["results"]
    assert [len(r["generations"]) for r in (r1, r2)] == [2, 2] and len(r1["finished"]) == 2
    assert all("\n" not in g for r in (r1, r2) for g in r["generations"])
    # the second prompt holds the first word's definition followed by the model's first answer
    assert r2["prompt"] == novel_words.build_prompt(
        [(words[0], words[0].sentence), (words[1], r1["generations"][0])], words[2]
    )
    assert r1["uses_word"] == [novel_words.used_form(g, "snorvel") is not None for g in r1["generations"]]
    assert first["summary"]["truncated_generations"] == sum(not f for r in (r1, r2) for f in r["finished"])


def test_probe_cli_writes_json_and_html(tmp_path, capsys):
    g = tmp_path / "g.jsonl"
    g.write_text(
        '{"input": "I eated the apple.", "output": "I ate the apple."}\n'
        '{"input": "She goed home.", "reference": "She went home."}\n'
        '{"input": "<b>They was</b> here.", "reference": "They were here."}\n'
    )
    out = tmp_path / "report"
    assert (
        main(
            [
                "probe",
                "grammar",
                "--items",
                str(g),
                "--out",
                str(out),
                "--max-new-tokens",
                "8",
                "--quiet",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    doc = json.loads((out / "grammar.json").read_text())
    assert doc["probe"] == "grammar" and doc["summary"]["scored"] == 2 and doc["summary"]["chained"] is True
    assert [r["prompt"].splitlines()[-2] for r in doc["results"]] == [
        "Poor English input: She goed home.",
        "Poor English input: <b>They was</b> here.",
    ]
    # chained: the second prompt carries the model's first correction
    assert doc["results"][1]["prompt"].splitlines()[3] == f"Good English output: {doc['results'][0]['generations'][0]}"
    backend = doc["backend"]
    assert len(backend["fingerprint"]) == 64 and (backend["dtype"], backend["device"]) == ("float32", "cpu")
    assert backend["name"] == doc["model"] and backend["bos"] is False
    assert 0 <= doc["summary"]["chrf"] <= 100
    em = [r["exact_match"][0] for r in doc["results"]]
    assert doc["summary"]["exact_match"] == sum(em)
    html = (out / "grammar.html").read_text()
    assert "&lt;b&gt;They was&lt;/b&gt;" in html and "<b>They was</b>" not in html
    assert "chrF" in capsys.readouterr().out
    # a bad item file fails with status 2 and leaves the earlier report untouched
    before = (out / "grammar.json").read_bytes()
    g.write_text('{"input": "x", "output": "y"}\n{"input": 5}\n')
    assert main(["probe", "grammar", "--items", str(g), "--out", str(out)]) == 2
    assert f"{g}:2: field 'input'" in capsys.readouterr().err
    assert (out / "grammar.json").read_bytes() == before


@pytest.mark.parametrize("copy_cache", [True, False])
def test_samples_share_one_pass_over_the_prompt(tiny, monkeypatch, copy_cache):
    """Reading a prompt once and copying its cache to n rows decodes exactly like n separate rows
    (also when the cache cannot be copied and the rows are read again)."""
    if not copy_cache:
        from transformers.cache_utils import Cache

        monkeypatch.delattr(Cache, "batch_repeat_interleave")
    tok, model = tiny.tokenizer, tiny.model
    p1 = tok("Title: Ducks Return\nSubtitle: The pond is clean\nArticle:", add_special_tokens=False).input_ids
    p2 = tok("Short one", add_special_tokens=False).input_ids
    kw = dict(
        device="cpu",
        pad=0,
        eos={tok.eos_token_id},
        stops=(),
        max_new_tokens=8,
        keep_last=True,
        cache_kw="cache" if _accepts(model, "cache") else "past_key_values",
    )
    shared = _decode_batch(model, tok, [p1, p2], repeat=3, **kw)
    rows = _decode_batch(model, tok, [p1, p1, p1, p2, p2, p2], **kw)
    assert [g.text for g in shared] == [g.text for g in rows]
    assert len({g.text for g in shared}) == 2 and all(g.n_tokens == 8 for g in shared)


def test_shared_prefix_is_read_once_and_decodes_as_each_prompt_alone(tiny, monkeypatch):
    """Prompts that open alike (a chat template's system turn, the same demonstrations) have their
    common tokens read once and copied to every row: the continuations are those of each prompt
    decoded alone, and the first forward pass reads the shared tokens only once."""
    from synthprobe.backends.hf.generate import shared_prefix_length

    tok, model = tiny.tokenizer, tiny.model
    head = "System: answer briefly.\nUser: Title: Ducks Return\nSubtitle: "
    texts = [head + t for t in ("The pond is clean\nArticle:", "Short", "The pond is dirty, again\nArticle:")]
    batch = [tok(t, add_special_tokens=False).input_ids for t in texts]
    shared = shared_prefix_length(batch)
    assert shared >= len(tok(head, add_special_tokens=False).input_ids) - 1 and shared > 5
    assert shared_prefix_length([batch[0]]) == 0 and shared_prefix_length([batch[0], batch[0]]) == len(batch[0]) - 1
    kw = dict(
        device="cpu",
        pad=0,
        eos={tok.eos_token_id},
        stops=("\n",),
        max_new_tokens=8,
        keep_last=True,
        cache_kw="cache" if _accepts(model, "cache") else "past_key_values",
    )
    seen = []
    forward = model.forward

    def spy(*args, **kwargs):
        seen.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    alone = [_decode_batch(model, tok, [ids], **kw)[0] for ids in batch]
    assert any(g.n_tokens > 1 for g in alone)
    monkeypatch.setattr(model, "forward", spy)
    together = _decode_batch(model, tok, batch, **kw)
    assert [(g.text, g.finish, g.n_tokens) for g in together] == [(g.text, g.finish, g.n_tokens) for g in alone]
    assert seen[0] == (1, shared)  # the common opening, once
    assert seen[1] == (3, max(len(ids) for ids in batch) - shared)  # then each prompt's own tokens


def test_probe_asks_each_prompt_as_a_user_turn_under_a_chat_template(tmp_path, tiny, tiny_folder):
    """--chat-template / --system-prompt on a probe: each prompt is rendered as one user turn (the
    system turn first) before decoding, and the report records the template and prompt hashes."""
    import hashlib

    from synthprobe.backends.chat import ChatSetup

    g = _jsonl(
        tmp_path / "g.jsonl",
        [
            {"input": "I eated the apple.", "output": "I ate the apple."},
            {"input": "She goed home.", "reference": "She went home."},
            {"input": "They was here.", "reference": "They were here."},
        ],
    )
    template = write_turns_template(tmp_path / "turns.jinja")
    out = tmp_path / "report"
    base = [
        "probe",
        "grammar",
        "--model",
        str(tiny_folder),
        "--items",
        str(g),
        "--max-new-tokens",
        "6",
        "--quiet",
        "--device",
        "cpu",
        "--no-chain",
    ]
    assert main([*base, "--out", str(out), "--chat-template", str(template), "--system-prompt", "Fix it."]) == 0
    doc = json.loads((out / "grammar.json").read_text())
    assert doc["chat"] == {
        "chat_template": str(template),
        "chat_template_name": "turns.jinja",
        "chat_template_sha256": hashlib.sha256(template.read_bytes()).hexdigest(),
        "system_prompt": "Fix it.",
        "system_prompt_sha256": hashlib.sha256(b"Fix it.").hexdigest(),
        "fewshot_layout": "single-turn",
    }
    setup = ChatSetup(source=str(template), text=template.read_text(), system_prompt="Fix it.")
    prompts = [r["prompt"] for r in doc["results"]]
    rendered = tiny.render_chat([setup.conversation(p) for p in prompts], template=setup.template_arg)
    assert rendered[0].startswith("<system>Fix it.</system>\n<user>Poor English input:")
    assert rendered[0].endswith("</user>\n<assistant>")
    want = tiny.generate(rendered, 6, "\n", progress=False, skip_leading_whitespace=True)
    assert [r["generations"][0] for r in doc["results"]] == [w.strip() for w in want]
    plain = tmp_path / "plain"
    assert main([*base, "--out", str(plain)]) == 0
    plain_doc = json.loads((plain / "grammar.json").read_text())
    assert plain_doc["chat"]["chat_template"] == "none" and plain_doc["chat"]["fewshot_layout"] == "plain"
    assert main([*base, "--out", str(tmp_path / "bad"), "--system-prompt", "Fix it."]) == 2
    assert not (tmp_path / "bad").exists()
