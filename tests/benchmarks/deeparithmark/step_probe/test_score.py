"""``synthprobe probe steps`` without a real model: probe construction, balance audit,
determinism, private variants, the summary's statistics, the results block, bad input, and a
full run through the CLI with the toy engine (cache and resume)."""

from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from scipy.stats import binomtest

from synthprobe.backends import ENGINES, register_engine
from synthprobe.benchmarks.deeparithmark.audit import CHANCE, tolerance
from synthprobe.benchmarks.deeparithmark.step_probe.build import OPERATIONS, audit_probes, build_probes, step_mistakes
from synthprobe.benchmarks.deeparithmark.step_probe.metrics import cell, summarise_steps
from synthprobe.benchmarks.deeparithmark.steps import check_step
from synthprobe.cli import main
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.results import parse, read_results
from tests.support.cli import synthprobe

ROOT = Path(__file__).resolve().parents[4]
RELEASE = ROOT / "data" / "deeparithmark-1.jsonl"


@pytest.fixture(scope="module")
def release_probes():
    return build_probes(load_arithmark3(RELEASE), path=RELEASE)


def _first(probes, op):
    return next(p for p in probes if p.op == op)


def test_every_step_form_has_isolation_and_chain_prompts(release_probes):
    probes, _ = release_probes
    items = {it.id: it for it in load_arithmark3(RELEASE)}
    assert {p.op for p in probes} == set(OPERATIONS)
    for op in OPERATIONS:
        p = _first(probes, op)
        lines = items[p.item].metadata["solution_steps"]
        step = check_step(lines[p.step - 1])
        assert p.isolation == f"{step.lhs} ="
        # the chain: the problem, the earlier steps with their results, the step up to "="
        assert p.chain.startswith(f"Problem: {items[p.item].ctx}")
        for earlier in lines[: p.step - 1]:
            assert f"\n{earlier}\n" in p.chain
        assert p.chain.endswith(f"\n{step.what}: {step.lhs} =")
        assert p.answer == step.rhs
    assert _first(probes, "%").isolation.endswith("% of " + _first(probes, "%").isolation.split("% of ")[1])
    clock = _first(probes, "clock")
    assert " min =" in clock.isolation and clock.answer.endswith(("a.m.", "p.m."))
    dm = _first(probes, "divmod")
    assert "(remainder " in dm.answer and all("(remainder " in o for o in dm.options)


def test_correct_answer_once_and_distractors_named_and_distinct(release_probes):
    probes, _ = release_probes
    for p in probes:
        assert len(p.options) == 4 and len(set(p.options)) == 4 and len(set(p.values)) == 4
        assert p.sources[p.label] == "correct" and p.sources.count("correct") == 1
        assert p.options.count(p.answer) == 1
        wrong = [s for i, s in enumerate(p.sources) if i != p.label]
        assert len(set(wrong)) == 3 and all(s and s != "correct" for s in wrong)


def test_named_mistakes_are_the_values_they_claim():
    s = check_step("total: 47 + 38 = 85")
    m = step_mistakes(s)
    assert m["dropped a carry"] == 75 and m["subtracted instead of adding"] == 9
    s = check_step("left: 52 - 17 = 35")
    assert step_mistakes(s)["forgot to borrow"] == 45
    s = check_step("share: 20% of 450 = 90")
    m = step_mistakes(s)
    assert m["took the rest instead of the share"] == 360 and m["percent of the wrong base (of the share)"] == 18
    s = check_step("end: 11:40 a.m. + 50 min = 12:30 p.m.")
    assert step_mistakes(s)["no carry into the hour"] == 11 * 60 + 30
    s = check_step("boxes: 100 / 7 = 14 (remainder 2)")
    assert s.op == "divmod" and s.remainder == Fraction(2)


def test_balance_audit_keeps_value_and_slot_shortcuts_at_chance(release_probes):
    """The release's shortcut audit, run on the step probes' options: largest, smallest,
    roundest and every fixed slot stay within the card's bound around 25 %."""
    probes, _ = release_probes
    rows = {r.name: r for r in audit_probes(probes, classifier=False)}
    tol = tolerance(len(probes))
    for name in (
        "pick largest value",
        "pick smallest value",
        "pick the roundest number",
        "fixed slot 0",
        "fixed slot 1",
        "fixed slot 2",
        "fixed slot 3",
    ):
        assert abs(rows[name].percent - CHANCE) <= tol, (name, rows[name].percent)


def test_probes_are_deterministic_and_a_limit_is_a_prefix(release_probes):
    probes, skipped = release_probes
    items = load_arithmark3(RELEASE)
    again, _ = build_probes(items[:40], path=RELEASE)
    assert again == probes[: len(again)] and len(again) > 100
    # nearly every step is probed; the rest are listed with a reason
    assert len(skipped) < 0.02 * len(probes) and all(s.why for s in skipped)


def test_a_private_variant_gives_balanced_probes(tmp_path):
    from synthprobe.benchmarks.deeparithmark.build import build

    out = tmp_path / "private.jsonl"
    build(out, seed=7, n=200, progress=False)
    probes, _ = build_probes(load_arithmark3(out), path=out)
    assert len(probes) > 500
    rows = {r.name: r for r in audit_probes(probes, classifier=False)}
    tol = tolerance(len(probes))
    for name in ("pick largest value", "pick smallest value", "pick the roundest number"):
        assert abs(rows[name].percent - CHANCE) <= tol


def _rec(item, depth, step, op, iso, chain, digits=2):
    return {
        "id": f"{item}#{step}",
        "item": item,
        "depth": depth,
        "step": step,
        "n_steps": depth,
        "op": op,
        "operation": OPERATIONS[op],
        "digits": digits,
        "isolation": {"choice": iso, "generation": False},
        "chain": {"choice": chain, "generation": False},
    }


def test_summary_first_broken_gap_and_exact_intervals():
    recs = [
        _rec("a", 2, 1, "+", True, True),
        _rec("a", 2, 2, "×", True, False),
        _rec("b", 2, 1, "+", False, False),
        _rec("b", 2, 2, "×", True, True),
        _rec("c", 2, 1, "+", True, True),
        _rec("c", 2, 2, "×", True, True),
    ]
    s = summarise_steps(recs, list(OPERATIONS))
    assert s["first_broken"]["choice"]["2"] == {"items": 3, "counts": {"1": 1, "2": 1, "none": 1}}
    g = s["gap"]["choice"]
    assert (g["isolation_only"], g["chain_only"]) == (1, 0)
    assert g["difference"] == pytest.approx((4 - 5) / 6, abs=1e-6)
    ci = binomtest(4, 6).proportion_ci(method="exact")
    assert s["overall"]["chain"]["choice"]["ci95"] == [round(ci.low, 6), round(ci.high, 6)]
    assert [r["operation"] for r in s["gap_by_operation"]] == ["add", "multiply"]
    assert [(r["depth"], r["step"]) for r in s["by_step_depth"]] == [(2, 1), (2, 2)]
    assert cell([]) == {"correct": 0, "n": 0, "acc": None, "ci95": None}


def test_results_document_checks_the_steps_block_version(tmp_path):
    doc = {
        "schema": "synthprobe/results",
        "schema_version": 2,
        "models": [{"model": {"name": "m"}, "results": {"steps": {"version": 99, "summary": {}}}}],
    }
    with pytest.raises(InputError, match="version"):
        parse(doc, tmp_path / "x.json")
    doc["models"][0]["results"]["steps"]["version"] = 1
    assert parse(doc, tmp_path / "x.json").models[0].results["steps"].data["version"] == 1


def _cli(*args, cwd=ROOT):
    """``synthprobe probe steps ARGS`` through the shared runner."""
    return synthprobe("probe", "steps", *args, cwd=cwd)


def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path):
    line = RELEASE.read_text(encoding="utf-8").splitlines()[0]
    obj = json.loads(line)
    obj["metadata"]["solution_steps"][1] = "total with the fee: $312 + $15 = $328"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(obj) + "\n", encoding="utf-8")
    out = tmp_path / "out.json"
    r = _cli("--data", str(bad), "--output", str(out), "--no-progress")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "solution_steps[1]" in r.stderr and "$328" in r.stderr
    assert not out.exists()
    r = _cli("--data", str(tmp_path / "missing.jsonl"), "--output", str(out))
    assert r.returncode == 2 and "does not exist" in r.stderr and not out.exists()
    r = _cli("--limit", "0", "--output", str(out))
    assert r.returncode == 2 and not out.exists()


@pytest.fixture
def toy():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


def _strip_timing(doc):
    doc = json.loads(json.dumps(doc))
    for e in doc["models"]:
        e.pop("load_s", None)
        b = e["results"]["steps"]
        for k in ("timing", "cached_items"):
            b.pop(k)
    doc.pop("command", None)
    return doc


def test_toy_engine_run_resumes_from_the_cache_and_reports(toy, tmp_path):
    out1, out2, out3 = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    base = [
        "probe",
        "steps",
        "--model",
        "toy:bigram",
        "--limit",
        "6",
        "--no-progress",
        "--save-items",
        "--batch-size",
        "4",
    ]
    assert main([*base, "--output", str(out1)]) == 0
    doc1 = json.loads(out1.read_text())
    block = doc1["models"][0]["results"]["steps"]
    assert block["cached_items"] == 0 and block["probes"] == len(block["items"]) > 10
    assert read_results(out1).models[0].results["steps"].data["version"] == 1
    # drop half of the cache: the next run scores only what is missing, with the same results
    cache = next((Path(os.environ["SYNTHPROBE_CACHE"]) / "scores").glob("*.jsonl"))
    lines = cache.read_text().splitlines(keepends=True)
    cache.write_text("".join(lines[: len(lines) // 2]))
    assert main([*base, "--output", str(out2)]) == 0
    doc2 = json.loads(out2.read_text())
    assert doc2["models"][0]["results"]["steps"]["cached_items"] == len(lines) // 2
    assert _strip_timing(doc1) == _strip_timing(doc2)
    # all cached now
    assert main([*base, "--output", str(out3)]) == 0
    assert json.loads(out3.read_text())["models"][0]["results"]["steps"]["cached_items"] == block["probes"]
    # an existing output is refused without --overwrite
    assert main([*base, "--output", str(out1)]) == 2
    # the report renders the section
    rep = tmp_path / "rep"
    assert main(["report", str(out1), "--out", str(rep)]) == 0
    page = (rep / "index.html").read_text()
    assert "Per-step probe" in page and "First broken step" in page and (rep / "steps.png").exists()
    assert "| d2 |" in (rep / "leaderboard.md").read_text()


def test_report_section_escapes_what_it_reads():
    from synthprobe.benchmarks.deeparithmark.step_probe.report.read import StepsResult
    from synthprobe.benchmarks.deeparithmark.step_probe.report.section import section

    recs = [_rec("a", 2, 1, "+", True, False), _rec("a", 2, 2, "clock", False, True)]
    evil = "<script>alert(1)</script>"
    block = {
        "summary": summarise_steps(recs, list(OPERATIONS)),
        "audit": [{"strategy": evil, "correct": 1, "n": 2, "percent": 50.0, "within_chance": False}],
    }
    html = section([StepsResult(model=evil, source=evil, block=block, settings={})], None)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "First broken step" in html and "clock" in html


def test_probe_steps_under_a_chat_template_asks_each_question_as_a_user_turn(tmp_path):
    """--chat-template / --system-prompt on probe steps (a tiny random model): each probe's options
    are scored, and its answer generated, after the question rendered as the user turn with the
    assistant's turn opened; the settings record the template, and a plain run keeps its own
    cache entries."""
    from scoring_support import save_tiny_llama, write_turns_template

    from synthprobe.backends import load_backend
    from synthprobe.backends.chat import ChatSetup
    from synthprobe.benchmarks.deeparithmark.step_probe.score import DEFAULT_DATA, STOP

    model = save_tiny_llama(tmp_path / "tiny")
    template = write_turns_template(tmp_path / "turns.jinja")
    base = [
        "probe",
        "steps",
        "--model",
        str(model),
        "--device",
        "cpu",
        "--dtype",
        "float32",
        "--threads",
        "1",
        "--limit",
        "2",
        "--no-progress",
        "--save-items",
        "--batch-size",
        "4",
        "--max-new-tokens",
        "4",
    ]
    out, plain = tmp_path / "chat.json", tmp_path / "plain.json"
    assert main([*base, "--chat-template", str(template), "--system-prompt", "Be exact.", "--output", str(out)]) == 0
    [entry] = json.loads(out.read_text())["models"]
    assert entry["settings"]["chat"]["chat_template_name"] == "turns.jinja"
    assert entry["settings"]["chat"]["system_prompt"] == "Be exact."
    items = entry["results"]["steps"]["items"]

    setup = ChatSetup(source=str(template), text=template.read_text(), system_prompt="Be exact.")
    probes, _ = build_probes(load_arithmark3(DEFAULT_DATA)[:2], path=DEFAULT_DATA)
    lm = load_backend(str(model), device="cpu", dtype="float32", progress=False)
    try:
        mc = [it for p in probes for it in p.mc_items()]
        rendered = lm.render_chat([setup.conversation(it.ctx) for it in mc], template=setup.template_arg)
        assert rendered[0].startswith("<system>Be exact.</system>\n<user>") and rendered[0].endswith("<assistant>")
        want = lm.generate(rendered, 4, STOP, progress=False)
    finally:
        lm.close()
    got = [rec[mode]["generated"] for rec in items for mode in ("isolation", "chain")]
    assert got == want
    assert main([*base, "--output", str(plain)]) == 0
    [plain_entry] = json.loads(plain.read_text())["models"]
    assert plain_entry["settings"]["chat"]["chat_template"] == "none"
    assert plain_entry["results"]["steps"]["cached_items"] == 0  # the template's scores are not the plain ones
