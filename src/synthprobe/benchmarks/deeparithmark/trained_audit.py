"""The trained choices-only audit of Deep Arithmark: builds, controls, report.

The fixed-strategy audit (:mod:`.audit`) asks whether single cues ("pick the largest") give the key
away; it cannot see value geometry. This audit trains the adversaries of
:mod:`synthprobe.metrics.choices_only` (gradient-boosted trees over relation features, k nearest
neighbours on scaled sorted values, a DeepSets network, a gap-order lookup; optionally a probe on
text embeddings) on the four options of fresh builds, and scores them on

* the **audit build**: an independent fresh build of at least :func:`items_needed` items (4,097 at
  ± 2 points and 80 % power; default 4,100), where the equivalence test must show every adversary's
  accuracy inside chance ± 2 points (the 90 % Clopper–Pearson interval, or the cluster interval when
  items carry ``metadata.group``, inside [23 %, 27 %]);
* **the file** itself (the release: 1,000 items, too few for the equivalence at ± 2 points, so it is
  judged by the per-stratum screen: no adversary above chance overall, per depth or per template,
  Holm-corrected).

Training items come from seeds derived from ``("deeparithmark/audit-train", seed, i)`` (several
builds of equal size), the audit build from ``("deeparithmark/audit-test", seed)``: never the
file's seed. The builder's decoy mode (``decoys``: ``legacy`` or ``groups``; default the builder's
own) is a parameter, so the same audit measures either.

**Controls.** An audit that finds nothing means something only if it could have found something:

``legacy``
    the legacy decoy selection (its options give the key away: 55–58 % in an outside study); fails.
``mix10``
    the audit build with 10 % of its items (and 10 % of the training items) replaced by legacy items
    of the same template: the audit's stated power, ≈ 25 + 31 · 0.1 ≈ 28 % expected; fails.
``roundness-off``, ``odd-one-out``
    the flawed builds of :mod:`.controls` (roundness balance off; the key's ending written with a
    different final mark); fail.
``null``
    the audit build with each item's label replaced by a seeded uniform draw (labels independent of
    the options): the adversaries trained on the audit's training items must *not* beat chance.

Budgets: ``full`` (16,000 training items, 4,100 audit items, controls 4,000 / 2,000) and ``small``
(2,000 / 1,000, controls 2,000 / 1,000) for tests and quick looks; at ``small`` the equivalence
cannot be shown and the verdict is at best *inconclusive*.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from synthprobe.benchmarks.deeparithmark.composition import DECOY_MODES, DEFAULT_DECOYS, MAX_BUILD_SIZE, RELEASE_SEED
from synthprobe.errors import InputError
from synthprobe.metrics.choices_only import (
    NUMERIC_ADVERSARIES,
    ChoiceItem,
    Control,
    Embedder,
    count_steps,
    run_audit,
)
from synthprobe.metrics.equivalence import MARGIN, items_needed
from synthprobe.seeding import derive_seed

#: a build's table of templates; None for the release's
Templates = Sequence[Any] | None

#: the metadata key naming an item's role-balanced group (counted as a cluster)
CLUSTER_KEY = "group"

#: the metadata key of a file's number format
FORMAT_KEY = "number_format"

#: largest size of one training build: the training items come in builds of equal size
TRAIN_BUILD_SIZE = 4_000

#: share of legacy items in the ``mix10`` control
MIX_FRACTION = 0.10

CONTROL_NAMES = ("legacy", "mix10", "roundness-off", "odd-one-out", "null")


@dataclass(frozen=True)
class Budget:
    """Sizes of one audit run."""

    train: int
    audit: int
    control_train: int
    control_test: int


BUDGETS: dict[str, Budget] = {
    "full": Budget(train=16_000, audit=4_100, control_train=4_000, control_test=2_000),
    "small": Budget(train=2_000, audit=1_000, control_train=2_000, control_test=1_000),
}

Step = Callable[[str], None]


# ---------------------------------------------------------------------------------------
# Items: from builds and from a file
# ---------------------------------------------------------------------------------------


def choice_from_item(item: Mapping[str, Any]) -> ChoiceItem:
    """What the adversaries see of one Deep Arithmark item: its endings, option values, label,
    template (the group code), depth and role-balanced group (the cluster), never its question."""
    md = item["metadata"]
    cluster = md.get(CLUSTER_KEY)
    return ChoiceItem(
        endings=tuple(item["endings"]),
        values=tuple(md["option_values"]),
        label=int(item["label"]),
        group=str(md.get("template", "")),
        depth=md.get("depth"),
        cluster=None if cluster is None else str(cluster),
    )


def _check_values(md: Mapping[str, Any], n_endings: int, *, path: Path, line: int) -> None:
    vals = md.get("option_values")
    if (
        not isinstance(vals, list)
        or len(vals) != n_endings
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in vals)
    ):
        raise InputError(
            f"expected a list of {n_endings} integers (one per ending), got {vals!r}",
            path=path,
            line=line,
            field="metadata.option_values",
        )
    if not isinstance(md.get("template"), str):
        raise InputError(
            f"expected the template's name, got {md.get('template')!r}", path=path, line=line, field="metadata.template"
        )


def load_file(path: str | Path) -> tuple[list[ChoiceItem], str]:
    """A Deep Arithmark file's items as the adversaries see them, and its number format. A
    missing or malformed ``metadata.option_values`` / ``metadata.template`` is an
    :class:`InputError` naming the file, line and field."""
    from synthprobe.formats.arithmark3 import load_arithmark3

    path = Path(path)
    out, fmt = [], "plain"
    for it in load_arithmark3(path):
        md = it.metadata
        _check_values(md, len(it.endings), path=path, line=it.line)
        fmt = md.get(FORMAT_KEY, fmt)
        out.append(choice_from_item({"endings": it.endings, "label": it.label, "metadata": md}))
    if not out:
        raise InputError("holds no items", path=path)
    return out, fmt


def decoy_options(decoys: str | None) -> dict[str, str]:
    """The ``decoys=`` keyword for :func:`.build.iter_items` (none for the builder's default); an
    unknown mode is an :class:`InputError`."""
    if decoys is None:
        return {}
    if decoys not in DECOY_MODES:
        raise InputError(f"expected one of {', '.join(DECOY_MODES)}, got {decoys!r}", field="--decoys")
    return {"decoys": decoys}


def default_decoys() -> str:
    """The decoy mode a build uses when none is named."""
    return DEFAULT_DECOYS


def build(
    seed: int, n: int, *, decoys: str | None = None, number_format: str = "plain", templates: Templates = None
) -> list[ChoiceItem]:
    """The ``n`` items of a fresh build at ``seed`` (:func:`.build.iter_items`) as choice items,
    drawn from ``templates`` (default the release's table)."""
    from synthprobe.benchmarks.deeparithmark.build import iter_items

    table = {} if templates is None else {"templates": templates}
    items = iter_items(seed, n, number_format=number_format, **table, **decoy_options(decoys))
    return [choice_from_item(it) for it in items]


def split_sizes(total: int, largest: int = TRAIN_BUILD_SIZE) -> list[int]:
    """``total`` items as builds of (near) equal size, none above ``largest``."""
    builds = max(1, -(-total // largest))
    base, extra = divmod(total, builds)
    return [base + (i < extra) for i in range(builds)]


# ---------------------------------------------------------------------------------------
# Controls
# ---------------------------------------------------------------------------------------


def control_seed(name: str, part: str, seed: int) -> int:
    return derive_seed("deeparithmark/audit-control", name, part, seed)


def permuted(items: Sequence[ChoiceItem], seed: int) -> list[ChoiceItem]:
    """The A/A null: each item's label replaced by a seeded uniform draw among its slots."""
    rng = random.Random(derive_seed("deeparithmark/audit-null", seed))
    return [replace(it, label=rng.randrange(len(it.endings))) for it in items]


def mixed(
    items: Sequence[ChoiceItem], pool: Sequence[ChoiceItem], fraction: float, seed: int, part: str
) -> list[ChoiceItem]:
    """``items`` with ``round(fraction · len)`` of them (seeded positions) replaced by items of
    ``pool`` of the same template where the pool has one left, else the pool's next item; a
    replaced item is a cluster of its own."""
    rng = random.Random(derive_seed("deeparithmark/audit-mix", seed, part))
    where = sorted(rng.sample(range(len(items)), round(fraction * len(items))))
    if len(where) > len(pool):
        raise InputError(f"{len(where):,} items to replace and only {len(pool):,} legacy items to replace them with")
    by_group: dict[str, deque[int]] = defaultdict(deque)
    for j, it in enumerate(pool):
        by_group[it.group].append(j)
    anyone, used, out = deque(range(len(pool))), set(), list(items)
    for i in where:
        for queue in (by_group[items[i].group], anyone):
            while queue and queue[0] in used:
                queue.popleft()
            if queue:
                j = queue.popleft()
                break
        used.add(j)
        out[i] = replace(pool[j], cluster=None)
    return out


def flawed_build(name: str, seed: int, n: int, templates: Templates = None) -> list[ChoiceItem]:
    """``n`` items of one of :mod:`.controls`' flawed builds at ``seed``."""
    from synthprobe.benchmarks.deeparithmark.controls import control_items

    return [choice_from_item(it) for it in control_items(name, seed=seed, n=n, templates=templates)]


class Builds:
    """Makes the audit's builds, timing each and announcing it to ``step``; ``log`` records what
    was built (seeds, sizes, seconds) for the report."""

    def __init__(self, *, decoys: str | None, number_format: str, step: Step | None, templates: Templates = None):
        self.decoys = decoys
        self.number_format = number_format
        self.templates = templates
        self.step = step
        self.log: list[dict[str, Any]] = []

    def timed(self, what: str, seed: int | list[int], make: Callable[[], list[ChoiceItem]], **extra):
        """``make()``'s items, announced as ``what`` and logged with ``seed`` and its seconds."""
        if self.step is not None:
            self.step(f"build {what}")
        start = time.perf_counter()
        items = make()
        seconds = time.perf_counter() - start
        self.log.append({"what": what, "seed": seed, "n": len(items), "seconds": seconds, **extra})
        return items

    def fresh(self, what: str, seeds: Sequence[int], sizes: Sequence[int], decoys: str | None) -> list[ChoiceItem]:
        """Fresh builds of the release's families at ``seeds`` of ``sizes``, joined."""
        fmt, table = self.number_format, self.templates

        def make():
            return [
                it
                for s, n in zip(seeds, sizes)
                for it in build(s, n, decoys=decoys, number_format=fmt, templates=table)
            ]

        shown = list(seeds) if len(seeds) > 1 else seeds[0]
        return self.timed(what, shown, make, decoys=decoys or default_decoys())

    def flawed(self, name: str, part: str, seed: int, n: int) -> list[ChoiceItem]:
        """``n`` items of the flawed build ``name`` of :mod:`.controls`, at a seed for ``part``."""
        s = control_seed(name, part, seed)
        return self.timed(f"{name} {part}", s, lambda: flawed_build(name, s, n, self.templates), control=name)


def train_seeds(seed: int, count: int) -> list[int]:
    return [derive_seed("deeparithmark/audit-train", seed, i) for i in range(count)]


def training_items(builds: Builds, seed: int, n: int) -> list[ChoiceItem]:
    """The adversaries' ``n`` training items: fresh builds of equal size at the training seeds
    derived from ``seed``, in ``builds``' decoy mode."""
    parts = split_sizes(n)
    return builds.fresh("train", train_seeds(seed, len(parts)), parts, builds.decoys)


def audit_seed(seed: int) -> int:
    return derive_seed("deeparithmark/audit-test", seed)


def make_controls(
    builds: Builds, budget: Budget, seed: int, train: list[ChoiceItem], audit: list[ChoiceItem]
) -> list[Control]:
    """The five controls (:data:`CONTROL_NAMES`), built at the budget's control sizes (``mix10``
    and ``null`` at the audit's own sizes: they are the audit's items, changed)."""
    ct, cn = budget.control_train, budget.control_test
    legacy_train = builds.fresh("legacy train", [control_seed("legacy", "train", seed)], [ct], "legacy")
    legacy_test = builds.fresh("legacy test", [control_seed("legacy", "test", seed)], [cn], "legacy")
    need = round(MIX_FRACTION * len(train)) + round(MIX_FRACTION * len(audit))
    pool = builds.fresh("legacy pool for mix10", [control_seed("mix10", "pool", seed)], [need], "legacy")
    cut = round(MIX_FRACTION * len(train))
    controls = [
        Control("legacy", legacy_train, legacy_test, "fail", "the legacy decoy selection"),
        Control(
            "mix10",
            mixed(train, pool[:cut], MIX_FRACTION, seed, "train"),
            mixed(audit, pool[cut:], MIX_FRACTION, seed, "test"),
            "fail",
            "10 % of the training and audit items replaced by legacy items (expected ≈ 28 %)",
        ),
    ]
    for name in ("roundness-off", "odd-one-out"):
        tr, te = builds.flawed(name, "train", seed, ct), builds.flawed(name, "test", seed, cn)
        controls.append(Control(name, tr, te, "fail", _flaw(name)))
    controls.append(Control("null", None, permuted(audit, seed), "pass", "the audit build, labels drawn at random"))
    return controls


def _flaw(name: str) -> str:
    from synthprobe.benchmarks.deeparithmark.controls import CONTROLS

    return CONTROLS[name]


def planned_steps(n_adversaries: int, controls: bool) -> int:
    """How many steps :func:`run` announces (builds, fits, predictions): a progress bar's total.
    Builds: training and audit, then with controls legacy train and test, the mix10 pool and the
    two flawed builds' train and test; fits and predictions as :func:`.count_steps` counts them
    (four controls with training items of their own, the null without)."""
    if not controls:
        return 2 + count_steps(n_adversaries, 2, [])
    shapes = [Control("own", [], [], "fail")] * 4 + [Control("null", None, [], "pass")]
    return 2 + 7 + count_steps(n_adversaries, 2, shapes)


def check_sizes(budget_name: str, train_n: int, audit_n: int, margin: float = MARGIN) -> None:
    """Refuse sizes the builder cannot make, and at the full budget an audit build smaller than
    the equivalence criterion needs."""
    for n, flag in ((train_n, "--train-items"), (audit_n, "--audit-items")):
        if not 1 <= n <= MAX_BUILD_SIZE:
            raise InputError(f"expected 1 to {MAX_BUILD_SIZE:,} items, got {n:,}", field=flag)
    need = items_needed(margin)
    if budget_name == "full" and audit_n < need:
        raise InputError(
            f"the audit build has {audit_n:,} items; showing every adversary within ± {100 * margin:g} points of "
            f"chance at 80 % power needs at least {need:,} (use --budget small for a quick look without it)",
            field="--audit-items",
        )


# ---------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------


def file_families(path: str | Path) -> Templates:
    """The table a file built from families of its own was drawn from (its families table
    beside it), with those families loaded again from the sources the table names, so that the
    audit trains on fresh builds of the same families; None for a file of the release's table.
    A source that no longer loads is an :class:`InputError` naming it."""
    from synthprobe.benchmarks.deeparithmark.plugins import load_source, read_table, table_path

    found = read_table(path)
    if found is None:
        return None
    templates, doc = found
    for row in doc["families"]:
        origin = row.get("source") or {}
        if "path" in origin:
            load_source(("path", origin["path"]))
        elif "entry_point" in origin:
            load_source(("entry_point", origin["entry_point"]))
        elif origin.get("package") != "synthprobe":
            raise InputError(
                f"family {row['name']!r} names no source the audit can load again (a path or an entry point)",
                path=table_path(path),
                field="families",
            )
    return templates


def run(
    path: str | Path,
    *,
    budget: str | Budget = "full",
    train_n: int | None = None,
    audit_n: int | None = None,
    adversaries: Sequence[str] = NUMERIC_ADVERSARIES,
    controls: bool = True,
    decoys: str | None = None,
    seed: int = RELEASE_SEED,
    embed: Embedder | None = None,
    embedder: str | None = None,
    step: Step | None = None,
) -> dict[str, Any]:
    """The trained audit of the file at ``path``: a plain dict (JSON-ready) with the
    adversaries' results on the audit build and on the file, the screen, the controls, the
    verdict, what was built and the seconds each part took. ``budget``: a name of
    :data:`BUDGETS` or a :class:`Budget` (reported as ``custom``); ``train_n`` and ``audit_n``
    override its sizes. ``embedder`` names where ``embed``'s vectors come from (recorded when the
    embedding adversary runs). Raises :class:`InputError` on bad input before any build."""
    start = time.perf_counter()
    sizes = budget if isinstance(budget, Budget) else BUDGETS[budget]
    budget = budget if isinstance(budget, str) else "custom"
    train_n = sizes.train if train_n is None else train_n
    audit_n = sizes.audit if audit_n is None else audit_n
    check_sizes(budget, train_n, audit_n)
    decoy_options(decoys)  # an unknown mode fails before any work
    templates = file_families(path)
    file_items, fmt = load_file(path)
    builds = Builds(decoys=decoys, number_format=fmt, step=step, templates=templates)
    train = training_items(builds, seed, train_n)
    audit = builds.fresh("audit build", [audit_seed(seed)], [audit_n], decoys)
    made = make_controls(builds, sizes, seed, train, audit) if controls else []
    report = run_audit(train, {"audit build": audit, "file": file_items}, adversaries, made, embed=embed, step=step)
    report["file"] = {"path": str(path), "n": len(file_items), "number_format": fmt}
    report["budget"] = {"name": budget, "train": train_n, "audit": audit_n}
    report["budget"].update({"control_train": sizes.control_train, "control_test": sizes.control_test})
    report["decoys"] = decoys or default_decoys()
    report["seed"] = seed
    if "embedding" in adversaries:
        report["embedder"] = embedder or "unnamed"
    report["families"] = "release" if templates is None else [t.name for t in templates]
    report["builds"] = builds.log
    report["stated_power"] = stated_power(report)
    report["seconds"] = _seconds(report, time.perf_counter() - start)
    if budget != "full" or not report["test_sets"]["audit build"]["adversaries"][adversaries[0]]["applies"]:
        report["note"] = (
            f"the equivalence test needs an audit build of {items_needed():,} items or more (--budget full); "
            "this run reports the screen and the controls"
        )
    return report


#: the budget of the trained audit a twin build runs
TWINS_BUDGET = "small"


def run_on_items(
    test_sets: Mapping[str, Sequence[Mapping[str, Any]]],
    *,
    seed: int,
    templates: Templates = None,
    decoys: str | None = None,
    number_format: str = "plain",
    budget: str = TWINS_BUDGET,
    adversaries: Sequence[str] = NUMERIC_ADVERSARIES,
    step: Step | None = None,
) -> dict[str, Any]:
    """The trained adversaries on items that are not a build of their own (a twin build's files):
    trained on fresh builds of the same families (the budget's training size, seeds derived from
    ``seed`` as :func:`run` derives them), scored on each of ``test_sets`` (Deep Arithmark items)
    with the per-stratum screen. No controls run here: the same adversaries' power is shown by the
    audit of the file the items come from (``deeparithmark.py audit``, its selftest)."""
    start = time.perf_counter()
    sizes = BUDGETS[budget]
    builds = Builds(decoys=decoys, number_format=number_format, step=step, templates=templates)
    train = training_items(builds, seed, sizes.train)
    sets = {label: [choice_from_item(it) for it in items] for label, items in test_sets.items()}
    report = run_audit(train, sets, adversaries, (), step=step)
    report["budget"] = {"name": budget, "train": sizes.train}
    report["decoys"] = decoys or default_decoys()
    report["seed"] = seed
    report["builds"] = builds.log
    report["note"] = "no controls here: the adversaries' power is shown by the audit of the originals' file"
    report["seconds"] = {"total": time.perf_counter() - start}
    return report


def summary(report: Mapping[str, Any], label: str) -> dict[str, Any]:
    """One test set of :func:`run_on_items` in brief: its status, each adversary's accuracy, the
    strata flagged and the worst stratum (for a manifest)."""
    t = report["test_sets"][label]
    worst = max(t["screen"], key=lambda r: (r["correct"] / r["n"] if r["n"] else 0.0, r["n"]), default=None)
    return {
        "status": t["status"],
        "n": t["n"],
        "adversaries": {
            name: {"correct": b["correct"], "n": b["n"], "accuracy": b["accuracy"]}
            for name, b in t["adversaries"].items()
        },
        "strata_flagged": sum(bool(r["flagged"]) for r in t["screen"]),
        "strata": len(t["screen"]),
        "worst_stratum": None
        if worst is None
        else {k: worst[k] for k in ("adversary", "kind", "stratum", "correct", "n", "p_holm") if k in worst},
    }


#: what the mix10 control should score if the adversaries find the legacy items (25 + 31 · f %,
#: from the outside study's 56 % on legacy items)
MIX_EXPECTED = 0.25 + 0.31 * MIX_FRACTION


def stated_power(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The audit's stated power: whether it finds a build with 10 % legacy items (``mix10``)."""
    mix = next((c for c in report["controls"] if c["name"] == "mix10"), None)
    if mix is None:
        return None
    return {
        "control": "mix10",
        "fraction": MIX_FRACTION,
        "expected_accuracy": MIX_EXPECTED,
        "best_adversary": mix["best_adversary"],
        "best_accuracy": mix["best_accuracy"],
        "detected": mix["outcome"] == "fail",
        "all_legacy": report["decoys"] == "legacy",
    }


def _seconds(report: Mapping[str, Any], total: float) -> dict[str, float]:
    builds = sum(b["seconds"] for b in report["builds"])
    fits = sum(a["fit_seconds"] for a in report["adversaries"].values())
    fits += sum(a["fit_seconds"] for c in report["controls"] for a in c["adversaries"].values())
    predicts = sum(b["predict_seconds"] for t in report["test_sets"].values() for b in t["adversaries"].values())
    predicts += sum(a["predict_seconds"] for c in report["controls"] for a in c["adversaries"].values())
    return {"builds": builds, "fits": fits, "predictions": predicts, "total": total}


# ---------------------------------------------------------------------------------------
# The printed table
# ---------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "   n/a" if x is None else f"{100 * x:5.1f} %"


def _p(x: float | None) -> str:
    if x is None:
        return "n/a"
    if x <= 0:
        return "<1e-300"
    return f"{x:.3f}" if x >= 0.001 else f"{x:.0e}"


def _result(block: Mapping[str, Any]) -> str:
    """The equivalence result: PASS / FAIL, or n/a where the test set is too small for it."""
    if block["passes"] is None:
        return "n/a"
    return "PASS" if block["passes"] else "FAIL"


def _screen_mark(test_set: Mapping[str, Any], name: str) -> str:
    return "FAIL" if any(r["flagged"] for r in test_set["screen"] if r["adversary"] == name) else "ok"


def adversary_table(report: Mapping[str, Any]) -> list[str]:
    """Per adversary: the audit build's accuracy, 90 % interval, TOST p, equivalence result and
    screen; the file's accuracy, one-sided p above chance and screen; the fit's seconds."""
    audit, file = report["test_sets"]["audit build"], report["test_sets"]["file"]
    lo, hi = report["bounds"]
    lines = [
        f"adversaries trained on {report['train_n']:,} fresh items' options ({report['decoys']} decoys); "
        f"equivalence: the 90 % interval inside {100 * lo:.0f}-{100 * hi:.0f} %",
        f"{'':10}  {'audit build (' + format(audit['n'], ',') + ' items)':^52}  "
        f"{'file (' + format(file['n'], ',') + ' items)':^26}",
        f"{'adversary':10}  {'accuracy':>8}  {'90 % interval':>15}  {'TOST p':>7}  {'equiv.':>6}  {'screen':>6}  "
        f"{'accuracy':>8}  {'p above':>7}  {'screen':>6}  {'fit s':>6}",
    ]
    for name, fit in report["adversaries"].items():
        a, f = audit["adversaries"][name], file["adversaries"][name]
        interval = a["clusters"]["interval"] if a["clusters"] else a["cp90"]
        lines.append(
            f"{name:10}  {_pct(a['accuracy']):>8}  {f'{100 * interval[0]:.1f}-{100 * interval[1]:.1f} %':>15}  "
            f"{_p(a['tost_p']):>7}  {_result(a):>6}  {_screen_mark(audit, name):>6}  {_pct(f['accuracy']):>8}  "
            f"{_p(f['p_above_chance']):>7}  {_screen_mark(file, name):>6}  {fit['fit_seconds']:6.1f}"
        )
    if any(b["clusters"] for b in audit["adversaries"].values()):
        first = next(b for b in audit["adversaries"].values() if b["clusters"])
        lines.append(f"(audit build intervals over {first['clusters']['clusters']:,} clusters: metadata.group)")
    return lines


def control_table(report: Mapping[str, Any]) -> list[str]:
    """The controls: expected outcome, sizes, best adversary and its accuracy, outcome."""
    if not report["controls"]:
        return ["controls: not run (--no-controls): the audit's power is not shown"]
    lines = [
        "controls (a planted leak must fail: some adversary above chance, p < 0.01 Bonferroni; the null must pass)",
        f"{'control':14}  {'expect':6}  {'train':>6}  {'test':>6}  {'best':>9}  {'accuracy':>8}  {'p':>7}  result",
    ]
    for c in report["controls"]:
        train = "audit's" if c["train_n"] is None else f"{c['train_n']:,}"
        mark = "as expected" if c["as_expected"] else "NOT AS EXPECTED"
        lines.append(
            f"{c['name']:14}  {c['expect']:6}  {train:>6}  {c['test_n']:>6,}  {c['best_adversary']:>9}  "
            f"{_pct(c['best_accuracy']):>8}  {_p(c['best_p_bonferroni']):>7}  {c['outcome'].upper()} ({mark})"
        )
    return lines


def strata_table(report: Mapping[str, Any], worst: int = 8) -> list[str]:
    """The screen's worst strata over both test sets (Holm-corrected p, smallest first)."""
    rows = [
        (name, r)
        for name, t in report["test_sets"].items()
        for r in t["screen"]
        if r["kind"] != "all"  # the overall rows are in the table above
    ]
    rows.sort(key=lambda nr: (nr[1]["p_holm"], -nr[1]["accuracy"]))
    flagged = sum(r["flagged"] for _, r in rows)
    lines = [
        f"per-stratum screen (depth and template; one-sided exact test, Holm across strata and adversaries "
        f"of a test set, α = {report['screen_alpha']}): {flagged:,} of {len(rows):,} strata flagged; worst:",
        f"{'test set':11}  {'adversary':9}  {'stratum':30}  {'items':>5}  {'accuracy':>8}  {'p Holm':>7}",
    ]
    for name, r in rows[:worst]:
        stratum = f"{r['kind']} {r['stratum']}"
        lines.append(
            f"{name:11}  {r['adversary']:9}  {stratum:30}  {r['n']:>5,}  {_pct(r['accuracy']):>8}  "
            f"{_p(r['p_holm']):>7}{'  FLAGGED' if r['flagged'] else ''}"
        )
    return lines


def format_report(report: Mapping[str, Any]) -> str:
    """The trained audit as printed by ``deeparithmark.py audit``."""
    s = report["seconds"]
    lines = ["", f"Trained choices-only audit: {report['file']['path']}", ""]
    lines += adversary_table(report) + [""] + control_table(report) + [""] + strata_table(report) + [""]
    power = report.get("stated_power")
    if power:
        found = "found" if power["detected"] else "NOT found"
        lines.append(
            f"stated power: a build with {100 * power['fraction']:.0f} % legacy items (expected ≈ "
            f"{100 * power['expected_accuracy']:.0f} %) is {found}: {power['best_adversary']} scores "
            f"{100 * power['best_accuracy']:.1f} %"
            + (" (today's decoys are legacy, so every item of it leaks)" if power["all_legacy"] else "")
        )
    if report.get("embedder"):
        lines.append(f"embedding adversary: frozen embeddings of the endings from {report['embedder']}")
    if report.get("note"):
        lines.append(f"note: {report['note']}")
    lines.append(f"verdict: {report['verdict']['text'].upper()[:1]}{report['verdict']['text'][1:]}")
    lines.append(
        f"seconds: builds {s['builds']:.1f}, fits {s['fits']:.1f}, predictions {s['predictions']:.1f}, "
        f"total {s['total']:.1f}"
    )
    return "\n".join(lines)
