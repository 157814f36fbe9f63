"""The trained choices-only audit of Deep Arithmark (benchmarks.deeparithmark.trained_audit and
``deeparithmark.py audit``), on real builds: the legacy control fails far above chance, the
label-permuted null passes, the 2026-10 release (legacy decoys, rebuilt here) fails the audit, the
role-balanced release stays at chance, and the command's exit codes and bad-input messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark import trained_audit as ta
from synthprobe.benchmarks.deeparithmark.build import dumps_item
from synthprobe.benchmarks.deeparithmark.commands.build import main
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED
from synthprobe.errors import InputError
from tests.support.cli import in_process
from tests.support.legacy_release import write_legacy_release

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"

#: a tiny budget: real builds, the two cheap adversaries, every control
TINY = ta.Budget(train=1_000, audit=600, control_train=1_000, control_test=600)


@pytest.fixture(scope="module")
def legacy_release(tmp_path_factory) -> Path:
    return write_legacy_release(tmp_path_factory.mktemp("legacy"))


@pytest.fixture(scope="module")
def tiny_report(legacy_release):
    """The legacy builder audited as the 2026-10 release was: legacy training and audit builds."""
    return ta.run(legacy_release, budget=TINY, adversaries=("knn", "gap_order"), decoys="legacy")


def test_the_legacy_control_fails_and_the_null_passes(tiny_report):
    controls = {c["name"]: c for c in tiny_report["controls"]}
    assert list(controls) == list(ta.CONTROL_NAMES)
    legacy = controls["legacy"]
    assert legacy["outcome"] == "fail" and legacy["best_accuracy"] > 0.35 and legacy["best_p_bonferroni"] < 1e-6
    assert (legacy["train_n"], legacy["test_n"]) == (1_000, 600)
    null = controls["null"]
    assert null["outcome"] == "pass" and null["as_expected"] and null["test_n"] == 600
    # odd-one-out marks the key's text on role-balanced items: the two value-only adversaries of
    # this run cannot see it, and the verdict says so (the trees and DeepSets read it: 100 %)
    assert [n for n, c in controls.items() if not c["as_expected"]] == ["odd-one-out"]
    assert tiny_report["verdict"]["power"] is False and tiny_report["verdict"]["controls_missed"] == ["odd-one-out"]


def test_the_legacy_builder_and_the_2026_10_release_fail(tiny_report):
    assert tiny_report["verdict"]["status"] == "fails"
    assert tiny_report["verdict"]["failing"] == ["audit build", "file"]
    file = tiny_report["test_sets"]["file"]
    assert file["n"] == 1_000 and file["adversaries"]["gap_order"]["accuracy"] > 0.33
    assert any(r["flagged"] and r["kind"] == "group" for r in file["screen"])
    assert tiny_report["decoys"] == "legacy" and "equivalence test needs" in tiny_report["note"]
    json.dumps(tiny_report, allow_nan=False)
    text = ta.format_report(tiny_report)
    assert "verdict: Fails" in text and "null" in text and "seconds: builds" in text and "stated power" in text
    assert tiny_report["stated_power"]["detected"] is True


def test_the_release_stays_at_chance_at_a_tiny_budget():
    """Role-balanced decoys: no stratum flagged on the audit build or the file, every adversary
    within a few points of 25 %; at this size the audit claims no pass (too few items for the
    equivalence test, and a tenth of legacy items is too small a leak to see)."""
    report = ta.run(RELEASE, budget=TINY, adversaries=("knn", "gap_order"))
    assert report["decoys"] == ta.default_decoys() == "groups"
    for name, test_set in report["test_sets"].items():
        assert test_set["status"] == "screen only", name
        assert not any(r["flagged"] for r in test_set["screen"]), name
        for adversary, block in test_set["adversaries"].items():
            assert 0.21 < block["accuracy"] < 0.29, (name, adversary, block["accuracy"])
    outcomes = {c["name"]: c["outcome"] for c in report["controls"]}
    assert outcomes["legacy"] == outcomes["roundness-off"] == "fail" and outcomes["null"] == "pass"
    assert report["verdict"]["passes"] is False and report["verdict"]["status"] == "no power"


def test_the_builds_use_fresh_seeds_of_their_own(tiny_report):
    seeds = []
    for b in tiny_report["builds"]:
        seeds += b["seed"] if isinstance(b["seed"], list) else [b["seed"]]
    assert RELEASE_SEED not in seeds and len(seeds) == len(set(seeds))
    assert ta.split_sizes(16_000) == [4_000] * 4 and ta.split_sizes(4_001) == [2_001, 2_000]


def test_mixing_replaces_a_tenth_with_items_of_the_same_template():
    audit = ta.build(ta.audit_seed(1), 400)
    pool = ta.build(ta.control_seed("mix10", "pool", 1), 60, decoys="legacy")
    out = ta.mixed(audit, pool, 0.10, 1, "test")
    changed = [i for i, (a, b) in enumerate(zip(audit, out)) if a != b]
    assert len(changed) == 40 and out == ta.mixed(audit, pool, 0.10, 1, "test")
    same = sum(audit[i].group == out[i].group for i in changed)
    assert same >= 30  # the pool has most templates; the rest take any pool item
    null = ta.permuted(audit, 1)
    assert [it.values for it in null] == [it.values for it in audit]
    assert 0.15 < sum(a.label == b.label for a, b in zip(audit, null)) / len(audit) < 0.35
    assert set(Counter(it.label for it in null)) == {0, 1, 2, 3}


def test_sizes_are_checked_before_any_work():
    with pytest.raises(InputError, match="needs at least 4,097"):
        ta.check_sizes("full", 16_000, 4_000)
    ta.check_sizes("small", 2_000, 1_000)


@pytest.mark.slow
def test_the_small_budget_with_every_adversary():
    report = ta.run(RELEASE, budget="small")
    legacy = next(c for c in report["controls"] if c["name"] == "legacy")
    assert legacy["outcome"] == "fail" and legacy["best_accuracy"] > 0.45
    null = next(c for c in report["controls"] if c["name"] == "null")
    assert null["outcome"] == "pass"
    for test_set in report["test_sets"].values():
        assert all(0.21 < b["accuracy"] < 0.29 for b in test_set["adversaries"].values())
        assert not any(r["flagged"] for r in test_set["screen"])
    assert report["verdict"]["status"] != "fails"


def _without_seconds(obj):
    """A report without its wall-clock figures (what may differ between two runs)."""
    if isinstance(obj, dict):
        return {k: _without_seconds(v) for k, v in obj.items() if "seconds" not in k}
    if isinstance(obj, list):
        return [_without_seconds(v) for v in obj]
    return obj


@pytest.mark.slow
def test_the_full_budget_passes_the_release_and_every_control_fails_as_it_must(tmp_path, capsys):
    """The card's command at the default budget (about 70 s on 2 quiet cores): the equivalence
    test is shown for every adversary on the 4,100-item audit build, every planted leak fails,
    ``mix10`` (a tenth of legacy items, the audit's stated power) among them, the null passes, and
    the report reproduces the committed figure of data/README.md except for its seconds."""
    out = tmp_path / "audit.json"
    code, text, _ = run(["audit", "--json", str(out)], capsys)
    assert code == 0, text
    assert "verdict: Passes" in text
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["budget"]["name"] == "full" and report["test_sets"]["audit build"]["n"] == 4_100
    for name, block in report["test_sets"]["audit build"]["adversaries"].items():
        assert block["applies"] and block["passes"], (name, block)
    outcomes = {c["name"]: (c["outcome"], c["as_expected"]) for c in report["controls"]}
    assert outcomes == {
        "legacy": ("fail", True),
        "mix10": ("fail", True),
        "roundness-off": ("fail", True),
        "odd-one-out": ("fail", True),
        "null": ("pass", True),
    }
    assert report["stated_power"]["detected"] is True
    committed = json.loads((ROOT / "docs" / "figures" / "trained_audit_deeparithmark-1.json").read_text("utf-8"))
    mine, theirs = _without_seconds(report), _without_seconds(committed)
    mine["file"].pop("path"), theirs["file"].pop("path")
    assert mine == theirs


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------


def run(argv, capsys):
    """``deeparithmark.py ARGV`` run here, through the shared runner: (status, stdout, stderr)."""
    return in_process(argv, main=main, root=ROOT)


QUICK = ["--budget", "small", "--train-items", "800", "--audit-items", "400", "--adversaries", "gap_order"]


def test_the_command_fails_the_2026_10_release_and_writes_its_report(tmp_path, capsys, legacy_release):
    out = tmp_path / "audit.json"
    argv = ["audit", str(legacy_release), *QUICK, "--decoys", "legacy", "--no-controls", "--json", str(out)]
    code, text, _ = run(argv, capsys)
    assert code == 1, text
    assert "Shortcut audit" in text and "Trained choices-only audit" in text and "verdict: Fails" in text
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["verdict"]["status"] == "fails" and report["controls"] == []
    code, _, err = run(argv, capsys)
    assert code == 2 and "audit.json: field '--json': already exists; add --overwrite" in err


def test_the_command_finds_nothing_on_the_release(capsys):
    """No stratum flagged; at this size the equivalence test cannot apply, so no pass (exit 1)."""
    code, text, _ = run(["audit", *QUICK, "--no-controls"], capsys)
    assert code == 1, text
    assert "0 of " in text and "strata flagged" in text
    assert "verdict: Inconclusive: no test set was large enough" in text


def test_no_trained_keeps_the_shortcut_audit_alone(capsys):
    code, text, _ = run(["audit", "--no-trained"], capsys)
    assert code == 0 and "Shortcut audit" in text and "Trained" not in text


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--audit-items", "4000"], "field '--audit-items': the audit build has 4,000 items"),
        (["--adversaries", "trees,forest"], "field '--adversaries': expected adversaries"),
    ],
)
def test_bad_options_exit_2(extra, needle, capsys):
    code, _, err = run(["audit", *extra], capsys)
    assert code == 2 and needle in err


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--budget", "medium"], "argument --budget: invalid choice"),
        (["--train-items", "0"], "argument --train-items: expected a whole number from 1"),
    ],
)
def test_bad_values_are_refused_by_the_parser(extra, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["audit", *extra], root=ROOT)
    assert exc.value.code == 2 and needle in capsys.readouterr().err


def test_a_file_without_option_values_exits_2_naming_file_line_and_field(tmp_path, capsys):
    rows = [json.loads(line) for line in RELEASE.read_text(encoding="utf-8").splitlines()[:20]]
    del rows[3]["metadata"]["option_values"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(dumps_item(r) + "\n" for r in rows), encoding="utf-8")
    code, _, err = run(["audit", str(bad), *QUICK], capsys)
    assert code == 2 and "bad.jsonl:4: field 'metadata.option_values'" in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(InputError, match="option_values"):
        ta.load_file(bad)
