"""The GPT-3 synthetic tasks' place in the results document (:mod:`synthprobe.results`): their
block in a model entry, its envelope check, and the one-model layout of earlier releases of
``score gpt3`` (``"benchmark": "gpt3-synthetic"``, no schema), which is still read."""

from __future__ import annotations

#: the model entry's block it owns → what it is, for messages
BLOCKS = {"gpt3": "a GPT-3"}
#: the one-model layout of earlier releases (read, converted): its ``benchmark`` value
ONE_MODEL = "gpt3-synthetic"
#: how the message about an unknown schema names that layout
ONE_MODEL_WORDS = (
    f'a GPT-3 results file with "benchmark": "{ONE_MODEL}" (written by earlier releases of `synthprobe score gpt3`)'
)


def check_block(name: str, block, r) -> None:
    """The block's rows (a list) and its settings (an object, when given)."""
    r.get(block.data, "rows", block.where, list, what="a list of task results")
    r.get(block.data, "settings", block.where, dict, required=False)


def one_model(doc: dict, r, entry_type, block_type) -> list | None:
    """The entries of an earlier one-model file (``"benchmark"`` without ``"schema"``), or None
    when ``doc`` is none of this benchmark's: one entry, its rows as the ``gpt3`` block."""
    benchmark = doc.get("benchmark")
    if benchmark != ONE_MODEL:
        return None
    model = r.get(doc, "model", "", dict)
    settings = r.get(doc, "settings", "", dict, required=False) or {}
    rows = r.get(doc, "results", "", list, what="a list of task results")
    data = {"model": model, "settings": settings, "seconds": doc.get("seconds"), "results": {"gpt3": {"rows": rows}}}
    return [
        entry_type(
            model=model, settings=settings, data=data, where="", results={"gpt3": block_type({"rows": rows}, "")}
        )
    ]


def number_format_table(r, part: dict, where: str) -> tuple[str, str]:
    """The title of its table in a number-format block (``synthprobe probe number-format``) and
    the field its rows are grouped by."""
    title = (
        f"GPT-3 arithmetic, seed {r.get(part, 'seed', where, int)}, first {r.get(part, 'n', where, int):,} items "
        f"per task, {r.get(part, 'shots', where, str)}-shot, exact match"
    )
    return title, "task"
