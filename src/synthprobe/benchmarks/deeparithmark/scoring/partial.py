"""Partial-input baselines (``score deeparithmark --partial-inputs``): every item scored again by
the same model, under the same loglik protocol, with part of the item taken away.

A model that reads the question should lose most of its accuracy without it. Three baselines,
each the item's own four endings (same order, same label) scored by log-likelihood after
another context:

``endings`` (choices only)
    the question is replaced by the item's endings listed in order, then ``Answer:``:
    ``"Options: 312; 327; 183; 297.\\nAnswer:"`` (each ending stripped of its spaces and one final
    full stop in the list; scored as written, e.g. ``" 327."``). What the options alone give away.
``filler``
    the question is replaced by one fixed sentence, :data:`FILLER`, the same for every item:
    the endings' own likelihood with no question and no options shown.
``other-context``
    the question is that of another item of the same template (a question of the same shape
    and depth with other numbers): does the model use *this* item's numbers? The donor is a
    seeded derangement (:func:`donors`): the scored items of each template are put in file order,
    shuffled by ``random.Random("synthprobe/partial-inputs/<seed>/<template>")`` and each takes
    the context of the next one in that order (the last the first's): one cycle, so never its
    own. Items whose template has no other scored item (a short ``--limit``) are pooled and
    deranged the same way among themselves (key ``(single)``); one such item alone takes the
    context of the next item in the file (wrapping round). Those borrow from another template
    and are counted (``cross_template``). The seed is :data:`SEED`.

The pick is acc_norm's (the highest per-token mean log-likelihood, ties to the lowest index),
as in the full run. :func:`partial_block` gives, per baseline, its accuracy (a rate block
``{n, correct, accuracy, ci95, p_vs_chance}``, the layout of the summary's groups), the
**agreement** (the share of items whose partial pick is the full-context pick; about
``1 / n_endings`` when the two picks are independent and spread evenly) and, over the
baselines, **question reliance** = full-context accuracy - the best partial accuracy; each per
depth too. Pure functions, no model: the scorer (:mod:`synthprobe.benchmarks.deeparithmark.scoring.score`)
runs the modified items through the same backend path as the full run.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthprobe.errors import InputError
from synthprobe.items import MCItem
from synthprobe.metrics.stats import accuracy_block
from synthprobe.results import fmt_p

if TYPE_CHECKING:
    from synthprobe.benchmarks.deeparithmark.scoring.score import ScoreConfig
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset  # noqa: F401 (annotations)

#: The baselines, in the order they are scored and shown.
BASELINES = ("endings", "filler", "other-context")

#: The context of the ``filler`` baseline, the same for every item.
FILLER = "The answer is"

#: The seed of the ``other-context`` derangement.
SEED = 0

#: Bumped when a baseline's prompt changes (part of the score cache key).
VERSION = 1

#: One line per baseline, as the results file, the printed block and the report name it.
DESIGNS = {
    "endings": (
        "choices only: the question replaced by the item's four endings listed in order "
        "('Options: e1; e2; e3; e4.' and a line 'Answer:'), each ending then scored after it"
    ),
    "filler": (
        f"the question replaced by the fixed sentence {FILLER!r}, the same for every item "
        "(the endings' own likelihood: no question, no options)"
    ),
    "other-context": (
        "the question of another item of the same template (same shape and depth, other "
        f"numbers), a seeded derangement (seed {SEED}): never the item's own"
    ),
}


def endings_context(endings: Sequence[str]) -> str:
    """The ``endings`` baseline's context: the endings listed in order, then ``Answer:``."""
    shown = [e.strip()[:-1].rstrip() if e.strip().endswith(".") else e.strip() for e in endings]
    return "Options: " + "; ".join(shown) + ".\nAnswer:"


def _cycle(members: list[int], key: str, seed: int) -> dict[int, int]:
    order = sorted(members)
    random.Random(f"synthprobe/partial-inputs/{seed}/{key}").shuffle(order)
    return {order[k]: order[(k + 1) % len(order)] for k in range(len(order))}


def donors(items: Sequence[MCItem], seed: int = SEED) -> tuple[list[int], int]:
    """The ``other-context`` donor of every item (an index into ``items``, never its own) and how
    many items borrow from another template (module docstring). Items without a template are
    one group. Raises :class:`InputError` with fewer than two items."""
    if len(items) < 2:
        raise InputError(
            f"the other-context baseline needs at least two items, got {len(items)}; score more items (--limit)",
            field="--partial-inputs",
        )
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[it.metadata.get("template")].append(i)
    out: dict[int, int] = {}
    single: list[int] = []
    for template, members in groups.items():
        if len(members) == 1:
            single.extend(members)
        else:
            out.update(_cycle(members, str(template), seed))
    if len(single) == 1:
        out[single[0]] = (single[0] + 1) % len(items)
    elif single:
        out.update(_cycle(single, "(single)", seed))
    return [out[i] for i in range(len(items))], len(single)


def partial_items(items: Sequence[MCItem], baseline: str, donor: Sequence[int] | None = None) -> list[MCItem]:
    """``items`` with their context replaced as ``baseline`` says (ids, endings and labels kept);
    ``donor``: :func:`donors`' list, for ``other-context``."""
    if baseline == "endings":
        return [dataclasses.replace(it, ctx=endings_context(it.endings)) for it in items]
    if baseline == "filler":
        return [dataclasses.replace(it, ctx=FILLER) for it in items]
    if baseline == "other-context":
        if donor is None:
            donor = donors(items)[0]
        return [dataclasses.replace(it, ctx=items[j].ctx) for it, j in zip(items, donor)]
    raise ValueError(f"unknown partial-input baseline {baseline!r}; expected one of {', '.join(BASELINES)}")


def _chance(records: Sequence[dict]) -> float:
    return sum(1.0 / r["n_endings"] for r in records) / len(records) if records else float("nan")


def rate_block(correct: Sequence[bool], chance: float) -> dict[str, Any]:
    """``{n, correct, accuracy, ci95, p_vs_chance}``: the summary's group layout."""
    b = accuracy_block(sum(map(bool, correct)), len(correct), chance)
    return {
        "n": b["total"],
        "correct": b["correct"],
        "accuracy": b["acc"],
        "ci95": b["ci95"],
        "p_vs_chance": b["p_vs_chance"],
    }


def _rows(full: Sequence[dict], partial: dict[str, Sequence[dict]], at: list[int]) -> dict[str, Any]:
    """The rate blocks, agreements and reliance over the items at positions ``at``."""
    chance = _chance([full[i] for i in at])
    baselines: dict[str, Any] = {}
    for name, recs in partial.items():
        block = rate_block([recs[i]["correct_acc_norm"] for i in at], chance)
        agree = sum(1 for i in at if recs[i]["pred_acc_norm"] == full[i]["pred_acc_norm"])
        block["agree"] = agree
        block["agreement"] = agree / len(at) if at else float("nan")
        baselines[name] = block
    full_block = rate_block([full[i]["correct_acc_norm"] for i in at], chance)
    # the best baseline: the highest accuracy, ties to the first in BASELINES order
    best = max(baselines, key=lambda name: (baselines[name]["accuracy"], -list(baselines).index(name)))
    return {
        "full": full_block,
        "baselines": baselines,
        "best_partial": best,
        "reliance": full_block["accuracy"] - baselines[best]["accuracy"],
    }


def partial_block(
    full: Sequence[dict],
    partial: dict[str, Sequence[dict]],
    *,
    cross_template: int,
    seed: int = SEED,
    runs: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The summary's ``partial_inputs`` block (layout in :mod:`synthprobe.benchmarks.deeparithmark.scoring.results`)
    from the full-context records and each baseline's records (same items, same order).
    ``runs``: per baseline, what its scoring run recorded (truncated, cached items, timing)."""
    n = len(full)
    for name, recs in partial.items():
        if len(recs) != n or any(a["id"] != b["id"] for a, b in zip(full, recs)):
            raise ValueError(f"the {name} records are not the full run's items in order")
    depths: dict[int, list[int]] = defaultdict(list)
    for i, r in enumerate(full):
        if r.get("depth") is not None:
            depths[r["depth"]].append(i)
    overall = _rows(full, partial, list(range(n)))
    block: dict[str, Any] = {
        "metric": "acc_norm",
        "version": VERSION,
        "seed": seed,
        "filler": FILLER,
        "designs": {name: DESIGNS[name] for name in partial},
        "agreement_note": (
            "agreement: the share of items whose partial pick is the full-context pick "
            "(about 1/n_endings if the two are independent and evenly spread)"
        ),
        "reliance_note": "reliance: full-context accuracy minus the best partial accuracy (a fraction)",
        "n": n,
        "cross_template": cross_template,
        **overall,
        "by_depth": {str(d): _rows(full, partial, depths[d]) for d in sorted(depths)},
    }
    if runs:
        block["runs"] = {name: runs[name] for name in partial if name in runs}
    return block


def attach_picks(
    predictions: list[dict], partial: dict[str, Sequence[dict]], items: Sequence[MCItem], donor: Sequence[int]
) -> None:
    """Add to each full-context record its ``partial_picks`` (baseline -> acc_norm pick) and
    ``other_context_from`` (the donor item's id), for ``--save-predictions``."""
    for i, rec in enumerate(predictions):
        rec["partial_picks"] = {name: recs[i]["pred_acc_norm"] for name, recs in partial.items()}
        if "other-context" in partial:
            rec["other_context_from"] = str(items[donor[i]].id)


def format_partial(block: dict[str, Any], name: str) -> str:
    """The printed partial-inputs block of one model: a line per baseline, then reliance per depth."""
    full = block["full"]
    out = [f"partial-input baselines · {name} (acc_norm, n={block['n']}; full context {100 * full['accuracy']:.2f} %):"]
    for b, row in block["baselines"].items():
        lo, hi = row["ci95"]
        out.append(
            f"  {b:<14} {100 * row['accuracy']:6.2f} % [{100 * lo:.1f}, {100 * hi:.1f}]  "
            f"agreement {100 * row['agreement']:5.1f} %  p vs chance {fmt_p(row['p_vs_chance'])}"
        )
    out.append(
        f"  question reliance {100 * block['reliance']:+.2f} pts (full - {block['best_partial']})"
        + "".join(f"; d{d} {100 * r['reliance']:+.1f}" for d, r in block["by_depth"].items())
    )
    if block.get("cross_template"):
        out.append(
            f"  other-context: {block['cross_template']} item(s) had no other item of their template "
            "and borrowed another template's context"
        )
    return "\n".join(out)


# ---------------------------------------------------------------------------------------
# The baselines scored: each a loglik pass of its own
# ---------------------------------------------------------------------------------------


@dataclass
class PartialSets:
    """A data set's partial-input baselines: each baseline's items with what names it in the
    cache, the other-context donors and how many of them come from another template."""

    sets: dict[str, tuple[Dataset, dict[str, Any]]]
    donor: list[int]
    cross_template: int


def partial_datasets(ds: Dataset) -> PartialSets:
    """The items of every partial-input baseline (:mod:`synthprobe.benchmarks.deeparithmark.scoring.partial`).
    A baseline's cache key names it, its prompt version and (other-context) the digest of its
    donors, which depend on the items scored (``--limit``)."""
    import hashlib

    from synthprobe.benchmarks.deeparithmark.scoring.workloads import Dataset

    donor, cross = donors(ds.items)
    sets = {}
    for name in BASELINES:
        key: dict[str, Any] = {"baseline": name, "version": VERSION}
        if name == "filler":
            key["filler"] = FILLER
        if name == "other-context":
            key["seed"] = SEED
            key["donors_sha256"] = hashlib.sha256(
                "\n".join(f"{it.id}<-{ds.items[j].id}" for it, j in zip(ds.items, donor)).encode()
            ).hexdigest()
        sets[name] = (Dataset(ds.key, partial_items(ds.items, name, donor), ds.info), key)
    return PartialSets(sets, donor, cross)


def score_partial(
    backend, ds: Dataset, block: dict[str, Any], config: ScoreConfig, *, echo: Callable[[str], None] = print
) -> None:
    """Score ``ds`` under every partial-input baseline through :func:`score_dataset` (the same
    backend path, cache and calibration as the full run) and put the ``partial_inputs`` block
    into ``block``'s summary; each full-context prediction gets its partial picks."""
    from synthprobe.benchmarks.deeparithmark.scoring.workloads import score_dataset

    ps = partial_datasets(ds)
    records: dict[str, list[dict[str, Any]]] = {}
    runs: dict[str, dict[str, Any]] = {}
    for name, (pds, key) in ps.sets.items():
        scored = score_dataset(backend, pds, config, echo=echo, partial=key)
        records[name] = scored["predictions"]
        runs[name] = {k: scored[k] for k in ("scorer_used", "batch_size_used", "cached_items", "truncated", "timing")}
    block["summary"]["partial_inputs"] = partial_block(
        block["predictions"], records, cross_template=ps.cross_template, runs=runs
    )
    attach_picks(block["predictions"], records, ds.items, ps.donor)
