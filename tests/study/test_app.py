"""The rating web app through Flask's test client: flow, validation, escaping, admin access."""

from __future__ import annotations

import base64
import re

import pytest
from study_support import ADMIN_PASSWORD, write_items

from synthprobe.study.app import create_app
from synthprobe.study.items import load_items
from synthprobe.study.store import Store

EVIL = "<script>alert('t')</script> Town & Gown"


def _app(tmp_path, admin=ADMIN_PASSWORD):
    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=4, conditions=("model",), extra_title=EVIL)
    db = tmp_path / "s.sqlite"
    Store(db).initialise(load_items(items))
    app = create_app(str(db), admin_password=admin)
    return app.test_client(), Store(db)


def _auth(password):
    return {"Authorization": "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()}


def _post(client, url, data=None):
    """A form post as the app's own pages send it: from its origin, with the session's CSRF token."""
    page = client.get("/").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    return client.post(url, data={"csrf_token": token, **(data or {})}, headers={"Origin": "http://localhost"})


def _start(client):
    resp = _post(client, "/start")
    assert resp.status_code == 303
    token = resp.headers["Location"].rsplit("/", 1)[1]
    assert re.fullmatch(r"[A-Za-z0-9_-]{20,}", token)
    return token


def test_rater_flow_validation_and_resume(tmp_path):
    client, store = _app(tmp_path)
    start = client.get("/")
    assert start.status_code == 200 and "4 short news articles" in start.text and 'id="resume"' not in start.text
    token = _start(client)
    page = client.get(f"/r/{token}")
    assert page.status_code == 200 and "Question 1 of 4" in page.text
    for label in (
        "Very likely written by a human",
        "More likely written by a human",
        "I don&#39;t know",
        "More likely written by a machine",
        "Very likely written by a machine",
    ):
        assert label in page.text
    assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")
    # invalid forms: clear 400 pages, nothing stored
    for form, msg in [
        ({"position": "0", "choice": "definitely"}, "unknown choice"),
        ({"position": "0"}, "choose one of the five answers"),
        ({"choice": "unsure"}, "did not say which question"),
        ({"position": "-1", "choice": "unsure"}, "did not say which question"),
        ({"position": "3", "choice": "unsure"}, "not the current one"),
        # str.isdigit() accepts these; int("²") raises and int("٠") is 0
        ({"position": "²", "choice": "unsure"}, "did not say which question"),
        ({"position": "٠", "choice": "unsure"}, "did not say which question"),
        ({"position": "0" * 7, "choice": "unsure"}, "did not say which question"),
        ({"position": ["0", "0"], "choice": "unsure"}, "did not say which question"),
        ({"position": "0", "choice": ["unsure", "human-very"]}, "more than one answer"),
        ({"position": "0", "choice": ["unsure", "unsure"]}, "more than one answer"),
    ]:
        resp = _post(client, f"/r/{token}", form)
        assert resp.status_code == 400 and msg in resp.text and "Back to the current question" in resp.text
    assert store.answer_rows() == []
    assert _post(client, f"/r/{token}", {"position": "0", "choice": "unsure"}).status_code == 303
    assert _post(client, f"/r/{token}", {"position": "0", "choice": "human-very"}).status_code == 303
    assert [r["choice"] for r in store.answer_rows()] == ["unsure"]  # idempotent
    # the start page (cookie) and the link both resume at question 2
    assert 'id="resume"' in client.get("/").text
    assert "Question 2 of 4" in client.get(f"/r/{token}").text
    for pos in (1, 2, 3):
        _post(client, f"/r/{token}", {"position": str(pos), "choice": "machine-very"})
    done = client.get(f"/r/{token}")
    assert done.status_code == 200 and "You have answered all 4 questions" in done.text
    assert _post(client, f"/r/{token}", {"position": "0", "choice": "unsure"}).status_code == 200
    assert 'id="resume"' not in client.get("/").text
    unknown = client.get("/r/not-a-real-token-123")
    assert unknown.status_code == 404 and "This study link is not valid" in unknown.text
    assert client.get("/r/<bad>").status_code == 404


def test_article_text_is_escaped(tmp_path):
    client, store = _app(tmp_path)
    token = _start(client)
    seen = False
    while (q := store.current_question(token)) is not None:
        page = client.get(f"/r/{token}").text
        if q.title == EVIL:
            seen = True
            assert "<script>" not in page
            assert "&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt; Town &amp; Gown" in page
        store.answer(token, q.position, "unsure")
    assert seen


def test_admin_pages_need_the_password(tmp_path):
    client, store = _app(tmp_path)
    for path in ("/admin", "/admin/results.csv", "/admin/results.json"):
        no = client.get(path)
        assert no.status_code == 401 and no.headers["WWW-Authenticate"].startswith("Basic")
        assert client.get(path, headers=_auth("wrong")).status_code == 401
        assert client.get(path, headers=_auth(ADMIN_PASSWORD)).status_code == 200
    token = _start(client)
    while (q := store.current_question(token)) is not None:
        store.answer(token, q.position, "human-very" if q.version == "human" else "machine-very")
    page = client.get("/admin", headers=_auth(ADMIN_PASSWORD)).text
    assert '<td class="acc">100.0%</td>' in page and "<script>" not in page
    csv_text = client.get("/admin/results.csv", headers=_auth(ADMIN_PASSWORD)).text
    assert csv_text.count("\n") == 5 and token not in csv_text


def test_admin_pages_refused_without_a_configured_password(tmp_path):
    client, _ = _app(tmp_path, admin=None)
    for path in ("/admin", "/admin/results.csv"):
        resp = client.get(path, headers=_auth(""))
        assert resp.status_code == 403 and "SYNTHPROBE_STUDY_ADMIN" in resp.text
    assert client.get("/").status_code == 200  # raters are still served


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5"])
def test_serve_refuses_non_loopback_hosts(tmp_path, capsys, host):
    from synthprobe.cli import main

    assert main(["study", "serve", "--db", str(tmp_path / "x.sqlite"), "--host", host]) == 2
    assert "not a loopback address" in capsys.readouterr().err
    assert not (tmp_path / "x.sqlite").exists()


def test_start_page_counts_the_questions_this_rater_will_get(tmp_path):
    items = tmp_path / "items.jsonl"
    rows = write_items(items, n_articles=4)  # model (4 articles), then control ...
    items.write_text("".join(items.read_text().splitlines(keepends=True)[:7]))  # ... with 3 articles
    assert [r["condition"] for r in rows[:7]].count("control") == 3
    db = tmp_path / "s.sqlite"
    Store(db).initialise(load_items(items))
    client = create_app(str(db), admin_password=None).test_client()
    expected = []
    for _ in range(4):
        expected.append(
            4
            if "read 4 short news articles" in client.get("/").text
            else 3
            if "read 3 short news articles" in client.get("/").text
            else None
        )
        token = _start(client)
        assert f"Question 1 of {expected[-1]}" in client.get(f"/r/{token}").text
    assert expected == [4, 3, 4, 3]  # raters alternate between the experiments


@pytest.mark.parametrize("require, rc, outcome", [(None, 0, "1 skipped"), ("1", 1, "1 error")])
def test_browser_test_skips_or_fails_without_chromium(tmp_path, require, rc, outcome):
    """A missing browser skips the browser test, unless SYNTHPROBE_REQUIRE_BROWSER=1 makes that a failure."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {k: v for k, v in os.environ.items() if k != "SYNTHPROBE_REQUIRE_BROWSER"}
    env["SYNTHPROBE_CHROMIUM"] = str(tmp_path / "no-chromium-here")
    if require:
        env["SYNTHPROBE_REQUIRE_BROWSER"] = require
    test_file = Path(__file__).with_name("test_browser.py")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == rc, done.stdout + done.stderr
    assert outcome in done.stdout and "chromium at" in done.stdout
    assert ("SYNTHPROBE_REQUIRE_BROWSER=1, but" in done.stdout) == bool(require)
