"""Export a release as a Hugging Face Hub dataset folder.

``synthprobe export hf --out DIR`` writes::

    DIR/README.md                               dataset card: YAML header + figures from the data
    DIR/data/test-00000-of-00001.parquet        the rows, typed (what ``load_dataset`` reads)
    DIR/data/<release name>.jsonl               the release, byte for byte (same SHA-256)
    DIR/data/<release name>.jsonl.families.json the families table, for a file built from other
                                                families (``build deeparithmark --family``)

``datasets.load_dataset(DIR, split="test")`` then yields exactly the release rows, nested
``metadata`` included. The Arrow schema is inferred field by field from the rows; a field
whose values cannot round-trip exactly (an int in one row and a float in another, a key
missing from some rows) is an :class:`InputError` naming the line and field. After building
the table the export reads it back and compares it with the release, row for row.

Every figure in the card — composition, balance counts, shortcut audit, prompt lengths,
SHA-256 — is computed from the file at export time.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from synthprobe.benchmarks.deeparithmark.export.release import DEFAULT_RELEASE, Release, load_release
from synthprobe.errors import InputError
from synthprobe.io.write import check_out_dir, check_output_dir, write_tree
from synthprobe.report.format import fmt_pct

PARQUET_NAME = "data/test-00000-of-00001.parquet"
PRETTY_NAME = "Deep Arithmark-1"


# ---------------------------------------------------------------------------------------
# Arrow schema inference and the exact round trip
# ---------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    return type(value).__name__


class _Conflict(Exception):
    def __init__(self, field: str, line: int, message: str):
        self.field, self.line, self.message = field, line, message


def _infer(values: Iterable[tuple[int, Any]], field: str) -> pa.DataType:
    """One Arrow type for (line, value) pairs; raises _Conflict where none is exact."""
    values = list(values)
    kinds: dict[str, int] = {}
    for line, v in values:
        kinds.setdefault(_kind(v), line)
    if "null" in kinds:
        raise _Conflict(field, kinds["null"], "null values do not round-trip; expected a value in every row")
    if len(kinds) > 1:
        (k1, l1), (k2, l2) = sorted(kinds.items(), key=lambda kv: kv[1])[:2]
        raise _Conflict(field, l2, f"is {k2} here but {k1} on line {l1}; expected one type in every row")
    if not kinds:
        raise _Conflict(field, 0, "has no values to infer a type from")
    kind = next(iter(kinds))
    if kind in ("bool", "int", "float", "str"):
        return {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}[kind]
    if kind == "list":
        inner = [(line, x) for line, v in values for x in v]
        if not inner:
            raise _Conflict(field, values[0][0], "is an empty list in every row; cannot infer its type")
        return pa.list_(_infer(inner, f"{field}[]"))
    if kind == "dict":
        keys: list[str] = []
        for _, v in values:
            for k in v:
                if k not in keys:
                    keys.append(k)
        fields = []
        for k in keys:
            missing = next((line for line, v in values if k not in v), None)
            if missing is not None:
                raise _Conflict(
                    f"{field}.{k}" if field else k,
                    missing,
                    "missing here but present in other rows; expected the same keys in every row",
                )
            fields.append(pa.field(k, _infer(((line, v[k]) for line, v in values), f"{field}.{k}" if field else k)))
        return pa.struct(fields)
    raise _Conflict(field, kinds[kind], f"has unsupported type {kind}")


def arrow_table(release: Release) -> pa.Table:
    """The release as an Arrow table with an exact, inferred schema."""
    pairs = [(item.line, item.raw) for item in release.items]
    try:
        struct = _infer(pairs, "")
    except _Conflict as c:
        raise InputError(c.message, path=release.path, line=c.line or None, field=c.field) from None
    schema = pa.schema(list(struct))
    return pa.Table.from_pylist(release.rows, schema=schema)


def _same(a: Any, b: Any) -> bool:
    """Equality that also insists on the same JSON types (1 is not 1.0, True is not 1)."""
    if _kind(a) != _kind(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def parquet_bytes(release: Release) -> bytes:
    """Parquet bytes of the release, verified to read back as exactly the release rows.

    Arrow's thread pools are kept out of it (an in-memory Arrow buffer instead of a Python file
    object, the read-back on the calling thread) and every Arrow object is released before
    returning: worker threads still alive when the interpreter exits are what made
    ``export hf`` abort now and then with "terminate called without an active exception".
    """
    table = arrow_table(release)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", use_dictionary=True, write_statistics=True)
    del table
    buffer = sink.getvalue()
    data = buffer.to_pybytes()
    back = pq.ParquetFile(pa.BufferReader(buffer)).read(use_threads=False)
    rows = back.to_pylist()
    del back, buffer, sink
    release_arrow()
    for item, row in zip(release.items, rows):
        if not _same(item.raw, row):
            raise InputError("does not survive the Parquet round trip unchanged", path=release.path, line=item.line)
    return data


def release_arrow() -> None:
    """Free what Arrow still holds (unreferenced tables and buffers, cached memory) now, while
    the interpreter is whole, rather than in its teardown."""
    import gc

    gc.collect()
    pool = pa.default_memory_pool()
    release_unused = getattr(pool, "release_unused", None)
    if release_unused is not None:
        release_unused()


# ---------------------------------------------------------------------------------------
# Figures for the card, all computed from the release
# ---------------------------------------------------------------------------------------


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` bucket for ``n`` rows."""
    bounds = [
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
        (100_000_000, "10M<n<100M"),
        (1_000_000_000, "100M<n<1B"),
    ]
    for bound, name in bounds:
        if n < bound:
            return name
    return "n>1T" if n > 10**12 else "1B<n<10B"


def _words(text: str) -> int:
    return len(text.split())


def card_figures(release: Release) -> dict[str, Any]:
    """Every number the card states, in one dictionary (also handy for tests)."""
    items = release.items
    n = len(items)
    n_choices = sorted({len(it.endings) for it in items})
    depth = Counter(it.metadata["depth"] for it in items)
    templates: dict[str, dict[str, Any]] = {}
    for it in items:
        md = it.metadata
        t = templates.setdefault(md["template"], {"depth": md["depth"], "topic": md["topic"], "n": 0})
        t["n"] += 1
    slot = Counter(it.label for it in items)
    rank = Counter(it.metadata["answer_rank"] for it in items)
    grid = Counter((it.label, it.metadata["answer_rank"], it.metadata["depth"]) for it in items)
    words = [_words(it.ctx) for it in items]
    topics = sorted({it.metadata["topic"] for it in items})
    k = n_choices[0] if len(n_choices) == 1 else None
    chance = 1 / k if k else None
    ci95 = 1.96 * math.sqrt(chance * (1 - chance) / n) if chance else None
    cells = [grid.get((s, r, d), 0) for s in range(k or 0) for r in range(k or 0) for d in depth]
    return {
        "n": n,
        "choices": n_choices,
        "chance": chance,
        "ci95_at_chance": ci95,
        "depth": dict(sorted(depth.items())),
        "templates": templates,
        "topics": topics,
        "slot": [slot.get(i, 0) for i in range(k or max(slot) + 1)],
        "rank": [rank.get(i, 0) for i in range(k or max(rank) + 1)],
        "grid_min": min(cells) if cells else None,
        "grid_max": max(cells) if cells else None,
        "words_mean": sum(words) / n,
        "words_min": min(words),
        "words_max": max(words),
        "sha256": release.sha256,
        "bytes": len(release.data),
    }


@dataclass(frozen=True)
class SelftestFigures:
    """The release's own selftest on the file: every check, and the shortcut audit rows."""

    checks: list[tuple[str, str, str]]  # (check, figure, PASS/FAIL/SKIP)
    audit: list[tuple[str, float]]  # (strategy, accuracy in [0, 1])

    @property
    def ok(self) -> bool:
        return not any(status == "FAIL" for _, _, status in self.checks)


def run_selftest(release: Release) -> SelftestFigures:
    """Run :func:`synthprobe.benchmarks.deeparithmark.selftest.selftest` (audit included) on the file."""
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

    report = selftest(release.path)
    return SelftestFigures(
        checks=[(c.name, c.figure, c.status) for c in report.checks],
        audit=[(r.name, r.correct / r.n) for r in report.audit_rows],
    )


# ---------------------------------------------------------------------------------------
# The card
# ---------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[Any]], align: str | None = None) -> list[str]:
    align = align or "l" * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _pretty(value: Any, indent: int = 0, width: int = 96) -> str:
    """JSON with objects one key per line and short lists kept on one line."""
    pad = " " * indent
    if isinstance(value, dict):
        inner = [
            f"{pad}  {json.dumps(k, ensure_ascii=False)}: {_pretty(v, indent + 2, width)}" for k, v in value.items()
        ]
        return "{\n" + ",\n".join(inner) + f"\n{pad}}}"
    flat = json.dumps(value, ensure_ascii=False)
    if isinstance(value, list) and len(flat) + indent > width:
        inner = [f"{pad}  {_pretty(v, indent + 2, width)}" for v in value]
        return "[\n" + ",\n".join(inner) + f"\n{pad}]"
    return flat


def yaml_header(fig: dict[str, Any]) -> str:
    header = {
        "pretty_name": PRETTY_NAME,
        "license": "apache-2.0",
        "language": ["en"],
        "task_categories": ["multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "size_categories": [size_category(fig["n"])],
        "annotations_creators": ["machine-generated"],
        "language_creators": ["machine-generated"],
        "multilinguality": ["monolingual"],
        "source_datasets": ["original"],
        "tags": ["arithmetic", "math-word-problems", "multi-step-reasoning", "synthetic", "benchmark", "arithmark"],
        "configs": [{"config_name": "default", "data_files": [{"split": "test", "path": PARQUET_NAME}]}],
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=10_000) + "---\n"


def render_card(release: Release, *, repo_id: str | None = None, selftest: SelftestFigures | None = None) -> str:
    """The dataset card (README.md) of ``release``: front matter, what it is and how to load it,
    its figures, the audit and selftest (when ``selftest`` is given), one item, fields, limits,
    licence and files."""
    fig = card_figures(release)
    lines = _card_intro(release, fig, repo_id or "path/to/this/folder")
    lines += _card_figures(fig)
    if selftest is not None:
        lines += _card_checks(fig, selftest)
    lines += _card_reference(release, fig)
    return "\n".join(lines)


def _card_intro(release: Release, fig: dict[str, Any], load_id: str) -> list[str]:
    """The front matter, the first paragraph, the unofficial notice and the quick start."""
    k = len(fig["slot"])
    lines: list[str] = [yaml_header(fig).rstrip("\n"), "", f"# {PRETTY_NAME}", ""]
    lines += [
        f"{fig['n']:,} arithmetic word problems that need "
        f"{min(fig['depth'])}–{max(fig['depth'])} dependent operations, in the ArithMark 3.0 "
        f"task format: finish the sentence by picking one of {k} continuations "
        f"(chance {fmt_pct(fig['chance'], 2, ' %') if fig['chance'] else 'n/a'}). "
        "Every wrong option is the exact value of a named, plausible mistake, so a magnitude "
        "guess does not help.",
        "",
        "> **Unofficial.** Deep Arithmark is an independent companion tier to ArithMark 3.0. "
        "It is not affiliated with, endorsed by, or published by AxiomicLabs, the authors of "
        "ArithMark 3.0, and it is not an official ArithMark release. It follows their task "
        "contract and credits them; if you use this dataset, cite ArithMark 3.0 as well.",
        "",
        "## Quick start",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{load_id}", split="test")',
        "item = ds[0]",
        '# score the continuations item["endings"] of item["ctx"] by length-normalised',
        '# log-likelihood, take the argmax, compare with int(item["label"])',
        "```",
        "",
        f"The JSONL file `data/{release.name}` is the release byte for byte; ArithMark 3.0's "
        "own scorer reads it unchanged.",
        "",
        "## At a glance",
        "",
    ]
    return lines


def _card_figures(fig: dict[str, Any]) -> list[str]:
    """At a glance, composition by depth and template, and the balance of slot and rank."""
    k = len(fig["slot"])
    lines: list[str] = []
    glance = [
        ["Examples", f"{fig['n']:,}"],
        ["Choices per example", ", ".join(map(str, fig["choices"]))],
        ["Chance", fmt_pct(fig["chance"], 2, " %") if fig["chance"] else "varies"],
        ["Depth tiers", ", ".join(f"{d} ({c:,})" for d, c in fig["depth"].items())],
        ["Templates / topic labels", f"{len(fig['templates'])} / {len(fig['topics'])}"],
        ["Prompt length (words)", f"mean {fig['words_mean']:.1f}, min {fig['words_min']}, max {fig['words_max']}"],
        ["Split", "test only (an evaluation set; there is no train split)"],
        ["Language, source", "English, synthetic (deterministic seed)"],
        ["SHA-256 of the JSONL", f"`{fig['sha256']}`"],
    ]
    lines += _table(["", ""], glance) + [""]

    lines += ["## Composition", "", "By depth (number of dependent operations):", ""]
    lines += _table(["Depth", "Examples"], [[d, c] for d, c in fig["depth"].items()], "rr") + [""]
    lines += ["By template:", ""]
    trows = [
        [f"`{name}`", t["topic"], t["depth"], t["n"]]
        for name, t in sorted(fig["templates"].items(), key=lambda kv: (kv[1]["depth"], kv[0]))
    ]
    lines += _table(["Template", "Topic", "Depth", "Examples"], trows, "llrr") + [""]

    lines += ["## Balance", ""]
    lines += [
        f"- Correct slot (0–{k - 1}): {' / '.join(str(c) for c in fig['slot'])}",
        f"- Answer's numeric rank among the options (smallest → largest): {' / '.join(str(c) for c in fig['rank'])}",
        f"- Slot × rank × depth grid: {fig['grid_min']}–{fig['grid_max']} items per cell",
        "",
    ]

    return lines


def _card_checks(fig: dict[str, Any], selftest: SelftestFigures) -> list[str]:
    """The shortcut audit's table and the selftest's checks (a failing one marked FAIL)."""
    lines: list[str] = []
    lines += [
        "## Shortcut audit",
        "",
        "Strategies that skip the arithmetic, scored on this file "
        f"(chance {fmt_pct(fig['chance'], 2, ' %') if fig['chance'] else 'n/a'}; "
        "`python deeparithmark.py audit` reproduces the table):",
        "",
    ]
    lines += _table(["Strategy", "Score"], [[s, fmt_pct(v, 2, " %")] for s, v in selftest.audit], "lr") + [""]
    passed = sum(status == "PASS" for _, _, status in selftest.checks)
    lines += [
        "## Self-test",
        "",
        f"`python deeparithmark.py selftest` re-checks every claim on this card against the "
        f"file: {passed} of {len(selftest.checks)} checks pass"
        + ("." if selftest.ok else "; **the failing checks are marked FAIL below**."),
        "",
    ]
    lines += _table(
        ["Check", "Figure", "Result"],
        [
            [c, f.replace("|", "\\|"), st]
            for c, f, st in selftest.checks
            if not c.startswith("shortcut: ") or st != "PASS"
        ],
        "lll",
    )
    lines += ["", "Passing shortcut checks are the rows of the audit table above.", ""]

    return lines


def _card_reference(release: Release, fig: dict[str, Any]) -> list[str]:
    """One item, the fields, the limitations, the licence and the files."""
    lines: list[str] = []
    example = _pretty(release.rows[0])
    lines += ["## One item", "", "```json", example, "```", ""]

    lines += [
        "## Fields",
        "",
        *_table(
            ["Field", "Meaning"],
            [
                ["`ind`", "item index"],
                ["`activity_label`", "`deeparithmark::<release>::<topic>::depth<N>::<difficulty>`"],
                ["`ctx`", "the unfinished sentence"],
                ["`endings`", "the continuations, each with its leading space"],
                ["`label`", "index of the correct ending, as a string (ArithMark 3.0 contract)"],
                ["`source_id`", "stable item id"],
                ["`split`, `split_type`", "`test`, `synthetic`"],
                ["`metadata.answer`, `.unit`", "the correct value as rendered, and its unit"],
                ["`metadata.topic`, `.template`, `.depth`", "topic label, family name, number of operations"],
                ["`metadata.option_values`", "numeric value of each ending"],
                ["`metadata.option_sources`", "`correct` or the name of the mistake that produces the ending"],
                ["`metadata.answer_rank`", "rank of the answer among the option values (0 = smallest)"],
                ["`metadata.solution_steps`", "one line per operation; their count equals the depth"],
            ],
        ),
        "",
        "## Limitations",
        "",
    ]
    if fig["ci95_at_chance"]:
        lines.append(
            f"- {fig['n']:,} items give roughly ±{100 * fig['ci95_at_chance']:.1f} points "
            "(95 % CI) at chance; smaller differences are noise."
        )
    lines += [
        "- Hard accuracy gives no partial credit; the mean probability of the correct option "
        "after a softmax over the scores gives a gradient.",
        "- Single test split; the template shapes are few, so fine-tuning on them would overfit. "
        "Do not train on this file.",
        "- Rank balance is global, not per template: read per-template rows as preference, not partial skill.",
        "",
        "## Licence and attribution",
        "",
        "Released under the Apache License 2.0. Deep Arithmark follows ArithMark 3.0 by "
        "AxiomicLabs (also Apache-2.0): it reuses their task contract — one unfinished "
        "sentence, continuations with a leading space, a single correct index, scoring by "
        "length-normalised continuation log-likelihood — and their JSONL schema. No ArithMark "
        "3.0 item appears here; every prompt comes from parameterised generators.",
        "",
        '"ArithMark" and "AxiomicLabs" remain the property of their owner; their use here is '
        "descriptive and implies no affiliation or endorsement.",
        "",
        "## Files",
        "",
        *_table(
            ["File", "What it is"],
            [
                [f"`{PARQUET_NAME}`", "the rows as Parquet (what `load_dataset` reads)"],
                [
                    f"`data/{release.name}`",
                    f"the release as JSONL, {fig['bytes']:,} bytes, SHA-256 `{fig['sha256'][:16]}…`",
                ],
            ],
        ),
        "",
    ]
    return lines


@dataclass(frozen=True)
class HfExport:
    paths: list[Path]
    selftest: SelftestFigures


def export_hf(
    out: str | Path, *, data: str | Path = DEFAULT_RELEASE, repo_id: str | None = None, overwrite: bool = False
) -> HfExport:
    """Write the dataset folder. Raises InputError before writing anything, also when the
    folder already holds one of the files (unless ``overwrite``) or one of them is ``data``.

    A file that fails its selftest is still exported (variants may be small); the card
    shows the failing checks and :attr:`HfExport.selftest` tells the caller.
    """
    from synthprobe.benchmarks.deeparithmark.plugins import table_path

    out = check_out_dir(out)
    inputs = [(data, "--data")]
    # a file built from other families carries its families table beside it: it travels along,
    # so the selftest of the exported copy reads the same composition
    table = table_path(data)
    names = ["README.md", PARQUET_NAME, f"data/{Path(data).name}"]
    if table.is_file():
        names.append(f"data/{table.name}")
    check_output_dir(out, names, inputs, overwrite=overwrite)
    if repo_id is not None and (repo_id.count("/") != 1 or not all(repo_id.split("/"))):
        raise InputError(f"expected OWNER/NAME, got {repo_id!r}", field="--repo-id")
    release = load_release(data)
    checked = run_selftest(release)
    files = {
        PARQUET_NAME: parquet_bytes(release),
        f"data/{release.name}": release.data,
        "README.md": render_card(release, repo_id=repo_id, selftest=checked).encode("utf-8"),
    }
    if table.is_file():
        files[f"data/{table.name}"] = table.read_bytes()
    paths = write_tree(out, files, inputs=inputs, overwrite=overwrite)
    del files, release
    release_arrow()
    return HfExport(paths=paths, selftest=checked)
