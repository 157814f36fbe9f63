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
slot × rank × depth grid; prompt-length mean; the shortcut audit (:mod:`.audit`); and,
with an upstream ArithMark 3.0 file, no shared context and no shared eight-word n-gram.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
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
    balance_plan,
    composition,
    depth_counts,
)
from synthprobe.benchmarks.deeparithmark.plugins import by_name as table_by_name
from synthprobe.benchmarks.deeparithmark.plugins import read_table, table_path
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.read import sha256_file
from synthprobe.items import MCItem

#: Mean prompt length the release promises, in words (the card: 29.2).
MEAN_WORDS_RANGE = (27.0, 32.0)

#: n-gram length of the upstream overlap check.
NGRAM = 8

#: Located examples shown per failing check.
EXAMPLES = 3


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


def selftest(path: str | Path, *, upstream: str | Path | None = None, classifier: bool = True) -> SelftestReport:
    """Run every check on ``path``. Raises :class:`InputError` if the file (or ``upstream``)
    does not load under the ArithMark 3.0 contract."""
    path = Path(path)
    items = load_arithmark3(path)  # InputError -> exit 2, located
    n = len(items)
    checks: list[Check] = [
        Check(
            "ArithMark 3.0 loader contract",
            f"{n:,} items load, {len({i.category for i in items})} activity labels",
            True,
        )
    ]
    checks.append(_bytes_check(path, items))
    # the table the file claims to follow: the release's, or the one a build from other
    # families wrote beside it (plugins.table_path)
    found = read_table(path)  # InputError -> exit 2, located
    templates = TEMPLATES if found is None else found[0]
    rows_by_name = table_by_name(templates)
    if found is not None:
        digest = sha256_file(path)
        claimed = found[1].get("sha256")
        checks.append(
            Check(
                f"families table {table_path(path).name} describes this file",
                f"{len(templates)} families; sha256 {'matches' if claimed == digest else 'differs'}",
                claimed == digest,
                [] if claimed == digest else [f"the table was written for sha256 {claimed}, the file has {digest}"],
            )
        )

    # -- per-item rules --------------------------------------------------------------
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
    for rule, title in ITEM_RULES.items():
        if rule != "schema" and n_schema_bad:
            checked = f" (of {len(schema_ok):,} well-formed)"
        else:
            checked = ""
        k = len(bad_items[rule])
        if rule == "clock":
            n_clock = sum(value_kind(i.metadata["answer"]) == "clock" for i in schema_ok)
            figure = f"{k} of {n_clock:,} clock items break it{checked}"
        else:
            figure = f"{k} of {n:,} items break it{checked}"
        checks.append(Check(title, figure, k == 0, faults[rule]))

    # -- dataset-level checks need well-formed items -----------------------------------
    dataset_names = [
        "unique ind, source_id, ctx",
        "composition (template, topic, depth, count)",
        "correct slot balance",
        "answer rank balance",
        "depth tiers",
        "slot × rank × depth grid",
        "prompt length",
        "shortcut audit",
    ]
    if n_schema_bad:
        checks += [Check(name, f"not run: {n_schema_bad} item(s) break the schema", None) for name in dataset_names]
        return SelftestReport(path, n, sha256_file(path), checks)

    md = [it.metadata for it in items]
    ids = Counter(it.id for it in items)
    sids = Counter(it.raw["source_id"] for it in items)
    ctxs = Counter(_norm_ctx(it.ctx) for it in items)
    dups = (
        [f"ind {k!r} × {v}" for k, v in ids.items() if v > 1]
        + [f"source_id {k!r} × {v}" for k, v in sids.items() if v > 1]
        + [f"context {k[:50]!r}… × {v}" for k, v in ctxs.items() if v > 1]
    )
    checks.append(
        Check(
            "unique ind, source_id, ctx",
            f"{len(ids):,} / {len(sids):,} / {len(ctxs):,} distinct of {n:,}",
            not dups,
            dups,
        )
    )

    # composition
    expect = composition(n, templates)
    got = Counter(m["template"] for m in md)
    topics = {m["topic"] for m in md}
    diffs = [
        f"{t.name}: {got.get(t.name, 0)} items, expected {expect[t.name]}"
        for t in templates
        if got.get(t.name, 0) != expect[t.name]
    ]
    n_templates = sum(1 for c in got.values() if c)
    exp_topics = {t.topic for t in templates if expect[t.name]}
    if topics != exp_topics:
        diffs.append(f"topics {sorted(topics)}, expected {sorted(exp_topics)}")
    checks.append(
        Check(
            "composition (template, topic, depth, count)",
            f"{n_templates} templates, {len(topics)} topics; "
            + (
                "matches the table" + (f" scaled to {n:,}" if n != 1000 else "")
                if not diffs
                else f"{len(diffs)} differences"
            ),
            not diffs,
            diffs,
        )
    )

    # balance
    plan = balance_plan(n, templates)
    slots = Counter(it.label for it in items)
    ranks = Counter(m["answer_rank"] for m in md)
    depths = Counter(m["depth"] for m in md)
    got_slots = [slots[s] for s in range(N_OPTIONS)]
    got_ranks = [ranks[r] for r in range(N_OPTIONS)]
    per_depth = depth_counts(n, templates)
    tiers = sorted(set(per_depth) | set(depths))
    got_depths = [depths[d] for d in tiers]
    exp_depths = [per_depth.get(d, 0) for d in tiers]
    checks.append(
        Check("correct slot balance", f"{_slash(got_slots)} (expected {_slash(plan.slots)})", got_slots == plan.slots)
    )
    checks.append(
        Check("answer rank balance", f"{_slash(got_ranks)} (expected {_slash(plan.ranks)})", got_ranks == plan.ranks)
    )
    checks.append(
        Check("depth tiers", f"{_slash(got_depths)} (expected {_slash(exp_depths)})", got_depths == exp_depths)
    )
    grid = Counter((it.label, m["answer_rank"], m["depth"]) for it, m in zip(items, md))
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
    checks.append(
        Check("slot × rank × depth grid", f"{len(cells)} cells hold {min(cells)}–{max(cells)} items", not off, off)
    )

    # prompt length
    words = [ctx_words(it.ctx, number_format_of(m)) for it, m in zip(items, md)]
    mean_w, max_w = fmean(words), max(words)
    if templates is TEMPLATES:  # the card's mean is a claim about the release's stories
        lo_w, hi_w = MEAN_WORDS_RANGE
        checks.append(
            Check(
                "prompt length",
                f"mean {mean_w:.1f} words ({lo_w:g}–{hi_w:g}), max {max_w} (≤ {MAX_CTX_WORDS})",
                lo_w <= mean_w <= hi_w and max_w <= MAX_CTX_WORDS,
            )
        )
    else:
        checks.append(
            Check("prompt length", f"mean {mean_w:.1f} words, max {max_w} (≤ {MAX_CTX_WORDS})", max_w <= MAX_CTX_WORDS)
        )

    # shortcut audit
    a_items = [audit_item(it.endings, it.label, m) for it, m in zip(items, md)]
    rows = audit(a_items, classifier=classifier)
    tol = tolerance(n)
    for r in rows:
        checks.append(Check(f"shortcut: {r.name}", f"{r.percent:.2f} % (25 ± {tol:.1f})", r.within(tol)))
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

    if upstream is not None:
        checks += _upstream_checks(items, Path(upstream))
    return SelftestReport(path, n, sha256_file(path), checks, rows)
