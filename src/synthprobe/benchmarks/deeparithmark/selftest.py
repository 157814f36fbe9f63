"""Re-check every claim the Deep Arithmark card makes about a file.

Run on the release (``python deeparithmark.py selftest``) or on any variant built with
another seed or size; the expected composition and balance are derived for the file's
size from the release table (:mod:`.composition`). Each check prints one line with its
figure and PASS/FAIL; the exit status is 0 when all pass, 1 when any fails, 2 when the file
cannot be read as an ArithMark 3.0 file at all.

Checks, in order: the ArithMark 3.0 loader contract; canonical JSONL bytes; every per-item
rule of :mod:`.checks` (schema and types, labels, units, distinct positive options, no ±1
decoy, one roundness class, clock half-day, label ↔ source ↔ answer ↔ values, answer rank,
steps = depth, every step re-evaluated, prompt ≤ 45 words); unique ids, source ids and
contexts; the composition table; correct-slot, answer-rank and depth balance and the
slot × rank × depth grid; prompt-length mean; the shortcut audit (:mod:`.audit`); the trained
choices-only audit at a small budget (:func:`trained_check`; ``trained=False`` leaves it out); and,
with an upstream ArithMark 3.0 file, no shared context and no shared eight-word n-gram.

The trained check is a check of the *builder* as much as of the file: adversaries trained on the
options of fresh builds made the way the file was made must stay at chance on a fresh audit build
and on the file. The legacy decoy selection fails it (its options give the key away); a file
built with ``--decoys groups`` is audited against role-balanced builds.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean

from synthprobe.benchmarks.deeparithmark.audit import CLASSIFIER, audit, audit_item, tolerance
from synthprobe.benchmarks.deeparithmark.build import dumps_item
from synthprobe.benchmarks.deeparithmark.checks import (
    ITEM_RULES,
    MAX_CTX_WORDS,
    ctx_words,
    item_faults,
    number_format_of,
    value_kind,
)
from synthprobe.benchmarks.deeparithmark.composition import (
    N_OPTIONS,
    TEMPLATES,
    Template,
    balance_plan,
    composition,
    depth_counts,
)
from synthprobe.benchmarks.deeparithmark.plugins import by_name as table_by_name
from synthprobe.benchmarks.deeparithmark.plugins import read_table, table_path
from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.read import sha256_file
from synthprobe.items import MCItem

#: Mean prompt length the release promises, in words (the card: 29.2).
MEAN_WORDS_RANGE = (27.0, 32.0)

#: n-gram length of the upstream overlap check.
NGRAM = 8

#: Located examples shown per failing check.
EXAMPLES = 3

#: The trained check's name.
TRAINED_CHECK = "trained choices-only audit"

#: The trained check's adversaries (:mod:`synthprobe.metrics.choices_only`): the DeepSets network
#: is left to ``deeparithmark.py audit`` (the slowest to fit, and the trees see what it sees).
TRAINED_ADVERSARIES = ("knn", "gap_order", "trees")

#: The trained check's budget: fresh training items, audit-build items, and the legacy control's
#: training and test items (its null is the audit build with labels redrawn). About 30 s of wall
#: time on 2 loaded cores; the adversaries and builds are seeded, so the figure is the same each run.
TRAINED_SIZES = {"train": 2_000, "audit": 1_000, "control_train": 2_000, "control_test": 1_000}


@dataclass
class Check:
    name: str
    figure: str
    ok: bool | None  # None: not run
    details: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return {True: "PASS", False: "FAIL", None: "SKIP"}[self.ok]


@dataclass
class SelftestReport:
    path: Path
    n: int
    sha256: str
    checks: list[Check]
    audit_rows: list = field(default_factory=list)
    #: the trained check's report (:func:`trained_report`), None when it did not run
    trained: dict | None = None

    @property
    def ok(self) -> bool:
        return not any(c.ok is False for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if c.ok is False]

    def table(self) -> str:
        w = max(len(c.name) for c in self.checks)
        fw = max(len("figure"), *(len(c.figure) for c in self.checks))
        lines = [
            f"Deep Arithmark selftest: {self.path}",
            f"{self.n:,} items, sha256 {self.sha256}",
            "",
            f"{'check':<{w}}  {'figure':<{fw}}  result",
            f"{'-' * w}  {'-' * fw}  ------",
        ]
        for c in self.checks:
            lines.append(f"{c.name:<{w}}  {c.figure:<{fw}}  {c.status}")
            for d in c.details[:EXAMPLES]:
                lines.append(f"{'':<{w}}    ↳ {d}")
        passed = sum(c.ok is True for c in self.checks)
        lines += [
            "",
            f"{passed}/{len(self.checks)} checks passed" + ("" if self.ok else f"; failed: {', '.join(self.failed)}"),
        ]
        return "\n".join(lines)


def _slash(xs: Sequence[int]) -> str:
    return " / ".join(f"{x:,}" for x in xs)


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (runs of letters and digits) for the n-gram overlap check."""
    return re.findall(r"[^\W_]+", text.lower())


def ngrams(tokens: Sequence[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _norm_ctx(ctx: str) -> str:
    return " ".join(ctx.lower().split())


def _bytes_check(path: Path, items: list[MCItem]) -> Check:
    data = path.read_bytes()
    lines = data.split(b"\n")
    bad: list[str] = []
    if not data.endswith(b"\n"):
        bad.append("file does not end with a newline")
    if data.startswith(b"\xef\xbb\xbf"):
        bad.append("file starts with a byte-order mark")
    if b"\r" in data:
        bad.append("CR line endings")
    body = lines[:-1] if data.endswith(b"\n") else lines
    if len(body) != len(items):
        bad.append(f"{len(body):,} lines for {len(items):,} items (blank lines?)")
    else:
        for it, raw in zip(items, body):
            if raw.decode("utf-8") != dumps_item(it.raw):
                bad.append(
                    f"line {it.line}: not in canonical form (compact JSON, ', ' and ': ' "
                    "separators, UTF-8 characters unescaped, keys in release order)"
                )
                if len(bad) >= EXAMPLES:
                    break
    return Check(
        "canonical JSONL bytes",
        "one compact object per line, trailing newline" if not bad else f"{len(bad)} problem(s)",
        not bad,
        bad,
    )


def _upstream_checks(items: list[MCItem], upstream: Path) -> list[Check]:
    ups = load_arithmark3(upstream, strict_ids=False)
    up_ctx = {_norm_ctx(u.ctx) for u in ups}
    up_grams: set[tuple[str, ...]] = set()
    for u in ups:
        up_grams |= ngrams(word_tokens(u.ctx))
    same = [it for it in items if _norm_ctx(it.ctx) in up_ctx]
    shared: set[tuple[str, ...]] = set()
    hits: list[str] = []
    for it in items:
        common = ngrams(word_tokens(it.ctx)) & up_grams
        if common:
            shared |= common
            hits.append(f"line {it.line}: shares {' '.join(sorted(common)[0])!r}")
    return [
        Check(
            f"no context shared with upstream ({len(ups):,} items)",
            f"{len(same)} identical contexts",
            not same,
            [f"line {it.line}: {it.ctx[:60]!r}…" for it in same],
        ),
        Check(
            f"no {NGRAM}-word n-gram shared with upstream",
            f"{len(shared)} shared n-grams in {len(hits)} items",
            not shared,
            hits,
        ),
    ]


def file_decoys(items: Sequence[MCItem]) -> str:
    """How the file's decoys were chosen: ``groups`` when its items name a role-balanced group
    (``metadata.group``, written by the role-balanced builder only), else ``legacy``."""
    return "groups" if any("group" in it.metadata for it in items) else "legacy"


def trained_report(path: str | Path, *, decoys: str, seed: int | None = None, step=None) -> dict:
    """The trained check's audit of ``path`` (:mod:`.trained_audit`'s pieces at
    :data:`TRAINED_SIZES`): :data:`TRAINED_ADVERSARIES` trained on fresh builds with ``decoys``,
    scored on a fresh audit build and on the file; the ``legacy`` control (must fail) and the
    label-permuted null (must pass). The plain report of
    :func:`synthprobe.metrics.choices_only.run_audit`, with ``passes`` (:func:`trained_passes`),
    the sizes, decoy mode, seed and seconds. The fresh builds draw the file's own families where a
    families table names them. Raises :class:`.build.BuildError` when a build fails, and
    :class:`InputError` when a family the table names no longer loads."""
    import time

    from synthprobe.benchmarks.deeparithmark import trained_audit as ta
    from synthprobe.metrics.choices_only import Control, run_audit

    start = time.perf_counter()
    seed = ta.RELEASE_SEED if seed is None else seed
    sizes = TRAINED_SIZES
    templates = ta.file_families(path)  # a file of families of its own: fresh builds of those
    file_items, fmt = ta.load_file(path)
    builds = ta.Builds(decoys=decoys, number_format=fmt, step=step, templates=templates)
    parts = ta.split_sizes(sizes["train"])
    train = builds.fresh("train", ta.train_seeds(seed, len(parts)), parts, decoys)
    audit = builds.fresh("audit build", [ta.audit_seed(seed)], [sizes["audit"]], decoys)
    legacy = [
        builds.fresh(f"legacy {part}", [ta.control_seed("legacy", part, seed)], [sizes[f"control_{part}"]], "legacy")
        for part in ("train", "test")
    ]
    controls = [
        Control("legacy", legacy[0], legacy[1], "fail", "the legacy decoy selection"),
        Control("null", None, ta.permuted(audit, seed), "pass", "the audit build, labels drawn at random"),
    ]
    report = run_audit(train, {"audit build": audit, "file": file_items}, TRAINED_ADVERSARIES, controls, step=step)
    families = "release" if templates is None else [t.name for t in templates]
    report.update(sizes=dict(sizes), decoys=decoys, seed=seed, families=families, builds=builds.log)
    report["passes"] = trained_passes(report)
    report["seconds"] = time.perf_counter() - start
    return report


def trained_passes(report: dict) -> bool:
    """The trained check's rule: no adversary significantly above chance on the audit build or
    the file (overall, per depth or per template: the Holm screen; too few items for the
    equivalence test at this budget), the legacy control failing and the null passing (else the
    check has no power, and fails)."""
    leak = any(t["status"] == "fails" for t in report["test_sets"].values())
    return not leak and all(c["as_expected"] for c in report["controls"])


def _accuracies(report: dict, test_set: str) -> str:
    blocks = report["test_sets"][test_set]["adversaries"]
    return " / ".join(f"{100 * blocks[a]['accuracy']:.1f}" for a in blocks) + " %"


#: a control's outcome as the check's words say it
OUTCOME = {"fail": "fails", "pass": "passes"}


def _stratum(row: dict) -> str:
    return {"all": "all items", "group": f"template {row['stratum']}"}.get(
        row["kind"], f"{row['kind']} {row['stratum']}"
    )


def _trained_figure(report: dict) -> str:
    """The check's figure: the best adversary (and how many strata leak), then the controls."""
    sets = report["test_sets"]
    flagged = sum(r["flagged"] for t in sets.values() for r in t["screen"])
    name, adversary, acc = max(
        ((name, a, b["accuracy"]) for name, t in sets.items() for a, b in t["adversaries"].items()),
        key=lambda x: x[2],
    )
    if flagged:
        figure = f"leaks: {adversary} {100 * acc:.1f} % ({name}), {flagged} strata flagged"
    else:
        figure = f"at chance: best {adversary} {100 * acc:.1f} %"
    missed = [c for c in report["controls"] if not c["as_expected"]]
    if missed:
        return figure + "; no power: " + ", ".join(f"{c['name']} {OUTCOME[c['outcome']]}" for c in missed)
    return figure + "; legacy fails, null passes"


def _trained_details(report: dict) -> list[str]:
    """Three lines: the adversaries' accuracies on both test sets, the controls, and the worst
    flagged stratum below the whole set (a depth or a template)."""
    audit = report["test_sets"]["audit build"]
    lines = [
        f"{' / '.join(report['adversaries'])}: audit build ({audit['n']:,} items) "
        f"{_accuracies(report, 'audit build')}, file {_accuracies(report, 'file')}",
        "controls: "
        + "; ".join(
            f"{c['name']} {OUTCOME[c['outcome']]}{'' if c['as_expected'] else ' (it must not)'}"
            f" (best {c['best_adversary']} {100 * c['best_accuracy']:.1f} %)"
            for c in report["controls"]
        ),
    ]
    rows = [(name, r) for name, t in report["test_sets"].items() for r in t["screen"] if r["flagged"]]
    if rows:
        strata = [nr for nr in rows if nr[1]["kind"] != "all"] or rows  # the overall figures are above
        name, r = min(strata, key=lambda nr: (nr[1]["p_holm"], -nr[1]["accuracy"]))
        lines.append(
            f"{len(rows)} strata flagged (Holm, α {report['screen_alpha']}); worst: {name}, {r['adversary']}, "
            f"{_stratum(r)}: {100 * r['accuracy']:.1f} % of {r['n']:,} items"
        )
    return lines


def trained_check(path: Path, items: Sequence[MCItem]) -> tuple[Check, dict | None]:
    """The trained choices-only audit as one selftest check (:func:`trained_report`), and its
    report; a file built from families of its own is audited on fresh builds of those families
    (its families table names them; where a source no longer loads the check is not run, SKIP,
    saying why); a build that fails is a FAIL naming it."""
    from synthprobe.benchmarks.deeparithmark.build import BuildError

    decoys = file_decoys(items)
    try:
        report = trained_report(path, decoys=decoys)
    except BuildError as exc:
        return Check(TRAINED_CHECK, f"a fresh {decoys} build failed", False, [str(exc)]), None
    except InputError as exc:  # the families table names a family source that no longer loads
        return Check(TRAINED_CHECK, "not run: its families cannot be loaded again", None, [str(exc)]), None
    return Check(TRAINED_CHECK, _trained_figure(report), report["passes"], _trained_details(report)), report


#: The checks over the whole file; they need every item well formed.
DATASET_CHECKS = (
    "unique ind, source_id, ctx",
    "composition (template, topic, depth, count)",
    "correct slot balance",
    "answer rank balance",
    "depth tiers",
    "slot × rank × depth grid",
    "prompt length",
    "shortcut audit",
)


def selftest(
    path: str | Path, *, upstream: str | Path | None = None, classifier: bool = True, trained: bool = True
) -> SelftestReport:
    """Run every check on ``path``. Raises :class:`InputError` if the file (or ``upstream``)
    does not load under the ArithMark 3.0 contract. ``trained=False`` leaves out the trained
    choices-only audit (:func:`trained_check`, about 30 s), which the legacy decoys fail.

    The checks, in order: the loader contract and the bytes, the families table a file from
    other families carries, every item rule, then (on a well-formed file) uniqueness,
    composition, balance, the grid, prompt length, the shortcut audit and the trained audit."""
    path = Path(path)
    items = load_arithmark3(path)  # InputError -> exit 2, located
    n = len(items)
    checks = [
        Check(
            "ArithMark 3.0 loader contract",
            f"{n:,} items load, {len({i.category for i in items})} activity labels",
            True,
        ),
        _bytes_check(path, items),
    ]
    templates, table = _table_checks(path)  # InputError -> exit 2, located
    checks += table
    rules, n_schema_bad = _item_rule_checks(items, table_by_name(templates))
    checks += rules
    if n_schema_bad:
        names = [*DATASET_CHECKS, *([TRAINED_CHECK] if trained else [])]
        checks += [Check(name, f"not run: {n_schema_bad} item(s) break the schema", None) for name in names]
        return SelftestReport(path, n, sha256_file(path), checks)
    checks.append(_uniqueness_check(items))
    checks.append(_composition_check(items, templates))
    balance, got_slots, got_ranks = _balance_checks(items, templates)
    checks += balance
    checks.append(_length_check(items, templates))
    shortcut, rows = _shortcut_checks(items, got_slots, got_ranks, classifier=classifier)
    checks += shortcut
    report = None
    if trained:
        check, report = trained_check(path, items)
        checks.append(check)
    if upstream is not None:
        checks += _upstream_checks(items, Path(upstream))
    return SelftestReport(path, n, sha256_file(path), checks, rows, report)


def _table_checks(path: Path) -> tuple[Sequence[Template], list[Check]]:
    """The table the file claims to follow: the release's, or the one a build from other
    families wrote beside it (``plugins.table_path``), which must name this file's SHA-256."""
    found = read_table(path)
    if found is None:
        return TEMPLATES, []
    templates, claimed = found[0], found[1].get("sha256")
    digest = sha256_file(path)
    return templates, [
        Check(
            f"families table {table_path(path).name} describes this file",
            f"{len(templates)} families; sha256 {'matches' if claimed == digest else 'differs'}",
            claimed == digest,
            [] if claimed == digest else [f"the table was written for sha256 {claimed}, the file has {digest}"],
        )
    ]


def _item_rule_checks(items: Sequence[MCItem], rows_by_name: Mapping[str, Template]) -> tuple[list[Check], int]:
    """One check per item rule (:data:`ITEM_RULES`), with every fault located by line; and how
    many items break the schema (then the other rules count only the well-formed ones)."""
    faults: dict[str, list[str]] = defaultdict(list)
    bad_items: dict[str, set[int]] = defaultdict(set)
    schema_ok: list[MCItem] = []
    for idx, it in enumerate(items):
        found_faults = item_faults(it.raw, idx, rows_by_name)
        for rule, msg in found_faults:
            faults[rule].append(f"line {it.line}: {msg}")
            bad_items[rule].add(idx)
        if not any(rule == "schema" for rule, _ in found_faults):
            schema_ok.append(it)
    n_schema_bad = len(bad_items["schema"])
    checks = []
    for rule, title in ITEM_RULES.items():
        checked = f" (of {len(schema_ok):,} well-formed)" if rule != "schema" and n_schema_bad else ""
        k = len(bad_items[rule])
        if rule == "clock":
            n_clock = sum(value_kind(i.metadata["answer"]) == "clock" for i in schema_ok)
            figure = f"{k} of {n_clock:,} clock items break it{checked}"
        else:
            figure = f"{k} of {len(items):,} items break it{checked}"
        checks.append(Check(title, figure, k == 0, faults[rule]))
    return checks, n_schema_bad


def _uniqueness_check(items: Sequence[MCItem]) -> Check:
    ids = Counter(it.id for it in items)
    sids = Counter(it.raw["source_id"] for it in items)
    ctxs = Counter(_norm_ctx(it.ctx) for it in items)
    dups = (
        [f"ind {k!r} × {v}" for k, v in ids.items() if v > 1]
        + [f"source_id {k!r} × {v}" for k, v in sids.items() if v > 1]
        + [f"context {k[:50]!r}… × {v}" for k, v in ctxs.items() if v > 1]
    )
    figure = f"{len(ids):,} / {len(sids):,} / {len(ctxs):,} distinct of {len(items):,}"
    return Check("unique ind, source_id, ctx", figure, not dups, dups)


def _composition_check(items: Sequence[MCItem], templates: Sequence[Template]) -> Check:
    """Items per template as the table scales them to the file's size, and the topics."""
    n = len(items)
    expect = composition(n, templates)
    got = Counter(it.metadata["template"] for it in items)
    topics = {it.metadata["topic"] for it in items}
    diffs = [
        f"{t.name}: {got.get(t.name, 0)} items, expected {expect[t.name]}"
        for t in templates
        if got.get(t.name, 0) != expect[t.name]
    ]
    exp_topics = {t.topic for t in templates if expect[t.name]}
    if topics != exp_topics:
        diffs.append(f"topics {sorted(topics)}, expected {sorted(exp_topics)}")
    n_templates = sum(1 for c in got.values() if c)
    verdict = (
        "matches the table" + (f" scaled to {n:,}" if n != 1000 else "") if not diffs else f"{len(diffs)} differences"
    )
    return Check(
        "composition (template, topic, depth, count)",
        f"{n_templates} templates, {len(topics)} topics; {verdict}",
        not diffs,
        diffs,
    )


def _balance_checks(items: Sequence[MCItem], templates: Sequence[Template]) -> tuple[list[Check], list[int], list[int]]:
    """Slot, rank and depth counts against the balance plan, and the slot × rank × depth grid;
    also the slot and rank counts (the shortcut audit's fixed strategies must equal them)."""
    n = len(items)
    plan = balance_plan(n, templates)
    slots = Counter(it.label for it in items)
    ranks = Counter(it.metadata["answer_rank"] for it in items)
    depths = Counter(it.metadata["depth"] for it in items)
    got_slots = [slots[s] for s in range(N_OPTIONS)]
    got_ranks = [ranks[r] for r in range(N_OPTIONS)]
    per_depth = depth_counts(n, templates)
    tiers = sorted(set(per_depth) | set(depths))
    got_depths = [depths[d] for d in tiers]
    exp_depths = [per_depth.get(d, 0) for d in tiers]
    checks = [
        Check("correct slot balance", f"{_slash(got_slots)} (expected {_slash(plan.slots)})", got_slots == plan.slots),
        Check("answer rank balance", f"{_slash(got_ranks)} (expected {_slash(plan.ranks)})", got_ranks == plan.ranks),
        Check("depth tiers", f"{_slash(got_depths)} (expected {_slash(exp_depths)})", got_depths == exp_depths),
        _grid_check(items, tiers, per_depth),
    ]
    return checks, got_slots, got_ranks


def _grid_check(items: Sequence[MCItem], tiers: Sequence[int], per_depth: Mapping[int, int]) -> Check:
    """Every slot × rank × depth cell holds its depth's share, give or take one item."""
    grid = Counter((it.label, it.metadata["answer_rank"], it.metadata["depth"]) for it in items)
    cells = []
    off = []
    for d in tiers:
        lo = per_depth.get(d, 0) // (N_OPTIONS * N_OPTIONS)
        for s in range(N_OPTIONS):
            for r in range(N_OPTIONS):
                c = grid[s, r, d]
                cells.append(c)
                if not lo <= c <= lo + 1:
                    off.append(f"slot {s} × rank {r} × depth {d}: {c} items, expected {lo}–{lo + 1}")
    return Check("slot × rank × depth grid", f"{len(cells)} cells hold {min(cells)}–{max(cells)} items", not off, off)


def _length_check(items: Sequence[MCItem], templates: Sequence[Template]) -> Check:
    """At most :data:`MAX_CTX_WORDS` words a prompt; the release's mean within the card's range."""
    words = [ctx_words(it.ctx, number_format_of(it.metadata)) for it in items]
    mean_w, max_w = fmean(words), max(words)
    if templates is TEMPLATES:  # the card's mean is a claim about the release's stories
        lo_w, hi_w = MEAN_WORDS_RANGE
        return Check(
            "prompt length",
            f"mean {mean_w:.1f} words ({lo_w:g}–{hi_w:g}), max {max_w} (≤ {MAX_CTX_WORDS})",
            lo_w <= mean_w <= hi_w and max_w <= MAX_CTX_WORDS,
        )
    return Check("prompt length", f"mean {mean_w:.1f} words, max {max_w} (≤ {MAX_CTX_WORDS})", max_w <= MAX_CTX_WORDS)


def _shortcut_checks(
    items: Sequence[MCItem], got_slots: Sequence[int], got_ranks: Sequence[int], *, classifier: bool
) -> tuple[list[Check], list]:
    """The fixed strategies and the char-3-gram classifier within chance's tolerance; the slot
    and rank strategies must score exactly the balance counts."""
    a_items = [audit_item(it.endings, it.label, it.metadata) for it in items]
    rows = audit(a_items, classifier=classifier)
    tol = tolerance(len(items))
    checks = [Check(f"shortcut: {r.name}", f"{r.percent:.2f} % (25 ± {tol:.1f})", r.within(tol)) for r in rows]
    by_name = {r.name: r.correct for r in rows}
    mismatch = [
        f"fixed slot {s}: {by_name[f'fixed slot {s}']} correct, {got_slots[s]} items in slot {s}"
        for s in range(N_OPTIONS)
        if by_name[f"fixed slot {s}"] != got_slots[s]
    ]
    if by_name["pick largest value"] != got_ranks[-1]:
        mismatch.append(f"pick largest: {by_name['pick largest value']}, rank {N_OPTIONS - 1}: {got_ranks[-1]}")
    if by_name["pick smallest value"] != got_ranks[0]:
        mismatch.append(f"pick smallest: {by_name['pick smallest value']}, rank 0: {got_ranks[0]}")
    checks.append(
        Check(
            "shortcut: slot and rank strategies = balance counts",
            "exact" if not mismatch else f"{len(mismatch)} differ",
            not mismatch,
            mismatch,
        )
    )
    if classifier and CLASSIFIER not in by_name:
        checks.append(Check(f"shortcut: {CLASSIFIER}", "not applicable below 10 items", None))
    return checks, rows
