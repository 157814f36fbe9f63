"""Which of two numbers is larger: a two-way multiple-choice benchmark from outside synthprobe.

Everything synthprobe needs is named in :data:`BENCHMARK`; synthprobe finds it through the entry
point ``larger`` of group ``synthprobe.benchmarks`` and imports each part when a command asks.
"""

from __future__ import annotations

from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl
from synthprobe.metrics.stats import accuracy_block
from synthprobe.registry import Benchmark
from synthprobe.seeding import item_rng

NAME = "larger"
CHANCE = 0.5


def build(n: int, seed: int) -> list[dict]:
    """``n`` items; item ``i`` drawn from its own seeded stream, so the file is the same for a seed."""
    items = []
    for i in range(n):
        rng = item_rng(NAME, seed, i)
        a, b = rng.sample(range(10, 100), 2)
        items.append(
            {
                "id": f"{NAME}-{seed}-{i}",
                "question": f"Which number is larger, {a} or {b}?",
                "choices": [str(a), str(b)],
                "label": 0 if a > b else 1,
            }
        )
    return items


def load(path: Path) -> list[dict]:
    """The data file, every line checked: one clear error naming the line and the field."""
    items = []
    for line, rec in read_jsonl(path):
        for key, typ in (("id", str), ("question", str), ("choices", list), ("label", int)):
            if not isinstance(rec.get(key), typ):
                raise InputError(f"line {line}: field {key!r} missing or not a {typ.__name__}", path=path)
        if len(rec["choices"]) != 2 or rec["label"] not in (0, 1):
            raise InputError(f"line {line}: expected two choices and a label 0 or 1", path=path)
        items.append(rec)
    return items


def prompt(item: dict) -> str:
    """What the model reads before each choice (without a chat template)."""
    return f"Question: {item['question']}\nAnswer:"


def work(backend, items: list[dict], chat=None):
    """The runner's work function: each choice's log-likelihood after the question; the highest
    per-token mean wins. Under a chat template (``chat.enabled``) the question is the user turn,
    rendered with the assistant turn opened, and each choice is scored as the assistant's answer."""

    def contexts(chunk: list[int]) -> list[str]:
        if chat is not None and chat.enabled:
            return backend.render_chat(
                [chat.conversation(items[p]["question"]) for p in chunk], template=chat.template_arg
            )
        return [prompt(items[p]) for p in chunk]

    def run(todo: list[int], batch_size: int, emit) -> None:
        for start in range(0, len(todo), batch_size):
            chunk = todo[start : start + batch_size]
            pairs = [(ctx, f" {c}") for p, ctx in zip(chunk, contexts(chunk)) for c in items[p]["choices"]]
            scores = backend.loglikelihood(pairs, batch_size=batch_size)
            for k, pos in enumerate(chunk):
                pair = scores[2 * k : 2 * k + 2]
                means = [s.logprob / max(s.n_tokens, 1) for s in pair]
                pick = max(range(2), key=lambda j: (means[j], -j))
                emit(
                    pos,
                    {
                        "id": items[pos]["id"],
                        "pick": pick,
                        "correct": pick == items[pos]["label"],
                        "logprobs": [round(s.logprob, 6) for s in pair],
                        "is_greedy": [bool(s.is_greedy) for s in pair],
                    },
                )

    return run


def metrics(records: list[dict]) -> dict:
    return accuracy_block(sum(1 for r in records if r["correct"]), len(records), CHANCE)


BENCHMARK = Benchmark(
    name=NAME,
    title="Which is larger",
    build="synthprobe_larger:build",
    load="synthprobe_larger:load",
    work="synthprobe_larger:work",
    metrics="synthprobe_larger:metrics",
    report="synthprobe_larger.report",
    lm_eval="synthprobe_larger.lm_eval",
    tables="synthprobe_larger.report:tables",
    viewer="synthprobe_larger.report:viewer",
    commands="synthprobe_larger.commands",
    summary="Two numbers, two choices: the larger one is right.",
)
