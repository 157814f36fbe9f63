"""The layers of docs/architecture.md, checked by import-linter against pyproject.toml's contracts.

cli -> sweep -> apps (api, study, probes, report, export, scoring, contamination) -> tasks -> backends
-> core -> the benchmark registry; only the cli package parses arguments and nothing else imports it;
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

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(src: Path, config_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=config_dir, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_layer_contracts_hold():
    res = _lint(ROOT / "src", ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "7 kept, 0 broken" in res.stdout, res.stdout


def _copy(tmp_path: Path) -> Path:
    """A copy of the package under ``tmp_path/src`` and of pyproject.toml beside it."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "synthprobe", src / "synthprobe", ignore=shutil.ignore_patterns("__pycache__", "resources")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return src


def _lint_copy_with(tmp_path: Path, *changes: tuple[str, str]) -> subprocess.CompletedProcess:
    """import-linter on a copy of the package in which each ``module`` (a path under synthprobe/)
    gains its ``line``."""
    src = _copy(tmp_path)
    for module, line in changes:
        target = src / "synthprobe" / module
        target.write_text(target.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    return _lint(src, tmp_path)


def test_an_import_that_runs_up_a_layer_breaks_the_contract(tmp_path):
    """The check can fail: a copy of the package whose backend imports the scorer is refused."""
    res = _lint_copy_with(tmp_path, ("backends/base.py", "import synthprobe.scoring.runner"))
    assert res.returncode != 0
    assert "BROKEN" in res.stdout and "synthprobe.backends" in res.stdout, res.stdout


@pytest.mark.parametrize(
    "module, line",
    [
        ("scoring/runner.py", "import synthprobe.cli.args"),  # an app reaching into the command line
        ("io/write.py", "import synthprobe.cli"),  # so does a module of the lowest layer
        ("report/build.py", "import argparse"),  # argument parsing outside the cli package
    ],
)
def test_importing_the_cli_or_parsing_arguments_outside_it_breaks_the_contract(tmp_path, module, line):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    broken = "only the cli package parses arguments; nothing imports it BROKEN"
    assert broken in " ".join(res.stdout.split()), res.stdout


def test_a_benchmark_imported_by_name_breaks_the_registry_contracts(tmp_path):
    """The report assembler importing a benchmark's package, and one benchmark importing another,
    are each refused by their contract."""
    res = _lint_copy_with(
        tmp_path,
        ("report/page.py", "import synthprobe.report.gpt3.table"),
        ("scoring/gpt3/metrics.py", "import synthprobe.scoring.deeparithmark.metrics"),
        ("report/tables.py", "import synthprobe.report.deeparithmark.paper_tables"),
        ("report/viewer.py", "import synthprobe.report.gpt3.items"),
        ("report/lm_eval.py", "import synthprobe.tasks.gpt3.paper"),
        ("report/compare.py", "import synthprobe.report.deeparithmark.outcomes"),
    )
    assert res.returncode != 0
    assert "synthprobe.benchmarks BROKEN" in res.stdout and "nor the command line BROKEN" in res.stdout, res.stdout
    for line in (
        "synthprobe.report.page -> synthprobe.report.gpt3.table",
        "synthprobe.report.tables -> synthprobe.report.deeparithmark.paper_tables",
        "synthprobe.report.viewer -> synthprobe.report.gpt3.items",
        "synthprobe.report.lm_eval -> synthprobe.tasks.gpt3.paper",
        "synthprobe.report.compare -> synthprobe.report.deeparithmark.outcomes",
    ):
        assert line in res.stdout, res.stdout


@pytest.mark.parametrize(
    "module, line, broken",
    [
        # a generic export naming a benchmark's own export module
        ("export/lm_eval/files.py", "import synthprobe.export.gpt3.lm_eval", "synthprobe.benchmarks BROKEN"),
        ("export/hub_results.py", "import synthprobe.tasks.deeparithmark.release", "synthprobe.benchmarks BROKEN"),
        # one benchmark's exports reaching into the other's (GPT-3's few-shot sampler included)
        ("export/deeparithmark/lm_eval.py", "import synthprobe.export.lm_eval.sampler", "nor the command line BROKEN"),
        ("export/gpt3/hub.py", "import synthprobe.export.deeparithmark.hub", "nor the command line BROKEN"),
    ],
)
def test_an_export_importing_a_benchmark_by_name_breaks_the_registry_contracts(tmp_path, module, line, broken):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    assert broken in " ".join(res.stdout.split()), res.stdout
