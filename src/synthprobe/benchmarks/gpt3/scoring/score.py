"""Score a causal LM on the GPT-3 synthetic tasks and compare it with the paper.

Generation tasks (arithmetic, word tasks): greedy decoding, stop at the first newline, strip
whitespace, exact match against ``completion.strip()``; accuracy is reported in percent as in
the paper. ``check="is-greedy"`` scores lm-eval's way instead: an item counts when every token
of the gold completion is the model's argmax given the prompt (no free generation).

SAT: the choice with the highest per-token mean log-likelihood wins (GPT-3's rule), ties to
the lowest index.

Results JSON (written atomically): the one results document of :mod:`synthprobe.results`
(``schema = "synthprobe/results"``, ``schema_version = 2``), one model entry whose ``gpt3``
block holds the rows (files of the earlier one-model layout, ``"benchmark": "gpt3-synthetic"``
with the rows in a top-level ``results`` list, still read, converted on read)::

    {
      "schema": "synthprobe/results", "schema_version": 2,
      "synthprobe": "<version>", "command": "synthprobe score gpt3 ...",
      "models": [{
        "model": {...backend.describe()...},
        "settings": {"tasks", "shots", "seed", "format", "check", "max_context", "batch_size",
                     "limits", "sat_file", "sat_sha256", "word_list",
                     "task_files": [{"task", "path", "sha256", "items", "format"}]},
        "results": {"gpt3": {"rows": [
          {"task", "code", "family", "setting", "k", "n", "correct", "accuracy", "ci95": [lo, hi],
           "shots": {"mean", "min", "max", "reduced"}, "prompt_tokens": {"mean", "max"},
           "max_new_tokens", "cached_items", "seconds", "items_per_s",
           "paper": {"125M": {"value": ..., "doubtful"?: true, "alt"?: ...}, ...},
           "paper_note"?, "lands", "task_file"? (the user's file the items came from),
           "usage"?: {"items", "prompt_tokens", "completion_tokens"},  # server-backed engines
           "items": [{"index", "n_shots", "prompt_tokens", "correct", "usage"?: {"prompt_tokens", "completion_tokens"},
                      "gold"?, "prediction"?, "correct"?, ...}]}
        ]}},
        "seconds": {"load", "total"}
      }]
    }

``accuracy`` is in percent (0–100) and ``ci95`` is its Wilson 95 % interval, also in percent.
``shots.reduced`` counts items that got fewer demonstrations than asked because of
``max_context``. ``lands`` places the model among the GPT-3 sizes (see
:func:`synthprobe.benchmarks.gpt3.paper.where_it_lands`): ``"n too small"`` when the interval
reaches across more than one GPT-3 cell, ``null`` for SAT scored on the shipped sample (the
paper's figures are for the real SAT set). ``paper_note`` says why a row does not compare
one to one with the paper (a doubtful row, the SAT sample, fewer than K demonstrations).

``items`` always holds every scored item's ``index`` (in the seeded pool), ``n_shots`` and
``prompt_tokens`` and ``correct``, one item per line of the file; ``--save-predictions`` adds the gold answer,
the prediction, correctness and (SAT) the per-choice scores.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from synthprobe.benchmarks.gpt3.paper import SIZES
from synthprobe.benchmarks.gpt3.prompts import Prompt, PromptConfig, build_prompts, demo_pieces, parse_shots
from synthprobe.benchmarks.gpt3.registry import FORMATS, BuildConfig, Task, build_items, serialize
from synthprobe.benchmarks.gpt3.sat import is_sample
from synthprobe.benchmarks.gpt3.scoring.metrics import summarise
from synthprobe.errors import InputError
from synthprobe.metrics.choice import exact_match, pick_choice
from synthprobe.metrics.extract import LETTERS, extract_letter
from synthprobe.prompts import protocols as proto
from synthprobe.scoring.runner import CacheKey, batches, run_items
from synthprobe.scoring.settings import RunSettings

CHECKS = ("generate", "is-greedy")
STOP = "\n"
PROTOCOLS = ("loglik", "letters")
#: prompt plus answer tokens at most: GPT-3's window (``--max-context``; capped at the model's)
MAX_CONTEXT = 2048


def setting_name(k: int, task: Task) -> str:
    if k == 0:
        return "zero"
    if k == 1:
        return "one"
    if k == task.k_few:
        return "few"
    return f"{k}-shot"


@dataclass(kw_only=True)
class EvalConfig(RunSettings):
    """One scoring run over several tasks and shot settings: the shared settings
    (:class:`RunSettings`; here 16 rows a batch, 2,048 tokens of context, each item kept) and
    GPT-3's own."""

    MIN_CONTEXT: ClassVar[int] = 8

    tasks: list[Task]
    shots: list[str] = field(default_factory=lambda: ["zero", "one", "few"])
    limit_few: int | None = None
    seed: int = 0
    format: str = "openai"
    check: str = "generate"
    max_context: int = MAX_CONTEXT
    batch_size: int = 16
    sat_file: str | None = None
    save_items: bool = True
    #: Users' task files (:class:`~synthprobe.benchmarks.gpt3.taskfile.TaskFile`, checked on loading):
    #: each one's items replace the built pool of its task, which must be in ``tasks``.
    task_files: list = field(default_factory=list)
    #: How the arithmetic tasks write numbers (plain, comma, space: :mod:`synthprobe.prompts.numformat`).
    number_format: str = "plain"
    #: ``--sat-protocol``: ``loglik`` (the paper's way) or ``letters`` (SAT's options as A-E, one
    #: letter generated; the generative tasks are the same under both). Recorded as the entry's
    #: ``protocol``.
    protocol: str = "loglik"

    def loglik_tasks(self) -> list[str]:
        """The codes of the tasks this run scores by log-likelihood (SAT without ``--sat-protocol
        letters``; every task with ``--check is-greedy``)."""
        return [
            t.code
            for t in self.tasks
            if self.check == "is-greedy" or (t.kind == "choice" and self.protocol != "letters")
        ]

    def check_engine(self, spec: str) -> None:
        """Refuse, before it loads, an engine that gives no log-likelihoods when a task needs them."""
        from synthprobe.backends import engine_can, split_kind

        needed = self.loglik_tasks()
        if needed and not engine_can(spec, "loglikelihood"):
            raise InputError(
                f"{', '.join(needed)} {'needs' if len(needed) == 1 else 'need'} log-likelihoods, which "
                f"the {split_kind(spec)[0]} engine cannot give; score "
                f"{'it' if len(needed) == 1 else 'them'} with --sat-protocol letters or --check generate",
                field="--model",
            )

    def validate(self) -> EvalConfig:
        if not self.tasks:
            raise InputError("expected at least one task", field="--tasks")
        if not self.shots:
            raise InputError("expected at least one shot setting", field="--shots")
        for t in self.tasks:
            for s in self.shots:
                parse_shots(s, t)
        self.check_run()
        v = self.limit_few
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise InputError(f"expected an integer >= 1, got {v!r}", field="--limit-few")
        if self.format not in FORMATS:
            raise InputError(f"expected one of {', '.join(FORMATS)}, got {self.format!r}", field="--format")
        from synthprobe.prompts.numformat import check_number_format

        check_number_format(self.number_format)
        if self.protocol not in PROTOCOLS:
            raise InputError(f"expected one of {', '.join(PROTOCOLS)}, got {self.protocol!r}", field="--sat-protocol")
        if self.protocol == "letters" and self.check == "is-greedy":
            raise InputError(
                "--check is-greedy reads log-likelihoods; --sat-protocol letters generates", field="--sat-protocol"
            )
        if self.check not in CHECKS:
            raise InputError(f"expected one of {', '.join(CHECKS)}, got {self.check!r}", field="--check")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"expected an integer >= 0, got {self.seed!r}", field="--seed")
        if self.sat_file is not None and not any(t.family == "sat" for t in self.tasks):
            raise InputError(
                f"only the SAT task reads a source file, and --tasks selects none "
                f"({', '.join(t.code for t in self.tasks)}); add SAT or drop --sat-file",
                field="--sat-file",
            )
        if self.sat_file is not None and not Path(self.sat_file).is_file():
            raise InputError("file does not exist", path=self.sat_file, field="--sat-file")
        for tf in self.task_files:
            if tf.task not in self.tasks:
                raise InputError(
                    f"the file's task {tf.task.code} is not among --tasks", path=tf.path, field="--task-file"
                )
        if any(t.family == "sat" for t in self.tasks):
            from synthprobe.benchmarks.gpt3.sat import load_sat

            load_sat(self.sat_file)  # the whole file, strictly, before any model is loaded
        return self

    def task_file(self, task: Task):
        """The user's task file for ``task``, or None when its pool is built."""
        return next((tf for tf in self.task_files if tf.task.name == task.name), None)

    def format_for(self, task: Task) -> str:
        """The prompt layout of ``task``: an arithmetic task file's own layout, else ``format``."""
        tf = self.task_file(task)
        return tf.format if tf is not None and tf.format else self.format

    def limit_for(self, k: int, task: Task | None = None) -> int | None:
        """Items to score: ``limit_few`` for few-shot generation prompts (1-2k tokens), else ``limit``."""
        if k >= 2 and self.limit_few is not None and (task is None or task.kind == "generate"):
            return self.limit_few
        return self.limit


def token_counter(backend) -> Callable[[str], int]:
    """Prompt length in tokens as the backend's generation tokenises it."""
    return backend.count_tokens


def _pool(task: Task, config: EvalConfig, cache: dict) -> list:
    key = task.name
    tf = config.task_file(task)
    if tf is not None:
        cache.setdefault(key, tf.items)
    if key not in cache:
        cache[key] = build_items(
            BuildConfig(
                task.name,
                seed=config.seed,
                format=config.format,
                sat_file=config.sat_file if task.family == "sat" else None,
                number_format=config.number_format,
            )
        )
    return cache[key]


def score_task(
    backend, task: Task, k: int, config: EvalConfig, pool: list, count_tokens: Callable[[str], int] | None = None
) -> dict[str, Any]:
    """Score ``backend`` on the first ``limit`` items of ``pool`` with ``k`` demonstrations."""
    limit = config.limit_for(k, task)
    n = len(pool) if limit is None else min(limit, len(pool))
    count_tokens = count_tokens or token_counter(backend)
    max_context = config.max_context
    model_max = getattr(backend, "max_length", None)
    if isinstance(model_max, int) and model_max > 0:
        max_context = min(max_context, model_max)
    if task.kind == "choice":
        reserve = max(count_tokens(e) for item in pool for e in item.endings)
        max_new = 0
    elif config.check == "is-greedy":
        reserve = max(count_tokens(item.completion) for item in pool)
        max_new = 0
    else:
        max_new = config.max_new_tokens or task.max_new_tokens
        reserve = max_new
    fmt = config.format_for(task)
    pconf = PromptConfig(shots=k, format=fmt, max_context=max_context, seed=config.seed, reserve=reserve).validate()
    prompts = build_prompts(task, pool, range(n), pconf, count_tokens)
    setting = setting_name(k, task)

    chat = config.chat
    letters = task.kind == "choice" and config.protocol == "letters"
    if letters:
        max_new = config.max_new_tokens or 8

    def conversation(p: Prompt, text: str) -> list:
        """The chat turns of one prompt: the demonstrations inside the one user turn, or (with
        --fewshot-as-multiturn) one user/assistant pair per demonstration."""
        if not chat.fewshot_as_multiturn or not p.demos:
            return chat.conversation(text)
        if letters:  # each demonstration a lettered question and its answer letter
            return chat.conversation(
                proto.prompt(pool[p.index], "letters", chat=True),
                demos=[(proto.prompt(pool[j], "letters", chat=True), LETTERS[int(pool[j].label)]) for j in p.demos],
            )
        head, pieces, test_piece = demo_turns(task, pool, p.demos, pool[p.index], fmt)
        return chat.conversation(
            head + test_piece if not pieces else test_piece,
            demos=[((head if j == 0 else "") + q, a) for j, (q, a) in enumerate(pieces)],
        )

    def generate(chunk: Sequence[Prompt], texts: list[str], budget: int, batch_size: int) -> list:
        """The :class:`~synthprobe.backends.Generation` of each prompt (text, tokens, a server's usage)."""
        if chat.enabled:
            return backend.generate_chat(
                [conversation(p, t) for p, t in zip(chunk, texts)],
                budget,
                STOP,
                template=chat.template_arg,
                batch_size=batch_size,
                progress=False,
                details=True,
            )
        return backend.generate(texts, budget, STOP, batch_size=batch_size, progress=False, details=True)

    def with_usage(row: dict[str, Any], gen) -> dict[str, Any]:
        if gen.prompt_tokens is not None:  # a server's usage for this item's request
            row["usage"] = {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.n_tokens}
        return row

    def score(chunk: Sequence[Prompt], batch_size: int) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = []
        if letters:
            texts = [letters_prompt(task, pool, p, chat=chat.user_turns(backend)) for p in chunk]
            for p, gen in zip(chunk, generate(chunk, texts, max_new, batch_size)):
                out = gen.text
                item = pool[p.index]
                # the option's words written beside a letter must be that option's (else inconsistent)
                ex = extract_letter(
                    out, n_options=len(item.endings), options=item.endings, cut_off=gen.finish == "length"
                )
                pred = LETTERS.index(ex.answer) if ex.counts else None
                rows.append(
                    {
                        "index": p.index,
                        "id": item.id,
                        "n_shots": p.n_shots,
                        "prompt_tokens": p.n_tokens,
                        "label": item.label,
                        "prediction": pred,
                        "correct": pred == item.label,
                        "raw": out,
                        "parsed": ex.answer,
                        "rule": ex.rule,
                        "unparsed_reason": ex.reason,
                        "outcome": ex.outcome,
                        "outcome_note": ex.note,
                    }
                )
                with_usage(rows[-1], gen)
        elif task.kind == "choice" and chat.enabled:
            raise InputError(
                "a chat template with SAT's log-likelihood protocol is not supported; use --sat-protocol letters",
                field="--chat-template",
            )
        elif task.kind == "choice":
            queries = [dataclasses.replace(pool[p.index], ctx=p.text) for p in chunk]
            scores = backend.score_choices(queries, batch_size=batch_size, max_context=max_context, progress=False)
            for p, q, per_item in zip(chunk, queries, scores):
                means = [s.per_token for s in per_item]
                pred = pick_choice(means)
                rows.append(
                    {
                        "index": p.index,
                        "id": q.id,
                        "n_shots": p.n_shots,
                        "prompt_tokens": p.n_tokens,
                        "label": q.label,
                        "prediction": pred,
                        "correct": pred == q.label,
                        "per_token_logprob": [round(m, 6) for m in means],
                    }
                )
        elif config.check == "is-greedy":
            pairs = [(p.text, pool[p.index].completion) for p in chunk]
            scores = backend.loglikelihood(pairs, batch_size=batch_size, max_context=max_context, progress=False)
            for p, (_ctx, gold), s in zip(chunk, pairs, scores):
                rows.append(
                    {
                        "index": p.index,
                        "n_shots": p.n_shots,
                        "prompt_tokens": p.n_tokens,
                        "gold": gold,
                        "logprob": round(s.logprob, 6),
                        "correct": bool(s.is_greedy),
                    }
                )
        else:
            if chat.enabled and config.check == "is-greedy":
                raise InputError(
                    "--check is-greedy under a chat template is not supported; use --check generate",
                    field="--chat-template",
                )
            outputs = generate(chunk, [p.text for p in chunk], max_new, batch_size)
            for p, gen in zip(chunk, outputs):
                gold = pool[p.index].completion
                rows.append(
                    {
                        "index": p.index,
                        "n_shots": p.n_shots,
                        "prompt_tokens": p.n_tokens,
                        "gold": gold,
                        "prediction": gen.text,
                        "correct": exact_match(gen.text, gold),
                    }
                )
                if gen.prompt_tokens is not None:  # a server's usage for this item's request
                    rows[-1]["usage"] = {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.n_tokens}
        return rows

    def score_key() -> CacheKey:
        settings = {
            "setting": setting,
            "k": k,
            "seed": config.seed,
            "format": fmt,
            "check": config.check,
            "max_context": max_context,
            "max_new_tokens": max_new,
        }
        if chat.enabled:
            ident = chat.identity(backend, fewshot=k > 0)
            settings["chat"] = {
                key: ident[key] for key in ("chat_template_sha256", "system_prompt_sha256", "fewshot_layout")
            }
        if letters:
            settings["protocol"] = "letters"
            if chat.user_turns(backend) and not chat.enabled:
                settings["user_turn"] = True  # a chat endpoint: the question is a user turn
        return pool_key(backend, task, pool, settings)

    where = f"{task.code} {setting}"

    def work(todo: list[int], batch_size: int, emit) -> None:
        # Longest prompts first, as the backends batch them (little padding), one backend batch at
        # a time: each finished batch goes to the cache at once.
        for chunk in batches(
            todo,
            batch_size,
            length=lambda i: prompts[i].n_tokens if prompts[i].n_tokens is not None else len(prompts[i].text),
            tiebreak=lambda i: prompts[i].index,
            desc=where,
            total=len(prompts),
            progress=config.progress,
        ):
            for i, row in zip(chunk, score([prompts[i] for i in chunk], batch_size)):
                emit(i, {"id": str(row["index"]), "item": row})

    start = time.perf_counter()
    result = run_items(
        [str(p.index) for p in prompts],
        work,
        where=where,
        backend=backend,
        cache=score_key if config.cache else None,
        batch_size=config.batch_size,
        progress=config.progress,
    )
    items = [rec["item"] for rec in result.records]
    seconds = time.perf_counter() - start
    row = summarise(
        task,
        setting,
        k,
        prompts,
        items,
        seconds=seconds,
        max_new_tokens=max_new if task.kind != "choice" and config.check == "generate" else None,
        save_items=config.save_items,
        cached=result.stored,
        sat_sample=task.family == "sat" and is_sample(config.sat_file),
    )
    if chat.enabled or chat.system_prompt is not None:
        row["chat"] = chat.identity(backend, fewshot=k > 0)
    if letters:
        row["protocol"] = "letters"
        row["unparsed"] = sum(1 for it in items if it.get("rule") == "unparsed")
        row["inconsistent"] = sum(1 for it in items if it.get("outcome") == "inconsistent")
        row["cut_off"] = sum(1 for it in items if it.get("outcome") == "cut_off")
    tf = config.task_file(task)
    if tf is not None:
        row = {"task": row["task"], "task_file": str(tf.path), **row}
    return row


def demo_turns(
    task: Task, pool: list, demos: Sequence[int], test: Any, fmt: str
) -> tuple[str, list[tuple[str, str]], str]:
    """(instruction head, [(demonstration question, its answer)], test question) for
    --fewshot-as-multiturn: the prompt's own pieces split at the answer."""
    head, _, test_piece = demo_pieces(task, pool, demos, test, fmt)
    pairs = []
    for j in demos:
        item = pool[j]
        q = item.ctx if task.family == "sat" else item.context
        pairs.append((q.strip("\n"), item.completion.strip()))
    return head, pairs, test_piece


def letters_prompt(task: Task, pool: list, p: Prompt, *, chat: bool) -> str:
    """A SAT item with its options lettered; each demonstration is shown the same way with its
    answer letter."""
    shots = []
    for j in p.demos:
        demo = pool[j]
        shots.append(proto.prompt(demo, "letters", chat=False) + f" {LETTERS[int(demo.label)]}\n\n")
    return "".join(shots) + proto.prompt(pool[p.index], "letters", chat=chat)


def pool_key(backend, task: Task, pool: list, settings: dict[str, Any]) -> CacheKey:
    """The score-cache key of one (task pool, setting) beside the model: the pool's JSONL text
    stands for the data (it covers the seed, the format and a user's SAT file), ``settings`` for
    the rest."""
    import hashlib

    data_sha = hashlib.sha256(serialize(pool).encode("utf-8")).hexdigest()
    return CacheKey(data_sha, {"task": task.name, "bos": backend.bos, **settings})


def dumps_results(doc: dict[str, Any]) -> str:
    """The results JSON: indented as :func:`synthprobe.io.dumps_json`, but each per-item record
    of ``models[*].results.gpt3.rows[*].items`` on one line, so a full run's file stays small and readable (written
    by :func:`synthprobe.results.dumps_results`, the one results writer)."""
    from synthprobe.results import dumps_results as dumps

    return dumps(doc)


@dataclass(frozen=True)
class PlanCell:
    """One (task, shot setting) of a run and the number of items it will score."""

    task: Task
    setting: str
    k: int
    n: int


def plan(config: EvalConfig, pools: dict[str, list] | None = None) -> list[PlanCell]:
    """Every (task, setting) the run scores, with its item count; builds the pools into ``pools``."""
    pools = {} if pools is None else pools
    cells = []
    for task in config.tasks:
        pool = _pool(task, config, pools)
        for shot in config.shots:
            k = parse_shots(shot, task)
            limit = config.limit_for(k, task)
            cells.append(
                PlanCell(task, setting_name(k, task), k, len(pool) if limit is None else min(limit, len(pool)))
            )
    return cells


def plan_text(cells: Sequence[PlanCell]) -> str:
    """``15 tasks x 3 settings = 45 runs, 123,456 items`` and the items per setting."""
    tasks = list(dict.fromkeys(c.task.code for c in cells))
    settings = list(dict.fromkeys(c.setting for c in cells))
    per_setting = ", ".join(f"{s} {sum(c.n for c in cells if c.setting == s):,}" for s in settings)
    return (
        f"{len(tasks)} task{'s' if len(tasks) != 1 else ''} ({', '.join(tasks)}) x {len(settings)} "
        f"setting{'s' if len(settings) != 1 else ''} = {len(cells)} run{'s' if len(cells) != 1 else ''}, "
        f"{sum(c.n for c in cells):,} items "
        f"({per_setting})"
    )


def plan_cells(
    backend, config: EvalConfig, cells: Sequence[PlanCell], pools: dict[str, list], *, tokens: bool = True
) -> list:
    """``cells`` as the cells of a :class:`synthprobe.plan.Plan`: each scores its task
    and setting as the run does (so the calibration's batch is the run's own first batch); the
    tasks of one family and setting are reckoned at the time per item of the first of them.
    ``tokens=False``: no planned prompt tokens (a later model's cells, only counted in its cache:
    the loaded model's tokens decide on a calibration, and a server would be asked to count)."""
    from synthprobe.plan import Cell

    count_tokens = token_counter(backend)
    return [
        Cell(
            f"{c.task.code} {c.setting}",
            c.n,
            kind=(c.task.family, c.setting),
            score=lambda c=c: score_task(backend, c.task, c.k, config, pools[c.task.name], count_tokens),
            tokens=planned_tokens(c, pools[c.task.name], count_tokens, config.max_context) if tokens else None,
        )
        for c in cells
    ]


def planned_tokens(cell: PlanCell, pool: Sequence, count_tokens: Callable[[str], int], max_context: int) -> int:
    """About how many prompt tokens ``cell`` sends: its items times (K demonstrations + the item)
    times the mean tokens of an example (the first 16 of the pool, counted by the model's own
    tokenizer), each prompt at most ``max_context``."""
    sample = list(pool[:16])
    if not sample or not cell.n:
        return 0
    texts = [f"{getattr(it, 'context', '')}{getattr(it, 'completion', '')}" for it in sample]
    per_example = sum(count_tokens(t) for t in texts) / len(texts)
    return int(cell.n * min(max_context, per_example * (cell.k + 1)))


def run(
    backend,
    config: EvalConfig,
    *,
    on_result: Callable[[dict], None] | None = None,
    pools: dict[str, list] | None = None,
) -> list[dict]:
    """Score every (task, shot setting) of ``config``; returns one result dict each."""
    config.validate()
    pools = {} if pools is None else pools
    count_tokens = token_counter(backend)
    results = []
    for task in config.tasks:
        pool = _pool(task, config, pools)
        for shot in config.shots:
            k = parse_shots(shot, task)
            result = score_task(backend, task, k, config, pool, count_tokens)
            results.append(result)
            if on_result is not None:
                on_result(result)
    return results


def _ci_text(ci: Sequence[float] | None) -> str:
    if not ci:
        return "-"
    return f"{ci[0]:.1f}-{ci[1]:.1f}"


def format_table(results: Sequence[dict], model_name: str = "model") -> str:
    """A text table: the model's accuracy and 95 % interval beside GPT-3's for every size (Table H.1).

    ``model_name`` is printed in full above the table; the column itself is titled ``model``.
    """
    head = ["task", "setting", "K", "n", "model", "95% CI"] + list(SIZES) + ["lands"]
    rows = []
    notes: dict[str, list[str]] = {}
    for r in results:
        paper = r.get("paper") or {}
        cells = []
        for size in SIZES:
            c = paper.get(size)
            if c is None:
                cells.append("-")
            else:
                v = c["value"]
                text = f"{v:.1f}" if v >= 10 else f"{v:.2f}"
                cells.append(text + ("†" if c.get("doubtful") else ""))
        k = r["k"] if r["shots"]["mean"] == r["k"] else f"{r['k']}({r['shots']['mean']:g})"
        lands = r.get("lands")
        rows.append(
            [r["code"], r["setting"], str(k), str(r["n"]), f"{r['accuracy']:.2f}", _ci_text(r.get("ci95"))]
            + cells
            + ["—" if lands is None else lands]
        )
        if r.get("paper_note"):
            notes.setdefault(r["paper_note"], []).append(f"{r['code']} {r['setting']}")
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = [
        "  ".join(str(x).rjust(w) if i >= 2 else str(x).ljust(w) for i, (x, w) in enumerate(zip(line, widths)))
        for line in [head] + rows
    ]
    lines.insert(1, "-" * len(lines[0]))
    legend = [
        "Accuracy in %, with its Wilson 95% interval. GPT-3 columns: Brown et al. 2020, Table H.1 (few-shot "
        "K: arithmetic 50, word tasks 100, SAT 20); † = doubtful cell (text versions of the table disagree).",
        "K(x): x demonstrations used on average where max-context forced fewer (or the pool is smaller). "
        "lands: '≥ S' = at least GPT-3's score at every size up to S; '0, as ≤ S' = 0%, "
        "as GPT-3 up to S; 'n too small' = the 95% interval reaches across or holds more than one GPT-3 cell "
        "(equal cells count as one), "
        "so the data cannot place the model; '—' = no verdict (see the notes).",
    ]
    legend += [f"Note ({', '.join(where)}): {note}." for note, where in notes.items()]
    legend += [
        f"{r['code']} {r['setting']} (letters): of {r['n']} answers, unparsed {r.get('unparsed', 0)}, "
        f"inconsistent {r.get('inconsistent', 0)} (a letter written with another option's words), cut off "
        f"{r.get('cut_off', 0)}: all counted wrong"
        for r in results
        if r.get("protocol") == "letters"
    ]
    return "\n".join([f"model: {model_name}", ""] + lines + [""] + legend)
