"""The rules one Deep Arithmark item must obey, shared by the builder and the selftest.

:func:`item_faults` re-checks a single JSON object against the release schema and every
per-item rule (units, decoys, roundness, clock halves, label ↔ answer ↔ values, rank, steps,
prompt length). The builder refuses to write a file with a faulty item; the selftest counts
faults per rule over a whole file. Dataset-level rules (unique ids, composition, balance,
prompt-length mean, shortcut audit) live in :mod:`.selftest`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from synthprobe.benchmarks.deeparithmark.base import (
    DIFFICULTY,
    TWIN_DEPTH_STEP,
    TWIN_KINDS,
    render_value,
    roundness_class,
)
from synthprobe.benchmarks.deeparithmark.composition import DEPTHS, N_OPTIONS, RELEASE_NAME, TEMPLATE_BY_NAME, Template
from synthprobe.benchmarks.deeparithmark.steps import StepError, check_chain
from synthprobe.prompts.numformat import NUMBER_FORMATS, PLAIN, format_numbers, join_groups

#: Longest prompt allowed, in whitespace-separated words.
MAX_CTX_WORDS = 45

#: Top-level keys, in the order the release writes them.
ITEM_KEYS = ("ind", "activity_label", "ctx", "endings", "label", "source_id", "split", "split_type", "metadata")
#: ``metadata`` keys, in order.
METADATA_KEYS = (
    "answer",
    "unit",
    "topic",
    "depth",
    "option_values",
    "option_sources",
    "answer_rank",
    "solution_steps",
    "template",
)
#: The optional last ``metadata`` key of an item rendered in another number format than
#: plain digits (``synthprobe build deeparithmark --number-format``); never written for plain.
NUMBER_FORMAT_KEY = "number_format"
#: The optional ``metadata`` keys of a perturbation twin (``synthprobe build twins``), after
#: ``template``: the ``source_id`` of the original it was made from, and its twin kind.
TWIN_KEYS = ("twin_of", "twin_kind")

CORRECT = "correct"

#: The optional ``metadata`` key of an item of a role-balanced build (:mod:`.grouped_build`), after
#: ``template``: the id of its group (``"<template>#<n>"``); the items of one group show the same
#: four values, each the key of one of them.
GROUP_KEY = "group"

#: The ``metadata`` key sequences an item may have.
_METADATA_LAYOUTS = tuple(
    METADATA_KEYS + group + twin + fmt
    for group in ((), (GROUP_KEY,))
    for twin in ((), TWIN_KEYS)
    for fmt in ((), (NUMBER_FORMAT_KEY,))
)

#: Per-item rules: key -> title shown by the selftest, in display order.
ITEM_RULES = {
    "schema": "schema, key order and field types",
    "labels": "activity_label, source_id, topic, depth match the template",
    "unit": "unit in every ending; endings differ only in the number",
    "distinct": "options distinct and positive",
    "pm1": "no decoy is answer ± 1",
    "roundness": "all four options in one roundness class",
    "clock": "clock options in one half of the day",
    "answer": "label ↔ 'correct' source ↔ answer ↔ option_values",
    "rank": "answer_rank is the answer's numeric rank",
    "depth": "number of solution steps = depth",
    "steps": "every step re-evaluated, last step = answer",
    "length": f"prompt at most {MAX_CTX_WORDS} words",
}

_CLOCK_ANSWER = re.compile(r"^(?:1[0-2]|[1-9]):[0-5][0-9] [ap]\.m\.$")


def activity_label(topic: str, depth: int) -> str:
    return f"deeparithmark::{RELEASE_NAME}::{topic}::depth{depth}::{DIFFICULTY[depth]}"


def source_id(template: str, depth: int, ind: int) -> str:
    return f"deeparithmark_v1_{template}_depth{depth}_{ind:04d}"


def twin_source_id(template: str, depth: int, ind: int, kind: str | None) -> str:
    """An item's ``source_id``; a twin's ends in ``_<kind>`` so it never equals an original's."""
    base = source_id(template, depth, ind)
    return base if kind is None else f"{base}_{kind}"


def value_kind(answer_text: str) -> str:
    """``"clock"`` when the rendered answer is a time of day, else ``"count"`` (money and
    counts render the same way; the ``$`` lives in the ending)."""
    return "clock" if _CLOCK_ANSWER.match(answer_text) else "count"


def ctx_words(ctx: str, number_format: str = PLAIN) -> int:
    """Whitespace-separated words; a number written in spaced groups counts as one word."""
    return len(join_groups(ctx, number_format).split())


def number_format_of(metadata: dict) -> str:
    """The number format an item's prompt and endings are written in (``plain`` when absent)."""
    return metadata.get(NUMBER_FORMAT_KEY, PLAIN)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _schema_faults(obj: dict, index: int | None, by_name: Mapping[str, Template]) -> list[str]:
    """What breaks the item's schema, checked in order: the keys, the top-level fields, the
    metadata's layout, its group and twin keys, its number format, its fields and template. A
    broken layout stops the check there (the fields after it cannot be read)."""
    keys = _key_faults(obj)
    if keys:
        return keys
    out = _top_field_faults(obj, index)
    md = obj["metadata"]
    if not isinstance(md, dict):
        return [*out, f"field 'metadata': expected an object, got {type(md).__name__}"]
    layout = _metadata_layout_faults(md)
    if layout:
        return out + layout
    if TWIN_KEYS[0] in md:
        twin = _twin_key_faults(md)
        if out or twin:
            return out + twin
    fmt = _number_format_key_faults(md)
    if fmt:
        return out + fmt
    return out + _metadata_field_faults(md) + _template_faults(md, by_name)


def _key_faults(obj: dict) -> list[str]:
    if tuple(obj) == ITEM_KEYS:
        return []
    missing = [k for k in ITEM_KEYS if k not in obj]
    extra = [k for k in obj if k not in ITEM_KEYS]
    if missing or extra:
        return [f"keys: missing {missing}, unexpected {extra}"]
    return [f"keys out of order: {list(obj)}; expected {list(ITEM_KEYS)}"]


def _top_field_faults(obj: dict, index: int | None) -> list[str]:
    out: list[str] = []
    ind = obj["ind"]
    if not _is_int(ind):
        out.append(f"field 'ind': expected an int, got {ind!r}")
    elif index is not None and ind != index:
        out.append(f"field 'ind': {ind} but the item is at position {index} of the file")
    for key in ("activity_label", "ctx", "source_id"):
        if not isinstance(obj[key], str) or not obj[key]:
            out.append(f"field {key!r}: expected a non-empty string, got {obj[key]!r}")
    endings = obj["endings"]
    if (
        not isinstance(endings, list)
        or len(endings) != N_OPTIONS
        or not all(isinstance(e, str) and e.startswith(" ") and len(e) > 1 for e in endings)
    ):
        out.append(f"field 'endings': expected {N_OPTIONS} strings with a leading space, got {endings!r}")
    if obj["label"] not in [str(i) for i in range(N_OPTIONS)]:
        out.append(f'field \'label\': expected one of "0".."{N_OPTIONS - 1}" (a string), got {obj["label"]!r}')
    if obj["split"] != "test":
        out.append(f"field 'split': expected \"test\", got {obj['split']!r}")
    if obj["split_type"] != "synthetic":
        out.append(f"field 'split_type': expected \"synthetic\", got {obj['split_type']!r}")
    return out


def _metadata_layout_faults(md: dict) -> list[str]:
    if tuple(md) not in _METADATA_LAYOUTS:
        return [
            f"field 'metadata': keys {list(md)}; expected {list(METADATA_KEYS)} in that order"
            f" (then optionally {GROUP_KEY!r}, then {list(TWIN_KEYS)}, then {NUMBER_FORMAT_KEY!r} last)"
        ]
    if GROUP_KEY in md and (not isinstance(md[GROUP_KEY], str) or not md[GROUP_KEY]):
        return [f"field 'metadata.{GROUP_KEY}': expected the id of the item's group, got {md[GROUP_KEY]!r}"]
    return []


def _twin_key_faults(md: dict) -> list[str]:
    out: list[str] = []
    if not isinstance(md["twin_of"], str) or not md["twin_of"]:
        out.append(f"field 'metadata.twin_of': expected the original's source_id, got {md['twin_of']!r}")
    if md["twin_kind"] not in TWIN_KINDS:
        out.append(f"field 'metadata.twin_kind': expected one of {list(TWIN_KINDS)}, got {md['twin_kind']!r}")
    return out


def _number_format_key_faults(md: dict) -> list[str]:
    if NUMBER_FORMAT_KEY in md and (md[NUMBER_FORMAT_KEY] == PLAIN or md[NUMBER_FORMAT_KEY] not in NUMBER_FORMATS):
        return [
            f"field 'metadata.{NUMBER_FORMAT_KEY}': expected one of "
            f"{[f for f in NUMBER_FORMATS if f != PLAIN]} (plain items carry no such key), "
            f"got {md[NUMBER_FORMAT_KEY]!r}"
        ]
    return []


def _metadata_field_faults(md: dict) -> list[str]:
    out: list[str] = []
    for key in ("answer", "topic", "template"):
        if not isinstance(md[key], str) or not md[key]:
            out.append(f"field 'metadata.{key}': expected a non-empty string, got {md[key]!r}")
    if not isinstance(md["unit"], str):
        out.append(f"field 'metadata.unit': expected a string, got {md['unit']!r}")
    if not _is_int(md["depth"]) or md["depth"] not in DEPTHS:
        out.append(f"field 'metadata.depth': expected one of {list(DEPTHS)}, got {md['depth']!r}")
    vals = md["option_values"]
    if not isinstance(vals, list) or len(vals) != N_OPTIONS or not all(_is_int(v) for v in vals):
        out.append(f"field 'metadata.option_values': expected {N_OPTIONS} integers, got {vals!r}")
    srcs = md["option_sources"]
    if not isinstance(srcs, list) or len(srcs) != N_OPTIONS or not all(isinstance(s, str) and s for s in srcs):
        out.append(f"field 'metadata.option_sources': expected {N_OPTIONS} non-empty strings, got {srcs!r}")
    if not _is_int(md["answer_rank"]) or not 0 <= md["answer_rank"] < N_OPTIONS:
        out.append(f"field 'metadata.answer_rank': expected an int 0..{N_OPTIONS - 1}, got {md['answer_rank']!r}")
    steps = md["solution_steps"]
    if not isinstance(steps, list) or not steps or not all(isinstance(s, str) and s for s in steps):
        out.append(f"field 'metadata.solution_steps': expected a non-empty list of strings, got {steps!r}")
    return out


def _template_faults(md: dict, by_name: Mapping[str, Template]) -> list[str]:
    if not isinstance(md["template"], str) or md["template"] in by_name:
        return []
    return [
        f"field 'metadata.template': {md['template']!r} is not a Deep Arithmark template"
        + (
            " (a file built from other families carries its table beside it, in <file>.families.json)"
            if by_name is TEMPLATE_BY_NAME
            else " of this file's families table"
        )
    ]


def item_faults(
    obj: dict, index: int | None = None, by_name: Mapping[str, Template] = TEMPLATE_BY_NAME, *, roundness: bool = True
) -> list[tuple[str, str]]:
    """Every rule ``obj`` breaks, as ``(rule key, explanation)`` pairs (empty when clean).

    ``index`` is the item's 0-based position in its file (checked against ``ind``). When the
    schema is broken the other rules are not evaluated and only ``schema`` faults return.
    ``by_name``: the table the file was built from (default the release's), by template name.
    ``roundness=False`` leaves out the ``roundness`` rule (the ``roundness-off`` positive
    control, :mod:`.controls`; never the release).
    """
    schema = _schema_faults(obj, index, by_name)
    if schema:
        return [("schema", msg) for msg in schema]
    kind = value_kind(obj["metadata"]["answer"])
    rendered, unit = _ending_faults(obj, kind)
    return [
        *_label_faults(obj, by_name),
        *unit,
        *_option_faults(obj, kind, roundness),
        *_answer_faults(obj, rendered),
        *_chain_faults(obj),
        *_prompt_faults(obj),
    ]


def _label_faults(obj: dict, by_name: Mapping[str, Template]) -> list[tuple[str, str]]:
    """``labels``: the row of the release table the item claims (a twin: moved as its kind
    moves it): topic, depth, activity label, source id."""
    faults: list[tuple[str, str]] = []
    md = obj["metadata"]
    depth, template = md["depth"], md["template"]
    row = by_name[template]
    twin_kind = md.get("twin_kind")
    row_depth = row.depth + TWIN_DEPTH_STEP.get(twin_kind, 0)
    if md["topic"] != row.topic:
        faults.append(("labels", f"topic {md['topic']!r}; template {template} has topic {row.topic!r}"))
    if depth != row_depth:
        faults.append(
            ("labels", f"depth {depth}; template {template} is depth {row.depth}")
            if twin_kind is None
            else ("labels", f"depth {depth}; a {twin_kind} twin of template {template} is depth {row_depth}")
        )
    if obj["activity_label"] != activity_label(md["topic"], depth):
        faults.append(
            ("labels", f"activity_label {obj['activity_label']!r}; expected {activity_label(md['topic'], depth)!r}")
        )
    want_id = twin_source_id(template, depth, obj["ind"], twin_kind)
    if obj["source_id"] != want_id:
        faults.append(("labels", f"source_id {obj['source_id']!r}; expected {want_id!r}"))
    return faults


def _ending_faults(obj: dict, kind: str) -> tuple[list[str], list[tuple[str, str]]]:
    """``unit``: the endings identical except for the number (written in the item's number
    format; ``metadata.answer`` keeps the plain rendering). Also the values' plain renderings
    (empty when one cannot be rendered)."""
    faults: list[tuple[str, str]] = []
    md, endings = obj["metadata"], obj["endings"]
    try:
        rendered = [render_value(v, kind) for v in md["option_values"]]
    except ValueError as exc:  # GenerationError: a value with no rendering (clock outside the day)
        return [], [("unit", f"option value cannot be rendered: {exc}")]
    shown = [format_numbers(r, number_format_of(md)) for r in rendered]
    first = endings[0]
    pos = first.find(shown[0])
    if pos < 0:
        faults.append(("unit", f"ending 0 {first!r} does not contain its value {shown[0]!r}"))
    else:
        prefix, suffix = first[:pos], first[pos + len(shown[0]) :]
        for i, (e, r) in enumerate(zip(endings, shown)):
            if e != prefix + r + suffix:
                faults.append(
                    ("unit", f"ending {i} {e!r} is not {prefix + r + suffix!r} (same text as ending 0 with value {r})")
                )
                break
    if md["unit"] and not all(md["unit"] in e for e in endings):
        faults.append(("unit", f"unit {md['unit']!r} missing from an ending: {endings!r}"))
    if not md["unit"] and kind != "clock":
        faults.append(("unit", "empty unit on a non-clock item"))
    return rendered, faults


def _option_faults(obj: dict, kind: str, roundness: bool) -> list[tuple[str, str]]:
    """``distinct`` (values and endings distinct, values positive), then the decoy rules:
    ``pm1``, ``roundness`` (unless left out) and ``clock``."""
    faults: list[tuple[str, str]] = []
    vals, endings = obj["metadata"]["option_values"], obj["endings"]
    label = int(obj["label"])
    gold = vals[label]
    if len(set(vals)) != N_OPTIONS:
        faults.append(("distinct", f"option values repeat: {vals}"))
    if len(set(endings)) != N_OPTIONS:
        faults.append(("distinct", f"endings repeat: {endings}"))
    if any(v <= 0 for v in vals):
        faults.append(("distinct", f"non-positive option value: {vals}"))
    for i, v in enumerate(vals):
        if i != label and abs(v - gold) == 1:
            faults.append(("pm1", f"decoy {v} in slot {i} is answer {gold} ± 1"))
    classes = {roundness_class(v, kind) for v in vals} if roundness else {0}
    if len(classes) != 1:
        faults.append(("roundness", f"options {vals} span roundness classes {sorted(classes)}"))
    if kind == "clock":
        if not all(0 <= v < 1440 for v in vals):
            faults.append(("clock", f"clock values {vals} outside one day"))
        elif len({v < 720 for v in vals}) != 1:
            faults.append(("clock", f"clock values {vals} straddle noon"))
    return faults


def _answer_faults(obj: dict, rendered: Sequence[str]) -> list[tuple[str, str]]:
    """``answer``: label, sources, answer and values agree; ``rank``: the recorded rank is the
    answer's among the values."""
    faults: list[tuple[str, str]] = []
    md = obj["metadata"]
    vals, srcs = md["option_values"], md["option_sources"]
    label = int(obj["label"])
    gold = vals[label]
    if srcs[label] != CORRECT:
        faults.append(("answer", f"label {label} but option_sources[{label}] is {srcs[label]!r}"))
    if srcs.count(CORRECT) != 1:
        faults.append(("answer", f"{srcs.count(CORRECT)} options marked {CORRECT!r}; expected 1"))
    if len(set(srcs)) != N_OPTIONS:
        faults.append(("answer", f"option_sources repeat: {srcs}"))
    if rendered and md["answer"] != rendered[label]:
        faults.append(("answer", f"answer {md['answer']!r} but option_values[{label}] renders as {rendered[label]!r}"))
    true_rank = sum(v < gold for v in vals)
    if md["answer_rank"] != true_rank:
        faults.append(("rank", f"answer_rank {md['answer_rank']}; the answer {gold} is rank {true_rank} of {vals}"))
    return faults


def _chain_faults(obj: dict) -> list[tuple[str, str]]:
    """``depth``: one solution step per level; ``steps``: the steps compute the answer."""
    md = obj["metadata"]
    steps, depth = md["solution_steps"], md["depth"]
    faults: list[tuple[str, str]] = []
    if len(steps) != depth:
        faults.append(("depth", f"{len(steps)} solution steps at depth {depth}"))
    try:
        check_chain(steps, md["option_values"][int(obj["label"])])
    except StepError as exc:
        faults.append(("steps", str(exc)))
    return faults


def _prompt_faults(obj: dict) -> list[tuple[str, str]]:
    """``unit``: the prompt's numbers in the item's number format; ``length``: at most
    :data:`MAX_CTX_WORDS` words."""
    faults: list[tuple[str, str]] = []
    ctx, fmt = obj["ctx"], number_format_of(obj["metadata"])
    if fmt != PLAIN and format_numbers(ctx, fmt) != ctx:
        faults.append(("unit", f"prompt has numbers not written in the {fmt} format: {ctx!r}"))
    words = ctx_words(ctx, fmt)
    if words > MAX_CTX_WORDS:
        faults.append(("length", f"prompt has {words} words; at most {MAX_CTX_WORDS}"))
    return faults
