"""One training curve: fine-tune a choice head on training items, score the items under test at
each training size. Shared by the choices-only adversary, its controls, learnability and
leave-one-family-out (:mod:`.adversary`, :mod:`.learn`).

A prompt lists the item's endings under letters, one per line, and ends with ``Answer:``; the
model's logits of the letters at that point are its scores (:mod:`synthprobe.backends.hf.train`).
Two inputs:

``endings``  ``Choices:`` and the endings, no context: what a choices-only adversary sees. All four
             endings are shown together, so a flaw in how they relate to each other is visible.
``context``  the item's context, then the endings: the full question, for learnability.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synthprobe.items import MCItem
from synthprobe.metrics.choice import argmax_first
from synthprobe.metrics.stats import binom_p, chance_band, mcnemar_exact, wilson_ci

LETTERS = "ABCDEFGHIJ"
INPUTS = {
    "endings": "the item's endings alone, listed A-D under 'Choices:', no context",
    "context": "the item's context, then its endings listed A-D",
}
LOSS = (
    "cross-entropy over the option letters' next-token logits after 'Answer:' (a contrastive "
    "multiple-choice loss: it asks only which option is right, so the model cannot lower it by "
    "learning which numbers are likely in general, as an LM loss on the right ending would)"
)


def prompt(item: MCItem, kind: str) -> str:
    options = "\n".join(f"{LETTERS[i]}.{e if e.startswith(' ') else ' ' + e}" for i, e in enumerate(item.endings))
    if kind == "endings":
        return f"Choices:\n{options}\nAnswer:"
    if kind == "context":
        return f"{item.ctx}\n{options}\nAnswer:"
    raise ValueError(f"unknown prompt kind {kind!r}; expected one of {sorted(INPUTS)}")


def chance_of(items: Sequence[MCItem]) -> float:
    return sum(1.0 / len(it.endings) for it in items) / len(items) if items else float("nan")


def rate_block(correct: Sequence[bool], chance: float) -> dict[str, Any]:
    n, k = len(correct), sum(1 for c in correct if c)
    lo, hi = wilson_ci(k, n) if n else (None, None)
    return {
        "n": n,
        "correct": k,
        "accuracy": round(k / n, 6) if n else None,
        "ci95": [round(lo, 6), round(hi, 6)] if n else None,
        "p_vs_chance": binom_p(k, n, round(chance, 12)) if n else None,
    }


def within_chance(block: Mapping[str, Any], chance: float) -> bool:
    lo, hi = chance_band(block["n"], chance)
    return lo <= block["accuracy"] <= hi


def above_chance(block: Mapping[str, Any], chance: float) -> bool:
    """Clearly above chance: above the band a chance scorer lands in, and p < 0.05."""
    return block["accuracy"] > chance_band(block["n"], chance)[1] and block["p_vs_chance"] < 0.05


def group_of(item: MCItem, key: str) -> str | None:
    md = item.metadata
    if key == "depth":
        d = md.get("depth")
        return None if d is None else str(d)
    return md.get("template") or md.get("topic") or item.category


def grouped(items: Sequence[MCItem], correct: Sequence[bool]) -> dict[str, dict[str, list[bool]]]:
    """Each item's outcome by depth and by template: ``{"by_depth": {d: [...]}, "by_template": {...}}``,
    groups in order (depths by number)."""
    out = {}
    for key, name in (("depth", "by_depth"), ("template", "by_template")):
        groups: dict[str, list[bool]] = defaultdict(list)
        for it, c in zip(items, correct):
            g = group_of(it, key)
            if g is not None:
                groups[g].append(c)
        out[name] = dict(sorted(groups.items(), key=lambda kv: _key(kv[0])))
    return out


def point(items: Sequence[MCItem], correct: Sequence[bool], chance: float) -> dict[str, Any]:
    """The rate block of one evaluation, overall, by depth and by template."""
    out = rate_block(correct, chance)
    out["within_chance"] = within_chance(out, chance)
    for name, groups in grouped(items, correct).items():
        out[name] = {g: rate_block(v, chance) for g, v in groups.items()}
    return out


def _key(g: str) -> tuple:
    return (0, int(g), "") if g.isdigit() else (1, 0, g)


def paired(reference: Sequence[bool], other: Sequence[bool]) -> dict[str, Any]:
    b = sum(1 for x, y in zip(reference, other) if x and not y)
    c = sum(1 for x, y in zip(reference, other) if y and not x)
    return {"only_this": c, "only_other": b, "p": mcnemar_exact(b, c)}


def evaluate(
    backend,
    items: Sequence[MCItem],
    kind: str,
    *,
    batch_size: int,
    max_tokens: int,
    progress: Callable[[int], None] | None = None,
) -> list[bool]:
    prompts = [prompt(it, kind) for it in items]
    letters = LETTERS[: max(len(it.endings) for it in items)]
    logits = backend.pick_choices(prompts, letters, batch_size=batch_size, max_tokens=max_tokens, progress=progress)
    return [argmax_first(row[: len(it.endings)]) == it.label for row, it in zip(logits, items)]


def run_curve(
    backend,
    train: Sequence[MCItem],
    test: Sequence[MCItem],
    *,
    kind: str,
    sizes: Sequence[int],
    settings: Mapping[str, Any],
    batch_size: int = 32,
    adapter_out=None,
    bar: Callable[[str, int], Callable[[int], None]] | None = None,
    keep_correct: bool = False,
) -> dict[str, Any]:
    """Train on ``train`` (in order) and score ``test`` at each of ``sizes``: the curve block of the
    validity section (``input``, ``loss``, ``train_items``, ``curve``, ``loss_curve``). ``bar(desc,
    total)`` makes a progress callback. ``keep_correct``: also return each point's per-item outcomes
    (``_correct``, for paired tests; not written to the results)."""
    sizes = sorted(set(int(s) for s in sizes))
    n_options = {len(it.endings) for it in [*train[: sizes[-1]], *test]}
    if len(n_options) != 1:
        raise ValueError(f"items with different numbers of endings ({sorted(n_options)}) in one curve")
    letters = LETTERS[: n_options.pop()]
    chance = chance_of(test)
    max_tokens = int(settings.get("max_tokens", 512))
    points: list[dict[str, Any]] = []
    outcomes: list[list[bool]] = []

    def on_checkpoint(ck) -> None:
        tick = bar(f"score at {ck.size:,}", len(test)) if bar else None
        correct = evaluate(backend, test, kind, batch_size=batch_size, max_tokens=max_tokens, progress=tick)
        p = {"size": ck.size, **point(test, correct, chance), "train": None if ck.size == 0 else ck.to_dict()}
        if outcomes:
            p["paired"] = {"vs_size": points[0]["size"], **paired(outcomes[0], correct)}
        points.append(p)
        outcomes.append(correct)

    tick = bar(f"train {kind}", sizes[-1]) if bar and sizes[-1] else None
    run = backend.train_choices(
        [prompt(it, kind) for it in train[: sizes[-1]]],
        [it.label for it in train[: sizes[-1]]],
        choices=letters,
        checkpoints=sizes,
        settings=dict(settings),
        on_checkpoint=on_checkpoint,
        adapter_out=adapter_out,
        progress=tick,
    )
    out = {
        "input": INPUTS[kind],
        "loss": LOSS,
        "train_items": sizes[-1],
        "chance": round(chance, 6),
        "train_settings": run.settings,
        "curve": points,
        "loss_curve": run.loss_curve,
        "throughput": {
            "train_seconds": round(run.seconds, 2),
            "train_tokens": run.tokens,
            "tokens_per_s": None if run.tokens_per_s is None else round(run.tokens_per_s, 1),
        },
    }
    if keep_correct:
        out["_correct"] = outcomes
    return out
