"""The GPT-3 synthetic-task blocks of a results file, as the report reads them.

The envelope is read and checked by :mod:`synthprobe.results` (``synthprobe score gpt3`` writes
the one results document; a one-model file with ``"benchmark": "gpt3-synthetic"``, as earlier
releases wrote it, is converted on read); the rows are documented in
:mod:`synthprobe.benchmarks.gpt3.scoring.score`. The report uses:

* ``model.name``, ``model.params`` and a few of ``model`` / ``settings`` for the run table;
* per row of the ``gpt3`` block's ``rows``: ``task``, ``code``, ``family``, ``setting`` (zero / one / few /
  ``<k>-shot``), ``k``, ``n``, ``correct``, ``accuracy`` (percent, checked against
  correct / n), ``shots`` (mean, min, max, reduced), ``paper`` (GPT-3 size → ``value`` in
  percent, optional ``doubtful`` / ``alt``), ``paper_note`` and ``lands`` when present.

The 95 % interval is computed here from ``n`` and ``correct`` (Wilson), so a file without an
interval of its own reads the same. Per-item records (``items``) are not read.
"""

from __future__ import annotations

import re
from typing import Any

from synthprobe.benchmarks.gpt3.report.model import Gpt3Result, Gpt3Row, PaperFigure
from synthprobe.report.model import Count
from synthprobe.results import Block, Entry, Results, at

TASK = "gpt3"
SETTINGS = ("zero", "one", "few")
#: a row of answers read from generated text counts the items whose answer did not count
NOT_COUNTED = ("unparsed", "inconsistent", "cut_off")
_K_SHOT = re.compile(r"^([0-9]+)-shot$")
_SIZE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([KMBT])$")
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def size_params(label: str) -> float | None:
    """``"1.3B"`` → 1.3e9; None when the label is not a size."""
    m = _SIZE.match(label)
    return float(m.group(1)) * _SCALE[m.group(2)] if m else None


def _whole(r, obj: dict, key: str, where: str, *, low: int = 0, what: str = "") -> int:
    value = r.get(obj, key, where, int, what=what or f"a whole number >= {low}")
    if value < low:
        raise r.fail(f"{where}.{key}", f"expected {what or f'a whole number >= {low}'}, got {value}")
    return value


def _percent(r, obj: dict, key: str, where: str, *, required: bool = True) -> float | None:
    value = r.get(obj, key, where, float, required=required, what="a percentage (0-100)")
    if value is not None and not 0 <= value <= 100:
        raise r.fail(f"{where}.{key}", f"expected a percentage between 0 and 100, got {value}")
    return None if value is None else float(value)


def _check_setting(r, setting: str, k: int, where: str) -> None:
    m = _K_SHOT.match(setting)
    if setting not in SETTINGS and not m:
        raise r.fail(f"{where}.setting", f"expected zero, one, few or '<k>-shot', got {setting!r}")
    ok = {"zero": k == 0, "one": k == 1, "few": k >= 2}.get(setting, m is not None and int(m.group(1)) == k)
    if not ok:
        expected = {"zero": "0", "one": "1", "few": "at least 2"}.get(setting, m.group(1) if m else "?")
        raise r.fail(f"{where}.k", f"setting {setting!r} means k = {expected}, got {k}")


def _paper(r, row: dict, where: str) -> dict[str, PaperFigure]:
    block = r.get(row, "paper", where, dict, required=False, what="an object: GPT-3 size → {value, doubtful?, alt?}")
    if block is None:
        return {}
    here = f"{where}.paper"
    cells: list[tuple[float, str, PaperFigure]] = []
    for size, cell in block.items():
        at = f"{here}.{size}"
        params = size_params(size)
        if params is None:
            raise r.fail(at, "expected a model size such as '125M' or '1.3B' as the key")
        if not isinstance(cell, dict):
            raise r.fail(at, f"expected an object {{value, doubtful?, alt?}}, got {type(cell).__name__}")
        value = _percent(r, cell, "value", at)
        doubtful = r.get(cell, "doubtful", at, bool, required=False) or False
        alt = _percent(r, cell, "alt", at, required=False)
        cells.append((params, size, PaperFigure(value=value, doubtful=doubtful, alt=alt)))
    return {size: fig for _, size, fig in sorted(cells, key=lambda c: c[0])}


def parse_row(r, row: Any, where: str) -> Gpt3Row:
    if not isinstance(row, dict):
        raise r.fail(where, f"expected an object (one task and setting), got {type(row).__name__}")
    task = r.get(row, "task", where, str)
    if not task:
        raise r.fail(f"{where}.task", "expected a task name, got an empty string")
    code = r.get(row, "code", where, str)
    family = r.get(row, "family", where, str)
    setting = r.get(row, "setting", where, str)
    k = _whole(r, row, "k", where, what="a whole number of demonstrations >= 0")
    _check_setting(r, setting, k, where)
    n = _whole(r, row, "n", where, low=1, what="a whole number of scored items >= 1")
    correct = _whole(r, row, "correct", where, what="a whole number of correct items")
    if correct > n:
        raise r.fail(f"{where}.correct", f"expected 0 <= correct <= n ({n}), got {correct}")
    accuracy = _percent(r, row, "accuracy", where)
    if abs(accuracy - 100 * correct / n) > 0.01:
        raise r.fail(
            f"{where}.accuracy",
            f"expected 100 × correct / n = {100 * correct / n:.4f} ({correct} of {n}), got {accuracy}",
        )
    shots = r.get(row, "shots", where, dict, what="an object {mean, min, max, reduced}")
    sw = f"{where}.shots"
    s_mean = r.get(shots, "mean", sw, float, what="a number of demonstrations")
    s_min = _whole(r, shots, "min", sw)
    s_max = _whole(r, shots, "max", sw)
    reduced = _whole(r, shots, "reduced", sw)
    if not s_min <= s_max <= k:
        raise r.fail(sw, f"expected min <= max <= k ({k}), got min {s_min}, max {s_max}")
    if not s_min - 1e-3 <= s_mean <= s_max + 1e-3:
        raise r.fail(f"{sw}.mean", f"expected a mean between min {s_min} and max {s_max}, got {s_mean}")
    if reduced > n:
        raise r.fail(f"{sw}.reduced", f"expected at most n ({n}) items with fewer demonstrations, got {reduced}")
    not_counted = {key: _whole(r, row, key, where) for key in NOT_COUNTED if key in row}
    for key, count in not_counted.items():
        if count > n:
            raise r.fail(f"{where}.{key}", f"expected at most n ({n}) items, got {count}")
    return Gpt3Row(
        task=task,
        code=code,
        family=family,
        setting=setting,
        k=k,
        count=Count(correct, n),
        shots_mean=float(s_mean),
        shots_min=s_min,
        shots_max=s_max,
        shots_reduced=reduced,
        paper=_paper(r, row, where),
        paper_note=r.get(row, "paper_note", where, str, required=False),
        lands=r.get(row, "lands", where, str, required=False),
        not_counted=not_counted or None,
    )


def _text(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return ", ".join(f"{k} {_text(x)}" for k, x in v.items())
    if isinstance(v, list):
        return ", ".join(_text(x) for x in v)
    return str(v)


def _settings(seconds: Any, version: str | None, model: dict, settings: dict) -> dict[str, str]:
    out = {
        "dtype": _text(model.get("dtype")),
        "device": _text(model.get("device")),
        "format": _text(settings.get("format")),
        "check": _text(settings.get("check")),
        "seed": _text(settings.get("seed")),
        "max context": _text(settings.get("max_context")),
        "item limits": _text(settings.get("limits")),
    }
    if settings.get("sat_file") is not None:
        out["SAT file"] = _text(settings.get("sat_file"))
    if isinstance(seconds, dict) and isinstance(seconds.get("total"), (int, float)):
        out["seconds"] = f"{seconds['total']:.0f}"
    out["torch"] = _text(model.get("torch"))
    out["transformers"] = _text(model.get("transformers"))
    out["synthprobe"] = _text(version)
    return out


def parse_entry(r, entry: Entry, block: Block, version: str | None) -> Gpt3Result:
    """One model's GPT-3 results (``block``: its ``rows`` and, optionally, its own ``settings``
    and ``seconds``, else the model entry's)."""
    rows_in = block.data["rows"]
    rows_where = at(block.where, "rows") if block.where else "results"
    model = entry.model
    mw = entry.at("model")
    name = r.get(model, "name", mw, str)
    if not name:
        raise r.fail(f"{mw}.name", "expected a model name, got an empty string")
    sweep = entry.data.get("sweep")
    if isinstance(sweep, dict) and isinstance(sweep.get("label"), str) and isinstance(sweep.get("seed_label"), str):
        name = f"{sweep['label']} · seed {sweep['seed_label']}"  # a `synthprobe sweep` job: one per seed
    params = r.get(model, "params", mw, int, required=False)
    if params is not None and params < 1:
        raise r.fail(f"{mw}.params", f"expected a positive parameter count, got {params}")
    settings = block.data.get("settings") or entry.settings
    if not rows_in:
        raise r.fail(rows_where, "is empty; expected at least one scored task and setting")
    rows: list[Gpt3Row] = []
    seen: dict[tuple[str, str, int], int] = {}
    for i, item in enumerate(rows_in):
        row = parse_row(r, item, f"{rows_where}[{i}]")
        if row.key in seen:
            raise r.fail(
                f"{rows_where}[{i}]",
                f"task {row.task!r}, setting {row.setting!r} (k = {row.k}) "
                f"already scored in {rows_where}[{seen[row.key]}]; expected each once",
            )
        seen[row.key] = i
        rows.append(row)
    test_set = tuple(
        (key, _text(settings.get(key))) for key in ("seed", "format", "check", "limits", "sat_sha256", "word_list")
    )
    return Gpt3Result(
        model=name,
        params=params,
        rows=tuple(rows),
        settings=_settings(block.data.get("seconds", entry.data.get("seconds")), version, model, settings),
        test_set=test_set,
        source=str(r.path),
    )


def parse(results: Results) -> list[Gpt3Result]:
    """Every model's GPT-3 results in one read results file."""
    return [parse_entry(results.reader, e, b, results.synthprobe) for e, b in results.blocks(TASK)]
