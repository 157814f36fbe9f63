"""Positive controls: deliberately flawed builds of Deep Arithmark, for ``synthprobe validate``.

A choices-only adversary that passes the release means something only if it fails a build that
*can* be answered from the endings alone. Each control is such a build, flawed in one named way:

``roundness-off``
    The roundness balance switched off, as the card's early build was: decoys are drawn from every
    named mistake whatever its roundness class, and of the decoy sets that put the answer at its
    rank the one with the most decoys *rounder* than the answer is taken (the early build's decoys
    were structurally rounder than the answer, which sent gpt2 below chance). Slot and rank stay
    balanced. The heuristic audit catches it: "pick the roundest number" falls below chance.
``case-marked``
    The release's design, with the first word of the right ending capitalised (`` 603 Cm.`` among
    `` 673 cm.``, `` 638 cm.``, `` 841 cm.``); money endings (`` $312.``) have no word and stay as
    they are. Lengths, values, slot, rank and roundness are untouched, and the audit's char-3-gram
    classifier lowercases its input, so the heuristic audit passes the build; a model that reads
    the endings' letters finds the answer. (A flaw in how the four endings relate, say the right
    one ending in ``;`` where the decoys end in ``.`` and the other way round by a coin, is not
    invisible to the audit: ranking each option by a per-option score and taking the best already
    exploits it, and the classifier scored 29.5 % on such a build.)

Controls are for testing an adversary, never for reporting scores: their ``activity_label`` and
``source_id`` name the control and every item's metadata carries ``"control": NAME``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Mapping

from synthprobe.errors import InputError
from synthprobe.seeding import item_rng
from synthprobe.tasks.deeparithmark.base import GenerationError, Problem, roundness_class
from synthprobe.tasks.deeparithmark.checks import DIFFICULTY
from synthprobe.tasks.deeparithmark.composition import N_OPTIONS, TEMPLATES
from synthprobe.tasks.deeparithmark.item import decoy_sets, make_item

CONTROLS: dict[str, str] = {
    "roundness-off": ("the roundness balance switched off: decoys from every named mistake, the set with the most "
                      "decoys rounder than the answer taken (slot and rank still balanced)"),
    "case-marked": ("the first word of the right ending capitalised (' 603 Cm.' among ' 673 cm.'): lengths, values, "
                    "slot, rank and roundness untouched, invisible to the audit's lowercasing char-3-gram classifier"),
}
#: draws of a problem tried per item before a build gives up
MAX_DRAWS = 500


def _check(name: str, n: int) -> None:
    if name not in CONTROLS:
        raise InputError(f"no control {name!r}; expected one of {', '.join(CONTROLS)}", field="--control")
    if n < 1:
        raise InputError(f"a control build needs at least one item, got {n}", field="--n")


def _label(item: dict, name: str, template: str) -> dict:
    md = item["metadata"]
    item["activity_label"] = f"deeparithmark::control-{name}::{md['topic']}::depth{md['depth']}::{DIFFICULTY[md['depth']]}"
    item["source_id"] = f"deeparithmark_control_{name.replace('-', '_')}_{template}_{item['ind']:05d}"
    md["control"] = name
    return item


def _loose_usable(problem: Problem) -> dict[str, int]:
    """Every named mistake that can stand as a decoy, roundness ignored."""
    answer, clock = problem.answer, problem.kind == "clock"
    out: dict[str, int] = {}
    for key, v in problem.mistakes.items():
        if (isinstance(v, int) and not isinstance(v, bool) and v > 0 and v != answer and abs(v - answer) != 1
                and v not in out.values() and (not clock or (v < 1440 and (v < 720) == (answer < 720)))):
            out[key] = v
    return out


def _order(seed: int, n: int) -> list[str]:
    """The families of a build, in the release's shares, shuffled by the seed."""
    base = [t.name for t in TEMPLATES for _ in range(t.count)]
    out = [base[i % len(base)] for i in range(n)]
    random.Random(f"control-order:{seed}").shuffle(out)
    return out


def _roundness_off(seed: int, n: int) -> list[dict]:
    from synthprobe.tasks.deeparithmark.build import load_families

    families = load_families()
    items = []
    for ind, template in enumerate(_order(seed, n)):
        slot, rank = ind % N_OPTIONS, (ind // N_OPTIONS) % N_OPTIONS
        fam = families[template]
        for draw in range(MAX_DRAWS):
            rng = item_rng("deeparithmark-control:roundness-off", seed, ind, draw)
            try:
                problem = fam.generate(rng)
            except GenerationError:
                continue
            _, sets = decoy_sets(problem, rank, _loose_usable(problem))
            if sets:
                break
        else:
            raise InputError(f"family {template} gave no decoy set at rank {rank} in {MAX_DRAWS} draws")
        a = roundness_class(problem.answer, problem.kind)
        rounder = max(sum(roundness_class(v, problem.kind) > a for _, v in s) for s in sets)
        sets = [s for s in sets if sum(roundness_class(v, problem.kind) > a for _, v in s) == rounder]
        item = make_item(problem, sets, template=template, ind=ind, slot=slot, rank=rank, rng=rng)
        items.append(_label(item, "roundness-off", template))
    return items


def _case_marked(seed: int, n: int) -> list[dict]:
    from synthprobe.tasks.deeparithmark.build import iter_items

    items = []
    for item in iter_items(seed=seed, n=n):
        label = int(item["label"])
        item["endings"][label] = _WORD.sub(lambda m: m.group(1) + m.group(2).upper(), item["endings"][label], count=1)
        items.append(_label(item, "case-marked", item["metadata"]["template"]))
    return items


#: the first letter of the first word
_WORD = re.compile(r"(^|[^A-Za-z])([a-z])")


def control_items(name: str, *, seed: int, n: int) -> list[dict]:
    """The ``n`` items of control ``name`` for ``seed`` (deterministic)."""
    _check(name, n)
    return _roundness_off(seed, n) if name == "roundness-off" else _case_marked(seed, n)


def control_lines(name: str, *, seed: int, n: int) -> list[str]:
    """The control's items as JSONL lines (no newline), byte-identical for a seed on any machine."""
    return [json.dumps(item, ensure_ascii=False) for item in control_items(name, seed=seed, n=n)]


def build_control(out: str | Path, name: str, *, seed: int, n: int, overwrite: bool = False) -> Path:
    """Write control ``name`` to ``out`` atomically; an existing file is refused unless ``overwrite``."""
    from synthprobe.io.write import atomic_write_text

    out = Path(out)
    if out.exists() and not overwrite:
        raise InputError("already exists; add --overwrite to replace it", path=out, field="--out")
    lines = control_lines(name, seed=seed, n=n)
    atomic_write_text(out, "\n".join(lines) + "\n")
    return out


def flaws() -> Mapping[str, str]:
    return dict(CONTROLS)
