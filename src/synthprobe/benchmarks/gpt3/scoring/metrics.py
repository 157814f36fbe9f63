"""GPT-3 synthetic tasks' metrics: one results row (accuracy in percent, its Wilson interval,
demonstrations used, the paper's figures and where the score lands among GPT-3's sizes) from
the scored items of one task in one shot setting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthprobe.benchmarks.gpt3.paper import ROW_NOTES, SIZES, paper_row, where_it_lands
from synthprobe.benchmarks.gpt3.prompts import Prompt
from synthprobe.benchmarks.gpt3.registry import Task
from synthprobe.metrics.stats import wilson_percent

#: Per-item keys every row keeps (``correct``: for the paired comparison of models); the rest
#: (gold, prediction, ...) only with ``save_items``.
ITEM_KEYS = ("index", "n_shots", "prompt_tokens", "correct")
#: What a generated answer keeps even without --save-predictions: how it was read.
EXTRACTION_KEYS = ("prediction", "raw", "parsed", "rule", "unparsed_reason", "outcome", "outcome_note")

#: ``paper_note`` of a SAT row scored on the shipped sample.
SAT_SAMPLE_NOTE = (
    "scored on synthprobe's self-written sample, not the SAT set: the paper's figures are for "
    "the real SAT set (374 questions, SAT-package-V3.txt), so no size verdict"
)


def _shots_note(task: Task, k: int, prompts: Sequence[Prompt], mean: float) -> str | None:
    """Why fewer than K demonstrations were used on average, if they were."""
    if not prompts or mean >= k:
        return None
    reduced = sum(1 for p in prompts if p.reduced)
    if reduced:
        return (
            f"--max-context cut the demonstrations to {mean:g} on average, below K={k} ({reduced} of "
            f"{len(prompts)} items got fewer); the paper's figures use all K"
        )
    return (
        f"the {task.code} pool holds only {max(p.drawn for p in prompts)} other items, so "
        f"{mean:g} demonstrations instead of K={k}"
    )


def summarise(
    task: Task,
    setting: str,
    k: int,
    prompts: Sequence[Prompt],
    items: list[dict],
    *,
    seconds: float,
    max_new_tokens: int | None,
    save_items: bool,
    cached: int = 0,
    sat_sample: bool = False,
) -> dict[str, Any]:
    """One results row. ``save_items``: keep every item's full record (gold, prediction, ...);
    without it each item keeps only ``index``, ``n_shots``, ``prompt_tokens`` and ``correct``.
    ``sat_sample``: the SAT items came from the shipped sample, not the SAT set."""
    n = len(items)
    correct = sum(1 for it in items if it["correct"])
    accuracy = 100.0 * correct / n if n else 0.0
    ci95 = wilson_percent(correct, n)
    shots = [p.n_shots for p in prompts]
    shots_mean = round(sum(shots) / n, 3) if n else 0
    tokens = [p.n_tokens for p in prompts if p.n_tokens is not None]
    paper_setting = setting if setting in ("zero", "one", "few") else "few"
    row = paper_row(task.code, paper_setting)
    out: dict[str, Any] = {
        "task": task.name,
        "code": task.code,
        "family": task.family,
        "setting": setting,
        "k": k,
        "n": n,
        "correct": correct,
        "accuracy": round(accuracy, 4),
        "ci95": ci95,
        "shots": {
            "mean": shots_mean,
            "min": min(shots, default=0),
            "max": max(shots, default=0),
            "reduced": sum(1 for p in prompts if p.reduced),
        },
        "prompt_tokens": {
            "mean": round(sum(tokens) / len(tokens), 1) if tokens else None,
            "max": max(tokens) if tokens else None,
        },
        "max_new_tokens": max_new_tokens,
        "cached_items": cached,
        "seconds": round(seconds, 3),
        "items_per_s": round((n - cached) / seconds, 4) if seconds > 0 and n > cached else None,
    }
    if row is not None:
        out.update(_paper_block(task, setting, k, prompts, row, accuracy, ci95, shots_mean, sat_sample=sat_sample))
    spent = [it["usage"] for it in items if isinstance(it.get("usage"), dict)]
    if spent:  # a server-backed engine: the tokens its usage reported, over the items that have them
        out["usage"] = {
            "items": len(spent),
            **{key: sum(u[key] for u in spent) for key in ("prompt_tokens", "completion_tokens")},
        }
    out["items"] = items if save_items else [_kept(it) for it in items]
    return out


def _paper_block(
    task: Task,
    setting: str,
    k: int,
    prompts: Sequence[Prompt],
    row: Sequence,
    accuracy: float,
    ci95: Sequence[float] | None,
    shots_mean: float,
    *,
    sat_sample: bool,
) -> dict[str, Any]:
    """The paper's figures for the row (``paper``), what makes them differ from this run
    (``paper_note``) and where the score lands among GPT-3's sizes (``lands``; None for the
    shipped SAT sample, which is not the paper's set)."""
    out: dict[str, Any] = {"paper": {size: cell.to_dict() for size, cell in zip(SIZES, row)}}
    notes = []
    if setting not in ("zero", "one", "few"):
        notes.append(f"paper's few-shot row uses K={task.k_few}, this run K={k}")
    elif (task.code.replace("\u2212", "-"), setting) in ROW_NOTES:
        notes.append(ROW_NOTES[(task.code.replace("\u2212", "-"), setting)])
    sat = task.family == "sat" and sat_sample
    if sat:
        notes.append(SAT_SAMPLE_NOTE)
    elif shots_note := _shots_note(task, k, prompts, shots_mean):
        notes.append(shots_note)
    if notes:
        out["paper_note"] = "; ".join(notes)
    out["lands"] = None if sat else where_it_lands(accuracy, row, tuple(ci95) if ci95 else None)
    return out


def _kept(item: dict) -> dict:
    """What an item keeps without ``save_items``: :data:`ITEM_KEYS`, how a generated answer
    was read (:data:`EXTRACTION_KEYS`), and a server's token usage."""
    keys = ITEM_KEYS + (EXTRACTION_KEYS if "rule" in item else ())
    return {**{key: item.get(key) for key in keys}, **({"usage": item["usage"]} if "usage" in item else {})}
