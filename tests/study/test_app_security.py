"""The study web app under attack, through the real waitress server (``synthprobe study serve`` in a
subprocess on a free loopback port): admin lock-out, cross-origin and CSRF refusals, the body cap,
and the admin password hash (werkzeug's format; databases with the earlier format still verify)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import re
import secrets
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from study_support import ADMIN_PASSWORD, write_items

from synthprobe.cli import main
from synthprobe.study import store as study_store
from synthprobe.study.store import ADMIN_KEY, Store

EVIL_ORIGIN = "http://evil.example"


class Serve:
    """``synthprobe study serve --port 0`` with extra arguments; its stderr goes to a file (the log)."""

    def __init__(self, tmp: Path, *extra: str, admin: str | None = ADMIN_PASSWORD, db: Path | None = None):
        self.db = db or tmp / "study.sqlite"
        items = tmp / "items.jsonl"
        if not items.exists():
            write_items(items, n_articles=4, conditions=("model",))
        env = {k: v for k, v in os.environ.items() if k != "SYNTHPROBE_STUDY_ADMIN"}
        if admin is not None:
            env["SYNTHPROBE_STUDY_ADMIN"] = admin
        self.log_path = tmp / f"serve-{secrets.token_hex(4)}.log"
        self._log = open(self.log_path, "w", encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "synthprobe",
            "study",
            "serve",
            "--db",
            str(self.db),
            "--items",
            str(items),
            "--port",
            "0",
            *extra,
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self._log, text=True, env=env)
        line = self.proc.stdout.readline()
        if "serving the study on " not in line:
            self.stop()
            raise RuntimeError(f"server did not start: {line!r} {self.log()!r}")
        url = urlsplit(line.split("serving the study on ", 1)[1].split()[0])
        self.host, self.port = url.hostname, url.port
        self.origin = f"http://{self.host}:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        *,
        body: bytes | str | None = None,
        headers: dict | None = None,
        timeout: float = 10,
    ):
        con = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            con.request(method, path, body=body, headers=headers or {})
            resp = con.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read().decode("utf-8", "replace")
        finally:
            con.close()

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(encoding="utf-8")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self._log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def _basic(password: str) -> dict:
    return {"Authorization": "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()}


def _count(db: Path, table: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    finally:
        con.close()


def _raters(db: Path) -> int:
    return _count(db, "raters")


def _answers(db: Path) -> int:
    return _count(db, "answers")


class Browser:
    """One client's cookies (the session cookie carries the CSRF token)."""

    def __init__(self, srv: Serve):
        self.srv, self.cookies = srv, {}

    def _send(self, method, path, *, form=None, headers=None):
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = "&".join(f"{k}={v}" for k, v in form.items())
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        status, hdrs, text = self.srv.request(method, path, body=body, headers=headers)
        for k, v in hdrs.items():
            if k.lower() == "set-cookie":
                name, value = v.split(";", 1)[0].split("=", 1)
                self.cookies[name] = value
        return status, hdrs, text

    def get(self, path):
        status, hdrs, text = self._send("GET", path)
        m = re.search(r'name="csrf_token" value="([^"]+)"', text)
        self.token = m.group(1) if m else None
        return status, hdrs, text

    def post(self, path, form, **headers):
        return self._send("POST", path, form=form, headers=headers)


# -- admin lock-out ---------------------------------------------------------------------------------
def test_many_wrong_passwords_lock_the_address_out_even_for_the_right_one(tmp_path):
    # the default limits: 5 wrong passwords, then 5 minutes during which even the right one is refused
    with Serve(tmp_path) as srv:
        assert srv.request("GET", "/admin", headers=_basic(ADMIN_PASSWORD))[0] == 200
        assert srv.request("GET", "/admin")[0] == 401  # no password: the browser's first try, not counted
        statuses = [srv.request("GET", "/admin", headers=_basic(f"guess {i}"))[0] for i in range(30)]
        assert statuses[:4] == [401] * 4 and set(statuses[4:]) == {429}
        for path in ("/admin", "/admin/results.csv", "/admin/results.json"):
            status, headers, text = srv.request("GET", path, headers=_basic(ADMIN_PASSWORD))
            assert status == 429 and "Too many wrong passwords" in text
            assert 290 <= int(headers["Retry-After"]) <= 300
        assert srv.request("GET", "/")[0] == 200  # raters are still served
        log = srv.log()
    assert log.count("wrong admin password from 127.0.0.1") == 5  # locked-out tries are not even checked
    assert log.count("admin login locked for 127.0.0.1 for 300 s after 5 wrong passwords") == 1
    assert ADMIN_PASSWORD not in log and "guess" not in log


def test_lockout_expires_and_grows_with_repeated_lockouts(tmp_path):
    with Serve(tmp_path, "--lockout-after", "3", "--lockout-seconds", "2") as srv:
        got = [srv.request("GET", "/admin", headers=_basic("wrong"))[:2] for _ in range(3)]
        assert [s for s, _ in got] == [401, 401, 429] and got[2][1]["Retry-After"] == "2"
        status, headers, _ = srv.request("GET", "/admin", headers=_basic(ADMIN_PASSWORD))
        assert status == 429 and headers["Retry-After"] in ("1", "2")
        time.sleep(2.2)
        assert srv.request("GET", "/admin", headers=_basic(ADMIN_PASSWORD))[0] == 200  # lock-out over
        # a success clears the count: three more wrong ones give a 2 s lock-out again, the next one 4 s
        assert [srv.request("GET", "/admin", headers=_basic("x"))[0] for _ in range(3)] == [401, 401, 429]
        time.sleep(2.2)
        got = [srv.request("GET", "/admin", headers=_basic("y"))[:2] for _ in range(3)]
        assert [s for s, _ in got] == [401, 401, 429] and got[2][1]["Retry-After"] == "4"
        log = srv.log()
    assert "admin login locked for 127.0.0.1 for 2 s" in log and "admin login locked for 127.0.0.1 for 4 s" in log


def test_lockout_settings_are_checked(tmp_path, capsys):
    write_items(tmp_path / "items.jsonl", n_articles=4, conditions=("model",))
    for flag, value in (("--lockout-after", "0"), ("--lockout-seconds", "0"), ("--lockout-seconds", "100000")):
        assert (
            main(
                [
                    "study",
                    "serve",
                    "--db",
                    str(tmp_path / "s.sqlite"),
                    "--items",
                    str(tmp_path / "items.jsonl"),
                    flag,
                    value,
                ]
            )
            == 2
        )
        assert flag in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite").exists()


# -- cross-origin requests and CSRF tokens -------------------------------------------------------------
def test_cross_origin_posts_and_missing_or_wrong_tokens_are_refused(tmp_path):
    with Serve(tmp_path) as srv:
        b = Browser(srv)
        assert b.get("/")[0] == 200 and b.token
        good = {"csrf_token": b.token}
        refused = [
            b.post("/start", good, Origin=EVIL_ORIGIN),  # another site's page
            b.post("/start", good, Origin="null"),  # sandboxed / privacy-stripped
            b.post("/start", good, Referer=EVIL_ORIGIN + "/page"),  # no Origin, foreign Referer
            b.post("/start", good),  # neither header
            b.post("/start", good, Origin=f"http://{srv.host}:{srv.port + 1}"),  # another port is another origin
            b.post("/start", {}, Origin=srv.origin),  # no token
            b.post("/start", {"csrf_token": "x" * 43}, Origin=srv.origin),  # wrong token
            b.post("/start", {"csrf_token": b.token + "x"}, Origin=srv.origin),  # altered token
        ]
        other = Browser(srv)
        other.get("/")
        refused.append(other.post("/start", good, Origin=srv.origin))  # another session's token
        nocookie = Browser(srv)
        refused.append(nocookie.post("/start", good, Origin=srv.origin))  # token without its session
        assert [r[0] for r in refused] == [403] * len(refused)
        assert all("Request refused" in r[2] for r in refused)
        assert _raters(srv.db) == 0

        # same origin with the session's token: a rater is created and can answer
        status, headers, _ = b.post("/start", good, Origin=srv.origin)
        assert status == 303 and _raters(srv.db) == 1
        link = headers["Location"]
        assert b.get(link)[0] == 200 and b.token == good["csrf_token"]  # one token per session
        answer = {"position": "0", "choice": "unsure", "csrf_token": b.token}
        assert b.post(link, answer, Origin=EVIL_ORIGIN)[0] == 403
        assert b.post(link, {"position": "0", "choice": "unsure"}, Origin=srv.origin)[0] == 403
        assert _answers(srv.db) == 0
        assert b.post(link, answer, Origin=srv.origin)[0] == 303
        assert _answers(srv.db) == 1
        # a same-origin Referer is accepted when a client sends no Origin
        assert b.post(link, dict(answer, position="1"), Referer=srv.origin + link)[0] == 303
        assert _answers(srv.db) == 2
        # the personal link on a fresh device (no cookies yet) gets its own token and works
        phone = Browser(srv)
        assert phone.get(link)[0] == 200 and phone.token and phone.token != b.token
        assert phone.post(link, dict(answer, position="2", csrf_token=phone.token), Origin=srv.origin)[0] == 303
        log = srv.log()
    assert _answers(srv.db) == 3
    assert "refused POST /start from 127.0.0.1: it came from another site" in log
    # the signing key is kept in the database: a restarted server still accepts the open forms
    with Serve(tmp_path, db=srv.db) as srv2:
        b.srv = srv2
        assert b.post(link, dict(answer, position="3"), Origin=srv2.origin)[0] == 303
    assert _answers(srv.db) == 4


# -- request body cap ----------------------------------------------------------------------------------
def _raw(srv: Serve, head: str, body: bytes, *, timeout: float = 5.0) -> tuple[bytes, float]:
    """Send a request's head and the first bytes of its body; the server's answer and how long it took."""
    t0 = time.monotonic()
    with socket.create_connection((srv.host, srv.port), timeout=timeout) as s:
        s.sendall(head.encode("latin-1") + body)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            pass
    return data, time.monotonic() - t0


def test_oversized_bodies_are_refused_before_they_are_read(tmp_path):
    with Serve(tmp_path) as srv:
        b = Browser(srv)
        b.get("/")
        _, headers, _ = b.post("/start", {"csrf_token": b.token}, Origin=srv.origin)
        link = headers["Location"]
        for path in ("/start", link):
            head = (
                f"POST {path} HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nOrigin: {srv.origin}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {200 * 1024 * 1024}\r\n\r\n"
            )
            answer, seconds = _raw(srv, head, b"csrf_token=abc")
            assert answer.startswith(b"HTTP/1.1 413"), (path, answer[:200])
            assert seconds < 3, seconds  # answered at once, not after 200 MiB
        # a chunked body that grows past the cap is cut off too
        head = (
            f"POST /start HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nOrigin: {srv.origin}\r\n"
            "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"%x\r\n%s\r\n" % (32 * 1024, b"a" * 32 * 1024)
        answer, seconds = _raw(srv, head, chunk * 3)
        assert answer.startswith(b"HTTP/1.1 413") and seconds < 3
        # under waitress's cap but over the app's 16 KiB: Flask refuses it without touching the store
        form = f"csrf_token={b.token}&position=0&choice=unsure&pad=" + "a" * 40_000
        cookie = "; ".join(f"{k}={v}" for k, v in b.cookies.items())
        status, _, text = srv.request(
            "POST",
            link,
            body=form,
            headers={"Origin": srv.origin, "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert status == 413
        assert _raters(srv.db) == 1 and _answers(srv.db) == 0
        assert srv.request("GET", "/")[0] == 200  # the server is still up


# -- the admin password hash -------------------------------------------------------------------------
def _legacy_hash(password: str) -> str:
    """The format the previous release wrote: ``scrypt$n$r$p$salt$hash`` (hex)."""
    salt = bytes(range(16))
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return f"scrypt${2**14}$8$1${salt.hex()}${digest.hex()}"


def _stored(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT value FROM meta WHERE key = ?", (ADMIN_KEY,)).fetchone()[0]
    finally:
        con.close()


def test_admin_password_hash_is_werkzeugs_and_old_databases_still_verify(tmp_path, monkeypatch, capsys):
    from werkzeug.security import check_password_hash

    is_legacy_hash, password_matches = study_store.is_legacy_hash, study_store.password_matches

    # a new database records werkzeug's format
    with Serve(tmp_path) as srv:
        pass
    stored = _stored(srv.db)
    assert stored.startswith("scrypt:") and not is_legacy_hash(stored)
    assert check_password_hash(stored, ADMIN_PASSWORD) and not check_password_hash(stored, "nope")

    # a database written by the previous release (old format) still verifies ...
    con = sqlite3.connect(srv.db)
    with con:
        con.execute("UPDATE meta SET value = ? WHERE key = ?", (_legacy_hash(ADMIN_PASSWORD), ADMIN_KEY))
    con.close()
    assert password_matches(ADMIN_PASSWORD, _stored(srv.db)) and not password_matches("nope", _stored(srv.db))
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", "nope")
    assert main(["study", "results", "--db", str(srv.db)]) == 2
    assert "not this study's admin password" in capsys.readouterr().err
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", ADMIN_PASSWORD)
    assert main(["study", "results", "--db", str(srv.db)]) == 0
    capsys.readouterr()
    assert is_legacy_hash(_stored(srv.db))  # 'results' only reads
    # ... a wrong password does not replace it, and the next successful serve upgrades it
    with pytest.raises(RuntimeError, match="not the admin password"):
        Serve(tmp_path, db=srv.db, admin="nope")
    assert is_legacy_hash(_stored(srv.db))
    with Serve(tmp_path, db=srv.db) as again:
        assert again.request("GET", "/admin", headers=_basic(ADMIN_PASSWORD))[0] == 200
    upgraded = _stored(srv.db)
    assert upgraded.startswith("scrypt:") and check_password_hash(upgraded, ADMIN_PASSWORD)
    assert main(["study", "results", "--db", str(srv.db)]) == 0
    Store(srv.db).check_admin_password(ADMIN_PASSWORD)
    # damaged records never match
    for bad in ("scrypt$x$8$1$00$00", "scrypt$16384$8$1$zz$00", "unknown:1$a$b", "", "$$"):
        assert not password_matches(ADMIN_PASSWORD, bad)


# -- the attack itself, in a real browser -------------------------------------------------------------
@pytest.mark.browser
def test_another_sites_page_cannot_create_raters_in_chromium(tmp_path):
    """A page on another origin that auto-submits a form to ``/start`` (what any web page could do to a
    rater's browser) is refused; the study's own Start button still works in the same browser."""
    import http.server
    import threading

    from browser_support import ARGS, CHROMIUM, browser_missing

    missing = browser_missing()
    if missing is not None:
        if os.environ.get("SYNTHPROBE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SYNTHPROBE_REQUIRE_BROWSER=1, but {missing}", pytrace=False)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with Serve(tmp_path) as srv:
        evil_page = (
            f'<form id="f" method="post" action="{srv.origin}/start">'
            '<input type="hidden" name="csrf_token" value="guess"></form>'
            '<script>document.getElementById("f").submit()</script>'
        ).encode()

        class Evil(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(evil_page)))
                self.end_headers()
                self.wfile.write(evil_page)

            def log_message(self, *args):
                pass

        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                ctx = browser.new_context()
                page = ctx.new_page()
                page.goto(srv.origin + "/")  # the rater has the study open (session cookie)
                with page.expect_response(lambda r: r.url.endswith("/start")) as info:
                    page.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
                assert info.value.status == 403
                page.wait_for_load_state()
                assert "Request refused" in page.content()
                assert _raters(srv.db) == 0
                page.goto(srv.origin + "/")
                page.click("#start")
                page.wait_for_url("**/r/**")
                assert _raters(srv.db) == 1
                page.check("input[value='unsure']")
                page.click("#next")
                page.wait_for_load_state()
                assert "Question 2 of 4" in page.inner_text(".progress")
                assert _answers(srv.db) == 1
                browser.close()
        finally:
            evil.shutdown()
            evil.server_close()
        log = srv.log()
    assert "refused POST /start from 127.0.0.1: it came from another site" in log


def test_the_lockout_table_stays_small_and_other_addresses_are_not_locked():
    from synthprobe.study.app import LoginThrottle

    t = LoginThrottle(after=2, seconds=60, max_addresses=100)
    assert t.failure("10.0.0.1") == 0 and t.failure("10.0.0.1") == 60
    assert 59 < t.locked_for("10.0.0.1") <= 60 and t.locked_for("10.0.0.2") == 0
    for i in range(1000):  # many addresses, one failure each
        t.failure(f"192.0.2.{i}")
    assert len(t._state) == 100  # the oldest are forgotten first
    assert t.locked_for("10.0.0.1") == 0 and t.locked_for("192.0.2.999") == 0
    with pytest.raises(ValueError):
        LoginThrottle(after=0)
