"""Learnability and template overfitting.

*Learnability*: the model fine-tuned with the context (:mod:`.curve`, input ``context``) on
fresh-seed items, the file under test scored at each training size, each size paired against
the untrained model (size 0) by an exact McNemar test. Does the benchmark see learning, and where?

*Leave-one-family-out*: for every family of the file, train on fresh items of all the other
families and score the file's items of the family left out, against the untrained model on the
same items: what fine-tuning on the other families teaches about a new one (the card's warning
that fine-tuning on the families would overfit, measured).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from synthprobe.items import MCItem
from synthprobe.validity.curve import group_of, run_curve


def learnability(
    backend,
    train: Sequence[MCItem],
    test: Sequence[MCItem],
    *,
    sizes: Sequence[int],
    settings: Mapping[str, Any],
    batch_size: int,
    bar=None,
) -> dict[str, Any]:
    return run_curve(
        backend, train, test, kind="context", sizes=sizes, settings=settings, batch_size=batch_size, bar=bar
    )


def leave_one_family_out(
    backend,
    test: Sequence[MCItem],
    train_for: Callable[[str], Sequence[MCItem]],
    *,
    size: int,
    settings: Mapping[str, Any],
    batch_size: int,
    bar=None,
    families: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``train_for(family)``: ``size`` fresh items of every family but ``family``."""
    names = sorted({group_of(it, "template") for it in test}) if families is None else list(families)
    folds = []
    for name in names:
        held = [it for it in test if group_of(it, "template") == name]
        if not held:
            continue
        block = run_curve(
            backend,
            train_for(name),
            held,
            kind="context",
            sizes=[0, size],
            settings=settings,
            batch_size=batch_size,
            bar=bar,
        )
        untrained, trained = block["curve"]
        keys = ("n", "correct", "accuracy", "ci95", "p_vs_chance")
        folds.append(
            {
                "family": name,
                "trained": {k: trained[k] for k in keys},
                "untrained": {k: untrained[k] for k in keys},
                "paired": {k: v for k, v in trained["paired"].items() if k != "vs_size"},
                "train": trained["train"],
            }
        )
    return {"size": size, "input": "the item's context, then its endings listed A-D", "folds": folds}
