"""``synthprobe score deeparithmark``: score models on Deep Arithmark (and ArithMark 3.0) and write results.

Everything that can be checked without a model (data files, flags, output path) is checked
first. Models are then loaded and scored one at a time; the results file is written
atomically only after every model has been scored, so a failure leaves no file behind.
"""

from __future__ import annotations

import platform
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from synthprobe import __version__
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import MCItem, load_arithmark3
from synthprobe.io import atomic_write_json, check_not_input, sha256_file
from synthprobe.backends.base import ScoringError
from synthprobe.scoring import results as res

DEFAULT_DATA = Path("data/deeparithmark-1.jsonl")
DEFAULT_COMPARE_DATA = Path("data/arithmark-3.jsonl")
ARITHMARK3_HOWTO = ("ArithMark 3.0 is not shipped with synthprobe; download the file arithmark-3.jsonl from the "
                    "Hugging Face dataset AxiomicLabs/Arithmark-3.0 (revision 6f6e59dd9b7e2c63455f7af7f838f9ecc3d0a746),"
                    " e.g. `huggingface-cli download AxiomicLabs/Arithmark-3.0 arithmark-3.jsonl --repo-type dataset "
                    "--local-dir data`, then pass --compare-data data/arithmark-3.jsonl")


@dataclass
class ScoreConfig:
    data: Path = DEFAULT_DATA
    models: list[str] = field(default_factory=lambda: ["smollm2-135m-instruct"])
    dtype: str | None = None
    device: str = "auto"
    batch_size: int = 32
    max_context: int = 1024
    trust_remote_code: bool = False
    bos: bool = False
    limit: int | None = None
    compare: bool = False
    compare_data: Path = DEFAULT_COMPARE_DATA
    save_predictions: bool = False
    output: Path | None = None
    scorer: str = "onepass"
    progress: bool = True
    cache: bool = True


class ScoringInterrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) while scoring; the message says how far the run got and what is cached."""

    @classmethod
    def after(cls, finished: int, where: str, *, cached: int | None, total: int) -> "ScoringInterrupted":
        """``finished`` items scored by this run of ``where`` before Ctrl-C; ``cached`` of the
        ``total`` items are now in the score cache (``None``: the cache is off)."""
        kept = ("nothing is cached (--no-cache)" if cached is None else
                f"{cached} of {total} items are cached, run the same command again to resume")
        return cls(f"interrupted after {finished} items ({where}); {kept}")


@dataclass
class Dataset:
    key: str
    items: list[MCItem]
    info: dict[str, Any]


def load_dataset(path: Path, key: str, limit: int | None) -> Dataset:
    items = load_arithmark3(path)
    info: dict[str, Any] = {"path": str(path), "sha256": sha256_file(path), "n_items_in_file": len(items),
                            "limit": limit}
    if limit is not None:
        items = items[:limit]
    info["n_items"] = len(items)
    if key == "arithmark3":
        info["published_sha256"] = res.ARITHMARK3_SHA256
        info["matches_published"] = info["sha256"] == res.ARITHMARK3_SHA256
    return Dataset(key, items, info)


def slug(spec: str) -> str:
    name = Path(spec).stem if spec.lower().endswith(".gguf") else spec.rstrip("/").split("/")[-1]
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower()).strip("-") or "model"


def default_output(models: list[str]) -> Path:
    name = slug(models[0]) if len(models) == 1 else f"{len(models)}models"
    return Path("benchmarks") / f"deeparithmark_{name}.json"


def validate(config: ScoreConfig) -> list[Dataset]:
    """Check flags and load the data files; raises InputError before any model is touched."""
    from synthprobe.backends.hf.backend import resolve_device, resolve_dtype
    from synthprobe.backends.spec import resolve_spec
    from synthprobe.backends.hf.loglik import SCORERS

    if config.batch_size < 1:
        raise InputError(f"expected a positive integer, got {config.batch_size}", field="--batch-size")
    if config.max_context < 2:
        raise InputError(f"expected an integer >= 2, got {config.max_context}", field="--max-context")
    if config.limit is not None and config.limit < 1:
        raise InputError(f"expected a positive integer, got {config.limit}", field="--limit")
    if config.scorer not in SCORERS:
        raise InputError(f"expected one of {', '.join(SCORERS)}, got {config.scorer!r}", field="--scorer")
    if not config.models:
        raise InputError("expected at least one model", field="--model")
    # every data file first: a bad item is reported before any model is looked up or loaded
    datasets = [load_dataset(config.data, "deeparithmark", config.limit)]
    if config.compare:
        if not config.compare_data.is_file():
            raise InputError(f"ArithMark 3.0 file not found. {ARITHMARK3_HOWTO}", path=config.compare_data,
                             field="--compare-data")
        datasets.append(load_dataset(config.compare_data, "arithmark3", config.limit))
    for spec in config.models:
        resolve_spec(spec)
    resolve_dtype(config.dtype, resolve_device(config.device))
    out = config.output or default_output(config.models)
    if out.exists() and out.is_dir():
        raise InputError("is a folder; expected a file name for the results JSON", path=out, field="--output")
    check_not_input([(out, "--output")], [(config.data, "--data"), *((m, "--model") for m in config.models),
                                          *([(config.compare_data, "--compare-data")] if config.compare else [])])
    return datasets


def _cache_record(item_id: str, scores, truncated: bool) -> dict[str, Any]:
    return {"id": item_id, "truncated": truncated,
            "scores": [[sc.logprob, sc.n_tokens, sc.n_chars, sc.is_greedy] for sc in scores]}


def _from_cache(rec: dict[str, Any], n_endings: int, where: str):
    from synthprobe.backends.base import EndingScore

    rows = rec.get("scores")
    if not isinstance(rows, list) or len(rows) != n_endings or not all(
            isinstance(r, list) and len(r) == 4 for r in rows):
        raise InputError(f"cached record for item {rec.get('id')!r} does not match the data file; run "
                         "'synthprobe cache clear --scores' or pass --no-cache", path=where)
    return [EndingScore(float(a), int(b), int(c), bool(d)) for a, b, c, d in rows], bool(rec.get("truncated"))


def score_dataset(backend, ds: Dataset, config: ScoreConfig, *,
                  echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Score one data set with a loaded backend and summarise it.

    With the score cache on (default), every finished item is appended to
    ``$SYNTHPROBE_CACHE/scores/<key>.jsonl`` (key: model fingerprint, data SHA-256, dtype,
    max context, BOS, scorer), so an interrupted run resumes with the items still missing;
    the one-pass scorer is batch invariant, so resumed scores equal a fresh run's. Ctrl-C keeps
    the items already finished (a cut-short batch's too) and raises :class:`ScoringInterrupted`,
    whose message says how many are cached. On CUDA out-of-memory the batch is halved and the
    run retried.
    """
    from synthprobe.analysis.summary import summarise
    from synthprobe.scoring.cache import ScoreCache, cache_key, run_with_oom_backoff
    from synthprobe.backends.hf.loglik import run_encoded
    from synthprobe.scoring.records import build_records
    from synthprobe.backends.hf.encode import encode_items

    cache = None
    if config.cache:
        settings = {"task": ds.key, "dtype": backend.dtype, "max_context": config.max_context,
                    "bos": config.bos, "scorer": config.scorer}
        cache = ScoreCache(cache_key(backend.fingerprint, ds.info["sha256"], settings))

    def attempt(batch_size: int):
        done = cache.load() if cache is not None else {}
        todo = [i for i, it in enumerate(ds.items) if it.id not in done]
        pending: list[dict[str, Any]] = []
        finished = 0
        t0 = time.perf_counter()
        encoded = encode_items(backend.tokenizer, [ds.items[i] for i in todo], max_context=config.max_context,
                               bos_id=backend.bos_token_id if backend.bos else None, source=ds.info["path"])
        tokenize_s = time.perf_counter() - t0
        if config.progress and len(todo) < len(ds.items):
            from synthprobe.scoring.cache import from_cache_note

            print(f"{ds.key} · {backend.name}: {from_cache_note(len(ds.items) - len(todo), len(ds.items))}",
                  file=sys.stderr, flush=True)

        def on_item(k: int, scores) -> None:
            nonlocal finished
            finished += 1
            if cache is None:
                return
            pending.append(_cache_record(ds.items[todo[k]].id, scores, encoded[k].truncated))
            if len(pending) >= batch_size:  # one fsync per batch
                cache.append(pending)
                pending.clear()

        try:
            run = run_encoded(backend, encoded, batch_size=batch_size, scorer=config.scorer,
                              progress=config.progress and bool(todo), on_item=on_item,
                              desc=f"{ds.key} · {backend.name}",
                              tokenize_s=tokenize_s, max_context=config.max_context)
        except KeyboardInterrupt:
            where, total = f"{ds.key} · {backend.name}", len(ds.items)
            if cache is None:
                raise ScoringInterrupted.after(finished, where, cached=None, total=total) from None
            if pending:  # finished items of a cut-short batch are kept too
                cache.append(pending)
            # count what is on disk: Ctrl-C may land between counting an item and caching it
            n_cached = len(cache.load())
            raise ScoringInterrupted.after(n_cached - len(done), where, cached=n_cached, total=total) from None
        if cache is not None and pending:
            cache.append(pending)
        return done, todo, run

    def halved(old: int, new: int) -> None:
        echo(f"synthprobe: out of memory at batch size {old}; retrying with {new}")

    try:
        (done, todo, run), used_batch = run_with_oom_backoff(attempt, config.batch_size, on_halve=halved)
    except RuntimeError as exc:
        if "out of memory" in str(exc).lower():
            raise ScoringError(f"out of memory while scoring with {backend.name} even at batch size 1") from exc
        raise
    scores: list[Any] = [None] * len(ds.items)
    truncated = [False] * len(ds.items)
    for k, i in enumerate(todo):
        scores[i] = run.scores[k]
        truncated[i] = run.encoded[k].truncated
    where = str(cache.path) if cache is not None else ""
    for i, item in enumerate(ds.items):
        if scores[i] is None:
            scores[i], truncated[i] = _from_cache(done[item.id], len(item.endings), where)
    records = build_records(ds.items, scores, truncated)
    block: dict[str, Any] = {
        "dataset": {k: ds.info[k] for k in ("path", "sha256", "n_items")},
        "scorer_used": run.scorer_used,
        "fallback_reason": run.fallback_reason,
        "batch_size_used": used_batch,
        "cached_items": len(ds.items) - len(todo),
        "timing": run.timing(),
        "truncated": sum(truncated),
        "summary": summarise(records),
    }
    if config.save_predictions:
        block["predictions"] = records
    return block


def score_model(spec: str, datasets: list[Dataset], config: ScoreConfig, *,
                echo: Callable[[str], None] = print) -> dict[str, Any]:
    import torch
    import transformers

    from synthprobe.backends.hf.backend import load_backend

    t0 = time.perf_counter()
    backend = load_backend(spec, dtype=config.dtype, device=config.device,
                           trust_remote_code=config.trust_remote_code, bos=config.bos, progress=config.progress)
    load_s = time.perf_counter() - t0
    try:
        entry: dict[str, Any] = {
            "model": backend.describe(),
            "settings": {
                "batch_size": config.batch_size,
                "max_context": config.max_context,
                "scorer": config.scorer,
                "trust_remote_code": config.trust_remote_code,
                "limit": config.limit,
                "torch": torch.__version__,
                "transformers": transformers.__version__,
                "synthprobe": __version__,
                "torch_threads": torch.get_num_threads(),
                "python": platform.python_version(),
                "platform": platform.platform(terse=True),
            },
            "load_s": round(load_s, 3),
            "results": {},
        }
        for ds in datasets:
            entry["results"][ds.key] = score_dataset(backend, ds, config, echo=echo)
    finally:
        backend.close()
    entry["row"] = res.table_row(entry)
    return entry


def run(config: ScoreConfig, *, echo: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """Score every model; write and return the results (path included). Raises on any failure."""
    datasets = validate(config)
    out = config.output or default_output(config.models)
    entries = []
    for spec in config.models:
        entry = score_model(spec, datasets, config, echo=echo)
        entries.append(entry)
        echo(res.format_breakdown(entry))
    doc = {
        "schema": res.SCHEMA,
        "schema_version": res.SCHEMA_VERSION,
        "synthprobe": __version__,
        "protocol": res.PROTOCOL,
        "datasets": {ds.key: ds.info for ds in datasets},
        "models": entries,
    }
    atomic_write_json(out, doc)
    echo("")
    echo(res.format_table([e["row"] for e in entries]))
    echo(f"\nresults: {out}")
    return doc, out
