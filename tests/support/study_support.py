"""Shared helpers for the news-study tests: an items file and a live server in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from synthprobe.study.articles import load_articles

ADMIN_PASSWORD = "correct horse battery staple"


def machine_text(text: str) -> str:
    """A clearly different text of similar length: the article's sentences in reverse order."""
    sentences = [s.strip() for s in text.replace("\n", " ").split(". ") if s.strip()]
    return ". ".join(reversed(sentences))


def write_items(
    path: Path,
    *,
    n_articles: int = 4,
    model: str = "test-model",
    conditions=("model", "control"),
    extra_title: str | None = None,
) -> list[dict]:
    """Items in the ``study generate`` format built from the shipped sample articles."""
    arts = load_articles()[:n_articles]
    items = []
    for c in conditions:
        for i, a in enumerate(arts):
            title = a.title if not (extra_title and i == 0) else extra_title
            body = (
                a.article
                if not (extra_title and i == 0)
                else "<script>alert('x')</script> & <b>bold</b>\n\n" + a.article
            )
            items.append(
                {
                    "id": f"{a.id}/200/{c}/{model}",
                    "article_id": a.id,
                    "title": title,
                    "subtitle": a.subtitle,
                    "condition": c,
                    "model": model,
                    "length": 200,
                    "human": {"text": body, "words": len(body.split())},
                    "machine": {
                        "text": machine_text(a.article) + (" (control)" if c == "control" else ""),
                        "words": len(a.article.split()),
                    },
                }
            )
    path.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    return items


class Server:
    """``synthprobe study serve`` on a free loopback port, in a subprocess."""

    def __init__(self, db: Path, items: Path | None, *, admin: str | None = ADMIN_PASSWORD):
        env = dict(os.environ)
        env.pop("SYNTHPROBE_STUDY_ADMIN", None)
        if admin is not None:
            env["SYNTHPROBE_STUDY_ADMIN"] = admin
        cmd = [sys.executable, "-m", "synthprobe.cli", "study", "serve", "--db", str(db), "--port", "0"]
        if items is not None:
            cmd += ["--items", str(items)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        if "serving the study on " not in line:
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()!r}")
        self.url = line.split("serving the study on ", 1)[1].split()[0].rstrip("/")
        deadline = time.time() + 20
        while True:
            try:
                urllib.request.urlopen(self.url + "/", timeout=5).read()
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
