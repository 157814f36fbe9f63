"""Deep Arithmark's protocols as workloads that the generic runner drives.

A workload is one protocol over one data set with one loaded model. It says what keys its items
in the score cache (:meth:`Workload.key`), what it asks the engine for a batch of items
(:meth:`Workload.work`, the function :func:`synthprobe.scoring.runner.run_items` calls) and what
the results block holds once every item is in (:meth:`Workload.block`). The runner does the rest,
as for GPT-3's tasks and a plug-in benchmark's: the per-item cache and resume, progress, the
Ctrl-C message and out-of-memory halving.

* :class:`Loglik` (``loglik``): every ending's log-likelihood (ArithMark 3.0's protocol), the
  one-pass scorer, optionally under a chat template or a partial-input baseline;
* :class:`Generate` (``letters``, ``free``): one greedy answer per item, read back by
  :mod:`synthprobe.metrics.extract`;
* :class:`Letterprob` (``letterprob``): the first answer token's distribution over the letters,
  decoding on to a full ``letters`` answer where the letter is not certified.

:func:`score_dataset`, :func:`generate_dataset` and :func:`letterprob_dataset` run one of them.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthprobe.backends.chat import ChatSetup
from synthprobe.errors import InputError
from synthprobe.items import MCItem
from synthprobe.prompts import protocols as proto
from synthprobe.scoring.runner import CacheKey, RunResult, batches, run_items

if TYPE_CHECKING:
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig


@dataclass
class Dataset:
    """A data set as a run scores it: its key (``deeparithmark``, ``arithmark3``), its items and
    what the results say of it (path, SHA-256, counts)."""

    key: str
    items: list[MCItem]
    info: dict[str, Any]


# ---------------------------------------------------------------------------------------
# What every protocol shares
# ---------------------------------------------------------------------------------------


def templated_items(backend, items: list[MCItem], chat: ChatSetup) -> list[MCItem]:
    """The items as a chat model sees them under ``loglik``: each context becomes the user turn
    rendered with the assistant turn opened (the system prompt first when given); the endings
    stay as written, so each is scored as the start of the assistant's answer (lm-eval 0.4.13
    with ``--apply_chat_template`` drops the target delimiter, ``""`` in the exported YAML)."""
    import dataclasses

    if not chat.enabled:
        return items
    texts = backend.render_chat([chat.conversation(it.ctx) for it in items], template=chat.template_arg)
    return [dataclasses.replace(it, ctx=t) for it, t in zip(items, texts)]


def budget(config: ScoreConfig, protocol: str) -> int:
    """The new-token budget of a generating protocol (``--max-new-tokens`` or its default)."""
    return config.max_new_tokens or proto.MAX_NEW_TOKENS[(protocol, config.cot)]


def chat_settings(config: ScoreConfig, backend, protocol: str) -> dict[str, Any]:
    """Cache-key settings beyond the loglik defaults (none for a plain loglik run, so earlier
    cache entries stay valid)."""
    extra: dict[str, Any] = {}
    if config.chat.enabled or config.chat.system_prompt is not None:
        ident = config.chat.identity(backend)
        extra["chat"] = {k: ident[k] for k in ("chat_template_sha256", "system_prompt_sha256")}
    if protocol != "loglik":
        extra["protocol"] = {
            "name": protocol,
            "cot": config.cot,
            "max_new_tokens": budget(config, protocol),
            "prompt_version": 1,
        }
        if config.chat.user_turns(backend) and not config.chat.enabled:
            extra["protocol"]["user_turn"] = True  # a chat endpoint: asked as under a template
    return extra


class Workload:
    """One protocol over one data set with one loaded model (see the module)."""

    protocol = ""

    def __init__(self, backend, ds: Dataset, config: ScoreConfig):
        self.backend, self.ds, self.config = backend, ds, config
        self.where = f"{ds.key} · {self.protocol} · {backend.name}"

    def settings(self) -> dict[str, Any]:
        """What keys the items in the score cache beside the data and the model."""
        return {"task": self.ds.key, "bos": self.backend.bos, **chat_settings(self.config, self.backend, self.protocol)}

    def key(self) -> CacheKey:
        return CacheKey(self.ds.info["sha256"], self.settings())

    def work(self, todo: list[int], batch_size: int, emit) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def block(self, result: RunResult, eval_s: float) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def head(self, result: RunResult) -> dict[str, Any]:
        """The block's first fields: the data set, the batch size used, the items from the cache."""
        return {
            "dataset": {k: self.ds.info[k] for k in ("path", "sha256", "n_items")},
            "batch_size_used": result.batch_size,
            "cached_items": result.cached,
        }

    def asked(self, method: str, texts: list[str], todo: list[int], batch_size: int, args, kwargs):
        """``(batch, answers)`` for each batch of ``todo``: longest prompts first by the engine's
        :meth:`~synthprobe.backends.base.Backend.prompt_lengths` (tokens in process: little
        padding), one progress bar, the same batches on a resumed run; each batch asked through
        ``method`` of the engine (``generate``, ``first_token``), or its ``_chat`` form as user
        turns under a template."""
        backend, chat = self.backend, self.config.chat
        lengths = dict(zip(todo, backend.prompt_lengths([texts[i] for i in todo])))
        for chunk in batches(
            todo,
            batch_size,
            length=lengths.__getitem__,
            tiebreak=lambda i: i,
            desc=self.where,
            total=len(texts),
            progress=self.config.progress,
        ):
            part = [texts[i] for i in chunk]
            if chat.enabled:
                convs = [chat.conversation(t) for t in part]
                got = getattr(backend, f"{method}_chat")(
                    convs, *args, template=chat.template_arg, batch_size=batch_size, progress=False, **kwargs
                )
            else:
                got = getattr(backend, method)(part, *args, batch_size=batch_size, progress=False, **kwargs)
            yield chunk, got


def run_workload(w: Workload, *, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """``w`` driven by :func:`~synthprobe.scoring.runner.run_items` with the run's cache, batch
    size and progress settings; its results block (every item's record under ``predictions``:
    the paired comparisons need them; kept in the file only with ``--save-predictions``)."""
    config = w.config
    t0 = time.perf_counter()
    result = run_items(
        [it.id for it in w.ds.items],
        w.work,
        where=w.where,
        backend=w.backend,
        cache=w.key if config.cache else None,
        batch_size=config.batch_size,
        progress=config.progress,
        echo=echo,
    )
    return w.block(result, time.perf_counter() - t0)


def _pace(result: RunResult, eval_s: float) -> float | None:
    return round(len(result.todo) / eval_s, 3) if result.todo and eval_s > 0 else None


# ---------------------------------------------------------------------------------------
# loglik
# ---------------------------------------------------------------------------------------


def cache_record(item_id: str, scores, truncated: bool) -> dict[str, Any]:
    """One loglik item as the score cache keeps it."""
    return {
        "id": item_id,
        "truncated": truncated,
        "scores": [[sc.logprob, sc.n_tokens, sc.n_chars, sc.is_greedy] for sc in scores],
    }


def from_cache(rec: dict[str, Any], n_endings: int, where: str):
    """A cached loglik item back as ``(ending scores, truncated)``; a record that does not fit
    the item is an :class:`~synthprobe.errors.InputError` naming the cache."""
    from synthprobe.backends.base import EndingScore

    rows = rec.get("scores")
    if (
        not isinstance(rows, list)
        or len(rows) != n_endings
        or not all(isinstance(r, list) and len(r) == 4 for r in rows)
    ):
        raise InputError(
            f"cached record for item {rec.get('id')!r} does not match the data file; run "
            "'synthprobe cache clear --scores' or pass --no-cache",
            path=where,
        )
    return [EndingScore(float(a), int(b), int(c), bool(d)) for a, b, c, d in rows], bool(rec.get("truncated"))


def finite_or_null(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the results file keeps it: an ending a server scored -inf (impossible) has
    ``null`` for its log-probabilities, as JSON has no infinity (the strict reader refuses one)."""
    out = dict(record)
    for key in ("logprob", "per_token", "per_char"):
        out[key] = [v if math.isfinite(v) else None for v in record[key]]
    return out


class Loglik(Workload):
    """Every ending's log-likelihood after the context (see :func:`score_dataset`)."""

    protocol = "loglik"

    def __init__(self, backend, ds: Dataset, config: ScoreConfig, *, partial: dict[str, Any] | None = None):
        super().__init__(backend, ds, config)
        self.partial = partial
        self.where = f"{ds.key} · {partial['baseline']} · {backend.name}" if partial else f"{ds.key} · {backend.name}"
        self.ds = Dataset(ds.key, templated_items(backend, ds.items, config.chat), ds.info)

    def settings(self) -> dict[str, Any]:
        config = self.config
        settings = {
            "task": self.ds.key,
            "max_context": config.max_context,
            "bos": self.backend.bos,
            "scorer": config.scorer,
            **chat_settings(config, self.backend, "loglik"),
        }
        if self.partial is not None:
            settings["partial_input"] = self.partial
        return settings  # the data set's key and info: the same after templating

    def work(self, todo: list[int], batch_size: int, emit):
        items = self.ds.items

        def on_item(k: int, scores, truncated: bool) -> None:
            emit(todo[k], cache_record(items[todo[k]].id, scores, truncated))

        return self.backend.run_choices(
            [items[i] for i in todo],
            batch_size=batch_size,
            max_context=self.config.max_context,
            scorer=self.config.scorer,
            progress=self.config.progress and bool(todo),
            on_item=on_item,
            desc=self.where,
            source=self.ds.info["path"],
        )

    def block(self, result: RunResult, eval_s: float) -> dict[str, Any]:
        from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise
        from synthprobe.scoring.records import build_records

        items, run = self.ds.items, result.extra
        place = str(result.cache.path) if result.cache is not None else ""
        scores: list[Any] = [None] * len(items)
        truncated = [False] * len(items)
        for k, i in enumerate(result.todo):
            scores[i] = run.scores[k]
            truncated[i] = run.truncated[k]
        for i, item in enumerate(items):
            if scores[i] is None:
                scores[i], truncated[i] = from_cache(result.records[i], len(item.endings), place)
        records = build_records(items, scores, truncated)
        head = self.head(result)
        block: dict[str, Any] = {
            "dataset": head["dataset"],
            "scorer_used": run.scorer_used,
            "fallback_reason": run.fallback_reason,
            "batch_size_used": head["batch_size_used"],
            "cached_items": head["cached_items"],
            "timing": run.timing,
            "truncated": sum(truncated),
            "summary": summarise(records),
        }
        block["predictions"] = [finite_or_null(r) for r in records]
        return block


# ---------------------------------------------------------------------------------------
# letters and free
# ---------------------------------------------------------------------------------------


class Generate(Workload):
    """One greedy answer per item (see :func:`generate_dataset`)."""

    def __init__(self, backend, ds: Dataset, config: ScoreConfig, protocol: str):
        self.protocol = protocol
        super().__init__(backend, ds, config)
        self.budget = budget(config, protocol)
        self.stop = proto.stop_strings(protocol, cot=config.cot)
        # a chat endpoint gets the question as a user turn even without --chat-template: the
        # server applies the model's template, as --chat-template auto does in process
        user = config.chat.user_turns(backend)
        self.texts = [proto.prompt(it, protocol, cot=config.cot, chat=user) for it in ds.items]

    def work(self, todo: list[int], batch_size: int, emit):
        items = self.ds.items
        asked = self.asked("generate", self.texts, todo, batch_size, (self.budget, self.stop), {"details": True})
        for chunk, gens in asked:
            for i, g in zip(chunk, gens):
                emit(i, {"id": items[i].id, "text": g.text, "finish": g.finish, "n_tokens": g.n_tokens})
        return None

    def block(self, result: RunResult, eval_s: float) -> dict[str, Any]:
        from synthprobe.benchmarks.deeparithmark.scoring.metrics import (
            RESOLVED_LABEL,
            extraction_block,
            no_chance_test,
            summarise,
        )
        from synthprobe.scoring.records import generation_record

        config, protocol = self.config, self.protocol
        resolve = config.resolve if protocol == "letters" else "none"
        records = [
            generation_record(
                it,
                protocol,
                str(r.get("text", "")),
                finish=r.get("finish"),
                n_tokens=r.get("n_tokens"),
                resolve=resolve,
            )
            for it, r in zip(self.ds.items, result.records)
        ]
        written = Counter(r["chosen_source"] for r in records if not r["correct"])
        head = self.head(result)
        block: dict[str, Any] = {
            "dataset": head["dataset"],
            "protocol": protocol,
            "cot": config.cot,
            "max_new_tokens": self.budget,
            "stop": self.stop,
            "batch_size_used": head["batch_size_used"],
            "cached_items": head["cached_items"],
            "timing": {
                "eval_s": round(eval_s, 3),
                "items_per_s": _pace(result, eval_s),
                "generated_tokens": sum(r.get("n_generated_tokens") or 0 for r in records),
            },
            "truncated": 0,
            "extraction": extraction_block(records, resolve=resolve),
            "wrong_answers": dict(sorted(written.items(), key=lambda kv: (-kv[1], kv[0]))),
            "summary": summarise(records),
        }
        if resolve != "none":  # its metric line says how the inconsistent answers were credited
            block["summary"]["primary_label"] = RESOLVED_LABEL[resolve]
        if protocol == "free":
            no_chance_test(block["summary"])
        block["predictions"] = records
        return block


# ---------------------------------------------------------------------------------------
# letterprob
# ---------------------------------------------------------------------------------------


def finite_first(rec: dict[str, Any]) -> dict[str, Any]:
    """A first-token record as the cache and the results file keep it: a log-probability of
    -inf (a token the model rules out) is ``null``, as JSON has no infinity; it is read as a
    probability of 0 either way."""

    def ok(v: Any) -> Any:
        return v if not isinstance(v, float) or math.isfinite(v) else None

    return {
        **rec,
        "candidates": {k: ok(v) for k, v in rec["candidates"].items()},
        "top": [[t, ok(v)] for t, v in rec["top"]],
    }


class Letterprob(Workload):
    """The first answer token's distribution over the letters (see :func:`letterprob_dataset`)."""

    protocol = "letterprob"

    def __init__(self, backend, ds: Dataset, config: ScoreConfig):
        super().__init__(backend, ds, config)
        self.budget = budget(config, self.protocol)
        self.stop = proto.stop_strings("letters", cot=False)
        self.candidates = list(proto.letter_candidates(max((len(it.endings) for it in ds.items), default=4)))
        user = config.chat.user_turns(backend)
        self.texts = [proto.prompt(it, self.protocol, chat=user) for it in ds.items]

    def settings(self) -> dict[str, Any]:
        settings = super().settings()
        settings["protocol"]["first_token"] = {"candidates": self.candidates, "continued": True}
        return settings

    def work(self, todo: list[int], batch_size: int, emit):
        # letters' batches (the same a letters run and a resume form)
        items = self.ds.items
        args = (self.candidates, self.budget, self.stop)
        for chunk, firsts in self.asked("first_token", self.texts, todo, batch_size, args, {}):
            for i, f in zip(chunk, firsts):
                # one loop: a certified row stopped after its letter, the others decoded on to
                # their letters answer (letterprob.letterprob_record reads both from it)
                emit(i, {"id": items[i].id, "first": finite_first(f.to_dict())})
        return None

    def block(self, result: RunResult, eval_s: float) -> dict[str, Any]:
        from synthprobe.benchmarks.deeparithmark.scoring.letterprob import letterprob_block, letterprob_record
        from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise

        records = [letterprob_record(it, r.get("first") or {}) for it, r in zip(self.ds.items, result.records)]
        top_ks = {(r.get("first") or {}).get("top_k") for r in result.records}
        head = self.head(result)
        block: dict[str, Any] = {
            "dataset": head["dataset"],
            "protocol": self.protocol,
            "cot": False,
            "max_new_tokens": self.budget,
            "candidates": self.candidates,
            "stop": self.stop,
            "batch_size_used": head["batch_size_used"],
            "cached_items": head["cached_items"],
            "timing": {
                "eval_s": round(eval_s, 3),
                "items_per_s": _pace(result, eval_s),
                "generated_tokens": sum(
                    (r["letters"]["n_generated_tokens"] or 0) if r["letters"]["fallback"] else 0 for r in records
                ),
            },
            "truncated": 0,
            "letterprob": letterprob_block(records, top_k=max((k for k in top_ks if k is not None), default=None)),
            "summary": summarise(records),
        }
        block["predictions"] = records
        return block


# ---------------------------------------------------------------------------------------
# One data set under one protocol
# ---------------------------------------------------------------------------------------


def score_dataset(
    backend,
    ds: Dataset,
    config: ScoreConfig,
    *,
    echo: Callable[[str], None] = print,
    partial: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score one data set by log-likelihood with a loaded backend and summarise it.

    ``partial``: the items are a partial-input baseline's
    (:func:`~synthprobe.benchmarks.deeparithmark.scoring.partial.partial_datasets`); this dict
    names it, in the cache key and the progress line.

    With the score cache on (default), every finished item is appended to
    ``$SYNTHPROBE_CACHE/scores/<key>.jsonl`` (key: model fingerprint, data SHA-256, dtype,
    max context, BOS, scorer), so an interrupted run resumes with the items still missing;
    the one-pass scorer is batch invariant, so resumed scores equal a fresh run's. Ctrl-C keeps
    the items already finished (a cut-short batch's too) and raises
    :class:`~synthprobe.scoring.runner.ScoringInterrupted`,
    whose message says how many are cached. On CUDA out-of-memory the batch is halved and the
    run retried.
    """
    return run_workload(Loglik(backend, ds, config, partial=partial), echo=echo)


def generate_dataset(
    backend, ds: Dataset, config: ScoreConfig, protocol: str, *, echo: Callable[[str], None] = print
) -> dict[str, Any]:
    """``letters`` / ``free``: one greedy answer per item (batched, stopped at a newline unless
    ``--cot``), read back by :mod:`synthprobe.metrics.extract`; unparsed answers count as wrong
    and are reported beside the accuracy."""
    return run_workload(Generate(backend, ds, config, protocol), echo=echo)


def letterprob_dataset(
    backend, ds: Dataset, config: ScoreConfig, *, echo: Callable[[str], None] = print
) -> dict[str, Any]:
    """``letterprob``: ``letters``' prompt, stop, budget and batches, read in one decoding loop
    (:meth:`~synthprobe.backends.base.Backend.first_token`): the prompt pass gives the first
    token's distribution over the letters, the next step shows whether the greedy answer is the
    letter read ending there (certified: its row stops, as in a ``letters`` run), and an
    uncertified item's row simply decodes on to its full ``letters`` answer, in the same batch,
    with no second pass over its prompt
    (:mod:`synthprobe.benchmarks.deeparithmark.scoring.letterprob`)."""
    return run_workload(Letterprob(backend, ds, config), echo=echo)


def protocol_dataset(
    backend,
    ds: Dataset,
    config: ScoreConfig,
    protocol: str,
    *,
    echo: Callable[[str], None] = print,
    partial: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``ds`` scored under ``protocol`` (any of :data:`synthprobe.prompts.protocols.PROTOCOLS`)."""
    if protocol == "loglik":
        return score_dataset(backend, ds, config, echo=echo, partial=partial)
    if protocol == "letterprob":
        return letterprob_dataset(backend, ds, config, echo=echo)
    return generate_dataset(backend, ds, config, protocol, echo=echo)
