"""Read the ``steps`` blocks of a results file into :class:`StepsResult` (one per model).

The envelope is checked by :func:`synthprobe.results.read_results`; here every field the
section uses is type-checked, and a bad one is an :class:`InputError` naming the file and the
field's path (``models[0].results.steps.summary.by_step_depth[3].chain``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from synthprobe.results import Results

MODES = ("isolation", "chain")
METHODS = ("choice", "generation")


@dataclass(frozen=True)
class StepsResult:
    model: str
    source: str
    block: dict
    settings: dict

    @property
    def summary(self) -> dict:
        return self.block["summary"]


def _cell(r, obj: Any, where: str) -> None:
    for k in ("correct", "n"):
        r.get(obj, k, where, int)
    r.get(obj, "ci95", where, list, required=False)


def _modes(r, row: dict, where: str) -> None:
    for mode in MODES:
        m = r.get(row, mode, where, dict)
        for method in METHODS:
            _cell(r, r.get(m, method, f"{where}.{mode}", dict), f"{where}.{mode}.{method}")


def parse(results: Results) -> list[StepsResult]:
    """Every model's ``steps`` block in one read results file."""
    r = results.reader
    out = []
    for entry, block in results.blocks("steps"):
        where = block.where
        s = r.get(block.data, "summary", where, dict)
        sw = f"{where}.summary"
        _modes(r, r.get(s, "overall", sw, dict), f"{sw}.overall")
        for key, cols in (("by_step_depth", ("depth", "step")), ("by_operation_digits", ("digits",))):
            rows = r.get(s, key, sw, list)
            for i, row in enumerate(rows):
                here = f"{sw}.{key}[{i}]"
                if not isinstance(row, dict):
                    raise r.fail(here, f"expected an object, got {type(row).__name__}")
                for c in cols:
                    r.get(row, c, here, int)
                if key == "by_operation_digits":
                    r.get(row, "operation", here, str)
                _modes(r, row, here)
        fb = r.get(s, "first_broken", sw, dict)
        for method in METHODS:
            per = r.get(fb, method, f"{sw}.first_broken", dict)
            for d, row in per.items():
                here = f"{sw}.first_broken.{method}.{d}"
                r.get(row if isinstance(row, dict) else {}, "counts", here, dict)
        gap = r.get(s, "gap", sw, dict)
        for method in METHODS:
            g = r.get(gap, method, f"{sw}.gap", dict)
            for mode in MODES:
                _cell(r, r.get(g, mode, f"{sw}.gap.{method}", dict), f"{sw}.gap.{method}.{mode}")
        r.get(s, "gap_by_operation", sw, list)
        r.get(block.data, "audit", where, list, required=False)
        name = r.get(entry.model, "name", entry.at("model"), str)
        settings = {
            "data": block.data.get("dataset", {}).get("path", ""),
            "data SHA-256": block.data.get("dataset", {}).get("sha256", ""),
            "items": s.get("items"),
            "probes": s.get("probes"),
            "dtype": entry.model.get("dtype"),
            "device": entry.model.get("device"),
        }
        out.append(StepsResult(model=name, source=str(results.path), block=block.data, settings=settings))
    return out
