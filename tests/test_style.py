"""The code's style, checked as the import layers are (tests/test_architecture.py): ruff's linter with
the rule set chosen in pyproject.toml ([tool.ruff]), and ruff's formatter, over the whole tree.

A line the formatter would change, an unused import, an import out of order or a rule broken fails
here, in make check and in CI alike; `ruff format . && ruff check --fix .` repairs most of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_linter_passes():
    res = _ruff("check", "--no-cache", ".")
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_code_is_formatted():
    res = _ruff("format", "--check", "--no-cache", ".")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "already formatted" in res.stdout, res.stdout


def test_the_linter_is_not_blind(tmp_path):
    # the same configuration on a file with an unused import and a badly laid-out line must fail
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nx = [1,2 ,3]\n", encoding="utf-8")
    config = str(ROOT / "pyproject.toml")
    lint = subprocess.run(
        [str(RUFF), "check", "--no-cache", "--config", config, str(bad)], capture_output=True, text=True, timeout=60
    )
    assert lint.returncode == 1 and "F401" in lint.stdout, lint.stdout
    fmt = subprocess.run(
        [str(RUFF), "format", "--check", "--no-cache", "--config", config, str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert fmt.returncode == 1, fmt.stdout
