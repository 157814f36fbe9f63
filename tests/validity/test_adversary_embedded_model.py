"""The choices-only adversary on the embedded model, at a small budget, through the real command:
the release passes (within chance's band at every size), the heuristic audit catches one
positive control and passes the other, and the power verdict says whether every control failed (at
this budget neither does: the verdict says the adversary has no power).
Training is deterministic: the same seed gives the same adapter, another seed another one."""

from __future__ import annotations

import json

import pytest

from synthprobe.cli import main
from synthprobe.validity.curve import chance_band

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def section(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("validate") / "validity.json"
    assert (
        main(
            [
                "validate",
                # the LoRA adversary alone: the trained audit has its own tests (test_validate_trained.py)
                "--no-trained",
                "--sizes",
                "0,500",
                "--control-size",
                "1000",
                "--control-items",
                "200",
                "--no-progress",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["models"] == [] and doc["schema"] == "synthprobe/results"
    return doc["validity"]


def test_the_release_passes_at_every_size(section):
    adv = section["adversary"]
    assert [p["size"] for p in adv["curve"]] == [0, 500]
    for p in adv["curve"]:
        assert p["n"] == 1000
        lo, hi = chance_band(p["n"], 0.25)
        assert lo <= p["accuracy"] <= hi, p
        assert p["within_chance"] is True
        assert sum(g["n"] for g in p["by_depth"].values()) == 1000
        assert sum(g["n"] for g in p["by_template"].values()) == 1000
    assert adv["passes"] is True and adv["verdict"].startswith("passes")
    assert adv["curve"][0]["train"] is None and len(adv["curve"][1]["train"]["adapter_sha256"]) == 64


def test_the_audit_splits_the_controls_and_the_power_verdict_follows_them(section):
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    controls = {c["name"]: c for c in section["controls"]}
    assert set(controls) == set(CONTROLS) and len(controls) == 2
    # one flaw the heuristic audit catches (roundness-off), one it misses
    assert controls["roundness-off"]["audit"]["passes"] is False
    assert [c["audit"]["passes"] for n, c in controls.items() if n != "roundness-off"] == [True]
    for c in controls.values():
        last = c["adversary"]["curve"][-1]
        assert c["fails"] is (last["accuracy"] > chance_band(last["n"], 0.25)[1] and last["p_vs_chance"] < 0.05)
    # At this budget the 135 M adversary learns neither flaw (25.8 % and 25.0 % at 1,000 training
    # items, docs/validity.md): the verdict must then say that the release's pass means nothing.
    every = all(c["fails"] for c in controls.values())
    assert section["power"]["has_power"] is every
    assert section["power"]["verdict"].startswith("has power" if every else "no power")
    for c in controls.values():
        if not c["fails"]:
            assert c["name"] in section["power"]["verdict"] and "means nothing" in section["power"]["verdict"]


def test_the_report_shows_the_validity_section(section, tmp_path):
    doc = tmp_path / "v.json"
    from synthprobe.results import dumps_results, results_document

    doc.write_text(dumps_results(results_document(models=[], validity=section)), encoding="utf-8")
    out = tmp_path / "report"
    assert main(["report", str(doc), "--out", str(out)]) == 0
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "Validity" in html and all(c["name"] in html for c in section["controls"])


def test_the_same_seed_gives_the_same_adapter():
    from synthprobe.backends import load_backend
    from synthprobe.validity import sources
    from synthprobe.validity.curve import run_curve

    backend = load_backend("smollm2-135m-instruct", dtype="float32", progress=False)
    items = sources.collect(sources.deeparithmark_builder(None), n=40, seed=3, purpose="test", exclude=set())
    train, test = items[:32], items[32:]

    def sha(seed: int) -> str:
        block = run_curve(backend, train, test, kind="endings", sizes=[32], settings={"seed": seed})
        return block["curve"][-1]["train"]["adapter_sha256"]

    first, again, other = sha(0), sha(0), sha(1)
    assert first == again and first != other
