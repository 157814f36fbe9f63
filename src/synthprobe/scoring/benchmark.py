"""``synthprobe score NAME``: any registered benchmark (:mod:`synthprobe.registry`) scored
through its own parts and the one runner.

The benchmark's ``load(path)`` reads its data file into items (dicts, each with a unique string
``id``), ``work(backend, items)`` gives the runner's work function (:mod:`synthprobe.scoring.runner`:
per-item cache, resume, progress, Ctrl-C, out-of-memory halving come from there) and
``metrics(records)`` turns the records into the block's ``summary``. A work function that takes
a keyword ``chat`` is given the command's :class:`~synthprobe.backends.chat.ChatSetup`
(``--chat-template``, ``--system-prompt``): it asks each question as ``chat.conversation(text)``
rendered by ``backend.render_chat`` when ``chat.enabled``; one without it is refused a chat
template (:func:`check_chat`). The block, under the benchmark's name in the model's ``results``::

    {"dataset": {"path", "sha256", "items"}, "summary": {...metrics...}, "records": [...],
     "seconds": ...}

Nothing here names a benchmark: it is given one.
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any

from synthprobe.backends.chat import ChatSetup
from synthprobe.errors import InputError
from synthprobe.io.read import sha256_file
from synthprobe.registry import Benchmark
from synthprobe.scoring.runner import CacheKey, run_items
from synthprobe.scoring.settings import RunSettings


def build_jsonl(bench: Benchmark, *, n: int, seed: int) -> tuple[int, str]:
    """The benchmark's data file for ``n`` items from ``seed`` (its ``build`` part), as JSONL text,
    and how many lines it holds; an :class:`InputError` when ``build`` returns something else
    than JSON objects."""
    records = list(bench.part("build")(n=n, seed=seed))
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise InputError(f"benchmark {bench.name!r}: build() item {i} is {type(rec).__name__}; expected a dict")
    return len(records), "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)


def load_items(bench: Benchmark, data: Path, *, limit: int | None = None) -> list[dict]:
    """The benchmark's items from ``data``, checked: a list of objects with unique string ids."""
    items = list(bench.part("load")(data))
    seen: set[str] = set()
    for i, item in enumerate(items):
        key = item.get("id") if isinstance(item, dict) else None
        if not isinstance(key, str) or not key:
            raise InputError(
                f"benchmark {bench.name!r}: item {i} read from the file has no string 'id'; "
                "expected load() to return dicts with a unique string 'id'",
                path=data,
            )
        if key in seen:
            raise InputError(f"benchmark {bench.name!r}: item id {key!r} occurs twice; expected unique ids", path=data)
        seen.add(key)
    if not items:
        raise InputError(f"holds no {bench.title} items", path=data)
    return items[:limit] if limit is not None else items


def takes_chat(bench: Benchmark) -> bool:
    """Whether the benchmark's work function takes the keyword ``chat``."""
    try:
        params = inspect.signature(bench.part("work")).parameters
    except (TypeError, ValueError):
        return False
    return "chat" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def check_chat(bench: Benchmark, chat: ChatSetup) -> None:
    """Refuse ``--chat-template``/``--system-prompt`` for a benchmark whose work function cannot
    take them (before any model loads)."""
    if (chat.enabled or chat.system_prompt is not None) and not takes_chat(bench):
        raise InputError(
            f"benchmark {bench.name!r} asks the model in its own words: its work() takes no "
            "'chat' keyword, so it cannot ask under a chat template; drop --chat-template and "
            "--system-prompt (or give work() a 'chat' parameter)",
            field="--chat-template",
        )


def score_block(
    bench: Benchmark,
    backend,
    items: list[dict],
    data: Path,
    settings: RunSettings,
) -> dict[str, Any]:
    """Score ``items`` (read from ``data``) with ``backend`` under ``settings`` (the batch size,
    the score cache, the progress bar; its chat setup is handed to a work function that takes it:
    :func:`check_chat`); the model's results block. ``items`` are the ones to score: ``settings.limit``
    is applied by :func:`load_items`."""
    chat = settings.chat
    check_chat(bench, chat)
    sha = sha256_file(data)
    keyed: dict[str, Any] = {"task": bench.name, "bos": getattr(backend, "bos", None)}
    kwargs: dict[str, Any] = {}
    if takes_chat(bench):
        kwargs["chat"] = chat
        if chat.enabled or chat.system_prompt is not None:  # keys the cache; none for raw text, as before
            ident = chat.identity(backend)
            keyed["chat"] = {k: ident[k] for k in ("chat_template_sha256", "system_prompt_sha256")}
    started = time.perf_counter()
    work = bench.part("work")(backend, items, **kwargs)
    run = run_items(
        [it["id"] for it in items],
        work,
        where=f"{bench.name} · {backend.name}",
        backend=backend,
        cache=CacheKey(sha, keyed) if settings.cache else None,
        batch_size=settings.batch_size,
        progress=settings.progress,
    )
    # every record in the form the score cache gives back (keys sorted): a run that reads some
    # from the cache (a rerun, a resumed run, a Ray job rerun after its worker died) writes the
    # bytes a fresh run writes
    records = [json.loads(json.dumps(r, sort_keys=True)) for r in run.records]
    summary = bench.part("metrics")(records)
    if not isinstance(summary, dict):
        raise InputError(f"benchmark {bench.name!r}: metrics() returned {type(summary).__name__}; expected a dict")
    return {
        "dataset": {"path": str(data), "sha256": sha, "items": len(items)},
        "summary": summary,
        "records": records,
        "cached_items": run.cached,
        "seconds": round(time.perf_counter() - started, 3),
    }
