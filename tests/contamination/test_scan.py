"""`synthprobe contamination`: planted corpora in every format → exactly the planted items flagged,
at the right place; bounded memory; bad input; clean-subset rescoring; the report section."""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.contamination import corpus as cp
from synthprobe.contamination import ngrams as ng
from synthprobe.contamination.tasks import load_task

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"
FILLER = [
    "lorem",
    "ipsum",
    "dolor",
    "sitam",
    "consect",
    "adipis",
    "elitra",
    "seddo",
    "eiusmo",
    "tempori",
    "incidu",
    "labora",
    "magnal",
    "aliqua",
    "veniam",
    "nostru",
    "exerci",
    "ullamc",
]


def filler(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(n))


def unique_window(tokens_of: list[list[str]], i: int, n: int, skip: int = 0) -> list[str]:
    """A window of n tokens of item i found in no other item's prompt."""
    others = set()
    for j, toks in enumerate(tokens_of):
        if j != i:
            others.update(tuple(toks[k : k + n]) for k in range(len(toks) - n + 1))
    toks = tokens_of[i]
    found = [toks[k : k + n] for k in range(len(toks) - n + 1) if tuple(toks[k : k + n]) not in others]
    return found[skip]


@pytest.fixture(scope="module")
def plants(tmp_path_factory):
    """The tasks (release + a GPT-3 3D+ file), the planted documents and the expected flags."""
    tmp = tmp_path_factory.mktemp("tasks")
    gpt3 = tmp / "three_digit_addition.jsonl"
    assert main(["build", "arithmetic_3da", "--out", str(gpt3)]) == 0
    deep = load_task(str(RELEASE))
    g = load_task(str(gpt3))
    toks = [ng.tokens(t.prompt) for t in deep.texts]
    rng = random.Random(7)
    A, B, C, MISS = 3, 11, 20, 30
    b13 = unique_window(toks, B, 13)
    c8 = unique_window(toks, C, 8)
    miss = unique_window(toks, MISS, 13)
    miss = miss[:6] + ["ullamc"] + miss[7:]  # a 13-gram broken in the middle: no 8-gram left
    D, E, F = 4, 9, 12
    pd, pe, pf = g.texts[D].problem, g.texts[E].problem, g.texts[F].problem
    prompt_a = deep.texts[A].prompt
    half = len(prompt_a) // 2
    cut = prompt_a.rfind(" ", 0, half)
    docs = [filler(rng, 40) for _ in range(60)]
    # (document index, text); a plain-text corpus writes each document as one line, except the
    # first plant, whose prompt is broken over two lines (n-grams run across lines in text files)
    planted = {
        5: f"{filler(rng, 5)} {prompt_a[:cut]}\n{prompt_a[cut + 1 :]} {filler(rng, 5)}",
        12: f"{filler(rng, 9)} {' '.join(b13).upper()}, {filler(rng, 3)}",
        20: f"{filler(rng, 4)} {' '.join(c8)} {filler(rng, 4)}",
        27: f"{filler(rng, 4)} {' '.join(miss)} {filler(rng, 4)}",
        33: f"{filler(rng, 4)} so what is {pd[0]} plus {pd[2]}? {filler(rng, 4)}",
        41: f"{filler(rng, 4)} ({pe[0]}+{pe[2]} = ?) {filler(rng, 4)}",
        47: f"{filler(rng, 4)} {pf[0]} + {pf[2]} and 1{pf[0]} plus {pf[2]} {filler(rng, 4)}",
    }
    for k, text in planted.items():
        docs[k] = text
    same = lambda p: {i for i, t in enumerate(g.texts) if t.problem == p}  # noqa: E731
    expected = {
        "deeparithmark": {A: {"ngram13", "ngram8"}, B: {"ngram13", "ngram8"}, C: {"ngram8"}},
        "arithmetic_3da": {**{i: {"arithmetic"} for i in same(pd)}, **{i: {"arithmetic"} for i in same(pe)}},
    }
    where = {
        ("deeparithmark", A): 5,
        ("deeparithmark", B): 12,
        ("deeparithmark", C): 20,
        **{("arithmetic_3da", i): 33 for i in same(pd)},
        **{("arithmetic_3da", i): 41 for i in same(pe)},
    }
    return {
        "release": str(RELEASE),
        "gpt3": str(gpt3),
        "docs": docs,
        "expected": expected,
        "where": where,
        "deep": deep,
        "g": g,
    }


def write_corpus(fmt: str, docs: list[str], folder: Path) -> tuple[Path, callable]:
    """The documents in one format; returns the path and doc index → expected location."""
    folder.mkdir(parents=True, exist_ok=True)
    if fmt == "text":
        path = folder / "corpus.txt"
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
        starts, line = [], 1
        for d in docs:
            starts.append(line)
            line += d.count("\n") + 1
        return path, lambda k: {"line": starts[k]}
    if fmt == "jsonl":
        path = folder / "corpus.jsonl"
        path.write_text("".join(json.dumps({"id": k, "text": d}) + "\n" for k, d in enumerate(docs)), encoding="utf-8")
        return path, lambda k: {"line": k + 1}
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / "corpus.parquet"
        pq.write_table(pa.table({"id": list(range(len(docs))), "text": docs}), path, row_group_size=16)
        return path, lambda k: {"row": k}
    from datasets import Dataset

    path = folder / "saved"
    Dataset.from_dict({"text": docs, "id": list(range(len(docs)))}).save_to_disk(str(path))
    return path, lambda k: {"row": k}


def flags(doc: dict) -> dict:
    out = {}
    for t in doc["contamination"]["tasks"]:
        out[t["task"]] = {it["index"]: {k for k in ("ngram13", "ngram8", "arithmetic") if it[k]} for it in t["items"]}
    return out


def run_check(tmp_path: Path, corpus: list[str], plants, *extra: str, name: str = "out.json") -> dict:
    out = tmp_path / name
    rc = main(
        [
            "contamination",
            *sum((["--corpus", c] for c in corpus), []),
            "--task",
            plants["release"],
            "--task",
            plants["gpt3"],
            "--output",
            str(out),
            "--no-progress",
            *extra,
        ]
    )
    assert rc == 0
    return json.loads(out.read_text("utf-8"))


@pytest.mark.parametrize("fmt", ["text", "jsonl", "parquet", "datasets"])
def test_exactly_the_planted_items_are_flagged(fmt, plants, tmp_path):
    path, loc = write_corpus(fmt, plants["docs"], tmp_path / fmt)
    doc = run_check(tmp_path, [str(path)], plants)
    assert flags(doc) == plants["expected"]
    for t in doc["contamination"]["tasks"]:
        for it in t["items"]:
            hit = next(it[k] for k in ("ngram13", "ngram8", "arithmetic") if it[k])
            want = loc(plants["where"][(t["task"], it["index"])])
            assert {k: hit[k] for k in want} == want
            if fmt == "datasets":
                assert hit["file"].endswith(".arrow")
            else:
                assert hit["file"] == str(path)
    by = {t["task"]: t for t in doc["contamination"]["tasks"]}
    deep, g = by["deeparithmark"], by["arithmetic_3da"]
    assert deep["contaminated"]["ngram13"]["k"] == 2 and deep["contaminated"]["ngram8"]["k"] == 3
    assert deep["contaminated"]["arithmetic"] is None  # no A op B problem in a word problem
    assert g["contaminated"]["ngram13"] is None  # "q what is a plus b a": 7 tokens
    assert g["contaminated"]["arithmetic"]["k"] == len(plants["expected"]["arithmetic_3da"])
    lo, hi = deep["contaminated"]["any"]["ci95"]
    assert lo < 3 / 1000 < hi
    forms = {it["arithmetic"]["form"] for it in g["items"]}
    assert any(f.endswith(" =") and "+" in f for f in forms) and any("plus" in f for f in forms)


def test_template_ngrams_are_not_evidence(plants, tmp_path):
    """A corpus holding only the template text every item of a family shares flags nothing."""
    deep = plants["deep"]
    toks = [ng.tokens(t.prompt) for t in deep.texts]
    counts: dict[tuple, set] = {}
    for i, t in enumerate(toks):
        for k in range(len(t) - 7):
            counts.setdefault(tuple(t[k : k + 8]), set()).add(i)
    shared = [g for g, owners in counts.items() if len(owners) > 1][:50]
    assert shared
    path = tmp_path / "templates.jsonl"  # one record each: no n-gram spans two
    path.write_text("".join(json.dumps({"text": " ".join(g)}) + "\n" for g in shared), encoding="utf-8")
    doc = run_check(tmp_path, [str(path)], plants)
    assert flags(doc) == {"deeparithmark": {}, "arithmetic_3da": {}}
    assert doc["contamination"]["tasks"][0]["ngrams"]["8"]["template"] > 0


def test_results_do_not_depend_on_shards(plants, tmp_path):
    """Tiny shards cut the text file between every few lines: same flags, same locations."""
    path, _ = write_corpus("text", plants["docs"], tmp_path / "t")
    jpath, _ = write_corpus("jsonl", plants["docs"], tmp_path / "j")
    one = run_check(tmp_path, [str(path), str(jpath)], plants, name="one.json")
    many = run_check(tmp_path, [str(path), str(jpath)], plants, "--shard-bytes", "1024", name="many.json")
    assert many["contamination"]["run"]["shards"] > 10
    assert one["contamination"]["tasks"] == many["contamination"]["tasks"]
    assert one["contamination"]["corpus"]["records"] == many["contamination"]["corpus"]["records"]


def test_one_huge_line_is_read_in_bounded_memory(plants, tmp_path, monkeypatch):
    """An 8 MB text file that is one line: read in 64 KiB pieces, 8 Ki-token buffers; a prompt
    that straddles a piece boundary and one far into the line are found; the scan's peak memory
    is set by those two bounds, a small fraction of the line."""
    monkeypatch.setattr(cp, "PIECE_BYTES", 64 << 10)
    monkeypatch.setattr(cp, "BUFFER_TOKENS", 8 << 10)
    deep = plants["deep"]
    rng = random.Random(3)
    block = filler(rng, 20000)  # ~150 KB, no item n-gram in it
    a, b = deep.texts[3].prompt, deep.texts[7].prompt
    path = tmp_path / "huge.txt"
    with open(path, "w", encoding="utf-8") as fh:
        head = (block * 2)[: (64 << 10) - len(a) // 2]  # item 3 straddles byte 65536
        fh.write(head + a + " ")
        while fh.tell() < 8_000_000:
            fh.write(block + " ")
        fh.write("x" * 200_000 + " " + b + " " + block)  # a 200 KB "token"; no newline at all
    assert path.stat().st_size > 8_000_000
    index, _ = ng.build_index([deep.texts])
    files = cp.discover([str(path)])
    shards = cp.shards(files)
    tracemalloc.start()
    try:
        results = [cp.scan_shard(s, index) for s in shards]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    hits = {(t, i) for r in results for t, i, _rel, _ in r["hits"]["ngram13"]}
    assert hits == {(0, 3), (0, 7)}
    assert sum(r["lines"] for r in results) == 1
    assert peak < 2_500_000, f"peak {peak:,} bytes for an {path.stat().st_size:,}-byte line"


def test_overlong_jsonl_record_is_skipped_and_listed(plants, tmp_path, capsys):
    deep = plants["deep"]
    path = tmp_path / "c.jsonl"
    rows = [{"text": "x " * 5000}, {"text": deep.texts[3].prompt}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    doc = run_check(tmp_path, [str(path)], plants, "--max-record-bytes", "2048")
    assert flags(doc)["deeparithmark"] == {3: {"ngram13", "ngram8"}}
    item = doc["contamination"]["tasks"][0]["items"][0]
    assert item["ngram13"]["line"] == 2
    skipped = doc["contamination"]["corpus"]["skipped"]
    assert [(s["line"], s["bytes"]) for s in skipped] == [(1, len(json.dumps(rows[0])) + 1)]
    assert "c.jsonl:1: record over 2,048 bytes; not scanned" in capsys.readouterr().err


def _bad_cases(tmp: Path, plants) -> list[tuple[list[str], str]]:
    good = tmp / "good.txt"
    good.write_text("hello\n", encoding="utf-8")
    nofield = tmp / "nofield.jsonl"
    nofield.write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf-8")
    badjson = tmp / "bad.jsonl"
    badjson.write_text('{"text": "a"}\n{"text": \n', encoding="utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    nocol = tmp / "nocol.parquet"
    pq.write_table(pa.table({"body": ["a"]}), nocol)
    exists = tmp / "exists.json"
    exists.write_text("{}", encoding="utf-8")
    other_scores = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
    t = ["--task", plants["release"]]
    return [
        (["--corpus", str(tmp / "missing.txt"), *t], "missing.txt: field '--corpus': does not exist"),
        (["--corpus", str(nofield), *t], "nofield.jsonl:2: field 'text': expected a string"),
        (["--corpus", str(badjson), *t], "bad.jsonl:2"),
        (["--corpus", str(nocol), *t], "nocol.parquet: field '--text-field': has no column 'text'"),
        (["--corpus", str(good), "--task", str(good)], "good.txt"),
        (["--corpus", str(good), *t, "--scores", str(other_scores)], "holds no scores for the checked tasks"),
        (["--corpus", str(good), *t, "--ray-address", "auto"], "given without --ray"),
        (["--corpus", str(good), "--task", plants["release"], "--output", str(exists)], "already exists"),
        (["--corpus", str(good), *t, "--output", plants["release"]], "refusing to overwrite an input"),
    ]


def test_bad_input_exits_2_and_writes_nothing(plants, tmp_path, capsys):
    for args, message in _bad_cases(tmp_path, plants):
        out = tmp_path / "never.json"
        if "--output" not in args:
            args = [*args, "--output", str(out)]
        rc = main(["contamination", *args, "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2, (args, err)
        assert message in err, (message, err)
        assert len(err.strip().splitlines()) == 1, err
        assert not out.exists()
    assert json.loads((tmp_path / "exists.json").read_text()) == {}


def test_clean_subset_rescoring_of_real_scored_files(plants, tmp_path):
    """The committed score files of the embedded model (all 1,000 release items; GPT-3 3D+ on
    the seed-0 pool) rescored without the planted items."""
    path, _ = write_corpus("text", plants["docs"], tmp_path / "t")
    deep_scores = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
    gpt3_scores = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
    doc = run_check(tmp_path, [str(path)], plants, "--scores", str(deep_scores), "--scores", str(gpt3_scores))
    by = {t["task"]: t for t in doc["contamination"]["tasks"]}
    flagged = set(plants["expected"]["deeparithmark"])
    preds = json.loads(deep_scores.read_text())["models"][0]["results"]["deeparithmark"]["predictions"]
    (r,) = by["deeparithmark"]["rescored"]
    assert r["metric"] == "acc_norm" and r["full"]["n"] == 1000 and r["full"]["correct"] == 229
    assert r["clean"]["n"] == 1000 - len(flagged)
    assert r["clean"]["correct"] == sum(p["correct_acc_norm"] for p in preds if int(p["id"]) not in flagged)
    lo, hi = r["clean"]["ci95"]
    assert lo < r["clean"]["accuracy"] < hi
    rows = by["arithmetic_3da"]["rescored"]
    assert [x["setting"] for x in rows] == ["zero", "one", "few"]
    g_flagged = set(plants["expected"]["arithmetic_3da"])
    for x in rows:
        assert x["full"]["n"] - x["clean"]["n"] == len({i for i in g_flagged if i < x["full"]["n"]})


def test_report_renders_the_section(plants, tmp_path):
    path, _ = write_corpus("text", plants["docs"], tmp_path / "t")
    deep_scores = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
    run_check(tmp_path, [str(path)], plants, "--scores", str(deep_scores))
    assert main(["report", str(tmp_path / "out.json"), str(deep_scores), "--out", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "index.html").read_text("utf-8")
    assert '<section id="contamination"><h2>Contamination</h2>' in page
    assert "3/1000 = 0.30 %" in page and "arithmetic_3da (3D+)" in page
    assert '<section id="leaderboard">' in page  # the scores file's own sections stay
    md = (tmp_path / "rep" / "leaderboard.md").read_text("utf-8")
    assert "## Contamination" in md and "| deeparithmark | 1,000 |" in md


@pytest.mark.slow
def test_clean_subset_rescoring_of_fresh_scores(plants, tmp_path):
    """Score the embedded model on 10 release items and 10 items of the 3D+ file (zero-shot),
    plant two of each in a corpus, rescore: the clean subset is the other 8."""
    deep_out, g_out = tmp_path / "deep.json", tmp_path / "g.json"
    assert (
        main(
            [
                "score",
                "deeparithmark",
                "--model",
                "smollm2-135m-instruct",
                "--dtype",
                "float32",
                "--limit",
                "10",
                "--save-predictions",
                "--no-cache",
                "--output",
                str(deep_out),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "score",
                "gpt3",
                "--task-file",
                plants["gpt3"],
                "--shots",
                "zero",
                "--limit",
                "10",
                "--model",
                "smollm2-135m-instruct",
                "--dtype",
                "float32",
                "--save-predictions",
                "--no-cache",
                "--output",
                str(g_out),
            ]
        )
        == 0
    )
    deep, g = plants["deep"], plants["g"]
    lines = [deep.texts[2].prompt, deep.texts[6].prompt]
    lines += [f"{g.texts[i].problem[0]} plus {g.texts[i].problem[2]}" for i in (1, 8)]
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = run_check(tmp_path, [str(corpus)], plants, "--scores", str(deep_out), "--scores", str(g_out))
    by = {t["task"]: t for t in doc["contamination"]["tasks"]}
    preds = json.loads(deep_out.read_text())["models"][0]["results"]["deeparithmark"]["predictions"]
    (r,) = by["deeparithmark"]["rescored"]
    assert (r["full"]["n"], r["clean"]["n"]) == (10, 8)
    assert r["full"]["correct"] == sum(p["correct_acc_norm"] for p in preds)
    assert r["clean"]["correct"] == sum(p["correct_acc_norm"] for p in preds if p["id"] not in ("2", "6"))
    (x,) = by["arithmetic_3da"]["rescored"]
    items = json.loads(g_out.read_text())["models"][0]["results"]["gpt3"]["rows"][0]["items"]
    flagged = {it["index"] for it in by["arithmetic_3da"]["items"]}
    assert {1, 8} <= flagged
    assert x["setting"] == "zero" and x["full"]["n"] == 10
    assert x["clean"]["n"] == 10 - len({i for i in flagged if i < 10})
    assert x["clean"]["correct"] == sum(it["correct"] for it in items if it["index"] not in flagged)


def test_tasks_no_test_can_check_say_so(tmp_path):
    """GPT-3 word items ("\\nlyinevitab =") and one-digit composites ("(2 * 3) + 4", 7 tokens, no
    A op B problem) can be flagged by no test: every share is null, not a reassuring 0 %."""
    cl, dc = tmp_path / "cycle_letters.jsonl", tmp_path / "arithmetic_1dc.jsonl"
    assert main(["build", "cycle_letters", "--out", str(cl)]) == 0
    assert main(["build", "arithmetic_1dc", "--out", str(dc)]) == 0
    corpus = tmp_path / "c.txt"
    corpus.write_text("anything at all\n", encoding="utf-8")
    out = tmp_path / "o.json"
    assert (
        main(
            [
                "contamination",
                "--corpus",
                str(corpus),
                "--task",
                str(cl),
                "--task",
                str(dc),
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    for t in json.loads(out.read_text())["contamination"]["tasks"]:
        assert set(t["contaminated"].values()) == {None}, t["task"]
        assert t["checked"] == {"ngram13": 0, "ngram8": 0, "arithmetic": 0}
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0


def test_help_explains_the_one_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["contamination", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: synthprobe contamination [-h] --corpus PATH --task TASK --output")
    assert "13-gram" in out and "--ray-address" in out and "--scores" in out


def test_a_section_of_an_unknown_version_is_refused(plants, tmp_path, capsys):
    path, _ = write_corpus("text", plants["docs"], tmp_path / "t")
    doc = run_check(tmp_path, [str(path)], plants)
    doc["contamination"]["version"] = 2
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc), encoding="utf-8")
    capsys.readouterr()
    assert main(["report", str(newer), "--out", str(tmp_path / "rep")]) == 2
    assert "newer.json: field 'contamination.version': expected one of [1], got 2" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_a_file_named_twice_is_scanned_once(plants, tmp_path):
    path, _ = write_corpus("jsonl", plants["docs"], tmp_path / "j")
    doc = run_check(tmp_path, [str(path), str(tmp_path / "j"), str(path)], plants)
    assert [f["path"] for f in doc["contamination"]["corpus"]["files"]] == [str(path)]
    assert doc["contamination"]["corpus"]["records"] == len(plants["docs"])
