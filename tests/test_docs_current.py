"""The data-derived blocks of the design doc and the release card match the code and the data,
and the docs' descriptions of the code's layout name what the code has."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import deeparithmark_docs as docs

ROOT = Path(__file__).resolve().parents[1]


def test_generated_blocks_are_current():
    proc = subprocess.run(
        [sys.executable, str(docs.ROOT / "tools" / "deeparithmark_docs.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=docs.ROOT,
    )
    assert proc.returncode == 0, f"stale docs — run `python tools/deeparithmark_docs.py`\n{proc.stdout}{proc.stderr}"


def test_every_marker_has_a_maker():
    makers = docs.blocks()
    for doc in docs.DOCS:
        names = set(docs._BLOCK.findall(doc.read_text(encoding="utf-8")))
        found = {n[1] for n in names}
        assert found and found <= set(makers), (doc, found - set(makers))


def _reading(acc, p, homogeneity_p):
    from deeparithmark_worked_example import _reading

    return _reading({"acc": acc, "p_vs_chance": p}, {"p": homogeneity_p})


def test_reading_says_only_what_the_statistics_support():
    below = _reading(0.218, 0.019, 0.14)
    assert "significantly *below* chance" in below and "compatible with noise" in below
    assert "far from uniform" not in below
    at_chance_uneven = _reading(0.251, 0.9, 0.001)
    assert "indistinguishable from chance" in at_chance_uneven and "far from uniform" in at_chance_uneven
    above = _reading(0.40, 1e-9, 0.3)
    assert "significantly above chance" in above and "below" not in above


def test_balance_block_counts_equal_length_endings(tmp_path):
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(docs.RELEASE)
    expected = sum(len({len(e) for e in it.endings}) == 1 for it in items)
    assert 0 < expected < len(items)  # the release has a few items whose endings differ in length
    assert f"same number of characters in {expected:,} of {len(items):,} items" in docs.balance_block(items)


def test_families_block_lists_mistakes_the_code_names_but_the_file_never_uses():
    from synthprobe.formats.arithmark3 import load_arithmark3

    items = load_arithmark3(docs.RELEASE)
    row = next(r for r in docs.families_block(items).splitlines() if r.startswith("| `inventory_boxes`"))
    used, unused = row.split(" | ")[-2:]
    assert "counted the loose units as a crate" in unused and "counted the loose units as a crate" not in used


def test_readme_depth_plot_is_drawn_from_the_committed_results(tmp_path):
    import json

    assert not docs.png_differs(docs.depth_curve_png(), docs.DEPTH_PNG.read_bytes())
    # the comparison notices a real change: the same results with two depth tiers swapped
    doc = json.loads(docs.EMBEDDED_RESULTS.read_text(encoding="utf-8"))
    tiers = doc["models"][0]["results"]["deeparithmark"]["summary"]["by_depth"]
    tiers["2"], tiers["3"] = tiers["3"], tiers["2"]
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps(doc), encoding="utf-8")
    assert docs.png_differs(docs.depth_curve_png(swapped), docs.DEPTH_PNG.read_bytes())


def test_the_documented_benchmark_folder_names_every_folder_and_module_of_deep_arithmark():
    """docs/write-a-benchmark.md's tree of ``benchmarks/deeparithmark/``: a folder or module added
    to the benchmark and left out of the tree fails here."""
    import re

    text = (ROOT / "docs" / "write-a-benchmark.md").read_text(encoding="utf-8")
    tree = re.search(r"```\nbenchmarks/deeparithmark/\n(.*?)```", text, re.S).group(1)
    named = set(re.findall(r"([\w]+/|[\w]+\.py)", tree))
    here = ROOT / "src" / "synthprobe" / "benchmarks" / "deeparithmark"
    folders = {f"{p.name}/" for p in here.iterdir() if p.is_dir() and p.name != "__pycache__"}
    modules = {p.name for p in here.glob("*.py") if p.name != "__init__.py"}
    assert folders <= named, sorted(folders - named)
    assert modules <= named, sorted(modules - named)


def test_the_architecture_doc_lists_every_registry_part():
    from synthprobe.registry import PARTS

    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("| `registry.py` |"))
    assert all(f"`{part}`" in line for part in PARTS), [p for p in PARTS if f"`{p}`" not in line]
