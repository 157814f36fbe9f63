"""GPT-3 synthetic-task items for the item viewer (:mod:`synthprobe.report.viewer`): the
benchmark's ``viewer`` part in the registry (:func:`runs`).

``synthprobe score gpt3 --save-predictions`` keeps per item its ``index`` in the seeded pool,
``n_shots`` (demonstrations kept), and the gold answer with the generation (``prediction``), or
(SAT) the pick and the per-choice per-token means, or (``--check is-greedy``) the gold's
log-likelihood. The prompt is not stored: the pool is rebuilt from the run's settings (task,
``seed``, ``format``, ``number_format``; SAT from the shipped sample) and the prompt with the
recorded number of demonstrations (:func:`synthprobe.benchmarks.gpt3.prompts.prompt_text`). A
rebuilt item is used only when it is the scored one (the same gold answer, or the same id and
label); rows scored on a user's task file or SAT file get no prompts, and the page says so.

Protocols: ``generate`` (greedy generation, exact match after stripping whitespace: the parse is
the stripped text), ``loglik`` (SAT: the choice with the highest per-token mean; is-greedy: the
gold's log-likelihood and whether it is the greedy continuation).

Items have ``"gold"`` (generation tasks), ``depth`` null, ``template`` "<code> <setting>",
``topic`` the family, and keys ``gpt3:<seed>:<format>:<numbers>:<task>:<k>:<index>:<shots>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthprobe.report.viewer import Answer, Run, generated_answer, run_name
from synthprobe.results import Results

Pair = Answer


def _saved(row: dict) -> bool:
    items = row.get("items")
    return isinstance(items, list) and bool(items) and all(isinstance(it, dict) and "correct" in it for it in items)


def _pool(task, settings: dict, pools: dict) -> list | None:
    from synthprobe.benchmarks.gpt3.registry import BuildConfig, build_items

    seed = settings.get("seed", 0)
    fmt = settings.get("format", "openai")
    number_format = settings.get("number_format") or "plain"
    key = (task.name, seed, fmt, number_format)
    if key not in pools:
        try:
            pools[key] = build_items(BuildConfig(task.name, seed=seed, format=fmt, number_format=number_format))
        except Exception:  # noqa: BLE001 - a pool this release cannot rebuild: no prompts, said on the page
            pools[key] = None
    return pools[key]


def pairs_of(doc: Results, pools: dict) -> list[tuple[Any, list[Pair], list[str]]]:
    """Per model entry with saved GPT-3 items: (entry, [(item key, item, row)], notes for the page)."""
    from synthprobe.benchmarks.gpt3.prompts import PromptConfig
    from synthprobe.benchmarks.gpt3.registry import get_task

    r = doc.reader
    out = []
    for e, block in doc.blocks("gpt3"):
        settings = r.get(block.data, "settings", block.where, dict, required=False) or e.settings
        pairs: list[Pair] = []
        notes: list[str] = []
        for j, row in enumerate(block.data["rows"]):
            where = f"{block.where}.rows[{j}]" if block.where else f"results[{j}]"
            if not isinstance(row, dict) or not _saved(row):
                continue
            task = get_task(r.get(row, "task", where, str))
            k = r.get(row, "k", where, int)
            setting = r.get(row, "setting", where, str)
            pool = None if row.get("task_file") else _pool(task, settings, pools)
            config = PromptConfig(shots=k, format=settings.get("format", "openai"), seed=settings.get("seed", 0))
            row_pairs = [
                _pair(r, it, f"{where}.items[{i}]", task, setting, k, pool, config, settings)
                for i, it in enumerate(row["items"])
            ]
            pairs += row_pairs
            missing = sum(1 for _key, item, _res in row_pairs if item["prompt"] is None)
            if missing:
                notes.append(
                    f"{missing} of the {len(row['items'])} {task.code} {setting} items of "
                    f"{e.model.get('name', 'a model')} have no prompt: their pool could not be rebuilt "
                    "from the run's settings (a task file or a SAT file of one's own)."
                )
        if pairs:
            out.append((e, pairs, notes))
    return out


def _pair(r, it: dict, here: str, task, setting: str, k: int, pool, config, settings: dict) -> Pair:
    """One saved item as the viewer shows it: its key, the item (its prompt rebuilt from the
    pool when the pool's item is the one scored; None otherwise) and what the model did."""
    from synthprobe.benchmarks.gpt3.prompts import prompt_text

    index = r.get(it, "index", here, int)
    n_shots = r.get(it, "n_shots", here, int, required=False) or 0
    q = pool[index] if pool is not None and 0 <= index < len(pool) else None
    gold = it.get("gold")
    if q is not None and task.kind == "choice":
        same = str(q.id) == str(it.get("id")) and q.label == it.get("label")
    else:
        same = q is not None and isinstance(gold, str) and getattr(q, "completion", None) == gold
    key = (
        f"gpt3:{settings.get('seed', 0)}:{settings.get('format', 'openai')}:"
        f"{settings.get('number_format') or 'plain'}:{task.name}:{k}:{index}:{n_shots}"
    )
    item: dict[str, Any] = {
        "key": key,
        "id": f"{task.code} #{index}",
        "depth": None,
        "template": f"{task.code} {setting}",
        "topic": task.family,
        "label": it.get("label", 0),
        "prompt": prompt_text(task, pool, index, config, n_shots) if same else None,
        "endings": None,
        "mistakes": None,
        "values": None,
    }
    ok = bool(r.get(it, "correct", here, bool))
    if task.kind == "choice":
        item["endings"] = list(q.endings) if same else None
        return key, item, _choice_result(r, it, here, ok)
    if "prediction" in it:
        item["gold"] = gold
        text = r.get(it, "prediction", here, str)
        return key, item, {"p": -1, "ok": int(ok), "pr": "generate", "gen": text, "parsed": text.strip()}
    # is-greedy: the gold continuation's log-likelihood
    item["endings"] = [gold] if isinstance(gold, str) else None
    res: dict[str, Any] = {"p": 0 if ok else -1, "ok": int(ok), "pr": "loglik"}
    if isinstance(it.get("logprob"), (int, float)):
        res["lp"] = [round(float(it["logprob"]), 4)]
    return key, item, res


def _choice_result(r, it: dict, here: str, ok: bool) -> dict[str, Any]:
    """A SAT answer: the pick by log-likelihood, or (``--sat-protocol letters``) the letter the
    model wrote, with no pick when nothing counted."""
    lettered = "raw" in it
    pick = r.get(it, "prediction", here, int, required=not lettered)
    res: dict[str, Any] = {"p": -1 if pick is None else pick, "ok": int(ok), "pr": "letters" if lettered else "loglik"}
    if lettered:
        res.update(generated_answer(it))
    if isinstance(it.get("per_token_logprob"), list):
        res["pt"] = [round(float(x), 4) for x in it["per_token_logprob"]]
    return res


@dataclass
class Gpt3Run(Run):
    """One model's saved GPT-3 items in one results file, their prompts rebuilt when it was read."""

    pairs: tuple[Pair, ...] = ()

    def answers(self, data_files: Sequence[Path], shared: dict) -> tuple[list[Answer], list[str]]:
        return list(self.pairs), []


def runs(docs: Sequence[Results]) -> list[Gpt3Run]:
    """The benchmark's ``viewer`` part: the runs with saved items across ``docs`` (each pool
    rebuilt once)."""
    pools: dict = {}
    return [
        Gpt3Run(
            benchmark="gpt3",
            model=run_name(e),
            source=str(doc.path),
            spec=str(e.model.get("spec") or ""),
            fingerprint=e.model.get("fingerprint"),
            where=e.where,
            notes=notes,
            pairs=tuple(pairs),
        )
        for doc in docs
        for e, pairs, notes in pairs_of(doc, pools)
    ]


__all__ = ["Gpt3Run", "pairs_of", "runs"]
