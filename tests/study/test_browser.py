"""A rater completes the study in a real browser (Chromium driven by Playwright).

Without Chromium (``$SYNTHPROBE_CHROMIUM``, default ``/usr/bin/chromium``) or Playwright the
test is skipped with the reason; with ``SYNTHPROBE_REQUIRE_BROWSER=1`` (set it in CI, where the
set-up installs both) it fails instead, so the browser check cannot vanish unnoticed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from browser_support import browser, sync_api  # noqa: F401  (fixtures)
from study_support import ADMIN_PASSWORD, Server, write_items

EVIL = "<script>window.pwned = 1</script> Bold <b>claims</b>"


def _admin_refused(page, url) -> bool:
    """Headless Chromium either shows the 401 page or gives up with ERR_INVALID_AUTH_CREDENTIALS."""
    from playwright.sync_api import Error

    try:
        resp = page.goto(url)
    except Error as exc:
        return "ERR_INVALID_AUTH_CREDENTIALS" in str(exc)
    return resp.status == 401 and "admin password" in page.content()


def _norm(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.browser
def test_rater_session_in_chromium(browser, tmp_path):
    items_path = tmp_path / "items.jsonl"
    items = write_items(items_path, n_articles=4, conditions=("model",), extra_title=EVIL)
    human_start = {it["title"]: _norm(it["human"]["text"])[:60] for it in items}
    with Server(tmp_path / "study.sqlite", items_path) as srv:
        ctx = browser.new_context()
        page = ctx.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(srv.url + "/")
        page.click("#start")
        page.wait_for_url("**/r/**")
        rater_url = page.url
        plan = ["right", "right", "wrong", "unsure"]  # expected accuracy 2 / 3
        for i, what in enumerate(plan):
            assert f"Question {i + 1} of 4" in page.inner_text(".progress")
            title = page.inner_text("#title")
            is_human = _norm(page.inner_text("#body")).startswith(human_start[title])
            if title == EVIL:
                assert page.locator("#body script, #title script").count() == 0
                assert page.inner_text("#title") == EVIL  # shown as text, not markup
                if is_human:
                    assert "<script>alert('x')</script> & <b>bold</b>" in page.inner_text("#body")
                assert page.evaluate("window.pwned") is None
            truth = "human" if is_human else "machine"
            choice = {
                "right": f"{truth}-very",
                "wrong": "machine-more" if truth == "human" else "human-more",
                "unsure": "unsure",
            }[what]
            page.check(f"input[value='{choice}']")
            page.click("#next")
            page.wait_for_load_state()
            if i == 1:
                # close the tab and come back later: the link resumes at question 3
                page.close()
                page = ctx.new_page()
                page.goto(srv.url + "/")
                page.click("#resume")
                assert page.url == rater_url
        assert "You have answered all 4 questions" in page.inner_text("#message")
        assert dialogs == []

        # admin: no password and a wrong password are refused; the right one shows 2/3 accuracy
        for creds in (None, {"username": "admin", "password": "nope"}):
            denied = browser.new_context(http_credentials=creds)
            assert _admin_refused(denied.new_page(), srv.url + "/admin")
            assert denied.request.get(srv.url + "/admin").status == 401
            assert denied.request.get(srv.url + "/admin/results.csv").status == 401
            denied.close()
        admin = browser.new_context(http_credentials={"username": "admin", "password": ADMIN_PASSWORD})
        apage = admin.new_page()
        assert apage.goto(srv.url + "/admin").status == 200
        row = apage.locator("#results tr").nth(1)
        assert row.locator("td.acc").inner_text() == "66.7%"
        assert apage.locator("#articles script").count() == 0
        admin.close()
        ctx.close()

        req = urllib.request.Request(srv.url + "/admin/results.json")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 401
        import base64

        req.add_header("Authorization", "Basic " + base64.b64encode(f"x:{ADMIN_PASSWORD}".encode()).decode())
        res = json.load(urllib.request.urlopen(req, timeout=10))
        assert res["experiments"][0]["raters"] == 1
        assert res["experiments"][0]["dont_know_rate"] == 0.25
