"""Positive controls (synthprobe.benchmarks.deeparithmark.controls): deliberately flawed builds that a
choices-only adversary must beat. Each is deterministic, leaves the release's bytes alone and is
labelled as a control; the heuristic audit catches ``roundness-off`` ("pick the roundest number"
far below chance) and passes ``odd-one-out`` (every strategy, the char-3-gram classifier included,
within the card's 25 ± 2.7 on 1,000 items), whose right ending is the one of four that ends
differently; the command writes a control, refuses to replace one, and refuses an unknown name."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from synthprobe.benchmarks.deeparithmark.audit import CLASSIFIER, MIN_CLASSIFIER_ITEMS, audit, audit_item, tolerance
from synthprobe.benchmarks.deeparithmark.base import roundness_class
from synthprobe.benchmarks.deeparithmark.build import iter_items, render_bytes
from synthprobe.benchmarks.deeparithmark.checks import activity_label, item_faults, source_id, value_kind
from synthprobe.benchmarks.deeparithmark.controls import (
    CONTROLS,
    build_control,
    build_seed,
    control_items,
    control_lines,
)

# the release's recorded digest (role-balanced decoys since the re-render; the legacy release was
# ecb834bf…): one constant for the card, --check and this test, so a re-render updates it once
from synthprobe.benchmarks.deeparithmark.release import RELEASE_SHA256
from synthprobe.cli import main
from synthprobe.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"

#: the seed and size of the figures in DEEPARITHMARK_DESIGN.md, "Positive controls"
SEED, N = 9, 1000


@pytest.fixture(scope="module")
def builds() -> dict[str, list[dict]]:
    return {name: [json.loads(line) for line in control_lines(name, seed=SEED, n=N)] for name in CONTROLS}


def _audit(records: list[dict]) -> dict[str, float]:
    return {
        s.name: s.percent for s in audit([audit_item(r["endings"], int(r["label"]), r["metadata"]) for r in records])
    }


def _as_release(record: dict, ending_fix=lambda e: e) -> dict:
    """The item with the control's labels taken off (and its endings passed through ``ending_fix``)."""
    item = json.loads(json.dumps(record))
    md = item["metadata"]
    assert md.pop("control") in CONTROLS
    item["activity_label"] = activity_label(md["topic"], md["depth"])
    item["source_id"] = source_id(md["template"], md["depth"], item["ind"])
    item["endings"] = [ending_fix(e) for e in item["endings"]]
    return item


def test_exactly_the_two_controls_each_with_its_flaw():
    assert list(CONTROLS) == ["roundness-off", "odd-one-out"]
    assert all(isinstance(v, str) and len(v) > 40 for v in CONTROLS.values())


@pytest.mark.parametrize("name", list(CONTROLS))
def test_the_same_seed_gives_the_same_bytes_another_seed_others(name):
    first = control_lines(name, seed=3, n=80)
    assert control_lines(name, seed=3, n=80) == first
    assert len(first) == 80 and all(isinstance(x, str) and "\n" not in x for x in first)
    other = control_lines(name, seed=4, n=80)
    assert other != first and not set(other) & set(first)


def test_the_two_controls_never_share_a_problem_at_one_seed(builds):
    ctx = {name: {r["ctx"] for r in recs} for name, recs in builds.items()}
    assert len(ctx["odd-one-out"] & ctx["roundness-off"]) < N // 20  # different draws, not the same build


@pytest.mark.parametrize("name", list(CONTROLS))
def test_items_name_their_control_and_never_pass_for_the_release(name, builds):
    release_ids = {json.loads(line)["source_id"] for line in RELEASE.read_text(encoding="utf-8").splitlines()}
    for r in builds[name]:
        assert r["metadata"]["control"] == name and list(r["metadata"])[-1] == "control"
        assert r["activity_label"].startswith(f"deeparithmark::control-{name}::")
        assert r["source_id"].startswith(f"deeparithmark_control_{name.replace('-', '_')}_")
        assert r["source_id"] not in release_ids
    assert len({r["source_id"] for r in builds[name]}) == N


def test_building_controls_leaves_the_release_untouched(builds, tmp_path):
    build_control(tmp_path / "c.jsonl", "roundness-off", seed=0, n=50)
    data = render_bytes()
    assert hashlib.sha256(data).hexdigest() == RELEASE_SHA256
    assert RELEASE.read_bytes() == data
    from synthprobe.benchmarks.deeparithmark.commands.build import main as card_main

    assert card_main(["build", "--check"], root=ROOT) == 0


def test_roundness_off_is_the_release_builder_without_the_roundness_rule(builds):
    recs = builds["roundness-off"]
    spans = 0
    for r in recs:
        item = _as_release(r)
        assert item_faults(item, item["ind"], roundness=False) == [], r["ind"]
        kind = value_kind(r["metadata"]["answer"])
        if len({roundness_class(v, kind) for v in r["metadata"]["option_values"]}) > 1:
            spans += 1
            assert {rule for rule, _ in item_faults(item, item["ind"])} == {"roundness"}
    assert spans > N // 3  # the flaw is there: a third of the items or more mix roundness classes
    # everything else the release balances is balanced as in the release: slot and rank
    release = [json.loads(x) for x in RELEASE.read_text(encoding="utf-8").splitlines()]
    assert Counter(r["label"] for r in recs) == Counter(r["label"] for r in release)
    assert Counter(r["metadata"]["answer_rank"] for r in recs) == Counter(r["metadata"]["answer_rank"] for r in release)


def test_the_audit_catches_roundness_off_with_the_roundest_number(builds):
    scores = _audit(builds["roundness-off"])
    tol = tolerance(N)
    assert scores["pick the roundest number"] < 25 - tol, scores  # 17.9 % at seed 9
    out = {name for name, pct in scores.items() if abs(pct - 25) > tol}
    assert "pick the roundest number" in out


def test_odd_one_out_has_one_ending_that_ends_differently(builds):
    per_template: dict[str, Counter] = defaultdict(Counter)
    for r in builds["odd-one-out"]:
        finals = [e[-1] for e in r["endings"]]
        assert set(finals) == {".", ";"}, r["endings"]
        counts = Counter(finals)
        odd = [i for i, f in enumerate(finals) if counts[f] == 1]
        assert len(odd) == 1 and sorted(counts.values()) == [1, 3], r["endings"]
        assert odd == [int(r["label"])]  # the one that differs is the right one
        per_template[r["metadata"]["template"]][finals[int(r["label"])]] += 1
    for template, sides in per_template.items():  # half of each template each way
        assert abs(sides[";"] - sides["."]) <= 1, (template, sides)


def test_odd_one_out_is_the_release_design_but_for_the_marks(builds):
    recs = builds["odd-one-out"]
    plain = list(iter_items(seed=build_seed("odd-one-out", SEED), n=N))
    for r, p in zip(recs, plain):
        item = _as_release(r, lambda e: e[:-1] + "." if e.endswith(";") else e)
        assert item == p
        assert item_faults(item, item["ind"]) == []


def test_the_audit_passes_odd_one_out_on_every_strategy(builds):
    assert N >= MIN_CLASSIFIER_ITEMS
    scores = _audit(builds["odd-one-out"])
    assert CLASSIFIER in scores and len(scores) == 10
    for name, pct in scores.items():
        assert abs(pct - 25) <= tolerance(N), (name, pct)


def test_an_unknown_control_or_size_is_input_error_naming_the_choices():
    with pytest.raises(InputError) as exc:
        control_lines("nonsense", seed=0, n=10)
    assert "no control 'nonsense'" in str(exc.value) and all(n in str(exc.value) for n in CONTROLS)
    with pytest.raises(InputError, match="1 to"):
        control_items("odd-one-out", seed=0, n=0)


def test_build_control_writes_atomically_and_refuses_to_replace(tmp_path):
    out = tmp_path / "odd.jsonl"
    build_control(out, "odd-one-out", seed=2, n=30)
    want = "".join(x + "\n" for x in control_lines("odd-one-out", seed=2, n=30)).encode("utf-8")
    assert out.read_bytes() == want
    with pytest.raises(InputError, match="already exists"):
        build_control(out, "odd-one-out", seed=3, n=30)
    assert out.read_bytes() == want
    build_control(out, "odd-one-out", seed=3, n=30, overwrite=True)
    assert out.read_bytes() != want
    with pytest.raises(InputError):
        build_control(tmp_path / "never.jsonl", "nonsense", seed=0, n=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd.jsonl"]


def test_the_command_writes_a_control_and_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "ctl.jsonl"
    args = ["build", "deeparithmark", "--control", "roundness-off", "--seed", "5", "--n", "40", "--out", str(out)]
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "positive control roundness-off" in said and "never report scores" in said
    data = out.read_bytes()
    assert data == "".join(x + "\n" for x in control_lines("roundness-off", seed=5, n=40)).encode("utf-8")
    assert f"sha256 {hashlib.sha256(data).hexdigest()}" in said
    assert main(args) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "already exists" in err[0] and "--overwrite" in err[0]
    assert out.read_bytes() == data
    assert main(args[:-4] + ["--seed", "6", "--n", "40", "--out", str(out), "--overwrite"]) == 0
    assert out.read_bytes() != data


def test_the_command_refuses_an_unknown_control_in_one_line(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["build", "deeparithmark", "--control", "nonsense", "--out", str(out)]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1, err
    assert "no control 'nonsense'" in err[0] and "roundness-off" in err[0] and "odd-one-out" in err[0]
    assert not out.exists()


def test_the_command_refuses_options_a_control_does_not_take(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["build", "deeparithmark", "--control", "odd-one-out", "--selftest", "--out", str(out)]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and "--selftest" in err[0]
    assert not out.exists()


def test_the_help_says_what_a_control_is_for(capsys):
    with pytest.raises(SystemExit):
        main(["build", "deeparithmark", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--control NAME" in text and "synthprobe validate" in text and "never for reporting scores" in text
    assert all(name in text for name in CONTROLS)
