"""The choices-only adversary and its positive controls.

The adversary is the model under test fine-tuned on the endings alone of fresh-seed items
(:mod:`.curve`, input ``endings``), then scoring the file under test from its endings alone. If
the items can be answered without the arithmetic, from how the endings look or how they relate,
it learns to; the file passes when its accuracy stays within chance's band at every training size.

A pass means something only if the adversary could have failed it. The positive controls are
deliberately flawed builds (:mod:`synthprobe.benchmarks.deeparithmark.controls`): the same adversary,
trained the same way on the control's own fresh builds, must land clearly above chance on each.
One flaw the heuristic audit also catches, one it misses; a control that does not fail says the
adversary has no power, and the verdict says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synthprobe.items import MCItem
from synthprobe.metrics.stats import chance_band
from synthprobe.validity.curve import above_chance, run_curve


def verdict(block: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the adversary's accuracy stayed in chance's band at every size, in a sentence."""
    chance = block["chance"]
    trained = [p for p in block["curve"] if p["size"] > 0] or block["curve"]
    outside = [p for p in block["curve"] if not p["within_chance"]]
    best = max(trained, key=lambda p: p["accuracy"])
    if not outside:
        return True, (
            f"passes: trained on up to {block['train_items']:,} items' endings, the choices-only "
            f"adversary stays within chance's band at every size (best {100 * best['accuracy']:.1f} % "
            f"at {best['size']:,}; chance {100 * chance:.1f} %)"
        )
    worst = max(outside, key=lambda p: abs(p["accuracy"] - chance))
    lo, hi = chance_band(worst["n"], chance)
    return False, (
        f"fails: from its endings alone the adversary scores {100 * worst['accuracy']:.1f} % at "
        f"{worst['size']:,} training items, outside chance's band {100 * lo:.1f}-{100 * hi:.1f} %; "
        "the items can be answered without reading the question"
    )


def adversary(
    backend,
    train: Sequence[MCItem],
    test: Sequence[MCItem],
    *,
    sizes: Sequence[int],
    settings: Mapping[str, Any],
    batch_size: int,
    bar=None,
    adapter_out=None,
) -> dict[str, Any]:
    block = run_curve(
        backend,
        train,
        test,
        kind="endings",
        sizes=sizes,
        settings=settings,
        batch_size=batch_size,
        bar=bar,
        adapter_out=adapter_out,
    )
    block["passes"], block["verdict"] = verdict(block)
    return block


def control(
    backend,
    name: str,
    flaw: str,
    train: Sequence[MCItem],
    test: Sequence[MCItem],
    *,
    size: int,
    settings: Mapping[str, Any],
    batch_size: int,
    audit: Mapping[str, Any],
    bar=None,
) -> dict[str, Any]:
    """One positive control: the adversary trained on ``size`` of the control's items, scored on
    its test build; ``fails`` when it lands clearly above chance there."""
    block = adversary(backend, train, test, sizes=[size], settings=settings, batch_size=batch_size, bar=bar)
    last = block["curve"][-1]
    fails = above_chance(last, block["chance"])
    return {"name": name, "flaw": flaw, "n_items": len(test), "audit": dict(audit), "adversary": block, "fails": fails}


def power(controls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if not controls:
        return {"has_power": None, "verdict": "no positive control was run: the adversary's pass is unchecked"}
    missed = [c["name"] for c in controls if not c["fails"]]
    if missed:
        return {
            "has_power": False,
            "verdict": (
                f"no power: the adversary did not beat chance on the flawed build"
                f"{'s' if len(missed) > 1 else ''} {', '.join(missed)}, so its pass on the file "
                "under test means nothing at this budget; train on more items (--sizes)"
            ),
        }
    parts = "; ".join(
        f"{c['name']} {100 * c['adversary']['curve'][-1]['accuracy']:.1f} %"
        + ("" if c["audit"].get("passes") is not True else ", which the heuristic audit passes")
        for c in controls
    )
    return {
        "has_power": True,
        "verdict": f"has power: it beats chance on every flawed build ({parts}), so a pass is evidence",
    }


def audit_summary(records: Sequence[dict]) -> dict[str, Any]:
    """The heuristic audit (:mod:`synthprobe.benchmarks.deeparithmark.audit`) of a build, in the layout
    of a control's ``audit`` block."""
    from synthprobe.benchmarks.deeparithmark.audit import audit, audit_item, tolerance

    items = [audit_item(r["endings"], int(r["label"]), r["metadata"]) for r in records]
    rows = audit(items)
    tol = tolerance(len(items))
    strategies = [{"name": s.name, "accuracy": round(s.percent / 100, 6), "within": s.within(tol)} for s in rows]
    return {"passes": all(s["within"] for s in strategies), "strategies": strategies}
