"""Strict loader for study items (the output of ``synthprobe study generate``).

Each line is one article in one experiment: its title, subtitle, the human text and the
machine text. An experiment is one (model, condition, length) triple; raters are assigned to
one experiment and see every title of it once, half as the human and half as the machine
version. Several ``generate`` outputs (say, for different models) can be concatenated into one
items file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.io.read import read_jsonl

_REQUIRED = ("id", "article_id", "title", "subtitle", "condition", "model", "length", "human", "machine")
_OPTIONAL = {
    "model_spec",
    "backend",
    "samples_words",
    "samples_complete",
    "chosen_sample",
    "selection",
    "context_ids",
    "seed",
    "sample_seed",
    "sampling",
    "chat",
}
CONDITIONS = ("model", "control")


@dataclass(frozen=True)
class StudyItem:
    id: str
    article_id: str
    title: str
    subtitle: str
    condition: str
    model: str
    length: int
    human_text: str
    machine_text: str
    order: int

    @property
    def experiment(self) -> str:
        return experiment_key(self.model, self.condition, self.length)


def experiment_key(model: str, condition: str, length: int) -> str:
    return f"{model} | {condition} | ~{length} words"


def _str(obj: dict, key: str, path, line: int, limit: int = 300) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or not v.strip():
        raise InputError(f"expected a non-empty string, got {v!r:.60}", path=path, line=line, field=key)
    if len(v) > limit:
        raise InputError(f"is {len(v):,} characters; at most {limit:,} expected", path=path, line=line, field=key)
    return v.strip()


def _version(obj: dict, key: str, path, line: int) -> str:
    v = obj.get(key)
    if not isinstance(v, dict) or not isinstance(v.get("text"), str):
        raise InputError('expected an object {"text": ..., "words": ...}', path=path, line=line, field=key)
    text = v["text"].strip()
    if not text:
        raise InputError(
            "text is empty; a rater cannot judge an empty article", path=path, line=line, field=f"{key}.text"
        )
    if len(text) > 60_000:
        raise InputError(
            f"text is {len(text):,} characters; at most 60,000 expected", path=path, line=line, field=f"{key}.text"
        )
    return text


def load_items(path: str | Path) -> list[StudyItem]:
    path = Path(path)
    items: list[StudyItem] = []
    ids: dict[str, int] = {}
    titles: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        missing = [k for k in _REQUIRED if k not in obj]
        if missing:
            raise InputError(
                "missing; expected the fields written by 'synthprobe study generate'",
                path=path,
                line=line,
                field=missing[0],
            )
        extra = sorted(set(obj) - set(_REQUIRED) - _OPTIONAL)
        if extra:
            raise InputError("unknown field", path=path, line=line, field=extra[0])
        iid = _str(obj, "id", path, line)
        if iid in ids:
            hint = ""
            if obj.get("condition") == "control":
                hint = (
                    "; two 'study generate' runs both wrote this control. To compare several models with one "
                    "control, generate the control once (with the first model, or --control-model) and pass "
                    "--conditions model to the runs for the other models, then concatenate the files"
                )
            raise InputError(f"id repeats line {ids[iid]}{hint}", path=path, line=line, field="id")
        condition = obj["condition"]
        if condition not in CONDITIONS:
            raise InputError(
                f"expected one of {', '.join(CONDITIONS)}, got {condition!r:.40}",
                path=path,
                line=line,
                field="condition",
            )
        length = obj["length"]
        if not isinstance(length, int) or isinstance(length, bool) or not 1 <= length <= 10_000:
            raise InputError(f"expected a positive integer, got {length!r:.40}", path=path, line=line, field="length")
        item = StudyItem(
            id=iid,
            article_id=_str(obj, "article_id", path, line),
            title=_str(obj, "title", path, line),
            subtitle=_str(obj, "subtitle", path, line, 600),
            condition=condition,
            model=_str(obj, "model", path, line),
            length=length,
            human_text=_version(obj, "human", path, line),
            machine_text=_version(obj, "machine", path, line),
            order=len(items),
        )
        key = (item.experiment, " ".join(item.title.lower().split()))
        if key in titles:
            raise InputError(
                f"title repeats line {titles[key]} in experiment {item.experiment!r}; a rater "
                "must never see the same title twice",
                path=path,
                line=line,
                field="title",
            )
        ids[iid] = line
        titles[key] = line
        items.append(item)
    per_exp: dict[str, int] = {}
    for it in items:
        per_exp[it.experiment] = per_exp.get(it.experiment, 0) + 1
    small = [k for k, n in per_exp.items() if n < 2]
    if small:
        raise InputError(
            f"experiment {small[0]!r} has one article; a quiz needs at least two (half human, half machine)", path=path
        )
    return items
