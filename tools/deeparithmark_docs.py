"""Keep the generated parts of DEEPARITHMARK_DESIGN.md and data/README.md true to the code and data.

Each generated block sits between ``<!-- BEGIN GENERATED: name -->`` and
``<!-- END GENERATED: name -->``; everything outside the markers is prose. Regenerate with::

    python tools/deeparithmark_docs.py            # rewrite the blocks
    python tools/deeparithmark_docs.py --check    # exit 1 if a block is stale

Blocks: ``families`` (each family, its story and the named mistakes the release actually
uses as decoys, from the code and the data), ``composition``, ``balance``, ``audit`` (the
selftest and audit figures on the release file), ``audit-line`` (the same in one paragraph, for
docs/guide.md), ``scores`` (the card's columns for every committed results file), ``gpt3-scores``
(the committed GPT-3 synthetic-task results beside GPT-3 125M and 175B), and ``worked-example`` (the embedded model's
per-template and mistake-profile figures, from its committed results JSON). The same run redraws
``benchmarks/depth_curve.png`` (the guide's plot) from that JSON.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from statistics import fmean

from synthprobe.benchmarks.deeparithmark.base import DIFFICULTY, FAMILIES, ROUNDNESS_NAMES
from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE, TEMPLATES
from synthprobe.errors import EXIT_FAILED
from synthprobe.formats.arithmark3 import load_arithmark3
from synthprobe.io.write import atomic_write_bytes, atomic_write_text
from synthprobe.items import MCItem
from synthprobe.results import Block, Entry, Results, read_results

#: the repository root, found from this script's own place (tools/ sits at the top)
ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / RELEASE_FILE
DOCS = (ROOT / "DEEPARITHMARK_DESIGN.md", ROOT / "data" / "README.md", ROOT / "docs" / "guide.md")
EMBEDDED_RESULTS = ROOT / "benchmarks" / "deeparithmark_smollm2-135m-instruct.json"
#: the guide (docs/guide.md) embeds this plot; it is drawn from EMBEDDED_RESULTS by the report's own plotting code.
DEPTH_PNG = ROOT / "benchmarks" / "depth_curve.png"

_BLOCK = re.compile(
    r"(<!-- BEGIN GENERATED: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- END GENERATED: (?P=name) -->)", re.S
)


def _md_table(head: list[str], rows: list[list[object]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _mistake_pool(family, draws: int = 400) -> set[str]:
    """Every mistake name a family's code produces, found by running it on fixed seeds."""
    from synthprobe.benchmarks.deeparithmark.base import GenerationError
    from synthprobe.seeding import item_rng

    names: set[str] = set()
    for i in range(draws):
        try:
            names.update(family.generate(item_rng("deeparithmark-docs-pool", 0, i)).mistakes)
        except GenerationError:
            continue
    return names


def families_block(items: list[MCItem]) -> str:
    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers them)

    used: dict[str, Counter] = defaultdict(Counter)
    for it in items:
        md = it.metadata
        for i, src in enumerate(md["option_sources"]):
            if i != it.label:
                used[md["template"]][src] += 1
    rows = []
    for t in TEMPLATES:
        fam = FAMILIES[t.name]
        names = ", ".join(f"{n} ({c})" for n, c in sorted(used[t.name].items(), key=lambda kv: (-kv[1], kv[0])))
        unused = ", ".join(sorted(_mistake_pool(fam) - set(used[t.name]))) or "—"
        rows.append([f"`{t.name}`", t.depth, t.count, f"`{t.topic}`", fam.summary, names, unused])
    return _md_table(
        [
            "family",
            "depth",
            "items",
            "topic",
            "story",
            "named mistakes used as decoys (times)",
            "named in the code, never a decoy here",
        ],
        rows,
    )


def composition_block(items: list[MCItem]) -> str:
    words = [len(it.ctx.split()) for it in items]
    by_depth = Counter(it.metadata["depth"] for it in items)
    rows = [[d, by_depth[d], DIFFICULTY[d]] for d in sorted(by_depth)]
    text = _md_table(["depth", "items", "difficulty label"], rows)
    text += (
        f"\n{len(items):,} items, {len(TEMPLATES)} templates, "
        f"{len({it.metadata['topic'] for it in items})} topic labels; prompt length "
        f"mean {fmean(words):.1f} words (max {max(words)}, min {min(words)}).\n"
    )
    return text


def balance_block(items: list[MCItem]) -> str:
    slots = Counter(it.label for it in items)
    ranks = Counter(it.metadata["answer_rank"] for it in items)
    cells = Counter((it.label, it.metadata["answer_rank"], it.metadata["depth"]) for it in items)
    from synthprobe.benchmarks.deeparithmark.base import roundness_class
    from synthprobe.benchmarks.deeparithmark.checks import value_kind

    classes = Counter(
        roundness_class(int(it.metadata["option_values"][it.label]), value_kind(it.metadata["answer"])) for it in items
    )
    s = " / ".join(str(slots[i]) for i in range(4))
    r = " / ".join(str(ranks[i]) for i in range(4))
    same_len = sum(len({len(e) for e in it.endings}) == 1 for it in items)
    lines = [
        f"- Correct slot 0–3: {s}.",
        f"- Answer numeric rank (smallest → largest): {r}.",
        f"- Slot × rank × depth grid: {len(cells)} cells, {min(cells.values())}–{max(cells.values())} items each.",
        "- Roundness class shared by all four options of an item: "
        + "; ".join(f"{ROUNDNESS_NAMES[c]} {classes[c]}" for c in sorted(classes))
        + ".",
        f"- All four endings have the same number of characters in {same_len:,} of {len(items):,} items "
        "(so a character-normalised score ranks those items' endings exactly as the summed "
        "log-likelihood does, §5).",
    ]
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=4)
def _selftest(path: Path):
    from synthprobe.benchmarks.deeparithmark.selftest import selftest

    return selftest(path)


def audit_block(path: Path) -> str:
    report = _selftest(path)
    rows = [[r.name, f"{r.correct}/{r.n}", f"{r.percent:.2f} %"] for r in report.audit_rows]
    text = _md_table(["strategy", "correct", "score"], rows)
    passed = sum(c.ok is True for c in report.checks)
    text += (
        f"\n`python deeparithmark.py selftest`: {passed}/{len(report.checks)} checks pass"
        f"{'' if report.ok else ' — FAILED: ' + ', '.join(report.failed)}. "
        f"SHA-256 of the file: `{report.sha256}`.\n"
    )
    return text


#: How the guide names each audit strategy, in the audit's own order.
_AUDIT_SHORT = {
    "pick largest value": "largest",
    "pick smallest value": "smallest",
    "pick the roundest number": "roundest number",
    "longest ending text": "longest text",
    "shortest ending text": "shortest text",
    "char-3-gram classifier over option text": "char-3-gram classifier",
}


def audit_line_block(path: Path) -> str:
    """The guide's one-paragraph summary of the audit block, with the SHA-256 and selftest result."""
    from synthprobe.benchmarks.deeparithmark.audit import tolerance

    report = _selftest(path)
    tol = tolerance(report.n)
    pct = {r.name: f"{r.percent:.2f} %" for r in report.audit_rows}
    slots = " / ".join(pct[f"fixed slot {i}"] for i in range(4))
    parts = [
        f"{_AUDIT_SHORT.get(name, name)} {value}" for name, value in pct.items() if not name.startswith("fixed slot")
    ]
    passed = sum(c.ok is True for c in report.checks)
    return (
        f"Shortcut audit of the release (chance 25 %, allowed {25 - tol:.1f}–{25 + tol:.1f} %): "
        + "; ".join(parts)
        + f"; fixed slot 0/1/2/3 {slots}. `python deeparithmark.py selftest`: "
        f"{passed}/{len(report.checks)} checks pass. SHA-256 of `data/deeparithmark-1.jsonl`: "
        f"`{report.sha256}`.\n"
    )


def worked_example_block(results_path: Path) -> str:
    if not results_path.exists():
        return "_The embedded model's results file is not committed yet._\n"
    from deeparithmark_worked_example import describe

    return describe(read_results(results_path))


def scores_block(folder: Path) -> str:
    from deeparithmark_worked_example import scores_table

    files = sorted(folder.glob("deeparithmark_*.json"))
    if not files:
        return "_No results committed yet._\n"
    text = scores_table([read_results(f) for f in files])
    return text + "\nFrom " + ", ".join(f"`benchmarks/{f.name}`" for f in files) + ".\n"


def depth_curve_png(results: Path = EMBEDDED_RESULTS) -> bytes:
    """The per-depth plot of the embedded model, exactly as ``synthprobe report`` draws it."""
    from synthprobe.benchmarks.deeparithmark.report.figures import depth_curve
    from synthprobe.report.reader import rows as read_rows

    return depth_curve(read_rows(results, "deeparithmark"))


def png_differs(a: bytes, b: bytes, *, share: float = 0.001) -> bool:
    """True if two PNGs differ in size or in more than ``share`` of their pixels (by > 0.1 in any
    channel). Pixels, not bytes: another matplotlib build may encode the same drawing differently."""
    import io

    import numpy as np
    from matplotlib.image import imread

    x, y = (imread(io.BytesIO(data), format="png") for data in (a, b))
    if x.shape != y.shape:
        return True
    return float((np.abs(x - y).max(axis=-1) > 0.1).mean()) > share


def _gpt3_cell(row: dict | None) -> str:
    if row is None:
        return "—"
    from synthprobe.metrics.stats import wilson_ci

    lo, hi = (100 * x for x in wilson_ci(row["correct"], row["n"]))
    return f"{row['accuracy']:.1f} [{lo:.0f}–{hi:.0f}] n={row['n']}"


def _paper_cells(rows: dict, size: str) -> str:
    vals = []
    for setting in ("zero", "one", "few"):
        cell = (rows.get(setting) or {}).get("paper", {}).get(size)
        vals.append("—" if cell is None else f"{cell['value']:g}{'†' if cell.get('doubtful') else ''}")
    return " / ".join(vals)


def gpt3_block(folder: Path) -> str:
    """The committed GPT-3 synthetic-task results beside GPT-3 125M and 175B, one row per task."""
    files = sorted(folder.glob("gpt3_*.json"))
    if not files:
        return "_No GPT-3 results committed yet._\n"
    out = []
    for f in files:
        results = read_results(f)
        for entry, block in results.blocks("gpt3"):
            out += _gpt3_model_block(f, results, entry, block)
    return "\n".join(out)


def _gpt3_model_block(f: Path, results: Results, entry: Entry, block: Block) -> list[str]:
    """One model's GPT-3 table, as the guide shows it."""
    out = []
    model = entry.model
    settings_of_run = block.data.get("settings") or entry.settings
    by_task: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in block.data["rows"]:
        by_task[(row["task"], row["code"])][row["setting"]] = row
    head = ["task", "zero-shot", "one-shot", "few-shot (K)", "GPT-3 125M 0/1/few", "GPT-3 175B 0/1/few"]
    rows = []
    for (task, code), settings in by_task.items():
        few = settings.get("few")
        k = f" (K={few['k']}, used {few['shots']['mean']:g})" if few else ""
        name = f"{code} `{task}`"
        if code == "SAT" and "sample" in str(settings_of_run.get("sat_file", "")):
            name += " (synthprobe's sample file, not the SAT set: not comparable with the paper)"
        rows.append(
            [
                name,
                _gpt3_cell(settings.get("zero")),
                _gpt3_cell(settings.get("one")),
                _gpt3_cell(few) + k,
                _paper_cells(settings, "125M"),
                _paper_cells(settings, "175B"),
            ]
        )
    limit_text = ", ".join(f"{k} {v}" for k, v in settings_of_run.get("limits", {}).items())
    out.append(
        f"**{model.get('name') or model['spec']}**, {model['dtype']} on "
        f"{model['device']}: `{results.command or ''}`. Accuracy in % with its Wilson 95 % "
        f"interval and the number of items scored (limits: {limit_text}; each task scores "
        f"the first n items of its seeded pool). † a doubtful cell in the paper's table.\n"
    )
    out.append(_md_table(head, rows))
    out.append(f"\nFrom `benchmarks/{f.name}`.\n")
    return out


#: The committed report of ``python deeparithmark.py audit --budget full --json`` on the release.
TRAINED_AUDIT = ROOT / "docs" / "figures" / "trained_audit_deeparithmark-1.json"
#: the same audit of the 2026-10 release (legacy decoys), kept for the design doc's story
TRAINED_AUDIT_2026_10 = ROOT / "docs" / "figures" / "trained_audit_deeparithmark-1_2026-10.json"
#: how that report is made again: the 2026-10 file rebuilt, audited against legacy builds
REPRODUCE_2026_10 = (
    "synthprobe build deeparithmark --decoys legacy --out deeparithmark-1_2026-10.jsonl && "
    "python deeparithmark.py audit deeparithmark-1_2026-10.jsonl --decoys legacy --budget full"
)


def trained_audit_block(path: Path = TRAINED_AUDIT, reproduce: str | None = None) -> str:
    """The trained choices-only audit's rows for the card: each adversary on the fresh audit build
    (90 % interval, equivalence) and on the file, each control, the verdict, from its report.
    ``reproduce``: the command that makes the report again (default: the release's audit)."""
    if not path.exists():
        return "_The trained audit's report is not committed yet._\n"
    from synthprobe.io.read import loads_json

    rep = loads_json(path.read_text(encoding="utf-8"))
    audit, file = rep["test_sets"]["audit build"], rep["test_sets"]["file"]
    rows = []
    for name, a in audit["adversaries"].items():
        lo, hi = a["cp90"]
        verdict = {True: "inside 23–27 %", False: "outside 23–27 %", None: "—"}[a["passes"]]
        f = file["adversaries"][name]
        rows.append(
            [
                name,
                f"{100 * a['accuracy']:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]",
                verdict,
                f"{100 * f['accuracy']:.1f} %",
            ]
        )
    text = _md_table(
        [
            "trained adversary (options only)",
            f"fresh audit build ({audit['n']:,} items), 90 % CI",
            "equivalence",
            "this file",
        ],
        rows,
    )
    crow = []
    for c in rep["controls"]:
        accs = " / ".join(f"{100 * v['accuracy']:.1f}" for v in c["adversaries"].values())
        crow.append([c["name"], c["expect"], accs + " %", "yes" if c["as_expected"] else "**no**"])
    text += "\n" + _md_table(
        ["control", "must", " / ".join(audit["adversaries"]) + " (test items)", "as it must"], crow
    )
    strata = [x for t in rep["test_sets"].values() for x in t.get("screen", []) if x["kind"] != "all"]
    flagged = sum(x["flagged"] for x in strata)
    text += (
        f"\nVerdict: {rep['verdict']['text']}. Trained on {rep['train_n']:,} fresh items ({rep['decoys']} decoys); "
        f"per depth and template {flagged} of {len(strata)} strata flagged above chance (Holm); "
        f"{rep['seconds']['total']:.0f} s. Reproduce: `"
        + (reproduce or f"python deeparithmark.py audit --budget full --json {path.relative_to(ROOT)}")
        + "`.\n"
    )
    return text


def blocks(release: Path = RELEASE, results: Path = EMBEDDED_RESULTS) -> dict[str, Callable[[], str]]:
    items = load_arithmark3(release)
    return {
        "families": lambda: families_block(items),
        "composition": lambda: composition_block(items),
        "balance": lambda: balance_block(items),
        "audit": lambda: audit_block(release),
        "audit-line": lambda: audit_line_block(release),
        "trained-audit": lambda: trained_audit_block(),
        "trained-audit-2026-10": lambda: trained_audit_block(TRAINED_AUDIT_2026_10, REPRODUCE_2026_10),
        "worked-example": lambda: worked_example_block(results),
        "scores": lambda: scores_block(results.parent),
        "gpt3-scores": lambda: gpt3_block(results.parent),
    }


def render(text: str, makers: dict[str, Callable[[], str]], cache: dict[str, str]) -> str:
    def sub(m: re.Match) -> str:
        name = m["name"]
        if name not in makers:
            raise KeyError(f"unknown generated block {name!r}")
        if name not in cache:
            cache[name] = makers[name]()
        return m.group(1) + cache[name] + m.group(4)

    return _BLOCK.sub(sub, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python tools/deeparithmark_docs.py",
        description="Regenerate the data-derived blocks of the Deep Arithmark docs.",
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if any block differs; write nothing")
    args = ap.parse_args(argv)
    makers, cache, stale = blocks(), {}, []
    for doc in DOCS:
        old = doc.read_text(encoding="utf-8")
        new = render(old, makers, cache)
        if new != old:
            stale.append(doc)
            if not args.check:
                atomic_write_text(doc, new)
    if EMBEDDED_RESULTS.exists():
        png = depth_curve_png()
        old_png = DEPTH_PNG.read_bytes() if DEPTH_PNG.exists() else b""
        if not old_png or png_differs(png, old_png):
            stale.append(DEPTH_PNG)
            if not args.check:
                atomic_write_bytes(DEPTH_PNG, png)
    for doc in stale:
        print(f"{'stale' if args.check else 'updated'}: {doc.relative_to(ROOT)}")
    return EXIT_FAILED if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
