"""``synthprobe score deeparithmark``: score models on Deep Arithmark (and ArithMark 3.0) and write results.

Everything that can be checked without a model (data files, flags, output path) is checked
first. Models are then loaded and scored one at a time; the results file is written
atomically only after every model has been scored, so a failure leaves no file behind.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthprobe.backends.refs import ModelRef, NameRegistry, named_model
from synthprobe.backends.spec import EMBEDDED_ALIAS
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE
from synthprobe.benchmarks.deeparithmark.scoring import results as res
from synthprobe.benchmarks.deeparithmark.scoring.partial import partial_datasets, score_partial
from synthprobe.benchmarks.deeparithmark.scoring.workloads import (
    Dataset,
    protocol_dataset,
)
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.paths import slug
from synthprobe.io.read import sha256_file
from synthprobe.io.write import atomic_write_json, check_not_input
from synthprobe.prompts import protocols as proto
from synthprobe.results import results_document
from synthprobe.scoring.console import format_comparisons, format_usage
from synthprobe.scoring.settings import RunSettings, environment, for_model

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
            **environment(backend),
        },
        "load_s": round(load_s, 3),
        "results": {},
    }
    for ds in datasets:
        entry["results"][ds.key] = protocol_dataset(backend, ds, config, protocol, echo=echo)
        if protocol == "loglik" and config.partial_inputs and ds.key == "deeparithmark":
            score_partial(backend, ds, entry["results"][ds.key], config, echo=echo)
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
        def score() -> Any:
            return protocol_dataset(backend, ds, config, protocol, partial=partial)

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
    compared = res.comparisons(entries, [ds.key for ds in datasets]) if len(config.models) > 1 else None
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
