"""The layers of docs/architecture.md, checked by import-linter against pyproject.toml's contracts.

cli -> apps (api, study, probes, report, export, scoring) -> tasks -> cliargs -> backends -> core;
a backend never imports the layers above it; nothing outside a backend imports torch or transformers;
the runner and the report assembler reach benchmarks only through synthprobe.benchmarks, and the
benchmarks' packages never import each other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, config_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=config_dir, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_layer_contracts_hold():
    res = _lint(ROOT / "src", ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "6 kept, 0 broken" in res.stdout, res.stdout


def test_an_import_that_runs_up_a_layer_breaks_the_contract(tmp_path):
    """The check can fail: a copy of the package whose backend imports the scorer is refused."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "synthprobe", src / "synthprobe",
                    ignore=shutil.ignore_patterns("__pycache__", "resources"))
    base = src / "synthprobe" / "backends" / "base.py"
    base.write_text(base.read_text(encoding="utf-8") + "\nimport synthprobe.scoring.runner  # noqa\n",
                    encoding="utf-8")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    res = _lint(src, tmp_path)
    assert res.returncode != 0
    assert "BROKEN" in res.stdout and "synthprobe.backends" in res.stdout, res.stdout


def test_a_benchmark_imported_by_name_breaks_the_registry_contracts(tmp_path):
    """The report assembler importing a benchmark's package, and one benchmark importing another,
    are each refused by their contract."""
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "synthprobe", src / "synthprobe",
                    ignore=shutil.ignore_patterns("__pycache__", "resources"))
    for module, line in (("report/page.py", "import synthprobe.report.gpt3.table  # noqa"),
                         ("scoring/gpt3/metrics.py", "import synthprobe.scoring.deeparithmark.metrics  # noqa")):
        path = src / "synthprobe" / module
        path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    res = _lint(src, tmp_path)
    assert res.returncode != 0
    assert "synthprobe.benchmarks BROKEN" in res.stdout and "nor the command line BROKEN" in res.stdout, res.stdout
    assert "synthprobe.report.page -> synthprobe.report.gpt3.table" in res.stdout, res.stdout
