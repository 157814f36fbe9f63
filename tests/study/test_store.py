"""The study database: quiz design, idempotent answers, concurrency, restarts."""

from __future__ import annotations

import random
import re
import sqlite3
import threading
import urllib.parse
import urllib.request
from collections import Counter

import pytest
from study_support import Server, write_items

from synthprobe.errors import InputError
from synthprobe.study.items import load_items
from synthprobe.study.store import CHOICES, AnswerRejected, Store


@pytest.fixture
def study(tmp_path):
    items_path = tmp_path / "items.jsonl"
    write_items(items_path, n_articles=4)
    store = Store(tmp_path / "study.sqlite")
    store.initialise(load_items(items_path), items_label="items.jsonl")
    return store, items_path


def test_quiz_design_balanced_and_mirrored(study):
    store, _ = study
    rng = random.Random(5)
    tokens = [store.create_rater(rng) for _ in range(8)]
    raters = [store.rater(t) for t in tokens]
    # two experiments (model, control), each with 2 raters in quiz A and 2 in quiz B
    assert Counter(r.experiment for r in raters) == {
        "test-model | model | ~200 words": 4,
        "test-model | control | ~200 words": 4,
    }
    assert set(Counter((r.experiment, r.quiz) for r in raters).values()) == {2}
    with store.connect() as con:
        plans = {}
        for r in raters:
            rows = con.execute(
                "SELECT q.item_id, q.version, i.title FROM questions q JOIN items i USING(item_id) WHERE rater_id = ?",
                (r.rater_id,),
            ).fetchall()
            titles = [x["title"] for x in rows]
            assert len(titles) == len(set(titles)) == 4  # never the same title twice
            assert Counter(x["version"] for x in rows) == {"human": 2, "machine": 2}
            assert {x["item_id"].split("/")[2] for x in rows} == {r.experiment.split(" | ")[1]}
            plans.setdefault((r.experiment, r.quiz), []).append({x["item_id"]: x["version"] for x in rows})
    for exp in {r.experiment for r in raters}:
        a, b = plans[(exp, "A")][0], plans[(exp, "B")][0]
        assert a.keys() == b.keys()
        assert all(a[k] != b[k] for k in a)  # human in A <=> machine in B
        assert all(p == a for p in plans[(exp, "A")])  # the quiz fixes the versions ...
    orders = []
    with store.connect() as con:
        for r in raters:
            orders.append(
                tuple(
                    x[0]
                    for x in con.execute(
                        "SELECT item_id FROM questions WHERE rater_id = ? ORDER BY position", (r.rater_id,)
                    )
                )
            )
    assert len(set(orders)) > 1  # ... but each rater's order is shuffled


def test_answers_in_order_idempotent_and_finish(study):
    store, _ = study
    token = store.create_rater(random.Random(1))
    q = store.current_question(token)
    assert q.position == 0 and q.n_questions == 4
    with pytest.raises(AnswerRejected, match="not the current one"):
        store.answer(token, 2, "human-very")
    with pytest.raises(AnswerRejected, match="unknown choice"):
        store.answer(token, 0, "probably")
    with pytest.raises(AnswerRejected, match="does not exist"):
        store.answer(token, 9, "unsure")
    with pytest.raises(AnswerRejected, match="unknown rater"):
        store.answer("nobody-has-this-token", 0, "unsure")
    assert store.answer(token, 0, "human-more") is True
    assert store.answer(token, 0, "machine-very") is False  # second answer changes nothing
    rows = store.answer_rows()
    assert [(r["position"], r["choice"]) for r in rows] == [(0, "human-more")]
    for pos in (1, 2, 3):
        assert store.current_question(token).position == pos
        store.answer(token, pos, "unsure")
    assert store.current_question(token) is None
    assert store.rater(token).finished and store.rater(token).answered == 4


def test_items_must_match_database(study, tmp_path):
    store, items_path = study
    store.initialise(load_items(items_path))  # same items: fine
    other = tmp_path / "other.jsonl"
    write_items(other, n_articles=3)
    with pytest.raises(InputError, match="started with other items"):
        store.initialise(load_items(other))
    with pytest.raises(InputError, match="does not exist yet; pass --items"):
        Store(tmp_path / "fresh.sqlite").initialise(None)
    assert not (tmp_path / "fresh.sqlite").exists()
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError, match="not a synthprobe study database"):
        Store(bad).initialise(None)


def test_concurrent_raters_do_not_corrupt(study):
    store, _ = study
    errors = []

    def rater(seed):
        try:
            token = store.create_rater(random.Random(seed))
            r = random.Random(seed)
            while (q := store.current_question(token)) is not None:
                # answer twice, as a double-clicked submit button would
                store.answer(token, q.position, r.choice(CHOICES)[0])
                store.answer(token, q.position, r.choice(CHOICES)[0])
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rater, args=(s,)) for s in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with sqlite3.connect(store.path) as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert con.execute("SELECT COUNT(*) FROM raters WHERE finished_at IS NOT NULL").fetchone()[0] == 12
        assert con.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 12 * 4
    assert Counter(store.rater_counts()[e]["finished"] for e in store.rater_counts()) == {6: 2}


def _post(url, data):
    """A form post as the app's pages send it: from the server's origin, with the session's CSRF token."""
    import http.cookiejar

    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    page = opener.open(origin + "/", timeout=30).read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    req = urllib.request.Request(
        url,
        data=urllib.parse.urlencode({"csrf_token": token, **data}).encode(),
        method="POST",
        headers={"Origin": origin},
    )
    return opener.open(req, timeout=30)


def test_server_restart_loses_nothing_and_rater_resumes(tmp_path):
    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=4)
    db = tmp_path / "study.sqlite"
    with Server(db, items) as srv:
        tokens = []
        for _ in range(3):
            resp = _post(srv.url + "/start", {})
            tokens.append(resp.url.rsplit("/", 1)[1])

        # concurrent HTTP answers from the three raters, two questions each, each posted twice
        def answer_two(token):
            for pos in (0, 1):
                for _ in range(2):
                    _post(f"{srv.url}/r/{token}", {"position": pos, "choice": "machine-more"})

        threads = [threading.Thread(target=answer_two, args=(t,)) for t in tokens]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    # the server is gone; start a new one on the same database (items are already stored)
    with Server(db, None) as srv:
        page = urllib.request.urlopen(f"{srv.url}/r/{tokens[0]}", timeout=30).read().decode()
        assert re.search(r"Question 3 of 4", page)
        for pos in (2, 3):
            _post(f"{srv.url}/r/{tokens[0]}", {"position": pos, "choice": "human-very"})
        page = urllib.request.urlopen(f"{srv.url}/r/{tokens[0]}", timeout=30).read().decode()
        assert "You have answered all 4 questions" in page
    rows = Store(db).answer_rows()
    assert len(rows) == 3 * 2 + 2
    assert Counter(r["choice"] for r in rows) == {"machine-more": 6, "human-very": 2}


def test_serve_without_items_on_a_new_database_leaves_nothing(tmp_path, capsys):
    from synthprobe.cli import main

    db = tmp_path / "new.sqlite"
    assert main(["study", "serve", "--db", str(db)]) == 2
    assert "pass --items" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    # a failure after the file was created removes it too (and its WAL side files)
    items = tmp_path / "items.jsonl"
    write_items(items, n_articles=2)
    with pytest.raises(InputError, match="database schema"):
        store = Store(db)
        real = store._initialise

        def fail_late(*args):
            real(*args)
            raise InputError("database schema 9 is not supported")

        store._initialise = fail_late
        store.initialise(load_items(items))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jsonl"]


def test_admin_password_is_recorded_and_checked_when_serving(study, tmp_path, capsys, monkeypatch):
    from synthprobe.cli import main

    store, items_path = study
    store.initialise(None, admin_password="first password")  # recorded on first use
    store.check_admin_password("first password")
    with pytest.raises(InputError, match="not this study's admin password"):
        store.check_admin_password("second password")
    with pytest.raises(InputError, match="--change-admin-password"):
        store.initialise(None, admin_password="second password")
    # 'study serve' with another password is refused before it listens
    monkeypatch.setenv("SYNTHPROBE_STUDY_ADMIN", "second password")
    assert main(["study", "serve", "--db", str(store.path), "--port", "0"]) == 2
    assert "not the admin password this study database was started with" in capsys.readouterr().err
    store.initialise(None, admin_password="second password", replace_admin_password=True)
    store.check_admin_password("second password")
    with pytest.raises(InputError, match="not this study's admin password"):
        store.check_admin_password("first password")
    monkeypatch.delenv("SYNTHPROBE_STUDY_ADMIN")
    assert main(["study", "serve", "--db", str(store.path), "--change-admin-password"]) == 2
    assert "which is not set" in capsys.readouterr().err
