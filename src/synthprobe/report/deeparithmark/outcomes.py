"""Deep Arithmark in the report's paired comparison (:mod:`synthprobe.report.compare`): the
benchmark's ``outcomes`` part in the registry. Each model's per-item ``correct_acc_norm`` from a
block's ``predictions`` (``--save-predictions``), of the release run and of ArithMark 3.0 scored
beside it; grouped by depth; paired on the data file's SHA-256."""

from __future__ import annotations

from synthprobe.report.compare import Outcomes
from synthprobe.results import Results

#: the results blocks read → their titles
BLOCKS = {"deeparithmark": "Deep Arithmark", "arithmark3": "ArithMark 3.0"}
METRIC = "acc_norm"
GROUP_BY = "depth"
LEAD = "acc_norm for Deep Arithmark"


def outcomes(results: Results) -> list[Outcomes]:
    """Every model's per-item outcomes in one read results file."""
    out = []
    for key in BLOCKS:
        for entry, block in results.blocks(key):
            preds = block.data.get("predictions")
            ds = block.data.get("dataset")
            sha = ds.get("sha256") if isinstance(ds, dict) else results.dataset_sha256(key)
            if not isinstance(preds, list) or not sha:
                continue
            if not all(isinstance(p, dict) and isinstance(p.get("id"), str)
                       and isinstance(p.get("correct_acc_norm"), bool) for p in preds):
                continue
            depth = {p["id"]: p.get("depth") for p in preds}
            out.append(Outcomes(key, (sha,), str(entry.model.get("name")), str(results.path),
                                {p["id"]: p["correct_acc_norm"] for p in preds},
                                depth if all(isinstance(d, int) for d in depth.values()) else None))
    return out
