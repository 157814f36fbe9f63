"""Deep Arithmark in the report's paired comparison (:mod:`synthprobe.report.compare`): the
benchmark's ``outcomes`` part in the registry. Each model's per-item right/wrong from a block's
``predictions`` (``--save-predictions``), of the release run and of ArithMark 3.0 scored beside
it: ``correct_acc_norm`` for a log-likelihood record, ``correct`` for a generated answer
(``protocol`` letters/free; an older file's generated records kept it as ``correct_acc_norm``);
grouped by depth; paired on the data file's SHA-256 and the protocol (a letters run is compared
with letters runs: the protocol effect, :mod:`synthprobe.benchmarks.deeparithmark.report.protocol_effect`, compares one
model's protocols)."""

from __future__ import annotations

from synthprobe.benchmarks.deeparithmark.report.read import protocol_of
from synthprobe.report.compare import Outcomes
from synthprobe.results import Results, variant_label

#: the results blocks read → their titles
BLOCKS = {"deeparithmark": "Deep Arithmark", "arithmark3": "ArithMark 3.0"}
METRIC = "acc_norm"
GROUP_BY = "depth"
LEAD = "acc_norm for Deep Arithmark's log-likelihood runs, accuracy for its generated answers"


def correct_of(rec: dict) -> bool | None:
    """One record's right/wrong under its run's primary metric (None: not recorded)."""
    generated = (rec.get("protocol") or "loglik") != "loglik"
    value = rec.get("correct") if generated and "correct" in rec else rec.get("correct_acc_norm")
    return value if isinstance(value, bool) else None


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
            if not all(
                isinstance(p, dict) and isinstance(p.get("id"), str) and correct_of(p) is not None for p in preds
            ):
                continue
            protocol = protocol_of(entry.data)
            label = variant_label(entry.data)
            name = str(entry.model.get("name")) + (f" [{label}]" if label else "")
            depth = {p["id"]: p.get("depth") for p in preds}
            out.append(
                Outcomes(
                    key,
                    (sha, protocol),
                    name,
                    str(results.path),
                    {p["id"]: correct_of(p) for p in preds},
                    depth if all(isinstance(d, int) for d in depth.values()) else None,
                    metric=METRIC if protocol == "loglik" else "accuracy",
                )
            )
    return out
