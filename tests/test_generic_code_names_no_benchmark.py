"""Generic code names no benchmark: its code lines, not only its imports.

import-linter (tests/test_architecture.py) proves that no generic module *imports* a benchmark
folder; a module could still branch on a benchmark's name (``if "deeparithmark" in block``) or
sniff its types. This test reads every generic module's tokens — comments and docstrings left
out, so prose may still mention a benchmark — and finds the names of the benchmark folders
(``synthprobe/benchmarks/*/``: today ``deeparithmark`` and ``gpt3``).

Not generic, so not scanned: the benchmark folders themselves (with each one's own commands,
``benchmarks/*/commands/``), the registry (whose job is to name the built-ins) and the
cross-benchmark apps that sit above the benchmarks in the layers (``validity``, ``probes``,
``contamination``) with the plug-in authors' import (``plugin.py``, whose job is to re-export
the family contract), each app with its own command module beside it (``validity/commands.py``:
``validate``; ``contamination/commands.py``; ``probes/commands.py``: ``probe novel-words``,
``grammar``, ``number-format``), which name the built-in benchmarks where the layers allow it —
import-linter's ``command-line-parses`` contract lets exactly those modules parse arguments. The
command line, ``cli/``, is scanned (and ``prompts/``; not ``moved.py``, which maps the earlier
import paths kept one release, the family contract's among them, to their new modules:
:data:`ALIASES`). What the command line says of a
built-in benchmark comes from the registry
(``registry.DEFAULT``, ``registry.BUILTIN``) or from text the benchmark's parts supply
(``export lm-eval``: each ``lm_eval`` part's ``HELP_*`` and ``RUN_TASK`` and each ``commands``
part's ``lm_eval_arguments``; ``sweep``: each ``sweep`` part's ``HELP`` and ``TASK_HELP``).

:data:`REMAINING` lists the generic modules that still name a benchmark, with the exact number of
their code lines that do: none now (the last, ``cli/report.py``'s help examples and ``--table``
list, now speak of results files and tables in general). The test fails when any module names
one, and when a listed count changes either way — so the list can only shrink.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "synthprobe"
NOT_GENERIC = ("benchmarks", "registry.py", "validity", "probes", "contamination", "plugin.py")
#: the module of deprecated import paths kept one release (each names the module it moved to)
ALIASES = ("moved.py",)

#: module (under src/synthprobe/) -> its code lines that still name a benchmark
REMAINING: dict[str, int] = {}


def benchmark_names() -> list[str]:
    return sorted(p.name for p in (PKG / "benchmarks").iterdir() if (p / "__init__.py").is_file())


def code_lines_naming(path: Path, names: list[str]) -> dict[int, str]:
    """Line number -> line, for each line with a code token (a name, string or attribute; not a
    comment, not a docstring) that contains one of ``names``."""
    source = path.read_text(encoding="utf-8")
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and body:
            first = body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    pattern = re.compile("|".join(re.escape(n) for n in names), re.IGNORECASE)
    lines = source.splitlines()
    found: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT or tok.start[0] in docstrings:
            continue
        if pattern.search(tok.string):
            found.setdefault(tok.start[0], lines[tok.start[0] - 1].strip())
    return found


def generic_modules() -> list[Path]:
    return sorted(
        p
        for p in PKG.rglob("*.py")
        if p.relative_to(PKG).parts[0] not in NOT_GENERIC and p.relative_to(PKG).as_posix() not in ALIASES
    )


def test_the_benchmark_folders_are_the_names_looked_for():
    assert benchmark_names() == ["deeparithmark", "gpt3"]


def test_no_generic_module_names_a_benchmark_beyond_the_listed_remainder():
    names = benchmark_names()
    counts, shown = {}, []
    for path in generic_modules():
        found = code_lines_naming(path, names)
        if found:
            rel = path.relative_to(PKG).as_posix()
            counts[rel] = len(found)
            if rel not in REMAINING:
                shown += [f"{rel}:{n}: {line}" for n, line in found.items()]
    assert not shown, "generic code names a benchmark (ask synthprobe.registry instead):\n" + "\n".join(shown)
    assert counts == REMAINING, (
        f"the remainder changed: {counts} (update REMAINING: lower a count when a line moves out)"
    )


def test_the_scan_sees_a_benchmark_named_in_code_but_not_in_prose(tmp_path):
    """The check can fail: a branch on a benchmark's name is found; a docstring or a comment that
    mentions one is not."""
    module = tmp_path / "m.py"
    module.write_text(
        '"""Reads the deeparithmark block."""\n'
        "# gpt3 rows are read elsewhere\n"
        "def f(block):\n"
        '    """Deep Arithmark only: deeparithmark."""\n'
        '    return block.get("deeparithmark")\n'
        "GPT3_V1 = 1\n",
        encoding="utf-8",
    )
    assert sorted(code_lines_naming(module, benchmark_names())) == [5, 6]


def test_the_scan_covers_every_generic_package():
    tops = {p.relative_to(PKG).parts[0] for p in generic_modules()}
    for package in ("scoring", "report", "export", "sweep", "prompts", "metrics", "backends", "io", "formats", "study"):
        assert package in tops
    assert not tops & set(NOT_GENERIC)
