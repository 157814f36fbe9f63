"""Read the ``twins`` blocks of a results file (``synthprobe probe twins``) into
:class:`TwinsResult`, one per model entry.

The envelope (version, summary, originals) is checked by the layout
(:func:`synthprobe.benchmarks.deeparithmark.layout.check_block`); here every field the section
shows is type-checked, and a bad one is one :class:`~synthprobe.errors.InputError` naming the
file and the field's path (``models[0].results.twins.summary.loglik.reordered.ci``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synthprobe.results import Results

#: the block a model entry holds (the section's KEY)
BLOCK = "twins"
#: a CELL's consistency counts, in the order the tables show them
COUNTS = ("both_right", "both_wrong", "right_to_wrong", "wrong_to_right")
#: the kind whose cells carry the irrelevant-number uptake
UPTAKE_KIND = "irrelevant_clause"
NUMBER = (int, float)


@dataclass(frozen=True)
class TwinsResult:
    """One model entry's twins block: ``summary`` is ``{protocol: {kind: CELL}}``."""

    model: str
    source: str
    block: dict
    settings: dict

    @property
    def summary(self) -> dict:
        return self.block["summary"]

    @property
    def items(self) -> list:
        return self.block.get("items") or []


def _fraction(r, obj: dict, key: str, where: str, *, required: bool = True) -> None:
    value = r.get(obj, key, where, NUMBER, required=required, what="a number in [0, 1]")
    if value is not None and not 0 <= value <= 1:
        raise r.fail(f"{where}.{key}", f"expected a number in [0, 1], got {value}")


def _uptake(r, cell: dict, where: str) -> None:
    up = r.get(cell, "uptake", where, dict)
    here = f"{where}.uptake"
    wrong = r.get(up, "wrong_picks", here, int)
    hits = r.get(up, "irrelevant", here, int)
    if not 0 <= hits <= wrong:
        raise r.fail(f"{here}.irrelevant", f"expected a count between 0 and wrong_picks ({wrong}), got {hits}")
    _fraction(r, up, "share", here, required=wrong > 0)
    _fraction(r, up, "expected", here)
    _fraction(r, up, "p", here, required=wrong > 0)


def check_cell(r, cell: Any, where: str, *, kind: str, top: bool) -> None:
    """One CELL of the spec: counts, accuracies, the difference and its interval, the tests
    (``p_holm`` on top-level cells only) and, for ``irrelevant_clause``, the uptake."""
    if not isinstance(cell, dict):
        raise r.fail(where, f"expected an object, got {type(cell).__name__}")
    n = r.get(cell, "n", where, int)
    counts = [r.get(cell, k, where, int) for k in COUNTS]
    if sum(counts) != n:
        raise r.fail(f"{where}.n", f"expected {' + '.join(COUNTS)} = {sum(counts)}, got {n}")
    for key in ("original", "twin", "p_mcnemar"):
        _fraction(r, cell, key, where, required=n > 0)
    if top:
        _fraction(r, cell, "p_holm", where, required=n > 0)
    diff = r.get(cell, "difference", where, NUMBER, required=n > 0)
    if diff is not None and not -1 <= diff <= 1:
        raise r.fail(f"{where}.difference", f"expected a number in [-1, 1], got {diff}")
    ci = r.get(cell, "ci", where, list, required=n > 0, what="a list [low, high]")
    if ci is not None and (len(ci) != 2 or not all(isinstance(x, NUMBER) and not isinstance(x, bool) for x in ci)):
        raise r.fail(f"{where}.ci", f"expected a list [low, high] of two numbers, got {ci!r}")
    if ci is not None and not ci[0] <= ci[1]:
        raise r.fail(f"{where}.ci", f"expected low <= high, got {ci!r}")
    if kind == UPTAKE_KIND:
        _uptake(r, cell, where)


def _summary(r, summary: dict, where: str) -> None:
    if not summary:
        raise r.fail(where, "expected at least one protocol, got an empty object")
    for protocol, cells in summary.items():
        here = f"{where}.{protocol}"
        if not isinstance(cells, dict) or not cells:
            raise r.fail(here, "expected an object of kinds → cells")
        for kind, cell in cells.items():
            at = f"{here}.{kind}"
            check_cell(r, cell, at, kind=kind, top=True)
            for group in ("by_depth", "by_family"):
                parts = r.get(cell, group, at, dict)
                for name, sub in parts.items():
                    check_cell(r, sub, f"{at}.{group}.{name}", kind=kind, top=False)


def _side(r, obj: Any, where: str, *, twin: bool) -> None:
    if not isinstance(obj, dict):
        raise r.fail(where, f"expected an object, got {type(obj).__name__}")
    r.get(obj, "pick", where, int, required=False)
    r.get(obj, "correct", where, bool)
    r.get(obj, "text", where, str, required=False)
    if twin:
        r.get(obj, "pick_source", where, str, required=False)


def _items(r, items: list, where: str) -> None:
    for i, it in enumerate(items):
        here = f"{where}[{i}]"
        if not isinstance(it, dict):
            raise r.fail(here, f"expected an object, got {type(it).__name__}")
        for key in ("id", "twin_of", "kind", "protocol"):
            r.get(it, key, here, str)
        r.get(it, "family", here, str, required=False)
        r.get(it, "depth", here, int, required=False)
        _side(r, r.get(it, "original", here, dict), f"{here}.original", twin=False)
        _side(r, r.get(it, "twin", here, dict), f"{here}.twin", twin=True)


def parse(results: Results) -> list[TwinsResult]:
    """Every model's ``twins`` block in one read results file."""
    r = results.reader
    out = []
    for entry, block in results.blocks(BLOCK):
        where = block.where
        data = block.data
        if not isinstance(data, dict):
            raise r.fail(where, f"expected an object, got {type(data).__name__}")
        _summary(r, r.get(data, "summary", where, dict), f"{where}.summary")
        aa = r.get(data, "aa", where, dict, required=False)
        if aa is not None:  # the A/A check (`probe twins --aa SEED2`): one cell per protocol
            r.get(aa, "seed", f"{where}.aa", int)
            for protocol, cells in r.get(aa, "summary", f"{where}.aa", dict).items():
                here = f"{where}.aa.summary.{protocol}"
                if not isinstance(cells, dict):
                    raise r.fail(here, f"expected an object, got {type(cells).__name__}")
                check_cell(r, r.get(cells, "aa", here, dict), f"{here}.aa", kind="aa", top=False)
        originals = r.get(data, "originals", where, dict)
        r.get(originals, "path", f"{where}.originals", str, required=False)
        r.get(originals, "sha256", f"{where}.originals", str)
        r.get(originals, "n", f"{where}.originals", int)
        settings = r.get(data, "settings", where, dict, required=False) or {}
        r.get(settings, "protocols", f"{where}.settings", list, required=False)
        manifest = r.get(data, "manifest", where, dict, required=False) or {}
        r.get(manifest, "path", f"{where}.manifest", str, required=False)
        items = r.get(data, "items", where, list, required=False)
        if items is not None:
            _items(r, items, f"{where}.items")
        name = r.get(entry.model, "name", entry.at("model"), str, required=False) or str(
            entry.model.get("spec") or "model"
        )
        shown = {
            "originals": originals.get("path", ""),
            "originals SHA-256": originals.get("sha256", ""),
            "originals scored": originals.get("n"),
            "manifest": manifest.get("path", ""),
            "protocols": ", ".join(map(str, settings.get("protocols") or list(data["summary"]))),
            "limit": settings.get("limit"),
            "dtype": entry.model.get("dtype"),
            "device": entry.model.get("device"),
        }
        out.append(TwinsResult(model=name, source=str(results.path), block=data, settings=shown))
    return out


__all__ = ["BLOCK", "COUNTS", "TwinsResult", "check_cell", "parse"]
