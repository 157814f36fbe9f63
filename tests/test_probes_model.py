"""The probes end to end with the embedded model (small item files, short answers)."""

from __future__ import annotations

import json

import pytest

from synthprobe.cli import main
from synthprobe.probes import novel_words
from synthprobe.probes.items import load_novel_words
from synthprobe.probes.lm import Sampling, load_lm

pytestmark = pytest.mark.slow

WORDS = [
    {"word": "brindlewick", "pos": "noun", "definition": "a small lantern made from a hollowed-out gourd",
     "sentence": "We hung a brindlewick on the porch so the path would glow."},
    {"word": "snorvel", "pos": "verb", "definition": "hum loudly while eating"},
    {"word": "grumbast", "pos": "verb-object", "definition": "polish it with sand"},
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
def lm():
    return load_lm("smollm2-135m-instruct", device="cpu")


def test_novel_words_chain_and_seeded_sampling(lm, tmp_path):
    p = tmp_path / "words.jsonl"
    p.write_text("".join(json.dumps(w) + "\n" for w in WORDS))
    words = load_novel_words(p)
    sampling = Sampling(temperature=0.9, top_p=0.95, n=2, max_new_tokens=10)
    first = novel_words.run(lm, words, sampling, seed=11, progress=False)
    again = novel_words.run(lm, words, sampling, seed=11, progress=False)
    assert first == again                                            # same seed, same samples
    r1, r2 = first["results"]
    assert [len(r["generations"]) for r in (r1, r2)] == [2, 2]
    assert all("\n" not in g for r in (r1, r2) for g in r["generations"])
    # the second prompt holds the first word's definition followed by the model's first answer
    assert r2["prompt"] == novel_words.build_prompt([(words[0], words[0].sentence), (words[1], r1["generations"][0])],
                                                    words[2])
    assert r1["uses_word"] == [novel_words.used_form(g, "snorvel") is not None for g in r1["generations"]]


def test_probe_cli_writes_json_and_html(tmp_path, capsys):
    g = tmp_path / "g.jsonl"
    g.write_text('{"input": "I eated the apple.", "output": "I ate the apple."}\n'
                 '{"input": "She goed home.", "reference": "She went home."}\n'
                 '{"input": "<b>They was</b> here.", "reference": "They were here."}\n')
    out = tmp_path / "report"
    assert main(["probe", "grammar", "--items", str(g), "--out", str(out), "--max-new-tokens", "8", "--quiet",
                 "--device", "cpu"]) == 0
    doc = json.loads((out / "grammar.json").read_text())
    assert doc["probe"] == "grammar" and doc["summary"]["scored"] == 2
    assert [r["prompt"].splitlines()[-2] for r in doc["results"]] == [
        "Poor English input: She goed home.", "Poor English input: <b>They was</b> here."]
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
