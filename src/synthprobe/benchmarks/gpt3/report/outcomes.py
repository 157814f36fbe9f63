"""The GPT-3 synthetic tasks in the report's paired comparison (:mod:`synthprobe.report.compare`):
the benchmark's ``outcomes`` part in the registry. Each model's per-item ``correct`` from the
rows' saved ``items``; grouped by task and setting; paired on the run's seed, format, check and
SAT file."""

from __future__ import annotations

from synthprobe.report.compare import Outcomes
from synthprobe.results import Results

#: the results blocks read → their titles
BLOCKS = {"gpt3": "GPT-3 synthetic tasks"}
METRIC = "accuracy (exact match)"
GROUP_BY = "task"
LEAD = "exact match for GPT-3"


def outcomes(results: Results) -> list[Outcomes]:
    """Every model's per-item outcomes in one read results file."""
    out = []
    for entry, block in results.blocks("gpt3"):
        settings = block.data.get("settings") or entry.settings or {}
        key = tuple(str(settings.get(k)) for k in ("seed", "format", "check", "sat_sha256"))
        found: dict[str, bool] = {}
        groups: dict[str, str] = {}
        for row in block.data.get("rows") or []:
            items = row.get("items") if isinstance(row, dict) else None
            if not isinstance(items, list) or not all(
                isinstance(it, dict) and isinstance(it.get("correct"), bool) for it in items
            ):
                found = {}
                break
            for it in items:
                k = f"{row.get('task')}|{row.get('setting')}|{it.get('index')}"
                found[k] = it["correct"]
                groups[k] = f"{row.get('code')} {row.get('setting')}"
        if found:
            out.append(Outcomes("gpt3", key, str(entry.model.get("name")), str(results.path), found, groups))
    return out
