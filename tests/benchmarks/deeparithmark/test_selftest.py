"""Deep Arithmark selftest: passes on the release and fresh seeds, names the broken check.

The trained choices-only audit (the selftest's last check before the upstream ones) passes the
release and every role-balanced build and fails every legacy-decoy build (that is its finding). It
trains adversaries for ~10 s, so the tests of the other checks pass ``trained=False``; the trained
check has its own tests at the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.build import build, dumps_item
from synthprobe.benchmarks.deeparithmark.checks import ITEM_RULES
from synthprobe.benchmarks.deeparithmark.selftest import TRAINED_CHECK, selftest
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
    # every card claim but the trained check (test_the_release_passes_the_trained_check)
    return selftest(RELEASE, trained=False)


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
    rep = selftest(fresh[seed], trained=False)  # the trained check: its own tests below
    assert rep.ok, rep.table()


def test_scaled_file_expects_scaled_figures(fresh):
    rep = selftest(fresh[2], classifier=False, trained=False)  # the figures of the other checks
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
    # trained=False: these tests name the check they break (the trained one has its own tests)
    rep = selftest(_write(tmp_path / "bad.jsonl", items), classifier=False, trained=False, **kw)
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
    rep = selftest(path, classifier=False, trained=False)
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
    rep = selftest(RELEASE, upstream=_upstream(tmp_path / "up.jsonl", UNRELATED), classifier=False, trained=False)
    assert rep.ok, rep.table()
    assert rep.check("no context shared with upstream (2 items)").figure == "0 identical contexts"


def test_upstream_overlap_is_caught(tmp_path, release_items):
    ctx = release_items[0]["ctx"]
    words = ctx.split()
    partial = "Entirely different opening words here, " + " ".join(words[2:12]) + " and more."
    up = _upstream(tmp_path / "up.jsonl", UNRELATED + [partial])
    rep = selftest(RELEASE, upstream=up, classifier=False, trained=False)  # the upstream checks alone fail
    assert rep.failed == ["no 8-word n-gram shared with upstream"]
    rep = selftest(RELEASE, upstream=_upstream(tmp_path / "up2.jsonl", [ctx.upper()]), classifier=False, trained=False)
    assert set(rep.failed) == {"no context shared with upstream (1 items)", "no 8-word n-gram shared with upstream"}


# -- the trained choices-only audit --------------------------------------------------------------


def _report(statuses, outcomes):
    """A trained report with the test sets' statuses and the controls' (name, expect, outcome)."""
    return {
        "test_sets": {name: {"status": st} for name, st in statuses.items()},
        "controls": [{"name": n, "expect": e, "outcome": o, "as_expected": e == o} for n, e, o in outcomes],
    }


@pytest.mark.parametrize(
    "statuses, outcomes, passes",
    [
        # at the selftest's budget the equivalence test cannot apply: "screen only" is the best a set gets
        (
            {"audit build": "screen only", "file": "screen only"},
            [("legacy", "fail", "fail"), ("null", "pass", "pass")],
            True,
        ),
        (
            {"audit build": "fails", "file": "screen only"},
            [("legacy", "fail", "fail"), ("null", "pass", "pass")],
            False,
        ),
        (
            {"audit build": "screen only", "file": "fails"},
            [("legacy", "fail", "fail"), ("null", "pass", "pass")],
            False,
        ),
        # no power: a leak unseen, or a null that fails
        (
            {"audit build": "screen only", "file": "screen only"},
            [("legacy", "fail", "pass"), ("null", "pass", "pass")],
            False,
        ),
        (
            {"audit build": "screen only", "file": "screen only"},
            [("legacy", "fail", "fail"), ("null", "pass", "fail")],
            False,
        ),
    ],
)
def test_the_trained_rule_needs_no_leak_and_both_controls_as_expected(statuses, outcomes, passes):
    from synthprobe.benchmarks.deeparithmark.selftest import trained_passes

    assert trained_passes(_report(statuses, outcomes)) is passes


def test_the_decoy_mode_is_read_from_the_items():
    from synthprobe.benchmarks.deeparithmark.selftest import file_decoys
    from synthprobe.items import MCItem

    def item(md):
        return MCItem(id="0", ctx="x", endings=("a", "b"), label=0, raw={"metadata": md})

    assert file_decoys([item({"template": "t"})]) == "legacy"
    assert file_decoys([item({"template": "t"}), item({"template": "t", "group": "t#3"})]) == "groups"


def test_the_trained_check_at_a_tiny_budget_is_one_row_with_three_lines(monkeypatch):
    from synthprobe.benchmarks.deeparithmark import selftest as st

    monkeypatch.setattr(st, "TRAINED_SIZES", {"train": 300, "audit": 200, "control_train": 300, "control_test": 200})
    rep = selftest(RELEASE, classifier=False)
    names = [c.name for c in rep.checks]
    assert names[-1] == TRAINED_CHECK and names.count(TRAINED_CHECK) == 1
    check, report = rep.check(TRAINED_CHECK), rep.trained
    assert check.ok is report["passes"] and len(check.details) in (2, 3)
    assert list(report["adversaries"]) == list(st.TRAINED_ADVERSARIES)
    assert [c["name"] for c in report["controls"]] == ["legacy", "null"]
    assert report["test_sets"]["audit build"]["n"] == 200 and report["test_sets"]["file"]["n"] == 1000
    assert report["decoys"] == "groups" and report["sizes"]["train"] == 300
    assert check.details[0].startswith("knn / gap_order / trees: audit build (200 items) ")
    assert check.details[1].startswith("controls: legacy ")
    # without it the table is the card's 32 checks
    assert len(selftest(RELEASE, classifier=False, trained=False).checks) == len(rep.checks) - 1


def test_the_no_trained_flag_gives_the_cards_checks(capsys):
    from synthprobe.benchmarks.deeparithmark.commands.build import main

    assert main(["selftest", "--no-trained"], root=ROOT) == 0
    out = capsys.readouterr().out
    assert "32/32 checks passed" in out and TRAINED_CHECK not in out


@pytest.mark.slow
def test_the_release_passes_the_trained_check(capsys):
    """The release's role-balanced decoys keep every trained adversary at chance, with the power
    shown (the legacy control fails, the null passes): all 33 checks pass."""
    from synthprobe.benchmarks.deeparithmark.commands.build import main

    assert main(["selftest"], root=ROOT) == 0
    out = capsys.readouterr().out
    assert "33/33 checks passed" in out
    row = next(line for line in out.splitlines() if line.startswith(TRAINED_CHECK))
    assert "at chance: " in row and "legacy fails, null passes" in row and row.endswith("PASS")


@pytest.mark.slow
@pytest.mark.parametrize("decoys", ["legacy", "groups"])
def test_the_trained_check_fails_a_legacy_build_and_passes_a_role_balanced_one(tmp_path, decoys):
    path = build(tmp_path / f"{decoys}.jsonl", seed=11, n=1000, progress=False, decoys=decoys).path
    rep = selftest(path, classifier=False)
    check, report = rep.check(TRAINED_CHECK), rep.trained
    assert report["decoys"] == decoys
    assert {c["name"]: c["outcome"] for c in report["controls"]} == {"legacy": "fail", "null": "pass"}
    if decoys == "legacy":
        assert check.ok is False and check.figure.startswith("leaks: ")
        assert report["test_sets"]["audit build"]["status"] == "fails" == report["test_sets"]["file"]["status"]
    else:
        assert check.ok is True, rep.table()
        assert check.figure.startswith("at chance: ") and rep.ok
