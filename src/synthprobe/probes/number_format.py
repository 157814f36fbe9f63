"""Number-format sensitivity: the same items with numbers written as plain digits, comma groups or
spaced groups (:mod:`synthprobe.prompts.numformat`), one model, paired differences.

Deep Arithmark: a private variant (``seed``, ``n``) is built once and rendered in every format;
items are paired by id. Only the items whose text a format changes (a number of 1,000 or more in
the prompt or the endings) are scored again: an unchanged item is the same input, and the
one-pass scorer is batch invariant, so its result is the plain one. The metric is ``acc_norm``
(ArithMark 3.0's primary metric).

GPT-3: each arithmetic task's pool is built in every format (the same draws, so item ``i``
pairs with item ``i``) and scored with the same shot setting and demonstrations; a task whose
items no format changes (2D+, 2D−, 1DC) reuses the plain scores. Exact match against the
completion written in the same format.

Every score goes through :func:`synthprobe.scoring.runner.run_items` (via
:func:`~synthprobe.benchmarks.deeparithmark.scoring.workloads.score_dataset` and
:func:`~synthprobe.benchmarks.gpt3.scoring.score_task`), so a run is cached and resumes.

Per format and depth (Deep Arithmark) or task (GPT-3), the block holds the accuracy, the
difference from plain in points, the discordant pairs ``b`` (right in plain only) and ``c``
(right in the format only) and the exact McNemar p-value
(:func:`synthprobe.metrics.stats.paired_difference`). Block layout (``version`` 1), under
``models[i].results.number_format`` of the one results document::

    {"version": 1, "reference": "plain", "formats": ["plain", "comma", "space"],
     "separators": {"comma": ",", "space": " "},
     "deeparithmark"?: {"seed", "n", "metric": "acc_norm", "changed": {format: items},
                        "datasets": {format: {"sha256", "n_scored"}},
                        "rows": [{"format", "depth" ("all" | 2..5), "n", "changed", "correct",
                                  "accuracy", "reference_accuracy", "delta", "b", "c",
                                  "p_mcnemar"}],
                        "items": [{"id", "depth", "changed": [format...], "correct": [0|1 per format]}]},
     "gpt3"?: {"seed", "n", "shots", "k", "check": "generate",
               "rows": [{"task", "code", "format", "n", "changed", ... as above}],
               "tasks": [{"task", "code", "items": [{"index", "correct": [0|1 per format]}]}]}}

Accuracies and ``delta`` are in percent / points; the reference rows carry ``null`` for
``delta``, ``b``, ``c`` and ``p_mcnemar``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthprobe.backends.chat import ChatSetup
from synthprobe.errors import InputError
from synthprobe.metrics.stats import paired_difference
from synthprobe.prompts.numformat import NUMBER_FORMATS, PLAIN, SEPARATORS

VERSION = 1
DEFAULT_SEED = 1
DEFAULT_N = 1000
DEFAULT_GPT3_N = 200
DEFAULT_SHOTS = "one"
METRIC = "acc_norm"
DEPTH_SCOPES: tuple[Any, ...] = ("all", 2, 3, 4, 5)


def parse_formats(text: str) -> tuple[str, ...]:
    """``--formats comma,space`` → ``("plain", "comma", "space")``: plain is always the reference."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    for p in parts:
        if p not in NUMBER_FORMATS:
            raise InputError(
                f"unknown number format {p!r}; expected some of {', '.join(NUMBER_FORMATS)}", field="--formats"
            )
    others = [f for f in NUMBER_FORMATS if f in parts and f != PLAIN]
    if not others:
        raise InputError(
            f"expected at least one format besides plain ({', '.join(NUMBER_FORMATS[1:])})", field="--formats"
        )
    return (PLAIN, *others)


@dataclass
class ProbeConfig:
    """One number-format run: which formats, which Deep Arithmark variant, which GPT-3 tasks."""

    formats: tuple[str, ...] = NUMBER_FORMATS
    seed: int = DEFAULT_SEED
    #: Deep Arithmark items (0: no Deep Arithmark part).
    n: int = DEFAULT_N
    #: GPT-3 arithmetic tasks (empty: no GPT-3 part).
    tasks: list = field(default_factory=list)
    gpt3_n: int = DEFAULT_GPT3_N
    shots: str = DEFAULT_SHOTS
    batch_size: int = 16
    max_context: int = 1024
    progress: bool = True
    cache: bool = True
    #: ``--chat-template`` / ``--system-prompt`` (default: none, raw text), for both parts.
    chat: ChatSetup = field(default_factory=ChatSetup)

    def validate(self) -> ProbeConfig:
        from synthprobe.benchmarks.deeparithmark.composition import MAX_BUILD_SIZE
        from synthprobe.benchmarks.gpt3.prompts import parse_shots

        if tuple(self.formats[:1]) != (PLAIN,) or len(self.formats) < 2 or len(set(self.formats)) != len(self.formats):
            raise InputError(
                f"expected plain and at least one other format, got {list(self.formats)}", field="--formats"
            )
        for name, value, hi in (("--n", self.n, MAX_BUILD_SIZE), ("--gpt3-n", self.gpt3_n, None)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 or (hi and value > hi):
                raise InputError(
                    f"expected a whole number from 0 to {hi or 'the task size'}, got {value!r}", field=name
                )
        if self.n == 0 and not self.tasks:
            raise InputError("nothing to score: --n 0 and no GPT-3 tasks (--tasks none)", field="--n")
        for t in self.tasks:
            if t.family != "arithmetic":
                raise InputError(f"{t.name} ({t.code}) writes no numbers; expected arithmetic tasks", field="--tasks")
            if t.default_n is not None and self.gpt3_n > t.default_n:
                raise InputError(f"{t.code}'s pool holds {t.default_n:,} items, got {self.gpt3_n:,}", field="--gpt3-n")
            parse_shots(self.shots, t)
        return self


# -- Deep Arithmark ------------------------------------------------------------------------


def _deep_dataset(items: list[dict], fmt: str, seed: int, n: int):
    from synthprobe.benchmarks.deeparithmark.build import dumps_item
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset
    from synthprobe.formats.arithmark3 import item_from_record

    label = f"synthprobe build deeparithmark --seed {seed} --n {n} --number-format {fmt}"
    text = "".join(dumps_item(it) + "\n" for it in items)
    mc = [item_from_record(it, path=label, line=it["ind"] + 1) for it in items]
    return Dataset(
        "deeparithmark",
        mc,
        {"path": label, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "n_items": len(mc)},
    )


def _rows(
    formats: Sequence[str], correct: dict[str, list[bool]], changed: dict[str, list[bool]], **keys: Any
) -> list[dict[str, Any]]:
    """One row per format: the paired difference from plain over the positions given."""
    rows = []
    for fmt in formats:
        stats = paired_difference(correct[PLAIN], correct[fmt])
        if fmt == PLAIN:
            stats.update(delta=None, b=None, c=None, p_mcnemar=None)
        rows.append({**keys, "format": fmt, "n": stats.pop("n"), "changed": sum(changed[fmt]), **stats})
    return rows


def _deep_parts(config: ProbeConfig):
    """The Deep Arithmark variant in every format: its plain items, ids, depths, which items each
    format changes, and per format the data set to score (``None``: nothing to score)."""
    from synthprobe.benchmarks.deeparithmark.build import format_item, iter_items

    plain = list(iter_items(config.seed, config.n))
    rendered = {fmt: [format_item(it, fmt) for it in plain] for fmt in config.formats}
    ids = [str(it["ind"]) for it in plain]
    depth = [it["metadata"]["depth"] for it in plain]
    changed = {
        fmt: [(a["ctx"], a["endings"]) != (b["ctx"], b["endings"]) for a, b in zip(plain, rendered[fmt])]
        for fmt in config.formats
    }
    sets = {}
    for fmt in config.formats:
        todo = [it for it, ch in zip(rendered[fmt], changed[fmt]) if fmt == PLAIN or ch]
        sets[fmt] = _deep_dataset(todo, fmt, config.seed, config.n) if todo else None
    return ids, depth, changed, sets


def _score_config(config: ProbeConfig):
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig

    return ScoreConfig(
        batch_size=config.batch_size,
        max_context=config.max_context,
        save_items=True,
        progress=config.progress,
        cache=config.cache,
        chat=config.chat,
    )


def score_deeparithmark(backend, config: ProbeConfig) -> dict[str, Any]:
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import score_dataset

    ids, depth, changed, sets = _deep_parts(config)
    sconf = _score_config(config)
    correct: dict[str, list[bool]] = {}
    datasets: dict[str, dict[str, Any]] = {}
    for fmt in config.formats:
        ds = sets[fmt]
        got: dict[str, bool] = {}
        if ds is not None:
            block = score_dataset(backend, ds, sconf, echo=lambda _msg: None)
            got = {rec["id"]: bool(rec[f"correct_{METRIC}"]) for rec in block["predictions"]}
            datasets[fmt] = {"sha256": ds.info["sha256"], "n_scored": len(ds.items)}
        else:
            datasets[fmt] = {"sha256": None, "n_scored": 0}
        base = correct.get(PLAIN)
        correct[fmt] = [got[i] if i in got else base[k] for k, i in enumerate(ids)]  # type: ignore[index]
    rows: list[dict[str, Any]] = []
    for scope in DEPTH_SCOPES:
        keep = [k for k in range(len(ids)) if scope == "all" or depth[k] == scope]
        if not keep:
            continue
        rows += _rows(
            config.formats,
            {f: [correct[f][k] for k in keep] for f in config.formats},
            {f: [changed[f][k] for k in keep] for f in config.formats},
            depth=scope,
        )
    return {
        "seed": config.seed,
        "n": config.n,
        "metric": METRIC,
        "changed": {f: sum(changed[f]) for f in config.formats},
        "datasets": datasets,
        "rows": rows,
        "items": [
            {
                "id": ids[k],
                "depth": depth[k],
                "changed": [f for f in config.formats if changed[f][k]],
                "correct": [int(correct[f][k]) for f in config.formats],
            }
            for k in range(len(ids))
        ],
    }


# -- GPT-3 arithmetic ----------------------------------------------------------------------


def _gpt3_parts(config: ProbeConfig, task):
    """One GPT-3 task in every format: its shot count, pools, item count, which items each
    format changes, and per format the run's config (``None``: the plain scores hold)."""
    from synthprobe.benchmarks.gpt3.prompts import parse_shots
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items
    from synthprobe.benchmarks.gpt3.scoring.score import EvalConfig

    k = parse_shots(config.shots, task)
    pools = {f: build_items(BuildConfig(task.name, seed=config.seed, number_format=f)) for f in config.formats}
    n = min(config.gpt3_n, len(pools[PLAIN]))
    changed = {f: [pools[f][i] != pools[PLAIN][i] for i in range(n)] for f in config.formats}
    configs = {
        fmt: None
        if fmt != PLAIN and pools[fmt] == pools[PLAIN]
        # no number written differently
        else EvalConfig(
            tasks=[task],
            shots=[config.shots],
            limit=n,
            seed=config.seed,
            batch_size=config.batch_size,
            progress=config.progress,
            cache=config.cache,
            save_items=True,
            number_format=fmt,
            chat=config.chat,
        ).validate()
        for fmt in config.formats
    }
    return k, pools, n, changed, configs


def score_gpt3(backend, config: ProbeConfig, *, on_row: Callable[[dict], None] | None = None) -> dict[str, Any]:
    from synthprobe.benchmarks.gpt3.scoring.score import score_task, token_counter

    count_tokens = token_counter(backend)
    rows: list[dict[str, Any]] = []
    tasks: list[dict[str, Any]] = []
    k = 0
    for task in config.tasks:
        k, pools, n, changed, configs = _gpt3_parts(config, task)
        correct: dict[str, list[bool]] = {}
        for fmt in config.formats:
            econf = configs[fmt]
            if econf is None:
                correct[fmt] = list(correct[PLAIN])
                continue
            result = score_task(backend, task, k, econf, pools[fmt], count_tokens)
            by_index = {it["index"]: bool(it["correct"]) for it in result["items"]}
            correct[fmt] = [by_index[i] for i in range(n)]
        task_rows = _rows(config.formats, correct, changed, task=task.name, code=task.code)
        rows += task_rows
        tasks.append(
            {
                "task": task.name,
                "code": task.code,
                "items": [{"index": i, "correct": [int(correct[f][i]) for f in config.formats]} for i in range(n)],
            }
        )
        if on_row is not None:
            for row in task_rows:
                on_row(row)
    return {
        "seed": config.seed,
        "n": config.gpt3_n,
        "shots": config.shots,
        "k": k,
        "check": "generate",
        "rows": rows,
        "tasks": tasks,
    }


def run_plan(backend, config: ProbeConfig, *, models: int = 1):
    """The run's :class:`~synthprobe.plan.Plan`: a cell per format that is scored (Deep
    Arithmark: the items the format changes; GPT-3: per task), each scored as the run scores it;
    the calibration times the plain one of each part (Deep Arithmark, each GPT-3 task)."""
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import score_dataset
    from synthprobe.benchmarks.gpt3.scoring.score import score_task, token_counter
    from synthprobe.plan import Cell, Plan, plural

    cells: list[Cell] = []
    parts = []
    if config.n:
        _ids, _depth, _changed, sets = _deep_parts(config)
        sconf = _score_config(config)
        cells += [
            Cell(
                f"deeparithmark {fmt}",
                len(ds.items),
                kind="deeparithmark",
                score=lambda ds=ds: score_dataset(backend, ds, sconf, echo=lambda _msg: None),
            )
            for fmt, ds in sets.items()
            if ds is not None
        ]
        parts.append(f"deeparithmark {plural(config.n, 'item')} (seed {config.seed})")
    if config.tasks:
        count_tokens = token_counter(backend)
        for task in config.tasks:
            k, pools, n, _changed, configs = _gpt3_parts(config, task)
            cells += [
                Cell(
                    f"{task.code} {fmt}",
                    n,
                    kind=("gpt3", task.name),
                    score=lambda task=task, k=k, econf=econf, pool=pools[fmt]: score_task(
                        backend, task, k, econf, pool, count_tokens
                    ),
                )
                for fmt, econf in configs.items()
                if econf is not None
            ]
        parts.append(
            f"{plural(len(config.tasks), 'GPT-3 task')} x {plural(config.gpt3_n, 'item')} ({config.shots}-shot)"
        )
    text = (
        f"{' + '.join(parts)} in {plural(len(config.formats), 'format')} ({', '.join(config.formats)}): "
        f"{plural(sum(c.items for c in cells), 'item')} to score (those a format leaves unchanged are not "
        f"scored again), for {plural(models, 'model')}"
    )
    return Plan(cells, text, models=models, shorter="--n N, --gpt3-n N or --tasks")


def run(backend, config: ProbeConfig, *, on_row: Callable[[dict], None] | None = None) -> dict[str, Any]:
    """Score every part of ``config`` with ``backend``; returns the ``number_format`` block."""
    config.validate()
    block: dict[str, Any] = {
        "version": VERSION,
        "reference": PLAIN,
        "formats": list(config.formats),
        "separators": {f: SEPARATORS[f] for f in config.formats if f != PLAIN},
    }
    if config.n:
        block["deeparithmark"] = score_deeparithmark(backend, config)
    if config.tasks:
        block["gpt3"] = score_gpt3(backend, config, on_row=on_row)
    return block


# -- the printed table ---------------------------------------------------------------------


def _delta(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1f}".replace("-", "−")


def table_lines(block: dict[str, Any]) -> list[str]:
    """The block as Markdown tables (Deep Arithmark by depth, GPT-3 by task)."""
    from synthprobe.report.format import fmt_pct
    from synthprobe.results import fmt_p

    out: list[str] = []
    head = "| {} | format | n | changed | acc % | Δ vs plain | b / c | McNemar p |"
    rule = "|---|---|---|---|---|---|---|---|"
    deep = block.get("deeparithmark")
    if deep:
        out += [
            f"Deep Arithmark (seed {deep['seed']}, {deep['n']:,} items, {deep['metric']}):",
            "",
            head.format("depth"),
            rule,
        ]
        for r in deep["rows"]:
            bc = "—" if r["b"] is None else f"{r['b']} / {r['c']}"
            acc = fmt_pct(r["accuracy"], 1, in_percent=True)
            out.append(
                f"| {r['depth']} | {r['format']} | {r['n']} | {r['changed']} | {acc} | "
                f"{_delta(r['delta'])} | {bc} | {fmt_p(r['p_mcnemar'])} |"
            )
    g = block.get("gpt3")
    if g:
        if out:
            out.append("")
        out += [
            f"GPT-3 arithmetic (seed {g['seed']}, first {g['n']:,} items per task, {g['shots']}-shot, exact match):",
            "",
            head.format("task"),
            rule,
        ]
        for r in g["rows"]:
            bc = "—" if r["b"] is None else f"{r['b']} / {r['c']}"
            acc = fmt_pct(r["accuracy"], 1, in_percent=True)
            out.append(
                f"| {r['code']} | {r['format']} | {r['n']} | {r['changed']} | {acc} | "
                f"{_delta(r['delta'])} | {bc} | {fmt_p(r['p_mcnemar'])} |"
            )
    return out
