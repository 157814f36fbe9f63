"""``synthprobe build twins`` end to end through the command line's main (in process), the per-file
check on tampered twins, and the controls' values."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chi2_contingency, mannwhitneyu

from synthprobe.benchmarks.deeparithmark.base import IRRELEVANT
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_SEED, RELEASE_SIZE
from synthprobe.benchmarks.deeparithmark.release import RELEASE_SHA256
from synthprobe.benchmarks.deeparithmark.twins.check import check_build, check_twin_items
from synthprobe.benchmarks.deeparithmark.twins.controls import Tally, kind_controls
from synthprobe.cli import main

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "docs" / "examples" / "unit_convert.py"
STEM = "deeparithmark-1"
KINDS = ("irrelevant_clause", "one_step_more", "reordered", "unit_change")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


@pytest.fixture(scope="module")
def release_twins(tmp_path_factory) -> Path:
    """The release's twins of every kind, built once through the command line."""
    out = tmp_path_factory.mktemp("twins") / "a"
    assert main(["build", "twins", "--out", str(out), "--no-progress"]) == 0
    return out


def test_build_writes_one_file_per_kind_and_the_manifest(release_twins):
    m = json.loads((release_twins / f"{STEM}.twins.json").read_text(encoding="utf-8"))
    assert (m["format"], m["version"]) == ("synthprobe/deeparithmark-twins", 1)
    assert m["originals"]["sha256"] == RELEASE_SHA256
    assert (m["originals"]["seed"], m["originals"]["n"]) == (RELEASE_SEED, RELEASE_SIZE)
    assert (release_twins / m["originals"]["path"]).resolve() == (ROOT / "data" / f"{STEM}.jsonl").resolve()
    assert list(m["kinds"]) == list(KINDS)
    originals = {o["source_id"]: o for o in _lines(ROOT / "data" / f"{STEM}.jsonl")}
    order = list(originals)
    for kind, entry in m["kinds"].items():
        path = release_twins / entry["file"]
        assert entry["file"] == f"{STEM}.twins-{kind}.jsonl"
        assert entry["sha256"] == _sha(path)
        twins = _lines(path)
        assert entry["n"] == len(twins) > 0
        assert [t["ind"] for t in twins] == list(range(len(twins)))
        assert all(t["metadata"]["twin_kind"] == kind for t in twins)
        pos = [order.index(t["metadata"]["twin_of"]) for t in twins]
        assert pos == sorted(pos)  # the originals' file order
        # every original is either twinned or counted under its family: unsupported or no usable twin
        if kind in ("irrelevant_clause", "reordered"):  # its original's answer and decoy pool: always one
            assert entry["no_usable_twin"] == {}
        else:
            # a new answer: its decoys are re-derived, and these twins drop the extra mistakes that a
            # role-balanced original's rank may rest on (rank 0 or 3), so a few originals go without
            assert sum(entry["no_usable_twin"].values()) <= RELEASE_SIZE // 100
        unmade = sum(entry["unsupported"].values()) + sum(entry["no_usable_twin"].values())
        assert len(twins) + unmade == RELEASE_SIZE
        assert all(t["metadata"]["group"] == originals[t["metadata"]["twin_of"]]["metadata"]["group"] for t in twins)
        twinned = Counter(originals[t["metadata"]["twin_of"]]["metadata"]["template"] for t in twins)
        assert not set(twinned) & set(entry["unsupported"])
        assert entry["audit"]["ok"] is True
        assert set(m["controls"]["kinds"][kind]) >= {"n", "answer_digits", "option_digits", "answer_rank"}


def test_the_trained_adversaries_find_nothing_in_the_release_twins(release_twins):
    """The build scores the trained adversaries (fitted on 2,000 fresh role-balanced items) on the
    originals and on each kind's twins: no stratum flagged, every adversary near 25 %."""
    m = json.loads((release_twins / f"{STEM}.twins.json").read_text(encoding="utf-8"))
    trained = m["trained_audit"]
    assert trained["adversaries"] == ["trees", "knn", "deepsets", "gap_order"]
    assert (trained["budget"]["train"], trained["decoys"]) == (2_000, "groups")
    assert list(trained["sets"]) == ["originals", *KINDS]
    for label, t in trained["sets"].items():
        n = RELEASE_SIZE if label == "originals" else m["kinds"][label]["n"]
        assert t["n"] == n and t["status"] == "screen only" and t["strata_flagged"] == 0, (label, t)
        for name, a in t["adversaries"].items():
            assert a["n"] == n and 0.20 < a["accuracy"] < 0.30, (label, name, a)


def test_no_trained_leaves_the_trained_adversaries_out(tmp_path, capsys):
    out = tmp_path / "tw"
    argv = ["build", "twins", "--kinds", "reordered", "--no-trained", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "trained adversaries" not in capsys.readouterr().out
    assert "trained_audit" not in json.loads((out / f"{STEM}.twins.json").read_text(encoding="utf-8"))


def test_twins_fail_the_trained_screen_only_when_their_originals_pass_it():
    from synthprobe.benchmarks.deeparithmark.commands.build import format_trained_twins, twins_failing_trained

    def brief(status):
        acc = {"correct": 40, "n": 100, "accuracy": 0.4}
        return {
            "status": status,
            "n": 100,
            "adversaries": {"trees": acc},
            "strata_flagged": int(status == "fails"),
            "strata": 8,
        }

    doc = {
        "adversaries": ["trees"],
        "budget": {"train": 2000},
        "decoys": "groups",
        "screen_alpha": 0.05,
        "note": "no controls here",
        "sets": {"originals": brief("screen only"), "reordered": brief("fails"), "unit_change": brief("screen only")},
    }
    assert twins_failing_trained(doc) == ["reordered"]
    assert "FAIL reordered (100 items): trees 40.0 %; 1 of 8 strata flagged" in format_trained_twins(doc)
    doc["sets"]["originals"] = brief("fails")  # a leaky file: its twins inherit the leak
    assert twins_failing_trained(doc) == []
    assert "the originals themselves fail the trained screen" in format_trained_twins(doc)


def test_a_second_build_into_another_folder_is_byte_identical(release_twins):
    other = release_twins.parent / "b"
    assert main(["build", "twins", "--out", str(other), "--no-progress"]) == 0
    assert _tree(other) == _tree(release_twins)


def test_check_passes_on_the_build_and_fails_on_a_tampered_twin(release_twins, tmp_path, capsys):
    assert check_build(release_twins).ok
    assert main(["build", "twins", "--check", str(release_twins)]) == 0
    spoiled = tmp_path / "spoiled"
    shutil.copytree(release_twins, spoiled)
    m = json.loads((spoiled / f"{STEM}.twins.json").read_text(encoding="utf-8"))
    m["originals"]["path"] = str((ROOT / "data" / f"{STEM}.jsonl").resolve())
    (spoiled / f"{STEM}.twins.json").write_text(json.dumps(m), encoding="utf-8")
    path = spoiled / f"{STEM}.twins-reordered.jsonl"
    twins = _lines(path)
    twins[3]["ctx"] = twins[3]["ctx"].replace(" ", "  ", 1)  # a twin edited after the build
    path.write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in twins), encoding="utf-8")
    capsys.readouterr()
    assert main(["build", "twins", "--check", str(spoiled)]) == 1
    assert "differs from the file the manifest lists" in capsys.readouterr().out


def _faults(kind: str, spoil) -> list[str]:
    originals = _lines(ROOT / "data" / f"{STEM}.jsonl")
    from synthprobe.benchmarks.deeparithmark.twins.build import twin_file_items

    twins = twin_file_items(kind)
    assert not check_twin_items(originals, twins, kind, classifier=False).faults
    bad = copy.deepcopy(twins)
    spoil(bad)
    return check_twin_items(originals, bad, kind, classifier=False).faults


def _swap_options(t: dict, a: int, b: int) -> None:
    for key in ("endings",):
        t[key][a], t[key][b] = t[key][b], t[key][a]
    md = t["metadata"]
    for key in ("option_values", "option_sources"):
        md[key][a], md[key][b] = md[key][b], md[key][a]


def _move_slot(twins: list[dict]) -> None:
    t = twins[0]
    slot = int(t["label"])
    other = (slot + 1) % 4
    _swap_options(t, slot, other)
    t["label"] = str(other)


def _drop_irrelevant(twins: list[dict]) -> None:
    t = twins[0]
    i = t["metadata"]["option_sources"].index(IRRELEVANT)
    t["metadata"]["option_sources"][i] = "a made-up slip"


def _unknown_original(twins: list[dict]) -> None:
    twins[0]["metadata"]["twin_of"] = "deeparithmark_v1_nowhere_depth2_9999"


def _same_prompt_as_original(twins: list[dict]) -> None:
    twins[1] = copy.deepcopy(twins[0])
    twins[1]["ind"] = 1
    twins[1]["source_id"] = twins[1]["source_id"].replace("_0000_", "_0001_")


@pytest.mark.parametrize(
    ("kind", "spoil", "message"),
    [
        ("reordered", _move_slot, "correct slot"),
        ("irrelevant_clause", _drop_irrelevant, f"no option is the decoy {IRRELEVANT!r}"),
        ("unit_change", _unknown_original, "is not an item of the originals"),
        ("one_step_more", _same_prompt_as_original, "a second twin of"),
    ],
)
def test_check_function_names_what_a_tampered_twin_breaks(kind, spoil, message):
    faults = _faults(kind, spoil)
    assert faults and any(message in f for f in faults), faults


def test_pair_invariants_of_one_step_more_and_same_answer_kinds():
    from synthprobe.benchmarks.deeparithmark.twins.check import pair_faults

    originals = {o["source_id"]: o for o in _lines(ROOT / "data" / f"{STEM}.jsonl")}
    from synthprobe.benchmarks.deeparithmark.twins.build import twin_file_items

    more = twin_file_items("one_step_more")[0]
    o = originals[more["metadata"]["twin_of"]]
    assert pair_faults(o, more, "one_step_more") == []
    bad = copy.deepcopy(more)
    bad["metadata"]["solution_steps"][0] = "something else: 1 + 1 = 2"
    assert any("original's plus one line" in f for f in pair_faults(o, bad, "one_step_more"))
    same = twin_file_items("reordered")[0]
    bad = copy.deepcopy(same)
    bad["metadata"]["answer"] = "1"
    assert any(
        "keeps its original's" in f for f in pair_faults(originals[same["metadata"]["twin_of"]], bad, "reordered")
    )


# -- refusals: one error, exit 2, nothing written -------------------------------------------------


def _refused(argv: list[str], out: Path, capsys, message: str) -> None:
    before = _tree(out)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert err.count("error:") == 1
    assert _tree(out) == before


def test_altered_originals_are_refused(tmp_path, capsys):
    data = tmp_path / "deeparithmark-1.jsonl"
    raw = (ROOT / "data" / f"{STEM}.jsonl").read_bytes()
    data.write_bytes(raw.replace(b'"split": "test"', b'"split": "test" ', 1))
    out = tmp_path / "out"
    _refused(["build", "twins", "--data", str(data), "--out", str(out)], out, capsys, "line 1 differs from the build")
    data.write_bytes(raw + raw.splitlines(keepends=True)[0])
    _refused(
        ["build", "twins", "--data", str(data), "--out", str(out), "--seed", str(RELEASE_SEED)], out, capsys, "differs"
    )
    assert not out.exists()


def test_unknown_kind_and_existing_output_are_refused(release_twins, tmp_path, capsys):
    out = tmp_path / "out"
    _refused(["build", "twins", "--kinds", "irrelevant_clause,sideways", "--out", str(out)], out, capsys, "sideways")
    _refused(["build", "twins", "--out", str(release_twins)], release_twins, capsys, "--overwrite")
    assert not out.exists()


def test_overwrite_replaces_the_files(release_twins, tmp_path):
    out = tmp_path / "again"
    shutil.copytree(release_twins, out)
    (out / f"{STEM}.twins-reordered.jsonl").write_text("stale\n", encoding="utf-8")
    assert main(["build", "twins", "--out", str(out), "--overwrite", "--no-progress"]) == 0
    assert _tree(out) == _tree(release_twins)


def test_a_seed_build_without_a_record_or_table_takes_its_seed(tmp_path, capsys):
    data = tmp_path / "private.jsonl"
    assert main(["build", "deeparithmark", "--seed", "7", "--n", "200", "--out", str(data), "--no-progress"]) == 0
    (tmp_path / "private.jsonl.build.json").unlink()  # a file from before build records
    out = tmp_path / "tw"
    _refused(["build", "twins", "--data", str(data), "--out", str(out)], out, capsys, "--seed")
    assert main(["build", "twins", "--data", str(data), "--seed", "7", "--kinds", "reordered", "--out", str(out)]) == 0
    m = json.loads((out / "private.twins.json").read_text(encoding="utf-8"))
    assert (m["originals"]["seed"], m["originals"]["n"], list(m["kinds"])) == (7, 200, ["reordered"])


@pytest.fixture(scope="module")
def units(tmp_path_factory) -> Path:
    """A file of the worked example's families (docs/write-a-family.md), with its families table."""
    folder = tmp_path_factory.mktemp("units")
    family = folder / "unit_convert.py"
    shutil.copy(EXAMPLE, family)
    data = folder / "units.jsonl"
    argv = ["build", "deeparithmark", "--family", str(family), "--n", "2000", "--seed", "3", "--out", str(data)]
    assert main([*argv, "--no-progress"]) == 0
    return data


def test_a_users_family_twins_build_with_its_family(units, capsys):
    family = units.parent / "unit_convert.py"
    out = units.parent / "units_twins"
    # in a fresh process (this one loaded the family to build the file): refused without --family
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "synthprobe", "build", "twins", "--data", str(units), "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2 and "pass its module with --family" in done.stderr, done.stderr
    assert not out.exists()
    _refused(
        ["build", "twins", "--data", str(units), "--family", str(family), "--kinds", "reordered", "--out", str(out)],
        out,
        capsys,
        "do not support twin kind 'reordered'; the kinds its families support: irrelevant_clause",
    )
    assert main(["build", "twins", "--data", str(units), "--family", str(family), "--out", str(out)]) == 0
    m = json.loads((out / "units.twins.json").read_text(encoding="utf-8"))
    assert list(m["kinds"]) == ["irrelevant_clause", "unit_change"]
    assert all(e["n"] == 2000 and e["unsupported"] == {} for e in m["kinds"].values())
    assert check_build(out).ok


# -- the controls ---------------------------------------------------------------------------------


def test_controls_of_the_release_twins(release_twins):
    m = json.loads((release_twins / f"{STEM}.twins.json").read_text(encoding="utf-8"))
    c = m["controls"]
    assert c["alpha"] == 0.05 and set(c["tests"]) == {
        "answer_digits",
        "option_digits",
        "answer_rank",
        "correct_slot",
        "roundness",
    }
    for kind, res in c["kinds"].items():
        assert res["n"] == m["kinds"][kind]["n"]
        for name in ("answer_rank", "correct_slot"):  # kept by construction
            assert res[name]["original"] == res[name]["twin"] and res[name]["p"] == 1.0
            assert res[name]["differs"] is False
        twins = _lines(release_twins / m["kinds"][kind]["file"])
        slots = Counter(int(t["label"]) for t in twins)
        assert res["correct_slot"]["twin"] == [slots[s] for s in range(4)]
    # the same numbers: a reordered twin shows its original's options (a role-balanced original's
    # group values, extra mistakes included); an irrelevant clause's differ by one decoy, which
    # moves the option digits by chance only
    assert all(c["kinds"]["reordered"][name]["p"] == 1.0 for name in c["tests"])
    irrelevant = c["kinds"]["irrelevant_clause"]
    assert all(irrelevant[name]["p"] == 1.0 for name in c["tests"] if name != "option_digits")
    assert irrelevant["option_digits"]["differs"] is False
    unit = c["kinds"]["unit_change"]  # dollars as cents: longer numbers, reported, not hidden
    assert unit["answer_digits"]["twin_mean"] > unit["answer_digits"]["original_mean"]
    assert unit["answer_digits"]["differs"] is True and unit["answer_digits"]["by_design"] is True
    assert unit["roundness"]["differs"] is True and "by design" in unit["note"]


def _item(answer: int, values: list[int], label: int) -> dict:
    rank = sum(v < answer for v in values)
    return {
        "label": str(label),
        "metadata": {"answer": str(answer), "option_values": values, "answer_rank": rank},
    }


def test_kind_controls_agree_with_scipy_by_hand():
    tally = Tally()
    pairs = [
        (_item(12, [12, 22, 32, 42], 0), _item(1200, [1200, 2200, 3200, 4200], 0)),
        (_item(37, [27, 37, 47, 57], 1), _item(3700, [2700, 3700, 4700, 5700], 1)),
        (_item(141, [111, 121, 131, 141], 3), _item(14100, [11100, 12100, 13100, 14100], 3)),
    ]
    for o, t in pairs:
        tally.add(o, t)
    res = kind_controls("unit_change", tally)
    want = mannwhitneyu([2, 2, 3], [4, 4, 5], alternative="two-sided")
    assert res["answer_digits"]["p"] == pytest.approx(want.pvalue, rel=1e-3)
    assert res["answer_digits"]["original_mean"] == pytest.approx(7 / 3, abs=1e-4)
    assert res["answer_rank"]["original"] == [1, 1, 0, 1] and res["answer_rank"]["p"] == 1.0
    want = chi2_contingency([[3, 0], [0, 3]], correction=False)  # class 0 against class 3
    assert res["roundness"]["original"] == [3, 0, 0, 0] and res["roundness"]["twin"] == [0, 0, 0, 3]
    assert res["roundness"]["p"] == pytest.approx(want.pvalue, rel=1e-3)
    assert res["roundness"]["by_design"] is True
    assert kind_controls("reordered", tally)["roundness"]["by_design"] is False
