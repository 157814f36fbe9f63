"""The layers of docs/architecture.md, checked by import-linter against pyproject.toml's contracts.

Two rules carry the architecture. The layers: cli -> the cross-benchmark apps (validity, probes,
contamination) -> the benchmark folders (synthprobe.benchmarks.*) -> sweep -> the generic apps (api,
study, report, export, scoring) -> prompts -> plan -> backends -> core -> the registry; so no generic
module below the benchmarks imports one — it asks synthprobe.registry. And independence: no
benchmark folder imports another, whatever its name (a wildcard, no hand-listed modules). Beside
them: nothing imports the cli package; only the command line parses arguments (cli, the shared
flags of synthprobe.commandline, each benchmark's own commands, by a wildcard, and the one
``commands`` module of each cross-benchmark app); nothing outside a backend imports torch or
transformers.
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
    assert "5 kept, 0 broken" in res.stdout, res.stdout


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
        ("scoring/runner.py", "import synthprobe.cli.export"),  # an app reaching into the command line
        ("io/write.py", "import synthprobe.cli"),  # so does a module of the lowest layer
        ("commandline.py", "import synthprobe.cli"),  # and the shared flags
        ("benchmarks/gpt3/commands/score.py", "import synthprobe.cli"),  # and a benchmark's own commands
    ],
)
def test_importing_the_cli_breaks_the_contract(tmp_path, module, line):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    assert "nothing imports the cli package BROKEN" in " ".join(res.stdout.split()), res.stdout


PARSES_BROKEN = (
    "only the command line parses arguments: cli, synthprobe.commandline and the commands of each benchmark "
    "and each cross-benchmark app BROKEN"
)


@pytest.mark.parametrize(
    "module, line",
    [
        ("report/build.py", "import argparse"),  # argument parsing outside the command line
        ("scoring/runner.py", "import synthprobe.commandline"),  # or its shared flags
        ("benchmarks/deeparithmark/scoring/score.py", "import argparse"),  # a benchmark outside its commands
        ("probes/number_format.py", "import synthprobe.commandline"),  # a cross-benchmark app outside its commands
        ("validity/run.py", "import argparse"),
        ("contamination/run.py", "import argparse"),
    ],
)
def test_parsing_arguments_outside_the_command_line_breaks_the_contract(tmp_path, module, line):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    assert PARSES_BROKEN in " ".join(res.stdout.split()), res.stdout


def test_a_benchmarks_commands_may_parse_arguments_whatever_the_benchmark(tmp_path):
    """The exception is a wildcard: a new benchmark folder's commands module (or package) may use
    argparse and the shared flags without being listed, and its other modules may not."""
    src = _copy(tmp_path)
    folder = src / "synthprobe" / "benchmarks" / "units"
    (folder / "commands").mkdir(parents=True)
    (folder / "__init__.py").write_text("", encoding="utf-8")
    (folder / "commands" / "__init__.py").write_text("", encoding="utf-8")
    imports = "import argparse  # noqa\nimport synthprobe.commandline  # noqa\n"
    (folder / "commands" / "score.py").write_text(imports, encoding="utf-8")
    assert _lint(src, tmp_path).returncode == 0
    (folder / "cmds.py").write_text(imports, encoding="utf-8")
    res = _lint(src, tmp_path)
    assert res.returncode != 0 and PARSES_BROKEN in " ".join(res.stdout.split()), res.stdout


LAYERS_BROKEN = "cli -> cross-benchmark apps -> benchmarks -> sweep -> apps -> prompts -> backends -> core BROKEN"
APART_BROKEN = "no benchmark folder imports another BROKEN"


@pytest.mark.parametrize(
    "module, line",
    [
        ("report/page.py", "import synthprobe.benchmarks.gpt3.report.table"),
        ("report/tables.py", "import synthprobe.benchmarks.deeparithmark.report.paper_tables"),
        ("report/viewer.py", "import synthprobe.benchmarks.gpt3.report.items"),
        ("report/compare.py", "import synthprobe.benchmarks.deeparithmark.report.outcomes"),
        ("scoring/runner.py", "import synthprobe.benchmarks.deeparithmark.scoring.score"),
        ("sweep/run.py", "import synthprobe.benchmarks.gpt3.sweep"),
        ("export/lm_eval/files.py", "import synthprobe.benchmarks.gpt3.export.lm_eval"),
        ("export/hub_results.py", "import synthprobe.benchmarks.deeparithmark.release"),
        ("results.py", "import synthprobe.benchmarks.deeparithmark.scoring.results"),
        ("registry.py", "import synthprobe.benchmarks.gpt3.benchmark"),
    ],
)
def test_a_generic_module_importing_a_benchmark_breaks_the_layers(tmp_path, module, line):
    """The runner, the sweep, the report assembler, the exports, the results reader and the
    registry itself reach a benchmark through the registry only: importing one by name is refused."""
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    out = " ".join(res.stdout.split())
    assert LAYERS_BROKEN in out, res.stdout
    assert "is not allowed to import synthprobe.benchmarks" in out, res.stdout


@pytest.mark.parametrize(
    "module, line",
    [
        ("benchmarks/gpt3/scoring/metrics.py", "import synthprobe.benchmarks.deeparithmark.scoring.metrics"),
        ("benchmarks/gpt3/export/hub.py", "import synthprobe.benchmarks.deeparithmark.export.hub"),
        ("benchmarks/deeparithmark/report/section.py", "import synthprobe.benchmarks.gpt3.paper"),
    ],
)
def test_one_benchmark_importing_another_breaks_independence(tmp_path, module, line):
    res = _lint_copy_with(tmp_path, (module, line))
    assert res.returncode != 0
    assert APART_BROKEN in " ".join(res.stdout.split()), res.stdout


def test_a_new_benchmark_folder_is_held_apart_without_being_listed(tmp_path):
    """A folder added under synthprobe/benchmarks/ is under both rules at once: nothing in
    pyproject.toml names it."""
    src = _copy(tmp_path)
    folder = src / "synthprobe" / "benchmarks" / "units"
    folder.mkdir()
    (folder / "__init__.py").write_text("import synthprobe.benchmarks.gpt3.paper  # noqa\n", encoding="utf-8")
    res = _lint(src, tmp_path)
    assert res.returncode != 0
    out = " ".join(res.stdout.split())
    assert APART_BROKEN in out and "synthprobe.benchmarks.units -> synthprobe.benchmarks.gpt3" in out, res.stdout


def test_the_benchmarks_may_use_the_generic_layers_below_them(tmp_path):
    """The rules are not stricter than the picture: a benchmark using the runner and the report's
    helpers, and the command line using a benchmark, are both kept."""
    res = _lint_copy_with(
        tmp_path,
        ("benchmarks/gpt3/paper.py", "import synthprobe.scoring.runner"),
        ("benchmarks/deeparithmark/release.py", "import synthprobe.report.format"),
        ("cli/report.py", "import synthprobe.benchmarks.gpt3.paper"),
    )
    assert res.returncode == 0, res.stdout


#: Import circles among synthprobe's modules, deferred (in-function) imports included: grimp (the
#: graph import-linter builds) lists each module's direct imports; Tarjan's algorithm finds the
#: strongly connected groups. Run in a child process so a copy of the package can be checked.
_CIRCLES = """
import json, sys
import grimp
sys.setrecursionlimit(10000)
g = grimp.build_graph("synthprobe", exclude_type_checking_imports=True)
edges = {m: sorted(g.find_modules_directly_imported_by(m)) for m in sorted(g.modules)}
index, low, stack, on, found = {}, {}, [], set(), []
def visit(v):
    index[v] = low[v] = len(index); stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        group = []
        while not group or group[-1] != v:
            group.append(stack.pop()); on.discard(group[-1])
        if len(group) > 1:
            found.append(sorted(group))
for m in edges:
    if m not in index:
        visit(m)
print(json.dumps(found))
"""


def _circles(src: Path) -> list[list[str]]:
    import json

    env = {**os.environ, "PYTHONPATH": str(src)}
    res = subprocess.run([sys.executable, "-c", _CIRCLES], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_no_module_imports_itself_round_a_circle_even_through_a_deferred_import(tmp_path):
    """A deferred import hides a circle from import time, not from a reader: none is left."""
    assert _circles(ROOT / "src") == []
    # the check can fail: a copy whose chat rendering imports the model contract back
    src = _copy(tmp_path)
    chat = src / "synthprobe" / "backends" / "chat.py"
    back = "\n\ndef _back():\n    import synthprobe.backends.base  # noqa\n"
    chat.write_text(chat.read_text(encoding="utf-8") + back)
    assert _circles(src) == [["synthprobe.backends.base", "synthprobe.backends.chat"]]


SHARED_FLAGS = ("--limit", "--max-context", "--bos")


def _flag_declarations(src: Path) -> dict[str, list[str]]:
    """Where each shared run flag is declared: every ``add_argument`` call whose first
    argument is one of :data:`SHARED_FLAGS`, as ``file:line``."""
    import ast

    found: dict[str, list[str]] = {flag: [] for flag in SHARED_FLAGS}
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and node.args[0].value in found
            ):
                found[node.args[0].value].append(f"{path.relative_to(src)}:{node.lineno}")
    return found


def test_each_shared_run_flag_is_declared_in_one_place(tmp_path):
    found = _flag_declarations(ROOT / "src" / "synthprobe")
    assert {flag: len(where) for flag, where in found.items()} == dict.fromkeys(SHARED_FLAGS, 1), found
    assert all(where[0].startswith("commandline.py:") for where in found.values()), found
    # the check sees a command that declares one again
    copy = tmp_path / "synthprobe"
    shutil.copytree(ROOT / "src" / "synthprobe", copy, ignore=shutil.ignore_patterns("__pycache__"))
    study = copy / "cli" / "study.py"
    study.write_text(
        study.read_text(encoding="utf-8").replace(
            'add_limit_argument(p, "use only the first N articles")',
            'p.add_argument("--limit", type=int, default=None, metavar="N", help="use only the first N articles")',
        ),
        encoding="utf-8",
    )
    assert len(_flag_declarations(copy)["--limit"]) == 2
