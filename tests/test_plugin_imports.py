"""The stable import for plug-in authors (``synthprobe.plugin``): the contract's own objects, one
module; a family written against the earlier path ``synthprobe.tasks.deeparithmark.base`` still
builds, with a DeprecationWarning that names the new import; the docs' examples use the stable
one."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import synthprobe.plugin as plugin
from synthprobe.benchmarks.deeparithmark import base
from synthprobe.registry import Benchmark

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "unit_convert.py"


def test_the_plugin_module_gives_the_contracts_own_objects():
    for name in plugin.__all__:
        if name == "Benchmark":
            assert plugin.Benchmark is Benchmark
        else:
            assert getattr(plugin, name) is getattr(base, name), name


def test_the_docs_import_the_contract_from_the_plugin_module_only():
    texts = {p: p.read_text(encoding="utf-8") for p in [EXAMPLE, *(ROOT / "docs").glob("write-a-*.md")]}
    for path, text in texts.items():
        found = re.findall(r"^from (synthprobe[\w.]*) import", text, re.M)
        assert found and set(found) == {"synthprobe.plugin"}, (path.name, found)


def test_a_family_written_against_the_earlier_path_builds_and_is_told_the_new_one(tmp_path):
    old = tmp_path / "old_units.py"
    old.write_text(
        EXAMPLE.read_text(encoding="utf-8").replace(
            "from synthprobe.plugin import (", "from synthprobe.tasks.deeparithmark.base import ("
        ),
        encoding="utf-8",
    )
    assert "synthprobe.tasks.deeparithmark.base" in old.read_text(encoding="utf-8")
    out = tmp_path / "units.jsonl"
    run = subprocess.run(
        [
            sys.executable,  # Python's default filters: the family loader shows the warning itself
            "-m",
            "synthprobe",
            "build",
            "deeparithmark",
            "--family",
            str(old),
            "--n",
            "40",
            "--seed",
            "3",
            "--no-progress",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "synthprobe.tasks.deeparithmark.base is deprecated" in run.stderr
    assert "import from synthprobe.plugin instead" in run.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 40


def test_the_earlier_path_warns_once_and_registers_into_the_same_contract():
    sys.modules.pop("synthprobe.tasks.deeparithmark.base", None)
    with pytest.warns(DeprecationWarning, match="import from synthprobe.plugin instead"):
        old = importlib.import_module("synthprobe.tasks.deeparithmark.base")
    assert old.register is base.register and old.Problem is base.Problem and old.FAMILIES is base.FAMILIES


@pytest.mark.parametrize("old", ["synthprobe.tasks.protocols", "synthprobe.tasks.numformat"])
def test_the_earlier_prompts_paths_warn_and_give_the_moved_modules_objects(old):
    from synthprobe.moved import MOVED

    new = importlib.import_module(MOVED[old][0])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated .* import from {MOVED[old][0]} instead"):
        mod = importlib.import_module(old)
    public = [k for k in vars(new) if not k.startswith("_")]
    assert public and all(getattr(mod, k) is getattr(new, k) for k in public)


def test_the_source_tree_has_no_tasks_folder_and_the_new_path_warns_nothing():
    src = ROOT / "src" / "synthprobe"
    assert (src / "prompts" / "protocols.py").is_file()
    assert not (src / "tasks").exists()
    run = subprocess.run(
        [
            sys.executable,
            "-W",
            "error::DeprecationWarning",
            "-c",
            "import synthprobe.prompts.protocols, synthprobe.plugin",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
