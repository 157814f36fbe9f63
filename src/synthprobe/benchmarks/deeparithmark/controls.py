"""Positive controls: deliberately flawed builds of Deep Arithmark, for ``synthprobe validate``.

A choices-only adversary (a model trained on the four endings alone) that stays at chance on the
release means something only if it beats chance on a build that *can* be answered from the
endings alone. Each control is such a build, flawed in one named way and otherwise made by the
release's builder (:func:`.build.iter_items`: composition, slot / rank / depth balance, same-length
decoys, answer-shape thinning, per-item checks):

``roundness-off``
    The roundness balance switched off, as the card's early build was: decoys come from every
    usable mistake whatever its roundness class (``iter_items(..., roundness=False)``, which also
    drops the one-class rule from the per-item checks). Nothing else changes. About half the items
    then mix roundness classes, and their decoys are rounder than the answer far more often than
    not (a forgotten fee or a dropped term lands on a round value more often than the answer
    does), so the heuristic audit catches it: "pick the roundest number" falls well below chance.
``odd-one-out``
    The release's design, with the right ending written differently from the three decoys: its
    final ``.`` is a ``;`` while the decoys keep their ``.``, or the other way round (`` 603 cm.``
    among `` 673 cm;``, `` 638 cm;``, `` 841 cm;``). Which way is dealt like slot and rank, not
    tossed per item: exactly half the items of every template one way and half the other (a
    seeded shuffle; an odd count gives its last item by a coin), so a given form is right in a
    quarter of its endings, lengths stay equal and values, slot, rank and roundness are the
    release's. Every per-option statistic is then balanced and the heuristic audit passes the
    build; anyone who compares the four endings finds the one that differs. (With an independent
    coin per item the per-template split drifts, the char-3-gram classifier learns a weight for
    ``;`` against ``.`` in some template, and since the best-scored of the four endings is taken,
    a weight of either sign favours the odd one out (a large one would score 50 %): in a probe on
    ten 1,000-item legacy builds the classifier averaged 27.9 % with coins against 25.9 % on the
    same builds unmarked, and 25.7 % with the dealt split.) In a role-balanced build the deal is
    per group (two of a full group's four items each way), as its ranks are: the audit's
    classifier folds a group's items together, and a split dealt per template drifts within a
    fold of whole groups (on the 1,000-item controls of seeds 1-5 and 9 it scored 27.6-32.6 %
    dealt per template, 26.9-28.3 % per group, 27.0 % at seed 9; whole groups dealt one way,
    23.7-33.9 %; the unmarked builds 24.8-25.1 %).

Controls are for testing an adversary, never for reporting scores: their ``activity_label``
(``deeparithmark::control-NAME::...``) and ``source_id`` (``deeparithmark_control_NAME_...``)
name the control, and every item's metadata ends with ``"control": NAME``. A control's items are
drawn at a build seed derived from the control's name and ``seed`` (:func:`build_seed`), never at
``seed`` itself, so a control is not the release's draws (nor the other control's) at any seed; a
context can still recur by chance, as between any two builds (2 of 1,000 at the release's seed).
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import DIFFICULTY
from synthprobe.benchmarks.deeparithmark.composition import LEGACY, MAX_BUILD_SIZE
from synthprobe.errors import InputError
from synthprobe.seeding import derive_seed

#: name -> the flaw, in one sentence (shown by ``--help``, ``synthprobe validate`` and its report)
CONTROLS: dict[str, str] = {
    "roundness-off": (
        "the roundness balance switched off: decoys from every usable mistake whatever its "
        "roundness class (the card's early build); slot, rank and lengths still balanced"
    ),
    "odd-one-out": (
        "the right ending ends in ';' where the three decoys end in '.', or the other way round "
        "(half the items of each template each way): every per-option statistic balanced, "
        "found by comparing the four endings"
    ),
}

#: the two final marks of ``odd-one-out``: the release's, and the one that sets an ending apart
MARKS = (".", ";")


def _check(name: str, n: int) -> None:
    if name not in CONTROLS:
        raise InputError(f"no control {name!r}; expected one of {', '.join(CONTROLS)}", field="--control")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_BUILD_SIZE:
        raise InputError(f"a control build holds 1 to {MAX_BUILD_SIZE:,} items, got {n!r}", field="--n")


def build_seed(name: str, seed: int) -> int:
    """The seed of the release builder's draws for control ``name`` at ``seed``."""
    return derive_seed("deeparithmark/control", name, seed)


def _slug(name: str) -> str:
    return name.replace("-", "_")


def _label(item: dict, name: str) -> dict:
    """``item`` renamed for control ``name``: its labels name the control, its metadata says so."""
    md = item["metadata"]
    depth, template = md["depth"], md["template"]
    item["activity_label"] = f"deeparithmark::control-{name}::{md['topic']}::depth{depth}::{DIFFICULTY[depth]}"
    item["source_id"] = f"deeparithmark_control_{_slug(name)}_{template}_depth{depth}_{item['ind']:04d}"
    md["control"] = name
    return item


def odd_sides(items: list[dict], seed: int) -> list[bool]:
    """Per item, whether its *right* ending carries the odd mark (``;``) — else the decoys do:
    half of every role-balanced group's items each way (half of every template's where the items
    have no group), dealt by a seeded shuffle (deterministic). A template holds at most one group
    of an odd size (its last), so each template's items stay half each way within one."""
    by_unit: dict[str, list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        md = item["metadata"]
        by_unit[md.get("group") or md["template"]].append(i)
    out = [False] * len(items)
    for unit in sorted(by_unit):
        where = by_unit[unit]
        rng = random.Random(derive_seed("deeparithmark/control/odd-one-out", seed, unit))
        sides = [True, False] * (len(where) // 2)
        if len(where) % 2:
            sides.append(rng.random() < 0.5)
        rng.shuffle(sides)
        for i, side in zip(where, sides):
            out[i] = side
    return out


def _mark(item: dict, right_is_odd: bool) -> dict:
    label = int(item["label"])
    endings = []
    for i, e in enumerate(item["endings"]):
        if not e.endswith(MARKS[0]):  # every family ends its sentence with a full stop
            raise RuntimeError(f"odd-one-out: ending {e!r} of item {item['ind']} does not end with {MARKS[0]!r}")
        odd = (i == label) == right_is_odd
        endings.append(e[:-1] + MARKS[1] if odd else e)
    item["endings"] = endings
    return item


def control_items(name: str, *, seed: int, n: int, templates=None) -> list[dict]:
    """The ``n`` items of control ``name`` for ``seed``, in file order (deterministic), drawn
    from ``templates`` (default the release's table)."""
    from synthprobe.benchmarks.deeparithmark.build import iter_items

    _check(name, n)
    table = {} if templates is None else {"templates": templates}
    s = build_seed(name, seed)
    if name == "roundness-off":
        # the flaw is in the legacy selection (a role-balanced build shows every value as the key
        # once, whatever its roundness): the card's early build, as it was
        return [_label(item, name) for item in iter_items(seed=s, n=n, roundness=False, decoys=LEGACY, **table)]
    items = list(iter_items(seed=s, n=n, **table))
    return [_label(_mark(item, odd), name) for item, odd in zip(items, odd_sides(items, s))]


def control_lines(name: str, *, seed: int, n: int) -> list[str]:
    """Control ``name``'s ``n`` items for ``seed`` as JSONL lines (no newline), written as the
    release writes its lines; the same arguments give the same lines on any machine. Raises
    :class:`~synthprobe.errors.InputError` for an unknown name (the message lists the names) or
    ``n`` outside 1..MAX_BUILD_SIZE."""
    from synthprobe.benchmarks.deeparithmark.build import dumps_item

    return [dumps_item(item) for item in control_items(name, seed=seed, n=n)]


def build_control(out: str | Path, name: str, *, seed: int, n: int, overwrite: bool = False) -> Path:
    """Write control ``name`` (``n`` items, ``seed``) to ``out`` atomically: all of it or nothing.
    An existing ``out`` is refused unless ``overwrite``."""
    from synthprobe.io.write import atomic_write_bytes

    out = Path(out)
    _check(name, n)
    if out.is_dir():
        raise InputError("is a directory; expected the path of the file to write", path=out, field="--out")
    if out.exists() and not overwrite:
        raise InputError("already exists; add --overwrite to replace it", path=out, field="--out")
    data = "".join(line + "\n" for line in control_lines(name, seed=seed, n=n)).encode("utf-8")
    atomic_write_bytes(out, data)
    return out
