"""``synthprobe validate``'s trained choices-only audit (the ``trained`` part): on by default for a
Deep Arithmark file, run without a model when nothing else needs one, its power joined with the
LoRA adversary's, refused with one line where it cannot run, and its help true to the measured
times (docs/validity.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthprobe.cli import main
from synthprobe.validity.trained import combined_power, power

ROOT = Path(__file__).resolve().parents[2]


def _error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_the_help_names_the_trained_audit_and_the_measured_times(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--help"])
    assert exc.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--no-trained" in out and "--trained-budget {small,full}" in out
    assert "36 min" in out and "~15 min" not in out
    assert "synthprobe validate --no-adversary --controls none --trained-budget small" in out


def _mc(path: Path, n: int, *, prefix: str = "q") -> Path:
    rows = [
        {"ind": i, "ctx": f"{prefix} {i}: two plus two is", "endings": [" 4.", " 5.", " 6.", " 7."], "label": i % 4}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_trained_audit_on_a_file_that_is_not_deeparithmark_is_refused(tmp_path, capsys):
    data, train = _mc(tmp_path / "toy.jsonl", 10), _mc(tmp_path / "train.jsonl", 30, prefix="t")
    out = tmp_path / "v.json"
    argv = ["validate", str(data), "--train", str(train), "--sizes", "0,20", "--trained", "--output", str(out)]
    assert main(argv) == 2
    line = _error(capsys)
    assert "Deep Arithmark files only" in line and "--no-trained" in line and not out.exists()


def test_nothing_to_run_names_the_trained_audit(tmp_path, capsys):
    out = tmp_path / "v.json"
    assert main(["validate", "--no-adversary", "--controls", "none", "--no-trained", "--output", str(out)]) == 2
    assert "nothing to run" in _error(capsys) and not out.exists()


def test_a_bad_budget_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["validate", "--trained-budget", "huge", "--output", str(tmp_path / "v.json")])
    assert exc.value.code == 2 and "--trained-budget" in capsys.readouterr().err


def _controls(**outcomes):
    """Controls with their outcomes: name=(expect, outcome)."""
    return {
        "controls": [
            {
                "name": n,
                "expect": e,
                "outcome": o,
                "as_expected": e == o,
                "best_accuracy": 0.6,
                "best_adversary": "trees",
            }
            for n, (e, o) in outcomes.items()
        ]
    }


def test_the_trained_power_follows_its_controls():
    ok = power(_controls(legacy=("fail", "fail"), null=("pass", "pass")))
    assert ok["has_power"] is True and ok["verdict"].startswith("has power: the trained audit finds every planted leak")
    unseen = power(_controls(legacy=("fail", "pass"), null=("pass", "pass")))
    assert unseen["has_power"] is False and "legacy went unseen" in unseen["verdict"]
    null = power(_controls(legacy=("fail", "fail"), null=("pass", "fail")))
    assert null["has_power"] is False and "null control(s) null beat chance" in null["verdict"]
    assert power({"controls": []})["has_power"] is None


def test_the_documents_power_joins_both_parts():
    lora_yes = {"has_power": True, "verdict": "has power: it beats chance on every flawed build (x 40.0 %)"}
    lora_no = {"has_power": False, "verdict": "no power: the adversary did not beat chance on x"}
    lora_unchecked = {"has_power": None, "verdict": "no positive control was run: the adversary's pass is unchecked"}
    trained_yes = power(_controls(legacy=("fail", "fail"), null=("pass", "pass")))
    # one part alone is kept as it is (a document without the trained part reads as before)
    assert combined_power(lora_no, None) == lora_no and combined_power(None, trained_yes) == trained_yes
    assert combined_power(None, None)["has_power"] is None
    both = combined_power(lora_yes, trained_yes)
    assert both["has_power"] is True and both["verdict"].startswith("has power: trained audit: has power: ")
    assert "; LoRA adversary: has power: it beats chance" in both["verdict"]
    assert set(both["parts"]) == {"trained", "adversary"}
    assert combined_power(lora_no, trained_yes)["has_power"] is False
    assert combined_power(lora_unchecked, trained_yes)["has_power"] is None


#: a real trained part (tests/report/fixtures: `validate --no-adversary --controls none --trained-budget small`)
FIXTURE = ROOT / "tests" / "report" / "fixtures" / "validity_trained_small.json"


def test_the_trained_audit_alone_runs_without_a_model(tmp_path, monkeypatch, capsys):
    """The command's wiring, the audit itself stubbed with a real run's report (the real run:
    test_the_small_budget_shows_a_control_fail): no model loads, the document holds the trained
    part, a null model and the trained audit's power; the audit's tables are printed."""
    import synthprobe.commandline
    from synthprobe.validity import trained as vtrained

    block = json.loads(FIXTURE.read_text(encoding="utf-8"))["validity"]["trained"]
    calls = []

    def no_model(*args, **kwargs):
        raise AssertionError("the trained audit alone must not load a model")

    def audit(path, test, *, budget, step=None):
        calls.append((Path(path).name, len(test), budget))
        return block

    monkeypatch.setattr(synthprobe.commandline, "load_backend_or_exit", no_model)
    monkeypatch.setattr(vtrained, "run", audit)
    out = tmp_path / "v.json"
    argv = ["validate", "--no-adversary", "--controls", "none", "--trained-budget", "small", "--no-progress"]
    assert main([*argv, "--output", str(out)]) == 0
    assert calls == [("deeparithmark-1.jsonl", 1000, "small")]
    printed = capsys.readouterr().out
    assert "trained audit (small): 4 adversaries trained on 2,000 fresh items' options (groups decoys)" in printed
    assert "Trained choices-only audit: " in printed and "controls (a planted leak must fail" in printed
    assert "power: has power: the trained audit finds every planted leak" in printed
    sec = json.loads(out.read_text(encoding="utf-8"))["validity"]
    assert sec["model"] is None and "adversary" not in sec and "controls" not in sec
    assert sec["trained"] == block and sec["power"] == power(block)
    assert sec["settings"]["trained"] is True and sec["settings"]["trained_budget"] == "small"


@pytest.mark.slow
def test_the_small_budget_shows_a_control_fail(tmp_path, capsys):
    """The newcomer's command of docs/validity.md (about 40 s of audit on 2 cores): on the
    role-balanced release no stratum is flagged, the planted leaks that a small budget can see fail
    (legacy, roundness-off, odd-one-out), the null passes, and the tenth of legacy items (mix10)
    goes unseen at 1,000 items, so the verdict says "no power" rather than vouch for the file."""
    out = tmp_path / "v.json"
    argv = ["validate", "--no-adversary", "--controls", "none", "--trained-budget", "small", "--no-progress"]
    assert main([*argv, "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "legacy          fail" in printed and "FAIL (as expected)" in printed
    sec = json.loads(out.read_text(encoding="utf-8"))["validity"]
    trained = sec["trained"]
    assert not any(r["flagged"] for t in trained["test_sets"].values() for r in t["screen"])
    outcomes = {c["name"]: (c["outcome"], c["as_expected"]) for c in trained["controls"]}
    assert outcomes["legacy"] == outcomes["roundness-off"] == outcomes["odd-one-out"] == ("fail", True)
    assert outcomes["null"] == ("pass", True) and outcomes["mix10"] == ("pass", False)
    assert trained["verdict"]["status"] == "no power" and sec["power"]["has_power"] is False
