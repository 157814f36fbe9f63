"""The twins beside their originals in items.html, in real Chromium (Playwright), from disk:
no request leaves file://, no console error, every pair listed, one opened shows both prompts,
and the kind and outcome filters narrow the list."""

from __future__ import annotations

import pytest
from browser_support import browser, sync_api  # noqa: F401  (fixtures)

from synthprobe.cli import main

from .test_report_twins import build, document, saved_block, write  # noqa: F401  (build: a fixture)

pytestmark = pytest.mark.slow


def test_pairs_in_chromium(build, browser, tmp_path):  # noqa: F811
    folder, pairs = build
    block = saved_block(folder, pairs, protocols=("loglik",))
    res = write(tmp_path / "saved.json", document(block, "saver"))
    assert main(["report", str(res), "--out", str(tmp_path / "rep")]) == 0
    page = browser.new_page()
    urls, errors = [], []
    page.on("request", lambda r: urls.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((tmp_path / "rep" / "items.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    page_size = 50  # pairs listed before "show more" (report_items_pairs.js)
    shown = min(page_size, len(pairs))
    assert page.locator("#p-count").inner_text() == f"Showing {shown} of {len(pairs)} pairs"
    assert page.locator("#pairs details.pair").count() == shown
    first = page.locator("#pairs details.pair").first
    first.locator("summary").click()
    text = first.inner_text()
    sid = next(s for s in pairs if s in text)
    orig, tw = pairs[sid]
    assert orig["ctx"] in text and tw["ctx"] in text and "Original:" in text and "Twin (" in text
    assert "twin's pick:" in text
    page.select_option("#p-kind", "reordered")
    n = sum(1 for _o, t in pairs.values() if t["metadata"]["twin_kind"] == "reordered")
    assert page.locator("#pairs details.pair").count() == min(page_size, n)
    assert page.locator("#p-count").inner_text() == f"Showing {min(page_size, n)} of {n} pair" + "s" * (n != 1)
    page.select_option("#p-outcome", "both right")
    for s in page.locator("#pairs details.pair summary").all_inner_texts():
        assert "reordered" in s and "both right" in s
    assert errors == []
    assert all(u.startswith("file://") or u.startswith("data:") for u in urls)
    page.close()
