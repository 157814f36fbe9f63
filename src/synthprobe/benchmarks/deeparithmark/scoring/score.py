"""``synthprobe score deeparithmark``: score models on Deep Arithmark (and ArithMark 3.0) and write results.

Everything that can be checked without a model (data files, flags, output path) is checked
first. Models are then loaded and scored one at a time; the results file is written
atomically only after every model has been scored, so a failure leaves no file behind.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.backends.chat import ChatSetup
from synthprobe.backends.refs import ModelRef, NameRegistry, named_model
from synthprobe.backends.spec import EMBEDDED_ALIAS
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE
from synthprobe.benchmarks.deeparithmark.scoring import results as res
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.paths import slug
from synthprobe.io.read import sha256_file
from synthprobe.io.write import atomic_write_json, check_not_input
from synthprobe.items import MCItem
from synthprobe.prompts import protocols as proto
from synthprobe.results import results_document
from synthprobe.scoring.console import format_comparisons, format_usage
from synthprobe.scoring.runner import CacheKey, batches, run_items
from synthprobe.scoring.settings import RunSettings, for_model
from synthprobe.version import __version__

DEFAULT_DATA = RELEASE_FILE
DEFAULT_COMPARE_DATA = Path("data/arithmark-3.jsonl")
ARITHMARK3_HOWTO = (
    "ArithMark 3.0 is not shipped with synthprobe; download the file arithmark-3.jsonl from the "
    "Hugging Face dataset AxiomicLabs/Arithmark-3.0 (revision 6f6e59dd9b7e2c63455f7af7f838f9ecc3d0a746),"
    " e.g. `huggingface-cli download AxiomicLabs/Arithmark-3.0 arithmark-3.jsonl --repo-type dataset "
    "--local-dir data`, then pass --compare-data data/arithmark-3.jsonl"
)


@dataclass(kw_only=True)
class ScoreConfig(RunSettings):
    """A ``score deeparithmark`` run: the shared settings (:class:`RunSettings`) and Deep
    Arithmark's own."""

    data: Path = DEFAULT_DATA
    #: ``--model`` values: specs, or :class:`~synthprobe.commandline.ModelRef` (a spec and a given name)
    models: list[Any] = field(default_factory=lambda: [EMBEDDED_ALIAS])
    dtype: str | None = None
    device: str = "auto"
    trust_remote_code: bool = False
    #: ``--bos`` / ``--no-bos``; None: what the model was trained with (:mod:`synthprobe.backends.bos`)
    bos: bool | None = None
    compare: bool = False
    compare_data: Path = DEFAULT_COMPARE_DATA
    output: Path | None = None
    scorer: str = "onepass"
    #: Engine options (``--model-arg key=value``, ``--threads``), passed to ``load_backend``.
    model_args: dict[str, Any] = field(default_factory=dict)
    #: ``--protocol`` (one or more of loglik, letters, free, letterprob; each model is scored under each).
    protocols: tuple[str, ...] = ("loglik",)
    #: ``--cot``: letters/free may reason before a final ``ANSWER:`` line.
    cot: bool = False
    #: ``--resolve``: how a letters answer whose letter and written value disagree is credited
    #: (:data:`synthprobe.metrics.extract.RESOLVE`; ``none``, the default: never).
    resolve: str = "none"
    #: ``--yes``: start a run estimated at over an hour (:mod:`synthprobe.plan`).
    yes: bool = False
    #: ``--partial-inputs``: score Deep Arithmark again under each partial-input baseline
    #: (:mod:`synthprobe.benchmarks.deeparithmark.scoring.partial`; loglik only).
    partial_inputs: bool = False


@dataclass
class Dataset:
    key: str
    items: list[MCItem]
    info: dict[str, Any]


def load_dataset(path: Path, key: str, limit: int | None) -> Dataset:
    items = load_arithmark3(path)
    info: dict[str, Any] = {
        "path": str(path),
        "sha256": sha256_file(path),
        "n_items_in_file": len(items),
        "limit": limit,
    }
    if limit is not None:
        items = items[:limit]
    info["n_items"] = len(items)
    if key == "arithmark3":
        info["published_sha256"] = res.ARITHMARK3_SHA256
        info["matches_published"] = info["sha256"] == res.ARITHMARK3_SHA256
    return Dataset(key, items, info)


def as_ref(model) -> ModelRef:
    """A ``models`` element as a :class:`ModelRef` (a plain spec is an unnamed model)."""
    return model if isinstance(model, ModelRef) else ModelRef(str(model))


def default_output(models: list) -> Path:
    name = slug(as_ref(models[0]).name or as_ref(models[0]).spec) if len(models) == 1 else f"{len(models)}models"
    return Path("benchmarks") / f"deeparithmark_{name}.json"


def validate(config: ScoreConfig) -> list[Dataset]:
    """Check flags and load the data files; raises InputError before any model is touched."""
    from synthprobe.backends import check_backend, engine_can, split_kind
    from synthprobe.backends.base import SCORERS

    config.check_run()
    if config.scorer not in SCORERS:
        raise InputError(f"expected one of {', '.join(SCORERS)}, got {config.scorer!r}", field="--scorer")
    if not config.models:
        raise InputError("expected at least one model", field="--model")
    bad = [x for x in config.protocols if x not in proto.PROTOCOLS]
    if bad or not config.protocols:
        raise InputError(
            f"expected one or more of {', '.join(proto.PROTOCOLS)}, got {','.join(config.protocols)!r}",
            field="--protocol",
        )
    if config.partial_inputs and set(config.protocols) != {"loglik"}:
        others = ", ".join(x for x in config.protocols if x != "loglik")
        raise InputError(
            f"the partial-input baselines score the endings by log-likelihood; they run under "
            f"--protocol loglik only, got {others}. Drop --partial-inputs or score loglik alone",
            field="--partial-inputs",
        )
    if config.cot and "loglik" in config.protocols:
        raise InputError(
            "--cot lets a model reason before it answers; the loglik protocol generates nothing. "
            "Use --protocol letters or free with --cot",
            field="--cot",
        )
    if config.cot and "letterprob" in config.protocols:
        raise InputError(
            "--cot lets a model reason before it answers; letterprob reads the letter as the answer's "
            "first token, with no room to reason. Use --protocol letters with --cot",
            field="--cot",
        )
    # every data file first: a bad item is reported before any model is looked up or loaded
    datasets = [load_dataset(config.data, "deeparithmark", config.limit)]
    if config.partial_inputs:
        from synthprobe.benchmarks.deeparithmark.scoring.partial import donors

        donors(datasets[0].items)  # enough items for the other-context baseline, before any model loads
    if config.compare:
        if not config.compare_data.is_file():
            raise InputError(
                f"ArithMark 3.0 file not found. {ARITHMARK3_HOWTO}", path=config.compare_data, field="--compare-data"
            )
        datasets.append(load_dataset(config.compare_data, "arithmark3", config.limit))
    # the ArithMark 3.0 protocol reads log-likelihoods; letterprob the first token's distribution;
    # letters and free only generate
    needs = ("loglikelihood",) if "loglik" in config.protocols else ()
    if "letterprob" in config.protocols:
        needs = (*needs, "first_token")
    for ref in map(as_ref, config.models):
        own = for_model(config, ref)  # the model's own settings, checked with the rest
        if "letterprob" in config.protocols and not engine_can(ref.spec, "first_token"):
            raise InputError(
                f"--protocol letterprob reads the probabilities of the answer's first token; the "
                f"{split_kind(ref.spec)[0]} engine cannot return them. Use --protocol letters with this model",
                field="--model",
            )
        check_backend(ref.spec, needs=needs, dtype=own.dtype, device=own.device, **own.model_args)
    out = config.output or default_output(config.models)
    if out.exists() and out.is_dir():
        raise InputError("is a folder; expected a file name for the results JSON", path=out, field="--output")
    check_not_input(
        [(out, "--output")],
        [
            (config.data, "--data"),
            *((as_ref(m).spec, "--model") for m in config.models),
            *([(config.compare_data, "--compare-data")] if config.compare else []),
        ],
    )
    return datasets


def _cache_record(item_id: str, scores, truncated: bool) -> dict[str, Any]:
    return {
        "id": item_id,
        "truncated": truncated,
        "scores": [[sc.logprob, sc.n_tokens, sc.n_chars, sc.is_greedy] for sc in scores],
    }


def _from_cache(rec: dict[str, Any], n_endings: int, where: str):
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


def _finite_or_null(record: dict[str, Any]) -> dict[str, Any]:
    """A record as the results file keeps it: an ending a server scored -inf (impossible) has
    ``null`` for its log-probabilities, as JSON has no infinity (the strict reader refuses one)."""
    import math

    out = dict(record)
    for key in ("logprob", "per_token", "per_char"):
        out[key] = [v if math.isfinite(v) else None for v in record[key]]
    return out


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


def _chat_settings(config: ScoreConfig, backend, protocol: str) -> dict[str, Any]:
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
            "max_new_tokens": _budget(config, protocol),
            "prompt_version": 1,
        }
        if config.chat.user_turns(backend) and not config.chat.enabled:
            extra["protocol"]["user_turn"] = True  # a chat endpoint: asked as under a template
    return extra


def _budget(config: ScoreConfig, protocol: str) -> int:
    return config.max_new_tokens or proto.MAX_NEW_TOKENS[(protocol, config.cot)]


def _run(ds: Dataset, work, where: str, backend, score_key, config: ScoreConfig, echo):
    """:func:`~synthprobe.scoring.runner.run_items` over ``ds``'s items with the run's cache,
    batch size and progress settings."""
    return run_items(
        [it.id for it in ds.items],
        work,
        where=where,
        backend=backend,
        cache=score_key if config.cache else None,
        batch_size=config.batch_size,
        progress=config.progress,
        echo=echo,
    )


def _asked(backend, method: str, chat: ChatSetup, texts, todo, batch_size, args, kwargs, where, config):
    """``(batch, answers)`` for each batch of ``todo``: longest prompts first by the engine's
    :meth:`~synthprobe.backends.base.Backend.prompt_lengths` (tokens in process: little padding),
    one progress bar, the same batches on a resumed run; each batch asked through ``method`` of
    the engine (``generate``, ``first_token``), or its ``_chat`` form as user turns under a template."""
    lengths = dict(zip(todo, backend.prompt_lengths([texts[i] for i in todo])))
    for chunk in batches(
        todo,
        batch_size,
        length=lengths.__getitem__,
        tiebreak=lambda i: i,
        desc=where,
        total=len(texts),
        progress=config.progress,
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


def generate_dataset(
    backend, ds: Dataset, config: ScoreConfig, protocol: str, *, echo: Callable[[str], None] = print
) -> dict[str, Any]:
    """``letters`` / ``free``: one greedy answer per item (batched, stopped at a newline unless
    ``--cot``), read back by :mod:`synthprobe.metrics.extract`; unparsed answers count as wrong
    and are reported beside the accuracy."""
    from collections import Counter

    from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise
    from synthprobe.scoring.records import generation_record

    chat = config.chat

    def score_key() -> CacheKey:
        settings = {"task": ds.key, "bos": backend.bos, **_chat_settings(config, backend, protocol)}
        return CacheKey(ds.info["sha256"], settings)

    where = f"{ds.key} · {protocol} · {backend.name}"
    budget = _budget(config, protocol)
    stop = proto.stop_strings(protocol, cot=config.cot)
    t0 = time.perf_counter()

    # a chat endpoint gets the question as a user turn even without --chat-template: the server
    # applies the model's template, as --chat-template auto does in process
    texts = [proto.prompt(it, protocol, cot=config.cot, chat=chat.user_turns(backend)) for it in ds.items]

    def work(todo: list[int], batch_size: int, emit):
        for chunk, gens in _asked(
            backend, "generate", chat, texts, todo, batch_size, (budget, stop), {"details": True}, where, config
        ):
            for i, g in zip(chunk, gens):
                emit(i, {"id": ds.items[i].id, "text": g.text, "finish": g.finish, "n_tokens": g.n_tokens})
        return None

    result = _run(ds, work, where, backend, score_key, config, echo)
    eval_s = time.perf_counter() - t0
    resolve = config.resolve if protocol == "letters" else "none"
    records = [
        generation_record(
            it, protocol, str(r.get("text", "")), finish=r.get("finish"), n_tokens=r.get("n_tokens"), resolve=resolve
        )
        for it, r in zip(ds.items, result.records)
    ]
    written = Counter(r["chosen_source"] for r in records if not r["correct"])
    block: dict[str, Any] = {
        "dataset": {k: ds.info[k] for k in ("path", "sha256", "n_items")},
        "protocol": protocol,
        "cot": config.cot,
        "max_new_tokens": budget,
        "stop": stop,
        "batch_size_used": result.batch_size,
        "cached_items": result.cached,
        "timing": {
            "eval_s": round(eval_s, 3),
            "items_per_s": round(len(result.todo) / eval_s, 3) if result.todo and eval_s > 0 else None,
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
        _no_chance_test(block["summary"])
    # every item's record: the paired comparisons need them; kept in the file only with
    # --save-predictions (:func:`run` drops them otherwise)
    block["predictions"] = records
    return block


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
    from synthprobe.benchmarks.deeparithmark.scoring.letterprob import letterprob_block, letterprob_record
    from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise

    protocol = "letterprob"
    chat = config.chat
    budget = _budget(config, protocol)
    stop = proto.stop_strings("letters", cot=False)
    candidates = list(proto.letter_candidates(max((len(it.endings) for it in ds.items), default=4)))

    def score_key() -> CacheKey:
        settings = {"task": ds.key, "bos": backend.bos, **_chat_settings(config, backend, protocol)}
        settings["protocol"]["first_token"] = {"candidates": candidates, "continued": True}
        return CacheKey(ds.info["sha256"], settings)

    where = f"{ds.key} · {protocol} · {backend.name}"
    texts = [proto.prompt(it, protocol, chat=chat.user_turns(backend)) for it in ds.items]
    t0 = time.perf_counter()

    def work(todo: list[int], batch_size: int, emit):
        # letters' batches (the same a letters run and a resume form)
        for chunk, firsts in _asked(
            backend, "first_token", chat, texts, todo, batch_size, (candidates, budget, stop), {}, where, config
        ):
            for i, f in zip(chunk, firsts):
                # one loop: a certified row stopped after its letter, the others decoded on to
                # their letters answer (letterprob.letterprob_record reads both from it)
                emit(i, {"id": ds.items[i].id, "first": _finite_first(f.to_dict())})
        return None

    result = _run(ds, work, where, backend, score_key, config, echo)
    eval_s = time.perf_counter() - t0
    records = [letterprob_record(it, r.get("first") or {}) for it, r in zip(ds.items, result.records)]
    top_ks = {(r.get("first") or {}).get("top_k") for r in result.records}
    block: dict[str, Any] = {
        "dataset": {k: ds.info[k] for k in ("path", "sha256", "n_items")},
        "protocol": protocol,
        "cot": False,
        "max_new_tokens": budget,
        "candidates": candidates,
        "stop": stop,
        "batch_size_used": result.batch_size,
        "cached_items": result.cached,
        "timing": {
            "eval_s": round(eval_s, 3),
            "items_per_s": round(len(result.todo) / eval_s, 3) if result.todo and eval_s > 0 else None,
            "generated_tokens": sum(
                (r["letters"]["n_generated_tokens"] or 0) if r["letters"]["fallback"] else 0 for r in records
            ),
        },
        "truncated": 0,
        "letterprob": letterprob_block(records, top_k=max((k for k in top_ks if k is not None), default=None)),
        "summary": summarise(records),
    }
    # every item's record: the paired comparisons need them; kept in the file only with
    # --save-predictions (:func:`run` drops them otherwise)
    block["predictions"] = records
    return block


def _finite_first(rec: dict[str, Any]) -> dict[str, Any]:
    """A first-token record as the cache and the results file keep it: a log-probability of
    -inf (a token the model rules out) is ``null``, as JSON has no infinity; it is read as a
    probability of 0 either way."""
    import math

    def ok(v: Any) -> Any:
        return v if not isinstance(v, float) or math.isfinite(v) else None

    return {
        **rec,
        "candidates": {k: ok(v) for k, v in rec["candidates"].items()},
        "top": [[t, ok(v)] for t, v in rec["top"]],
    }


#: The metric line of a letters run whose inconsistent answers a --resolve rule credits.
RESOLVED_LABEL = {
    "letter-first": (
        "accuracy: the letter read back names the correct option, over all items (unparsed answers "
        "count wrong; an inconsistent answer is credited by its letter: --resolve letter-first)"
    ),
    "value-first": (
        "accuracy: the letter read back names the correct option, over all items (unparsed answers "
        "count wrong; an inconsistent answer is credited by the option its value names: --resolve "
        "value-first)"
    ),
}


def extraction_block(records: list[dict[str, Any]], *, resolve: str = "none") -> dict[str, Any]:
    """How the generated answers were read (``results.deeparithmark.extraction``): the count and
    share read by each rule, the outcomes (answered, unparsed, inconsistent, echo, cut off)
    overall and per depth, the accuracy over the answered items alone, and the ``--resolve``
    rule in force."""
    from collections import Counter

    from synthprobe.metrics.extract import OUTCOMES
    from synthprobe.metrics.stats import accuracy_block

    n = len(records)
    rules = Counter(r["rule"] for r in records)
    outcomes = Counter(r["outcome"] for r in records)
    by_depth: dict[str, dict[str, Any]] = {}
    unparsed_by_depth: dict[str, dict[str, Any]] = {}
    for r in records:
        d = by_depth.setdefault(str(r["depth"]), {"n": 0, **{k: 0 for k in OUTCOMES}})
        d["n"] += 1
        d[r["outcome"]] += 1
        u = unparsed_by_depth.setdefault(str(r["depth"]), {"n": 0, "unparsed": 0})
        u["n"] += 1
        u["unparsed"] += r["rule"] == "unparsed"
    for u in unparsed_by_depth.values():
        u["share"] = u["unparsed"] / u["n"]
    answered = [r for r in records if r["outcome"] == "answered"]
    good = accuracy_block(sum(r["correct"] for r in answered), len(answered), 0.25)  # chance unused here
    if not answered:  # no interval either: JSON holds no NaN
        good["acc"], good["ci95"] = None, None
    return {
        "rules": {k: rules.get(k, 0) for k in ("strict", "lax", "last", "value", "unparsed")},
        "rule_shares": {k: rules.get(k, 0) / n if n else None for k in ("strict", "lax", "last", "value", "unparsed")},
        "unparsed": rules.get("unparsed", 0),
        "unparsed_share": rules.get("unparsed", 0) / n if n else None,
        "unparsed_by_depth": unparsed_by_depth,
        "outcomes": {k: outcomes.get(k, 0) for k in OUTCOMES},
        "outcome_shares": {k: outcomes.get(k, 0) / n if n else None for k in OUTCOMES},
        "outcomes_by_depth": by_depth,
        "answered_accuracy": {k: good[k] for k in ("correct", "total", "acc", "ci95")},
        "resolve": resolve,
        "resolved": sum(1 for r in records if r.get("resolved_by")),
        "resolved_right": sum(1 for r in records if r.get("resolved_by") and r["correct"]),
        "finished_by_budget": sum(1 for r in records if r.get("finish") == "length"),
    }


def _no_chance_test(summary: dict[str, Any]) -> None:
    """``free`` offers no options to guess among, so a test against 1/4 would say nothing: its
    p-values are null (the summary's ``chance`` stays the letters' 1/4 for the layout)."""
    for block in summary["metrics"].values():
        if isinstance(block, dict) and "p_vs_chance" in block:
            block["p_vs_chance"] = None
    for field_ in ("by_depth", "by_template", "by_topic", "by_category"):
        for block in summary[field_].values():
            block["p_vs_chance"] = None
    summary["chance_note"] = "free: the model writes the value, there is no chance level to test against"


def score_dataset(
    backend,
    ds: Dataset,
    config: ScoreConfig,
    *,
    echo: Callable[[str], None] = print,
    partial: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score one data set with a loaded backend and summarise it.

    ``partial``: the items are a partial-input baseline's (:func:`partial_datasets`); this dict
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
    from synthprobe.benchmarks.deeparithmark.scoring.metrics import summarise
    from synthprobe.scoring.records import build_records

    def score_key() -> CacheKey:
        settings = {
            "task": ds.key,
            "max_context": config.max_context,
            "bos": backend.bos,
            "scorer": config.scorer,
            **_chat_settings(config, backend, "loglik"),
        }
        if partial is not None:
            settings["partial_input"] = partial
        return CacheKey(ds.info["sha256"], settings)  # ds's key and info: the same after templating below

    where = f"{ds.key} · {partial['baseline']} · {backend.name}" if partial else f"{ds.key} · {backend.name}"
    ds = Dataset(ds.key, templated_items(backend, ds.items, config.chat), ds.info)

    def work(todo: list[int], batch_size: int, emit):
        def on_item(k: int, scores, truncated: bool) -> None:
            emit(todo[k], _cache_record(ds.items[todo[k]].id, scores, truncated))

        return backend.run_choices(
            [ds.items[i] for i in todo],
            batch_size=batch_size,
            max_context=config.max_context,
            scorer=config.scorer,
            progress=config.progress and bool(todo),
            on_item=on_item,
            desc=where,
            source=ds.info["path"],
        )

    result = _run(ds, work, where, backend, score_key, config, echo)
    run = result.extra
    place = str(result.cache.path) if result.cache is not None else ""
    scores: list[Any] = [None] * len(ds.items)
    truncated = [False] * len(ds.items)
    for k, i in enumerate(result.todo):
        scores[i] = run.scores[k]
        truncated[i] = run.truncated[k]
    for i, item in enumerate(ds.items):
        if scores[i] is None:
            scores[i], truncated[i] = _from_cache(result.records[i], len(item.endings), place)
    records = build_records(ds.items, scores, truncated)
    block: dict[str, Any] = {
        "dataset": {k: ds.info[k] for k in ("path", "sha256", "n_items")},
        "scorer_used": run.scorer_used,
        "fallback_reason": run.fallback_reason,
        "batch_size_used": result.batch_size,
        "cached_items": result.cached,
        "timing": run.timing,
        "truncated": sum(truncated),
        "summary": summarise(records),
    }
    # every item's record: the paired comparison of a run's models needs them; kept in the
    # file only with --save-predictions (:func:`run` drops them otherwise)
    block["predictions"] = [_finite_or_null(r) for r in records]
    return block


@dataclass
class PartialSets:
    """A data set's partial-input baselines: each baseline's items with what names it in the
    cache, the other-context donors and how many of them come from another template."""

    sets: dict[str, tuple[Dataset, dict[str, Any]]]
    donor: list[int]
    cross_template: int


def partial_datasets(ds: Dataset) -> PartialSets:
    """The items of every partial-input baseline (:mod:`synthprobe.benchmarks.deeparithmark.scoring.partial`).
    A baseline's cache key names it, its prompt version and (other-context) the digest of its
    donors, which depend on the items scored (``--limit``)."""
    import hashlib

    from synthprobe.benchmarks.deeparithmark.scoring import partial as pi

    donor, cross = pi.donors(ds.items)
    sets = {}
    for name in pi.BASELINES:
        key: dict[str, Any] = {"baseline": name, "version": pi.VERSION}
        if name == "filler":
            key["filler"] = pi.FILLER
        if name == "other-context":
            key["seed"] = pi.SEED
            key["donors_sha256"] = hashlib.sha256(
                "\n".join(f"{it.id}<-{ds.items[j].id}" for it, j in zip(ds.items, donor)).encode()
            ).hexdigest()
        sets[name] = (Dataset(ds.key, pi.partial_items(ds.items, name, donor), ds.info), key)
    return PartialSets(sets, donor, cross)


def score_partial(
    backend, ds: Dataset, block: dict[str, Any], config: ScoreConfig, *, echo: Callable[[str], None] = print
) -> None:
    """Score ``ds`` under every partial-input baseline through :func:`score_dataset` (the same
    backend path, cache and calibration as the full run) and put the ``partial_inputs`` block
    into ``block``'s summary; each full-context prediction gets its partial picks."""
    from synthprobe.benchmarks.deeparithmark.scoring import partial as pi

    ps = partial_datasets(ds)
    records: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, dict[str, Any]] = {}
    for name, (pds, key) in ps.sets.items():
        scored = score_dataset(backend, pds, config, echo=echo, partial=key)
        records[name] = scored["predictions"]
        runs[name] = {k: scored[k] for k in ("scorer_used", "batch_size_used", "cached_items", "truncated", "timing")}
    block["summary"]["partial_inputs"] = pi.partial_block(
        block["predictions"], records, cross_template=ps.cross_template, runs=runs
    )
    pi.attach_picks(block["predictions"], records, ds.items, ps.donor)


def model_options(config: ScoreConfig) -> dict[str, Any]:
    """What a model is loaded with: the run's dtype, device, BOS and engine options."""
    return {
        "dtype": config.dtype,
        "device": config.device,
        "trust_remote_code": config.trust_remote_code,
        "bos": config.bos,
        "progress": config.progress,
        **config.model_args,
    }


def load_model(spec: str, config: ScoreConfig):
    """The backend of ``spec`` loaded with the run's options (dtype, device, BOS, engine options)."""
    from synthprobe.backends import load_backend

    return load_backend(spec, **model_options(config))


def _later(spec, datasets: list[Dataset], config: ScoreConfig):
    """A later model of the run for :attr:`synthprobe.plan.Plan.others`: its cells with its own
    settings over the run's, on a stand-in of it, so the estimate counts its cached items."""
    from synthprobe.plan import later_model

    ref = as_ref(spec)
    own = for_model(config, ref)
    return later_model(
        ref.name or ref.spec, ref.spec, model_options(own), lambda stand: run_plan(stand, datasets, own).cells
    )


def score_model(
    spec,
    datasets: list[Dataset],
    config: ScoreConfig,
    *,
    echo: Callable[[str], None] = print,
    names: NameRegistry | None = None,
    on_loaded: Callable[[Any], None] | None = None,
    calibrated: dict[str, dict[str, int]] | None = None,
) -> list[dict[str, Any]]:
    """Load one model (a spec or a :class:`ModelRef`) once and score it under every protocol: one
    results entry per protocol, each block with its per-item ``predictions`` (the caller drops them
    with :func:`drop_predictions` unless they are to be saved). ``names``: the run's names so far;
    a model shown under a taken name is refused before it is scored. ``on_loaded(backend)`` runs
    with the model loaded, before anything is scored (the run's plan check); ``calibrated`` is where
    that check puts a server's token counts per protocol for the batches it scored ahead (the run
    takes those records, so its own usage counts them)."""
    ref = as_ref(spec)
    shared_bos = config.bos
    config = for_model(config, ref)  # the run's settings with this model's own over them
    t0 = time.perf_counter()
    backend = load_model(ref.spec, config)
    load_s = time.perf_counter() - t0
    entries = []
    try:
        if names is not None:
            names.claim(ref, backend.name)
        if warning := ref.bos_warning(ref.shown(backend.name), shared_bos, backend.bos_need):
            echo(warning)
        if on_loaded is not None:
            on_loaded(backend)
        for protocol in config.protocols:
            before = _usage_counts(backend)
            entry = _score_protocol(backend, ref, protocol, datasets, config, load_s, echo=echo)
            if before is not None:  # a server's token accounting: what this protocol spent
                after = backend.usage()
                ahead = (calibrated or {}).get(protocol, {})
                entry["usage"] = {**after, **{k: after[k] - before[k] + ahead.get(k, 0) for k in before}}
            entries.append(entry)
    finally:
        backend.close()
    return entries


def drop_predictions(entries: list[dict[str, Any]]) -> None:
    """Remove the per-item records from ``entries`` (kept in a file only with --save-predictions;
    until then the paired comparisons read them)."""
    for entry in entries:
        for block in entry["results"].values():
            block.pop("predictions", None)


def _usage_counts(backend) -> dict[str, int] | None:
    """The counters of a server-backed engine's ``usage()`` (None for an in-process engine)."""
    if not callable(getattr(backend, "usage", None)):
        return None
    return {
        k: v
        for k, v in backend.usage().items()
        if k in ("prompt_tokens", "completion_tokens", "total_tokens", "requests")
    }


def _score_protocol(
    backend,
    ref: ModelRef,
    protocol: str,
    datasets: list[Dataset],
    config: ScoreConfig,
    load_s: float,
    *,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    rt = backend.runtime()  # library versions: torch, transformers, torch_threads for the HF engine
    entry: dict[str, Any] = {
        "model": named_model(backend.describe(), ref),
        "chat": config.chat.identity(backend),
        "protocol": {
            "name": protocol,
            "cot": config.cot if protocol != "loglik" else False,
            **({"resolve": config.resolve} if protocol == "letters" and config.resolve != "none" else {}),
        },
        "settings": {
            "batch_size": config.batch_size,
            "max_context": config.max_context,
            "scorer": config.scorer,
            "trust_remote_code": config.trust_remote_code,
            "limit": config.limit,
            **{k: rt[k] for k in ("torch", "transformers") if k in rt},
            "synthprobe": __version__,
            **{k: v for k, v in rt.items() if k not in ("torch", "transformers")},
            "python": platform.python_version(),
            "platform": platform.platform(terse=True),
        },
        "load_s": round(load_s, 3),
        "results": {},
    }
    for ds in datasets:
        if protocol == "loglik":
            entry["results"][ds.key] = score_dataset(backend, ds, config, echo=echo)
            if config.partial_inputs and ds.key == "deeparithmark":
                score_partial(backend, ds, entry["results"][ds.key], config, echo=echo)
        elif protocol == "letterprob":
            entry["results"][ds.key] = letterprob_dataset(backend, ds, config, echo=echo)
        else:
            entry["results"][ds.key] = generate_dataset(backend, ds, config, protocol, echo=echo)
    entry["row"] = res.table_row(entry)
    return entry


def run_plan(
    backend, datasets: list[Dataset], config: ScoreConfig, calibrated: dict[str, dict[str, int]] | None = None
):
    """The run's :class:`~synthprobe.plan.Plan`: one cell per protocol and data set, and with
    ``--partial-inputs`` one per partial-input baseline (three more loglik passes over Deep
    Arithmark), each scored as the run scores it (the calibration times its first batch). A server's token
    counts for what the calibration scores are added up per protocol into ``calibrated``."""
    from synthprobe.plan import Cell, Plan, plural

    def scorer(ds: Dataset, protocol: str, partial: dict[str, Any] | None = None) -> Callable[[], Any]:
        if protocol == "loglik":
            score = lambda: score_dataset(backend, ds, config, partial=partial)  # noqa: E731
        elif protocol == "letterprob":
            score = lambda: letterprob_dataset(backend, ds, config)  # noqa: E731
        else:
            score = lambda: generate_dataset(backend, ds, config, protocol)  # noqa: E731
        if calibrated is None or _usage_counts(backend) is None:
            return score

        def counted() -> Any:
            before = _usage_counts(backend)
            try:
                return score()
            finally:
                after = _usage_counts(backend)
                sums = calibrated.setdefault(protocol, dict.fromkeys(before, 0))
                for k in before:
                    sums[k] += after[k] - before[k]

        return counted

    cells = [
        Cell(f"{ds.key} · {protocol}", len(ds.items), scorer(ds, protocol))
        for protocol in config.protocols
        for ds in datasets
    ]
    sets = " + ".join(f"{ds.key} x zero-shot x {len(ds.items):,} items ({ds.info['path']})" for ds in datasets)
    protocols = f" x {plural(len(config.protocols), 'protocol')} ({', '.join(config.protocols)})"
    extra = ""
    if config.partial_inputs:  # three more loglik passes over Deep Arithmark, each a cell of its own
        ds = datasets[0]
        baselines = partial_datasets(ds).sets
        for name, (pds, key) in baselines.items():
            cells.append(Cell(f"{ds.key} · loglik · partial input {name}", len(pds.items), scorer(pds, "loglik", key)))
        extra = (
            f" + partial-input baselines: {len(baselines)} more loglik passes over the {len(ds.items):,} "
            f"{ds.key} items ({', '.join(baselines)})"
        )
    n_models = len(config.models)
    return Plan(cells, f"{sets}{protocols}{extra}, for {plural(n_models, 'model')}", models=n_models)


def comparisons(entries: list[dict[str, Any]], keys: list[str]) -> dict[str, Any]:
    """The paired comparison of every pair of a run's models (:func:`synthprobe.metrics.compare.compare_models`)
    on each data set, per depth, under the runs' own metric (acc_norm, or accuracy for generated
    answers; pairs are only formed under one protocol); needs the entries' predictions."""
    from synthprobe.metrics.compare import compare_models
    from synthprobe.results import primary_metric
    from synthprobe.scoring.records import record_correct

    out: dict[str, Any] = {}
    for key in keys:
        outcomes: dict[str, dict[str, bool]] = {}
        variant: dict[str, str] = {}
        prints: dict[str, str | None] = {}
        depth: dict[str, Any] = {}
        for e in entries:
            recs = e["results"][key]["predictions"]
            v = res.variant_label(e)
            label = f"{e['model']['name']} [{v}]" if v else e["model"]["name"]
            variant[label] = v
            prints[label] = e["model"].get("fingerprint")
            outcomes[label] = {r["id"]: record_correct(r) for r in recs}
            depth.update({r["id"]: r.get("depth") for r in recs})
        group = depth if all(v is not None for v in depth.values()) else None
        # models against each other under the same protocol and template (the protocol effect
        # compares one model's protocols)
        metrics = {primary_metric(e["results"][key]["summary"]) for e in entries}
        metric = metrics.pop() if len(metrics) == 1 else "each model's own (acc_norm or accuracy)"
        out[key] = compare_models(
            outcomes,
            group,
            metric=metric,
            group_by="depth" if group else None,
            keep=lambda a, b: variant[a] == variant[b],  # noqa: B023
            fingerprints=prints,
        )
    return out


def run(config: ScoreConfig, *, echo: Callable[[str], None] = print) -> tuple[dict[str, Any], Path]:
    """Score every model; write and return the results (path included). Raises on any failure."""
    datasets = validate(config)
    out = config.output or default_output(config.models)
    entries = []
    names = NameRegistry()

    calibrated: dict[str, dict[str, int]] = {}  # a server's tokens for the batches scored ahead

    def check(backend) -> None:  # the plan and its estimate, once, on the first model
        from synthprobe.plan import check_plan

        plan = run_plan(backend, datasets, config, calibrated)
        plan.others = [_later(m, datasets, config) for m in config.models[1:]]
        check_plan(plan, yes=config.yes)

    for n, spec in enumerate(config.models):
        for entry in score_model(
            spec,
            datasets,
            config,
            echo=echo,
            names=names,
            on_loaded=check if n == 0 else None,
            calibrated=calibrated if n == 0 else None,
        ):
            entries.append(entry)
            echo(res.format_breakdown(entry))
    compared = comparisons(entries, [ds.key for ds in datasets]) if len(config.models) > 1 else None
    effect = res.protocol_effect(entries)
    if not config.save_items:
        drop_predictions(entries)
    doc = results_document(
        protocol=res.PROTOCOL,
        datasets={ds.key: ds.info for ds in datasets},
        models=entries,
        comparisons=compared or None,
        protocol_effect=effect or None,
    )
    atomic_write_json(out, doc)
    echo("")
    echo(res.format_table([e["row"] for e in entries]))
    for e in entries:
        pb = e["results"]["deeparithmark"]["summary"].get("partial_inputs")
        if pb is not None:
            from synthprobe.benchmarks.deeparithmark.scoring.partial import format_partial

            echo("")
            echo(format_partial(pb, e["model"]["name"]))
    if compared:
        echo("")
        echo(format_comparisons(compared))
    if effect:
        echo("")
        echo(res.format_protocol_effect(effect))
    for e in entries:
        if "usage" in e:
            echo(format_usage(res.variant_label(e), e["usage"]))
    echo(f"\nresults: {out}")
    return doc, out
