"""Deep Arithmark selftest: passes on the release and fresh seeds, names the broken check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.build import build, dumps_item
from synthprobe.benchmarks.deeparithmark.checks import ITEM_RULES
from synthprobe.benchmarks.deeparithmark.selftest import selftest
from synthprobe.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def _write(path: Path, items: list[dict]) -> Path:
    path.write_text("".join(dumps_item(o) + "\n" for o in items), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def release_report():
    return selftest(RELEASE)


def test_release_passes_every_check(release_report):
    rep = release_report
    assert rep.ok, rep.table()
    assert rep.n == 1000
    assert rep.check("correct slot balance").figure.startswith("252 / 252 / 248 / 248")
    assert rep.check("answer rank balance").figure.startswith("248 / 252 / 248 / 252")
    assert rep.check("depth tiers").figure.startswith("250 / 250 / 250 / 250")
    assert rep.check("slot × rank × depth grid").figure == "64 cells hold 15–16 items"
    assert "15 templates, 14 topics" in rep.check("composition (template, topic, depth, count)").figure
    names = [c.name for c in rep.checks]
    for title in ITEM_RULES.values():
        assert title in names
    assert any(n.startswith("shortcut: char-3-gram") for n in names)
    table = rep.table()
    assert "FAIL" not in table and table.count("PASS") == len(rep.checks)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fresh")
    out = {}
    for seed, n in ((1, 1000), (2, 200), (3, 200)):
        out[seed] = build(folder / f"s{seed}.jsonl", seed=seed, n=n, progress=False).path
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_other_seeds_pass(fresh, seed):
    rep = selftest(fresh[seed])
    assert rep.ok, rep.table()


def test_scaled_file_expects_scaled_figures(fresh):
    rep = selftest(fresh[2], classifier=False)
    assert rep.check("depth tiers").figure.startswith("50 / 50 / 50 / 50")
    assert rep.check("correct slot balance").figure.startswith("52 / 52 / 48 / 48")
    assert "scaled to 200" in rep.check("composition (template, topic, depth, count)").figure


# -- corrupted copies --------------------------------------------------------------------


@pytest.fixture
def release_items():
    return _items(RELEASE)


def _first(items, pred):
    for i, o in enumerate(items):
        if pred(o):
            return i, o
    raise AssertionError("no item matches")


def _failed(tmp_path, items, **kw):
    rep = selftest(_write(tmp_path / "bad.jsonl", items), classifier=False, **kw)
    assert not rep.ok
    return set(rep.failed), rep


def _count_item(o):
    return ":" not in o["metadata"]["answer"]


def test_plus_minus_one_decoy_is_caught(tmp_path, release_items):
    i, o = _first(release_items, _count_item)
    md, lab = o["metadata"], int(o["label"])
    gold = md["option_values"][lab]
    j = (lab + 1) % 4
    old = md["option_values"][j]
    md["option_values"][j] = gold + 1
    o["endings"][j] = o["endings"][j].replace(str(old), str(gold + 1), 1)
    failed, rep = _failed(tmp_path, release_items)
    assert ITEM_RULES["pm1"] in failed
    assert any(f"line {i + 1}:" in d for d in rep.check(ITEM_RULES["pm1"]).details)


def test_wrong_step_is_caught(tmp_path, release_items):
    i, o = _first(release_items, lambda o: " + " in o["metadata"]["solution_steps"][0])
    step = o["metadata"]["solution_steps"][0]
    head, _, result = step.rpartition(" = ")
    o["metadata"]["solution_steps"][0] = f"{head} = 9{result.lstrip('$')}"
    failed, rep = _failed(tmp_path, release_items)
    assert failed == {ITEM_RULES["steps"]}
    assert rep.check(ITEM_RULES["steps"]).details[0].startswith(f"line {i + 1}:")


def test_wrong_label_is_caught(tmp_path, release_items):
    o = release_items[10]
    o["label"] = str((int(o["label"]) + 1) % 4)
    failed, _ = _failed(tmp_path, release_items)
    assert ITEM_RULES["answer"] in failed
    assert "correct slot balance" in failed


def test_dropped_step_is_caught(tmp_path, release_items):
    release_items[5]["metadata"]["solution_steps"].pop()
    failed, _ = _failed(tmp_path, release_items)
    assert ITEM_RULES["depth"] in failed


def test_wrong_rank_is_caught(tmp_path, release_items):
    md = release_items[7]["metadata"]
    md["answer_rank"] = (md["answer_rank"] + 2) % 4
    failed, _ = _failed(tmp_path, release_items)
    assert {ITEM_RULES["rank"], "answer rank balance"} <= failed


def test_mixed_roundness_is_caught(tmp_path, release_items):
    _, o = _first(release_items, _count_item)
    md, lab = o["metadata"], int(o["label"])
    j = (lab + 2) % 4
    old = md["option_values"][j]
    new = max(md["option_values"]) * 100 + 100  # a multiple of 100, unlike the others
    md["option_values"][j] = new
    o["endings"][j] = o["endings"][j].replace(str(old), str(new), 1)
    md["answer_rank"] = sum(v < md["option_values"][lab] for v in md["option_values"])
    failed, _ = _failed(tmp_path, release_items)
    assert ITEM_RULES["roundness"] in failed
    assert ITEM_RULES["unit"] not in failed


def test_changed_unit_is_caught(tmp_path, release_items):
    _, o = _first(release_items, lambda o: len(o["metadata"]["unit"]) > 2)
    lab = int(o["label"])
    j = (lab + 1) % 4
    o["endings"][j] = o["endings"][j].replace(o["metadata"]["unit"], "zorbs")
    failed, _ = _failed(tmp_path, release_items)
    assert failed == {ITEM_RULES["unit"]}


def test_duplicate_context_is_caught(tmp_path, release_items):
    release_items[3]["ctx"] = release_items[2]["ctx"]
    failed, _ = _failed(tmp_path, release_items)
    assert "unique ind, source_id, ctx" in failed


def test_missing_item_breaks_composition_and_balance(tmp_path, release_items):
    failed, _ = _failed(tmp_path, release_items[:-1])
    assert "composition (template, topic, depth, count)" in failed


def test_schema_fault_skips_dataset_checks(tmp_path, release_items):
    del release_items[4]["metadata"]["template"]
    failed, rep = _failed(tmp_path, release_items)
    assert failed == {ITEM_RULES["schema"]}
    assert "line 5:" in rep.check(ITEM_RULES["schema"]).details[0]
    assert rep.check("prompt length").status == "SKIP"


def test_non_canonical_bytes_are_caught(tmp_path, release_items):
    path = tmp_path / "loose.jsonl"
    path.write_text(
        "".join(json.dumps(o, separators=(",", ":"), ensure_ascii=False) + "\n" for o in release_items),
        encoding="utf-8",
    )
    rep = selftest(path, classifier=False)
    assert rep.failed == ["canonical JSONL bytes"]


def test_unreadable_file_raises_located_input_error(tmp_path, release_items):
    path = _write(tmp_path / "broken.jsonl", release_items)
    lines = path.read_text("utf-8").splitlines()
    lines[41] = lines[41][:-1]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.jsonl:42: invalid JSON"):
        selftest(path)
    release_items[0]["label"] = "7"
    with pytest.raises(InputError, match=r":1: field 'label': label 7 out of range"):
        selftest(_write(tmp_path / "label.jsonl", release_items))


# -- upstream overlap ----------------------------------------------------------------------


def _upstream(path: Path, contexts: list[str]) -> Path:
    rows = [
        {"ind": i, "activity_label": "addition", "ctx": c, "endings": [" 43", " 44", " 45", " 46"], "label": "1"}
        for i, c in enumerate(contexts)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


UNRELATED = [
    "Sam had 12 marbles and found 31 more. Now Sam has",
    "A baker made 40 rolls and sold 17. The rolls left number",
]


def test_upstream_without_overlap_passes(tmp_path):
    rep = selftest(RELEASE, upstream=_upstream(tmp_path / "up.jsonl", UNRELATED), classifier=False)
    assert rep.ok, rep.table()
    assert rep.check("no context shared with upstream (2 items)").figure == "0 identical contexts"


def test_upstream_overlap_is_caught(tmp_path, release_items):
    ctx = release_items[0]["ctx"]
    words = ctx.split()
    partial = "Entirely different opening words here, " + " ".join(words[2:12]) + " and more."
    rep = selftest(RELEASE, upstream=_upstream(tmp_path / "up.jsonl", UNRELATED + [partial]), classifier=False)
    assert rep.failed == ["no 8-word n-gram shared with upstream"]
    rep = selftest(RELEASE, upstream=_upstream(tmp_path / "up2.jsonl", [ctx.upper()]), classifier=False)
    assert set(rep.failed) == {"no context shared with upstream (1 items)", "no 8-word n-gram shared with upstream"}
