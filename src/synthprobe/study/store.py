"""The study database (SQLite, WAL): items, raters, their question sequences and answers.

Every write is one ``BEGIN IMMEDIATE`` transaction on its own connection, so concurrent
raters (threads or processes) queue for the write lock instead of corrupting anything, and
every answer is on disk before the next page is shown. Answering a question that already has
an answer changes nothing (the first answer stands).

Quiz design (GPT-3 §3.9.4): a rater joins one experiment and is given quiz A or B, keeping
both experiments and quizzes balanced. In quiz A the experiment's 1st, 3rd, 5th, ... articles
are shown as the human version and the others as the machine version; quiz B is the mirror
image. The order of questions is shuffled per rater.

The ``meta`` table also keeps a salted hash of the admin password the study was first served
with (``$SYNTHPROBE_STUDY_ADMIN``), made and checked by ``werkzeug.security``; ``synthprobe
study results`` checks it, so the command line asks for the same password as the web results
page. Databases from earlier releases hold the hand-made ``scrypt$n$r$p$salt$hash`` format; it
still verifies, and the next successful ``serve`` replaces it with werkzeug's format. The meta
table also keeps the random key that signs the web app's session cookie (CSRF tokens), so a
restart does not invalidate the forms raters have open.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import random
import secrets
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.study.items import StudyItem

#: GPT-3's five-point scale, as (key, label).
CHOICES = (
    ("human-very", "very likely written by a human"),
    ("human-more", "more likely written by a human"),
    ("unsure", "I don't know"),
    ("machine-more", "more likely written by a machine"),
    ("machine-very", "very likely written by a machine"),
)
CHOICE_LABELS = dict(CHOICES)
NEUTRAL = "unsure"
SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS items(
    item_id TEXT PRIMARY KEY, ord INTEGER NOT NULL, experiment TEXT NOT NULL, model TEXT NOT NULL,
    condition TEXT NOT NULL, length INTEGER NOT NULL, article_id TEXT NOT NULL, title TEXT NOT NULL,
    subtitle TEXT NOT NULL, human_text TEXT NOT NULL, machine_text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS raters(
    rater_id INTEGER PRIMARY KEY AUTOINCREMENT, token TEXT NOT NULL UNIQUE, experiment TEXT NOT NULL,
    quiz TEXT NOT NULL CHECK (quiz IN ('A', 'B')), n_questions INTEGER NOT NULL,
    created_at REAL NOT NULL, finished_at REAL);
CREATE TABLE IF NOT EXISTS questions(
    rater_id INTEGER NOT NULL REFERENCES raters(rater_id), position INTEGER NOT NULL,
    item_id TEXT NOT NULL REFERENCES items(item_id),
    version TEXT NOT NULL CHECK (version IN ('human', 'machine')), shown_at REAL,
    PRIMARY KEY (rater_id, position));
CREATE TABLE IF NOT EXISTS answers(
    rater_id INTEGER NOT NULL, position INTEGER NOT NULL, choice TEXT NOT NULL,
    answered_at REAL NOT NULL, PRIMARY KEY (rater_id, position),
    FOREIGN KEY (rater_id, position) REFERENCES questions(rater_id, position));
"""


def is_correct(version: str, choice: str) -> bool | None:
    """``None`` for "I don't know", else whether the choice names the true author."""
    if choice == NEUTRAL:
        return None
    return choice.startswith(version)


def items_digest(items: list[StudyItem]) -> str:
    h = hashlib.sha256()
    for it in items:
        for v in (it.id, it.experiment, it.title, it.subtitle, it.human_text, it.machine_text):
            h.update(v.encode("utf-8"))
            h.update(b"\x00")
    return h.hexdigest()


#: Environment variable that holds the study's admin password (web results and ``study results``).
ADMIN_ENV = "SYNTHPROBE_STUDY_ADMIN"
#: ``meta`` key of the salted admin-password hash (the name dates from the first format).
ADMIN_KEY = "admin_scrypt"
#: ``meta`` key of the web app's session-signing key.
SESSION_KEY = "session_secret"
_LEGACY_PREFIX = "scrypt$"


def hash_password(password: str) -> str:
    """werkzeug's salted hash of ``password`` (``scrypt:n:r:p$salt$hash``)."""
    from werkzeug.security import generate_password_hash  # here: werkzeug is slow to import for every command

    return generate_password_hash(password)


def is_legacy_hash(stored: str) -> bool:
    """Whether ``stored`` is the hand-made format written by earlier releases."""
    return stored.startswith(_LEGACY_PREFIX)


def _legacy_matches(password: str, stored: str) -> bool:
    # ``scrypt$n$r$p$salt$hash`` (hex), kept only so that existing databases still verify
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt" or not (n.isascii() and r.isascii() and p.isascii()):
            return False
        got = hashlib.scrypt(
            password.encode("utf-8"), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=len(digest) // 2
        )
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(got.hex(), digest)


def password_matches(password: str, stored: str) -> bool:
    if is_legacy_hash(stored):
        return _legacy_matches(password, stored)
    from werkzeug.security import check_password_hash

    try:
        return check_password_hash(stored, password)
    except (ValueError, TypeError, MemoryError):  # unknown method or a damaged record
        return False


class AnswerRejected(Exception):
    """An answer that cannot be stored; ``str(err)`` is shown to the rater."""


@dataclass(frozen=True)
class Rater:
    rater_id: int
    token: str
    experiment: str
    quiz: str
    n_questions: int
    answered: int
    finished: bool


@dataclass(frozen=True)
class Question:
    position: int
    n_questions: int
    item_id: str
    version: str
    title: str
    subtitle: str
    text: str


class Store:
    """Access to one study database file. Each call opens its own short-lived connection."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    # -- connections -------------------------------------------------------------------
    @contextlib.contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        try:
            con.row_factory = sqlite3.Row
            con.execute("PRAGMA foreign_keys = ON")
            con.execute("PRAGMA synchronous = FULL")
            yield con
        finally:
            con.close()

    @contextlib.contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        with self.connect() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    # -- set-up ------------------------------------------------------------------------
    def initialise(
        self,
        items: list[StudyItem] | None,
        *,
        items_label: str = "",
        admin_password: str | None = None,
        replace_admin_password: bool = False,
    ) -> None:
        """Create the schema; load ``items`` into a new database or check they match an existing one.

        With ``admin_password`` a salted hash of it is recorded the first time (``study results``
        checks it later); an existing record must match unless ``replace_admin_password``. A
        matching record in the earlier hand-made format is replaced by werkzeug's format.
        When anything fails on a database file this call created, the file is removed again.
        """
        if self.path.exists() and not self.path.is_file():
            raise InputError("is not a regular file", path=self.path, field="--db")
        if not self.path.parent.is_dir():
            raise InputError("folder does not exist", path=self.path.parent, field="--db")
        created = not self.path.exists()
        if created and items is None:
            raise InputError(
                "database does not exist yet; pass --items (the file from 'synthprobe study generate') to create it",
                path=self.path,
                field="--db",
            )
        try:
            self._initialise(items, items_label, admin_password, replace_admin_password)
        except BaseException:
            if created:
                self._remove_files()
            raise

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                Path(str(self.path) + suffix).unlink()

    def _initialise(self, items, items_label, admin_password, replace_admin_password) -> None:
        try:
            with self.connect() as con:
                mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() != "wal":
                    raise InputError(f"cannot switch the database to WAL mode (got {mode})", path=self.path)
                con.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"is not a synthprobe study database ({exc})", path=self.path, field="--db") from None
        with self.write() as con:
            meta = {r["key"]: r["value"] for r in con.execute("SELECT key, value FROM meta")}
            if meta.get("schema", SCHEMA_VERSION) != SCHEMA_VERSION:
                raise InputError(
                    f"database schema {meta['schema']} is not supported (expected {SCHEMA_VERSION})",
                    path=self.path,
                    field="--db",
                )
            if items is None:
                if "items_sha256" not in meta:
                    raise InputError("database holds no study items yet; pass --items", path=self.path, field="--db")
            else:
                digest = items_digest(items)
                if "items_sha256" in meta:
                    if meta["items_sha256"] != digest:
                        raise InputError(
                            "this database was started with other items "
                            f"({meta.get('items_file', '?')}); use the same items file or a new --db",
                            path=self.path,
                            field="--items",
                        )
                else:
                    con.executemany(
                        "INSERT INTO items(item_id, ord, experiment, model, condition, length, article_id, title, "
                        "subtitle, human_text, machine_text) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        [
                            (
                                it.id,
                                it.order,
                                it.experiment,
                                it.model,
                                it.condition,
                                it.length,
                                it.article_id,
                                it.title,
                                it.subtitle,
                                it.human_text,
                                it.machine_text,
                            )
                            for it in items
                        ],
                    )
                    con.executemany(
                        "INSERT INTO meta(key, value) VALUES (?, ?)",
                        [("schema", SCHEMA_VERSION), ("items_sha256", digest), ("items_file", items_label)],
                    )
            if admin_password is not None:
                stored = meta.get(ADMIN_KEY)
                if stored is not None and not replace_admin_password and not password_matches(admin_password, stored):
                    raise InputError(
                        f"${ADMIN_ENV} is not the admin password this study database was started "
                        f"with; set that password, or pass --change-admin-password to replace it",
                        path=self.path,
                    )
                if stored is None or replace_admin_password or is_legacy_hash(stored):
                    con.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                        (ADMIN_KEY, hash_password(admin_password)),
                    )

    def check_admin_password(self, password: str | None) -> None:
        """Raise :class:`InputError` unless ``password`` is the admin password recorded in the database."""
        if not password:
            raise InputError(
                f"the results are for the study's admin only: set ${ADMIN_ENV} to the admin password "
                "the study was served with"
            )
        with self.connect() as con:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (ADMIN_KEY,)).fetchone()
        if row is None:
            raise InputError(
                f"no admin password is recorded in this database (it was never served with "
                f"${ADMIN_ENV} set); run 'synthprobe study serve --db {self.path}' once with it set, "
                "which records it",
                path=self.path,
            )
        if not password_matches(password, row["value"]):
            raise InputError(f"${ADMIN_ENV} is not this study's admin password", path=self.path)

    def session_secret(self) -> bytes:
        """The web app's session-signing key: made once per database and kept in ``meta``."""
        with self.write() as con:
            row = con.execute("SELECT value FROM meta WHERE key = ?", (SESSION_KEY,)).fetchone()
            if row is not None:
                return bytes.fromhex(row["value"])
            key = secrets.token_bytes(32)
            con.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (SESSION_KEY, key.hex()))
            return key

    def check_readable(self) -> None:
        if not self.path.is_file():
            raise InputError("database does not exist", path=self.path, field="--db")
        try:
            with self.connect() as con:
                con.execute("SELECT value FROM meta WHERE key = 'items_sha256'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"is not a synthprobe study database ({exc})", path=self.path, field="--db") from None

    # -- raters ------------------------------------------------------------------------
    @staticmethod
    def _next_experiment(con: sqlite3.Connection) -> tuple[str, int]:
        """The experiment a rater who starts now joins, and its number of questions: the one with the
        fewest raters, ties going to the experiment that comes first in the items file (so the start
        page can say how many articles the rater will read)."""
        rows = con.execute(
            "SELECT i.experiment, COUNT(*) AS n, MIN(i.ord) AS first, "
            "(SELECT COUNT(*) FROM raters r WHERE r.experiment = i.experiment) AS raters "
            "FROM items i GROUP BY i.experiment"
        ).fetchall()
        best = min(rows, key=lambda r: (r["raters"], r["first"]))
        return best["experiment"], best["n"]

    def next_rater_questions(self) -> int:
        """How many questions a rater who starts now will get."""
        with self.connect() as con:
            return self._next_experiment(con)[1]

    def create_rater(self, rng: random.Random | None = None) -> str:
        """A new rater in the least-filled experiment (see :meth:`_next_experiment`) and quiz, with a
        shuffled question order; returns the rater's secret token."""
        rng = rng or random.SystemRandom()
        token = secrets.token_urlsafe(18)
        with self.write() as con:
            experiment = self._next_experiment(con)[0]
            quiz_n = {"A": 0, "B": 0}
            for r in con.execute(
                "SELECT quiz, COUNT(*) AS n FROM raters WHERE experiment = ? GROUP BY quiz", (experiment,)
            ):
                quiz_n[r["quiz"]] = r["n"]
            quiz = rng.choice([q for q in "AB" if quiz_n[q] == min(quiz_n.values())])
            rows = con.execute("SELECT item_id FROM items WHERE experiment = ? ORDER BY ord", (experiment,)).fetchall()
            plan = [(r["item_id"], "human" if (k % 2 == 0) == (quiz == "A") else "machine") for k, r in enumerate(rows)]
            rng.shuffle(plan)
            cur = con.execute(
                "INSERT INTO raters(token, experiment, quiz, n_questions, created_at) VALUES (?,?,?,?,?)",
                (token, experiment, quiz, len(plan), time.time()),
            )
            rid = cur.lastrowid
            con.executemany(
                "INSERT INTO questions(rater_id, position, item_id, version) VALUES (?,?,?,?)",
                [(rid, pos, iid, ver) for pos, (iid, ver) in enumerate(plan)],
            )
        return token

    def rater(self, token: str) -> Rater | None:
        with self.connect() as con:
            r = con.execute("SELECT * FROM raters WHERE token = ?", (token,)).fetchone()
            if r is None:
                return None
            answered = con.execute("SELECT COUNT(*) FROM answers WHERE rater_id = ?", (r["rater_id"],)).fetchone()[0]
        return Rater(
            r["rater_id"],
            r["token"],
            r["experiment"],
            r["quiz"],
            r["n_questions"],
            answered,
            r["finished_at"] is not None,
        )

    def current_question(self, token: str) -> Question | None:
        """The first unanswered question of the rater (``None`` when all are answered)."""
        with self.write() as con:
            r = con.execute(
                "SELECT q.rater_id, q.position, q.item_id, q.version, q.shown_at, rt.n_questions, "
                "i.title, i.subtitle, i.human_text, i.machine_text FROM questions q "
                "JOIN raters rt ON rt.rater_id = q.rater_id JOIN items i ON i.item_id = q.item_id "
                "LEFT JOIN answers a ON a.rater_id = q.rater_id AND a.position = q.position "
                "WHERE rt.token = ? AND a.choice IS NULL ORDER BY q.position LIMIT 1",
                (token,),
            ).fetchone()
            if r is None:
                return None
            if r["shown_at"] is None:
                con.execute(
                    "UPDATE questions SET shown_at = ? WHERE rater_id = ? AND position = ?",
                    (time.time(), r["rater_id"], r["position"]),
                )
        text = r["human_text"] if r["version"] == "human" else r["machine_text"]
        return Question(r["position"], r["n_questions"], r["item_id"], r["version"], r["title"], r["subtitle"], text)

    def answer(self, token: str, position: int, choice: str) -> bool:
        """Store an answer; ``False`` when that question was already answered (nothing changes).

        Raises :class:`AnswerRejected` for an unknown token or choice, or a question that is
        not the rater's current one.
        """
        if choice not in CHOICE_LABELS:
            raise AnswerRejected(f"unknown choice {choice!r:.40}; expected one of the five answers on the page")
        with self.write() as con:
            r = con.execute("SELECT rater_id, n_questions FROM raters WHERE token = ?", (token,)).fetchone()
            if r is None:
                raise AnswerRejected("unknown rater link")
            rid, n = r["rater_id"], r["n_questions"]
            if not 0 <= position < n:
                raise AnswerRejected(f"question {position + 1} does not exist (this quiz has {n})")
            if con.execute("SELECT 1 FROM answers WHERE rater_id = ? AND position = ?", (rid, position)).fetchone():
                return False
            nxt = con.execute(
                "SELECT MIN(q.position) FROM questions q LEFT JOIN answers a ON "
                "a.rater_id = q.rater_id AND a.position = q.position "
                "WHERE q.rater_id = ? AND a.choice IS NULL",
                (rid,),
            ).fetchone()[0]
            if position != nxt:
                raise AnswerRejected(f"question {position + 1} is not the current one (that is question {nxt + 1})")
            now = time.time()
            con.execute(
                "INSERT INTO answers(rater_id, position, choice, answered_at) VALUES (?,?,?,?)",
                (rid, position, choice, now),
            )
            if position == n - 1:
                con.execute("UPDATE raters SET finished_at = ? WHERE rater_id = ?", (now, rid))
        return True

    # -- read-out ----------------------------------------------------------------------
    def answer_rows(self) -> list[sqlite3.Row]:
        """One row per answer with its rater, experiment, item and truth, in a stable order."""
        with self.connect() as con:
            return con.execute(
                "SELECT rt.rater_id, rt.experiment, rt.quiz, rt.finished_at IS NOT NULL AS finished, "
                "q.position, q.item_id, q.version, q.shown_at, a.choice, a.answered_at, "
                "i.model, i.condition, i.length, i.article_id, i.title "
                "FROM answers a JOIN questions q ON q.rater_id = a.rater_id AND q.position = a.position "
                "JOIN raters rt ON rt.rater_id = a.rater_id JOIN items i ON i.item_id = q.item_id "
                "ORDER BY rt.rater_id, q.position"
            ).fetchall()

    def experiments(self) -> list[sqlite3.Row]:
        with self.connect() as con:
            return con.execute(
                "SELECT experiment, model, condition, length, COUNT(*) AS articles, MIN(ord) AS first "
                "FROM items GROUP BY experiment ORDER BY first"
            ).fetchall()

    def item_texts(self) -> list[sqlite3.Row]:
        with self.connect() as con:
            return con.execute("SELECT experiment, human_text, machine_text FROM items ORDER BY ord").fetchall()

    def rater_counts(self) -> dict[str, dict[str, int]]:
        with self.connect() as con:
            out: dict[str, dict[str, int]] = {}
            for r in con.execute(
                "SELECT experiment, COUNT(*) AS started, SUM(finished_at IS NOT NULL) AS finished "
                "FROM raters GROUP BY experiment"
            ):
                out[r["experiment"]] = {"started": r["started"], "finished": r["finished"] or 0}
            return out
