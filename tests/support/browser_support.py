"""Real Chromium (Debian's ``chromium``) driven by Playwright, for the tests of our web pages.

Without Chromium (``$SYNTHPROBE_CHROMIUM``, default ``/usr/bin/chromium``) or Playwright a
browser test is skipped with the reason; with ``SYNTHPROBE_REQUIRE_BROWSER=1`` (set it in CI,
where the set-up installs both) it fails instead, so the browser check cannot vanish unnoticed.
A test module takes the fixtures with ``from browser_support import browser, sync_api``.
"""

from __future__ import annotations

import importlib
import os
import shutil

import pytest

CHROMIUM = os.environ.get("SYNTHPROBE_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def browser_missing() -> str | None:
    if shutil.which(CHROMIUM) is None:
        return f"the browser test needs Debian's chromium at {CHROMIUM} (apt-get install -y chromium)"
    try:
        importlib.import_module("playwright.sync_api")
    except ImportError:
        return "the browser test needs playwright (pip install playwright)"
    return None


@pytest.fixture(scope="module")
def sync_api():
    missing = browser_missing()
    if missing is not None:
        if os.environ.get("SYNTHPROBE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SYNTHPROBE_REQUIRE_BROWSER=1, but {missing}", pytrace=False)
        pytest.skip(missing)
    return importlib.import_module("playwright.sync_api")


@pytest.fixture(scope="module")
def browser(sync_api):
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
