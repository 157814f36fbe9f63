"""Human articles for the news study and GPT-3's prompt layout (Brown et al. 2020, §3.9.4).

An articles file is JSONL with ``title``, ``subtitle`` and ``article`` (non-empty strings) and
optionally ``id`` and ``source``. Titles must be unique: a rater never sees the same title
twice. The shipped ``study_sample.jsonl`` holds eight short articles written for synthprobe
about invented events; it is a format sample, not news.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.paths import resource_path
from synthprobe.io.read import read_jsonl

SAMPLE_FILE = "study_sample.jsonl"
MAX_ARTICLE_CHARS = 40_000
_FIELDS = {"title", "subtitle", "article", "id", "source"}


@dataclass(frozen=True)
class Article:
    id: str
    title: str
    subtitle: str
    article: str
    line: int

    @property
    def words(self) -> int:
        return word_count(self.article)


def word_count(text: str) -> int:
    """Whitespace-separated words, the count GPT-3's length matching used."""
    return len(text.split())


def _field(obj: dict, key: str, path, line: int, *, single_line: bool, limit: int) -> str:
    if key not in obj:
        raise InputError("missing; expected a non-empty string", path=path, line=line, field=key)
    v = obj[key]
    if not isinstance(v, str) or not v.strip():
        raise InputError(f"expected a non-empty string, got {v!r:.60}", path=path, line=line, field=key)
    if single_line and ("\n" in v or "\r" in v):
        raise InputError("must be a single line (no newline characters)", path=path, line=line, field=key)
    if len(v) > limit:
        raise InputError(f"is {len(v):,} characters; at most {limit:,} expected", path=path, line=line, field=key)
    return v.strip()


def load_articles(path: str | Path | None = None, *, minimum: int = 1) -> list[Article]:
    """Read and check an articles file (default: the shipped sample)."""
    path = Path(path) if path is not None else resource_path(SAMPLE_FILE)
    out: list[Article] = []
    titles: dict[str, int] = {}
    ids: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        extra = sorted(set(obj) - _FIELDS)
        if extra:
            raise InputError(
                "unknown field; expected title, subtitle, article and optionally id, source",
                path=path,
                line=line,
                field=extra[0],
            )
        title = _field(obj, "title", path, line, single_line=True, limit=300)
        subtitle = _field(obj, "subtitle", path, line, single_line=True, limit=600)
        article = _field(obj, "article", path, line, single_line=False, limit=MAX_ARTICLE_CHARS)
        if "source" in obj and not isinstance(obj["source"], str):
            raise InputError("expected a string", path=path, line=line, field="source")
        aid = obj.get("id", f"line-{line}")
        if not isinstance(aid, str) or not aid.strip() or len(aid) > 100:
            raise InputError(
                f"expected a non-empty string of at most 100 characters, got {aid!r:.60}",
                path=path,
                line=line,
                field="id",
            )
        key = " ".join(title.lower().split())
        if key in titles:
            raise InputError(
                f"title repeats line {titles[key]}; every article needs its own title "
                "(a rater must never see the same title twice)",
                path=path,
                line=line,
                field="title",
            )
        if aid in ids:
            raise InputError(f"id {aid!r} repeats line {ids[aid]}", path=path, line=line, field="id")
        titles[key] = line
        ids[aid] = line
        out.append(Article(aid, title, subtitle, article, line))
    if len(out) < minimum:
        raise InputError(f"has {len(out)} article(s); at least {minimum} needed", path=path)
    return out


def format_article(title: str, subtitle: str, article: str | None = None) -> str:
    """``Title: …\\nSubtitle: …\\nArticle:`` (+ `` text`` when ``article`` is given)."""
    head = f"Title: {title}\nSubtitle: {subtitle}\nArticle:"
    return head if article is None else f"{head} {article}"


#: Separates the conditioning articles from each other and from the target.
ARTICLE_SEPARATOR = "\n\n"
#: The model's article ends when it starts another one.
STOP = ("\nTitle:",)


def build_prompt(context: list[Article], target: Article) -> str:
    """Earlier full articles, then the target's title and subtitle, ending in ``Article:``."""
    parts = [format_article(a.title, a.subtitle, a.article) for a in context]
    parts.append(format_article(target.title, target.subtitle))
    return ARTICLE_SEPARATOR.join(parts)
