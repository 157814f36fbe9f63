"""``synthprobe probe steps``: where in the chain of steps a model's arithmetic breaks.

Each solution step of each Deep Arithmark item becomes two multiple-choice probes with the same
four options (:mod:`synthprobe.benchmarks.deeparithmark.step_probe.build`): the operation in isolation and
the step inside its problem, teacher-forced. Both are scored by the summed log-likelihood of each
option (``backend.run_choices``, ties to the lowest index) and by greedy generation up to the end
of the line with exact match (GPT-3's check, :func:`synthprobe.metrics.choice.exact_match`).
All of it runs through :func:`synthprobe.scoring.runner.run_items`, so finished probes are cached
per model and data file and an interrupted run resumes. The results are the ``steps`` block of the
one results document (:mod:`synthprobe.results`), summarised by
:mod:`synthprobe.benchmarks.deeparithmark.step_probe.metrics`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.audit import tolerance
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE
from synthprobe.benchmarks.deeparithmark.layout import STEPS_VERSION
from synthprobe.benchmarks.deeparithmark.step_probe.build import (
    OPERATIONS,
    PROBE_VERSION,
    StepProbe,
    audit_probes,
    build_probes,
)
from synthprobe.benchmarks.deeparithmark.step_probe.metrics import step_depth_markdown, summarise_steps
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.paths import slug
from synthprobe.io.read import sha256_file
from synthprobe.metrics.choice import exact_match, pick_choice
from synthprobe.results import dumps_results, results_document
from synthprobe.scoring.runner import CacheKey, batches, run_items
from synthprobe.scoring.settings import RunSettings

DEFAULT_DATA = RELEASE_FILE
#: Generated tokens per step: the longest option ("1234 (remainder 56)", "12:45 p.m.") fits.
MAX_NEW_TOKENS = 16
STOP = ("\n",)
MODES = ("isolation", "chain")


@dataclass(kw_only=True)
class StepsConfig(RunSettings):
    """A ``probe steps`` run: the shared settings (:class:`RunSettings`; here 16 rows a batch and
    16 generated tokens a step) and the data file. Under ``chat``, each probe's question is the
    user turn, its options scored (and its answer generated) as the assistant's."""

    data: Path = DEFAULT_DATA
    batch_size: int = 16
    max_new_tokens: int = MAX_NEW_TOKENS


@dataclass
class Probes:
    probes: list[StepProbe]
    skipped: list
    info: dict[str, Any]
    audit: list[dict[str, Any]]


def default_output(model: str) -> Path:
    return Path("benchmarks") / f"steps_{slug(model)}.json"


def load_probes(config: StepsConfig) -> Probes:
    """Read the data file and build every probe (bad input: :class:`InputError`, nothing loaded)."""
    config.check_run()
    items = load_arithmark3(config.data)
    n_file = len(items)
    if config.limit is not None:
        items = items[: config.limit]
    probes, skipped = build_probes(items, path=config.data)
    if not probes:
        raise InputError("no step of any item can be probed", path=config.data)
    info = {
        "path": str(config.data),
        "sha256": sha256_file(config.data),
        "n_items_in_file": n_file,
        "limit": config.limit,
        "n_items": len(items),
    }
    rows = audit_probes(probes, classifier=len(probes) >= 10)
    tol = tolerance(len(probes))
    audit = [
        {
            "strategy": r.name,
            "correct": r.correct,
            "n": r.n,
            "percent": round(r.percent, 4),
            "within_chance": r.within(tol),
        }
        for r in rows
    ]
    return Probes(probes, skipped, info, audit)


def _cache_record(probe_id: str, modes: dict[str, dict]) -> dict[str, Any]:
    return {"id": probe_id, **modes}


def _bad_cache(rec: dict, where: str) -> InputError:
    return InputError(
        f"cached record for step probe {rec.get('id')!r} does not match the data; run "
        "'synthprobe cache clear --scores' or pass --no-cache",
        path=where,
    )


def _joined(p: StepProbe, rec: dict, where: str, save: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": p.id,
        "item": p.item,
        "depth": p.depth,
        "template": p.template,
        "step": p.step,
        "n_steps": p.n_steps,
        "op": p.op,
        "operation": p.operation,
        "digits": p.digits,
    }
    for mode in MODES:
        m = rec.get(mode)
        if (
            not isinstance(m, dict)
            or not isinstance(m.get("logprobs"), list)
            or len(m["logprobs"]) != len(p.options)
            or not isinstance(m.get("generated"), str)
        ):
            raise _bad_cache(rec, where)
        pick = pick_choice(m["logprobs"])
        out[mode] = {
            "choice": pick == p.label,
            "generation": exact_match(m["generated"], p.answer),
            "pick": pick,
            "generated": m["generated"],
            "truncated": bool(m.get("truncated")),
        }
        if save:
            out[mode]["logprobs"] = m["logprobs"]
    if save:
        out |= {"options": list(p.options), "sources": list(p.sources), "label": p.label}
    return out


def score_probes(backend, pr: Probes, config: StepsConfig) -> dict[str, Any]:
    """Score every probe with a loaded backend; return the ``steps`` block."""
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import templated_items

    probes = pr.probes

    def score_key() -> CacheKey:
        settings = {
            "task": "steps",
            "probe_version": PROBE_VERSION,
            "max_context": config.max_context,
            "max_new_tokens": config.max_new_tokens,
            "bos": getattr(backend, "bos", False),
        }
        if config.chat.enabled or config.chat.system_prompt is not None:  # plain runs keep their keys
            ident = config.chat.identity(backend)
            settings["chat"] = {k: ident[k] for k in ("chat_template_sha256", "system_prompt_sha256")}
        return CacheKey(pr.info["sha256"], settings)

    where = f"steps · {backend.name}"

    def work(todo: list[int], batch_size: int, emit) -> None:
        for chunk in batches(
            todo,
            batch_size,
            length=lambda i: len(probes[i].chain),
            tiebreak=lambda i: i,
            desc=where,
            total=len(probes),
            progress=config.progress,
        ):
            mc = [it for i in chunk for it in probes[i].mc_items()]
            run = backend.run_choices(
                templated_items(backend, mc, config.chat),
                batch_size=2 * len(chunk),
                max_context=config.max_context,
                progress=False,
            )
            prompts = [it.ctx for it in mc]
            if config.chat.enabled:
                gens = backend.generate_chat(
                    [config.chat.conversation(p) for p in prompts],
                    config.max_new_tokens,
                    STOP,
                    template=config.chat.template_arg,
                    batch_size=2 * len(chunk),
                    progress=False,
                )
            else:
                gens = backend.generate(prompts, config.max_new_tokens, STOP, batch_size=2 * len(chunk), progress=False)
            for j, i in enumerate(chunk):
                modes = {}
                for m, mode in enumerate(MODES):
                    k = 2 * j + m
                    modes[mode] = {
                        "logprobs": [round(s.logprob, 6) for s in run.scores[k]],
                        "truncated": bool(run.truncated[k]),
                        "generated": gens[k],
                    }
                emit(i, _cache_record(probes[i].id, modes))

    t0 = time.perf_counter()
    result = run_items(
        [p.id for p in probes],
        work,
        where=where,
        backend=backend,
        cache=score_key if config.cache else None,
        batch_size=config.batch_size,
        progress=config.progress,
    )
    seconds = time.perf_counter() - t0
    place = str(result.cache.path) if result.cache is not None else ""
    records = [_joined(p, rec, place, config.save_items) for p, rec in zip(probes, result.records)]
    skipped: dict[str, int] = {}
    for s in pr.skipped:
        key = f"{OPERATIONS[s.op]}: {s.why}"
        skipped[key] = skipped.get(key, 0) + 1
    block: dict[str, Any] = {
        "version": STEPS_VERSION,
        "probe_version": PROBE_VERSION,
        "dataset": {k: pr.info[k] for k in ("path", "sha256", "n_items")},
        "method": {
            "choice": "the option with the highest summed log-likelihood (ties: lowest index)",
            "generation": f"greedy, up to the end of the line (at most {config.max_new_tokens} tokens), "
            "exact match after stripping whitespace",
            "first_broken": "the first probed step whose chain probe is wrong",
        },
        "probes": len(probes),
        "skipped": dict(sorted(skipped.items())),
        "audit": pr.audit,
        "cached_items": result.cached,
        "batch_size_used": result.batch_size,
        "truncated": sum(r[m]["truncated"] for r in records for m in MODES),
        "timing": {
            "seconds": round(seconds, 3),
            "probes_per_s": round(len(result.todo) / seconds, 3) if result.todo and seconds else None,
        },
        "summary": summarise_steps(records, list(OPERATIONS)),
    }
    if config.save_items:
        block["items"] = records
    return block


def run_plan(backend, pr: Probes, config: StepsConfig, *, models: int = 1):
    """The run's :class:`~synthprobe.plan.Plan`: one cell, every probe, scored as the run
    scores it (the calibration times its first batch)."""
    from synthprobe.plan import Cell, Plan, plural

    return Plan(
        [Cell("steps", len(pr.probes), lambda: score_probes(backend, pr, config))],
        f"steps x {plural(len(pr.probes), 'probe')} (choice and generation, from "
        f"{plural(pr.info['n_items'], 'item')} of {pr.info['path']}), for {plural(models, 'model')}",
        models=models,
    )


def run(
    backend, pr: Probes, config: StepsConfig, *, spec: str, load_s: float, command: str | None = None
) -> dict[str, Any]:
    """The results document for one model (``backend`` is closed by the caller)."""
    from synthprobe.scoring.settings import environment

    entry = {
        "model": {"spec": spec, **backend.describe()},
        "settings": {
            "batch_size": config.batch_size,
            "max_context": config.max_context,
            "max_new_tokens": config.max_new_tokens,
            "limit": config.limit,
            "chat": config.chat.identity(backend),
            **environment(backend),
        },
        "load_s": round(load_s, 3),
        "results": {"steps": score_probes(backend, pr, config)},
    }
    return results_document(command=command or None, datasets={"steps": pr.info}, models=[entry])


def format_summary(block: dict[str, Any], echo: Callable[[str], None] = print) -> None:
    s = block["summary"]
    echo(f"steps: {s['probes']} probes from {s['items']} items ({sum(block['skipped'].values())} steps not probed)")
    for method in ("choice", "generation"):
        g = s["gap"][method]
        echo(
            f"  {method:>10}: isolation {100 * g['isolation']['acc']:.1f} %, chain {100 * g['chain']['acc']:.1f} % "
            f"(chain − isolation {100 * g['difference']:+.1f} points)"
        )
    echo("step × depth, chain (isolation) accuracy in %, by log-likelihood choice:")
    echo(step_depth_markdown(s))


__all__ = [
    "DEFAULT_DATA",
    "Probes",
    "StepsConfig",
    "default_output",
    "dumps_results",
    "format_summary",
    "load_probes",
    "run",
    "score_probes",
]
