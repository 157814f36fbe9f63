"""The item viewer (items.html) in real Chromium, driven by Playwright, opened from disk.

The embedded model scores 20 release items twice (float32 and bfloat16: two runs of one name,
told apart by the report) and the toy engine scores the same items as a third model, so the
side-by-side view has disagreements to put first. Every request the page makes is recorded and
must be a file:// URL; console errors and page errors fail the test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_support import browser, sync_api  # noqa: F401  (fixtures)
from viewer_support import EVIL, RELEASE, ROOT, evil_data, score_toy

from synthprobe.backends import ENGINES, register_engine
from synthprobe.cli import main
from synthprobe.report.build import build_report

pytestmark = pytest.mark.slow
N = 20


@pytest.fixture(scope="module")
def toy_engine():
    register_engine("toy", "toy_engine")
    yield
    ENGINES.pop("toy", None)


@pytest.fixture(scope="module")
def report(tmp_path_factory, toy_engine):
    d = tmp_path_factory.mktemp("viewer")
    files = []
    for dtype in ("float32", "bfloat16"):
        out = d / f"{dtype}.json"
        assert (
            main(
                [
                    "score",
                    "deeparithmark",
                    "--model",
                    "smollm2-135m-instruct",
                    "--dtype",
                    dtype,
                    "--limit",
                    str(N),
                    "--save-predictions",
                    "--no-cache",
                    "--no-progress",
                    "--output",
                    str(out),
                ]
            )
            == 0
        )
        files.append(out)
    files.append(score_toy(RELEASE, d / "toy.json", limit=N))
    build_report(files, d / "rep")
    preds = [json.loads(f.read_text())["models"][0]["results"]["deeparithmark"]["predictions"] for f in files]
    return d / "rep" / "items.html", preds


class Watch:
    """Every URL the page asks for, and every console error or uncaught exception."""

    def __init__(self, page):
        self.urls: list[str] = []
        self.errors: list[str] = []
        page.route("**/*", self._route)
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route):
        self.urls.append(route.request.url)
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    def check(self):
        assert self.urls and all(u.startswith("file://") for u in self.urls), self.urls
        assert self.errors == []


def _open(browser, path: Path):
    page = browser.new_page()
    watch = Watch(page)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page, watch


def _cells(page, col: int) -> list[str]:
    return page.eval_on_selector_all(f"#rows tr td:nth-child({col})", "tds => tds.map(t => t.textContent)")


def test_filters_change_the_rows_and_an_item_opens(browser, report):
    path, (fp32, bf16, toy) = report
    page, watch = _open(browser, path)
    names = page.eval_on_selector_all("#f-a option", "os => os.map(o => o.textContent)")
    assert len(names) == 4 and len(set(names)) == 4 and names[0] == "every model"  # two runs of one name, told apart
    assert page.inner_text("#count") == f"Showing {3 * N} of {3 * N} rows"
    assert page.locator("#rows tr").count() == 3 * N

    page.select_option("#f-depth", "3")
    depth3 = sum(p["depth"] == 3 for p in fp32)
    assert 0 < depth3 < N and page.locator("#rows tr").count() == 3 * depth3
    assert set(_cells(page, 2)) == {"3"}
    page.select_option("#f-depth", "")

    page.select_option("#f-a", "0")
    page.select_option("#f-outcome", "wrong")
    wrong = [p for p in fp32 if not p["correct_acc_norm"]]
    assert 0 < len(wrong) < N and page.locator("#rows tr").count() == len(wrong)
    assert _cells(page, 1) == [p["id"] for p in wrong]
    page.select_option("#f-outcome", "")

    mistake = next(p["chosen_source"] for p in fp32 if p["chosen_source"] != "correct")
    page.select_option("#f-mistake", mistake)
    assert _cells(page, 1) == [p["id"] for p in fp32 if p["chosen_source"] == mistake]
    page.select_option("#f-mistake", "")
    assert page.eval_on_selector_all("#f-protocol option", "os => os.map(o => o.value)") == ["", "loglik"]
    page.select_option("#f-protocol", "loglik")
    assert page.locator("#rows tr").count() == N
    assert page.locator("#f-broken").is_hidden()  # no per-step probe in these files

    # open the first item: prompt, endings, log-likelihoods, named mistakes, every model's pick
    first = json.loads(RELEASE.read_text("utf-8").splitlines()[0])
    page.click("#rows tr >> nth=0")
    detail = page.locator("#detail")
    assert detail.is_visible()
    assert page.inner_text("#detail pre") == first["ctx"]
    rows = page.locator("#detail table >> nth=0").locator("tbody tr")
    assert rows.count() == len(first["endings"])
    for e, ending in enumerate(first["endings"]):
        cells = rows.nth(e).locator("td").all_text_contents()
        assert cells[1] == ending and cells[3] == first["metadata"]["option_sources"][e]
        assert cells[4] == f"{fp32[0]['logprob'][e]:.3f}" and cells[5] == f"{fp32[0]['per_token'][e]:.3f}"
    assert page.locator("#detail td.pickA").count() == 2  # log-lik. and per-token of the pick
    picks = page.locator("#detail table >> nth=1").locator("tbody tr")
    assert picks.count() == 3
    for k, p in enumerate((fp32[0], bf16[0], toy[0])):
        cells = picks.nth(k).locator("td").all_text_contents()
        assert cells[1] == "loglik" and cells[3] == p["chosen_source"]
        assert cells[4] == ("✓" if p["correct_acc_norm"] else "✗")
    watch.check()


def test_two_models_side_by_side_put_disagreements_first(browser, sync_api, report):
    path, (fp32, _, toy) = report
    page, watch = _open(browser, path)
    page.select_option("#f-a", "0")
    page.select_option("#f-b", "2")
    differ = [a["id"] for a, b in zip(fp32, toy) if a["pred_acc_norm"] != b["pred_acc_norm"]]
    same = [a["id"] for a, b in zip(fp32, toy) if a["pred_acc_norm"] == b["pred_acc_norm"]]
    assert differ and same
    assert _cells(page, 1) == differ + same
    assert f"pick differently on {len(differ)}" in page.inner_text("#count")
    page.select_option("#f-outcome", "disagree")
    assert _cells(page, 1) == differ
    page.focus("#rows tr >> nth=0")
    page.keyboard.press("Enter")  # rows open from the keyboard too
    assert page.inner_text("#detail h2") == f"Item {differ[0]}"
    assert page.locator("#detail td.pickA").count() == 2 and page.locator("#detail td.pickB").count() == 2
    page.keyboard.press("Escape")
    assert page.locator("#detail").is_hidden()
    page.click("#reset")
    sync_api.expect(page.locator("#rows tr")).to_have_count(3 * N)  # every model's rows again
    watch.check()


def test_markup_in_item_text_stays_text(browser, tmp_path, toy_engine):
    res = score_toy(evil_data(tmp_path / "evil.jsonl"), tmp_path / "toy.json", limit=6)
    build_report([res], tmp_path / "rep")
    page, watch = _open(browser, tmp_path / "rep" / "items.html")
    assert page.evaluate("window.pwned") is None
    assert EVIL in page.eval_on_selector_all("#f-template option", "os => os.map(o => o.textContent)")
    page.click("#rows tr >> nth=0")
    assert page.inner_text("#detail pre").startswith(EVIL.replace("\u2028", "").split(" ")[0])
    assert page.locator("#detail script, #rows script, #detail b").count() == 0
    assert page.evaluate("window.pwned") is None
    watch.check()


def test_generated_answers_show_their_text_and_parse(browser, tmp_path, toy_engine):
    """No scorer writes generative Deep Arithmark records yet; two records are rewritten by hand
    to the documented contract (protocol, generated, parsed, pred_acc_norm -1 when nothing was
    parsed), so the protocol filter and the generated-text view are checked before one does."""
    res = score_toy(RELEASE, tmp_path / "toy.json", limit=6)
    doc = json.loads(res.read_text())
    preds = doc["models"][0]["results"]["deeparithmark"]["predictions"]
    # item 0 of the release: $66 is right
    for k, (text, parsed) in enumerate([("The answer is $66.", "66"), ("I cannot tell.", None)]):
        rec = preds[k]
        for key in ("logprob", "per_token", "per_char", "n_tokens", "n_chars", "is_greedy"):
            rec.pop(key)
        pick = rec["option_values"].index(int(parsed)) if parsed else -1
        rec |= {
            "protocol": "free",
            "generated": text,
            "parsed": parsed,
            "pred_acc_norm": pick,
            "correct_acc_norm": pick == rec["label"],
        }
    res.write_text(json.dumps(doc))
    build_report([res], tmp_path / "rep")
    page, watch = _open(browser, tmp_path / "rep" / "items.html")
    assert page.eval_on_selector_all("#f-protocol option", "os => os.map(o => o.value)") == ["", "free", "loglik"]
    page.select_option("#f-protocol", "free")
    assert _cells(page, 1) == [preds[0]["id"], preds[1]["id"]]
    assert _cells(page, 7) == ["correct", "no answer parsed"]
    page.select_option("#f-protocol", "")
    page.select_option("#f-mistake", "no answer parsed")
    assert _cells(page, 1) == [preds[1]["id"]]
    page.click("#rows tr >> nth=0")
    cells = page.locator("#detail table >> nth=1").locator("tbody tr td").all_text_contents()
    # generated, parsed, the rule that read it and its outcome (neither recorded in this older record)
    assert cells[1] == "free" and cells[-4:] == ["I cannot tell.", "—", "—", "—"]
    assert set(page.locator("#detail td.lp").all_text_contents()) == {"—"}  # no log-likelihoods to show
    watch.check()


def test_gpt3_items_of_the_committed_results_open_with_prompt_answer_and_generation(browser, tmp_path):
    gpt3 = ROOT / "benchmarks" / "gpt3_smollm2-135m-instruct.json"
    build_report([gpt3], tmp_path / "rep")
    rows = json.loads(gpt3.read_text("utf-8"))["results"]
    page, watch = _open(browser, tmp_path / "rep" / "items.html")
    assert page.locator("#notes p").count() == 0  # every prompt rebuilt
    page.select_option("#f-template", "2D+ one")
    (row,) = [r for r in rows if r["code"] == "2D+" and r["setting"] == "one"]
    assert page.locator("#rows tr").count() == len(row["items"])
    assert _cells(page, 6) == [it["prediction"].strip() or "(nothing generated)" for it in row["items"]]
    page.select_option("#f-protocol", "generate")
    assert page.locator("#rows tr").count() == len(row["items"])
    page.click("#rows tr >> nth=0")
    prompt = page.inner_text("#detail pre.prompt")
    assert prompt.startswith("Q: What is") and prompt.count("Q: What is") == 2 and prompt.endswith("A:")
    assert page.inner_text("#detail pre.gold") == row["items"][0]["gold"].strip()
    cells = page.locator("#detail table").last.locator("tbody tr td").all_text_contents()
    assert cells[1] == "generate" and cells[-4] == row["items"][0]["prediction"]
    watch.check()


def test_a_generated_pick_that_is_no_option_is_named_by_its_outcome_and_rule(browser, tmp_path):
    """A free answer whose value matches no option, an echo and a cut-off answer are each named as
    such (not "no answer parsed"), and the opened item shows the rule that read each answer."""
    from tests.report.support_generated import bench_doc, generated_entry, write

    doc = bench_doc()
    doc["models"] = [generated_entry(doc["models"][0], "free")]
    doc["models"][0]["results"]["deeparithmark"]["predictions"] = doc["models"][0]["results"]["deeparithmark"][
        "predictions"
    ][:10]
    build_report([write(tmp_path / "free.json", doc)], tmp_path / "rep")
    page, watch = _open(browser, tmp_path / "rep" / "items.html")
    assert _cells(page, 7)[:4] == [
        "no answer parsed",
        "echo: repeats a number of the question",
        "cut off before it stated an answer",
        "value matches no option",
    ]
    page.select_option("#f-mistake", "value matches no option")
    assert page.locator("#rows tr").count() == 1
    page.click("#rows tr >> nth=0")
    head = page.locator("#detail table").last.locator("thead th").all_text_contents()
    cells = page.locator("#detail table").last.locator("tbody tr td").all_text_contents()
    row = dict(zip(head, cells))
    assert row["Named mistake"] == "value matches no option" and row["Parsed"] == "999999"
    assert row["Read by rule"] == "strict" and row["Outcome"] == "answered"
    watch.check()
