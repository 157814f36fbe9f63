"""Figures on the shape of the synthprobe package, for comparing two versions of the tree.

Prints, for the checkout at ROOT (default: this repository):

- modules: Python modules (packages counted once, by their ``__init__``) in ``src/synthprobe``;
- longest import chain: the most modules one can walk through following imports inside
  synthprobe (import cycles are collapsed into one step each, and the number of cycles is given);
- imports that point up a layer: imports from a module to a module of a higher layer of the
  ``layers`` contract in ``pyproject.toml`` (``--contract`` reads the contract of another file, so
  two trees can be judged by the same rules);
- modules that import argparse (and how many of them are outside ``synthprobe.cli``), and
  imports of the command line (``synthprobe.cli``, on older trees also ``synthprobe.cliargs``)
  from modules that parse no arguments themselves (``__main__`` aside);
- lines per top-level folder of ``src/synthprobe`` (loose modules together as ``(modules)``) and
  of the repository (src, tests, tools, bench, docs).

Run: ``python tools/layout_figures.py [ROOT] [--contract PYPROJECT]``. The import graph is built
by grimp (installed with import-linter) from the source files; nothing is imported.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

PACKAGE = "synthprobe"


def import_graph(root: Path) -> tuple[dict[str, set[str]], set[str]]:
    """Module -> the synthprobe modules it imports (anywhere in the file), read by grimp; and the
    modules that import argparse."""
    import grimp

    sys.path.insert(0, str(root / "src"))
    graph = grimp.build_graph(PACKAGE, include_external_packages=True, cache_dir=None)
    ours = [m for m in graph.modules if m.split(".")[0] == PACKAGE]
    parsing = {m for m in ours if "argparse" in graph.find_modules_directly_imported_by(m)}
    return {
        m: {i for i in graph.find_modules_directly_imported_by(m) if i.split(".")[0] == PACKAGE} for m in ours
    }, parsing


def components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), in reverse topological order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                out.append(sorted(comp))
    return out


def longest_chain(graph: dict[str, set[str]]) -> tuple[list[str], list[list[str]]]:
    """The longest import chain (modules, a cycle counted as one step) and the import cycles."""
    comps = components(graph)
    comp_of = {m: i for i, comp in enumerate(comps) for m in comp}
    best: dict[int, list[int]] = {}
    for i, comp in enumerate(comps):  # reverse topological: every import's component comes first
        nexts = {comp_of[t] for m in comp for t in graph[m]} - {i}
        tail = max((best[j] for j in nexts), key=len, default=[])
        best[i] = [i, *tail]
    chain = max(best.values(), key=len, default=[])
    names = [comps[i][0] if len(comps[i]) == 1 else "{" + ", ".join(comps[i]) + "}" for i in chain]
    return names, [c for c in comps if len(c) > 1]


def layers(pyproject: Path) -> list[list[str]]:
    """The layers of the ``layers`` contract, top first, each as its module names."""
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            container = contract["containers"][0]
            return [
                [f"{container}.{name.strip()}" for name in layer.replace(":", "|").split("|")]
                for layer in contract["layers"]
            ]
    raise SystemExit(f"{pyproject}: no layers contract")


def layer_of(module: str, stack: list[list[str]]) -> int | None:
    for level, names in enumerate(stack):
        if any(module == n or module.startswith(n + ".") for n in names):
            return level
    return None


def upward_imports(graph: dict[str, set[str]], stack: list[list[str]]) -> list[tuple[str, str]]:
    out = []
    for importer, imported in sorted((a, b) for a, bs in graph.items() for b in bs):
        lo, hi = layer_of(importer, stack), layer_of(imported, stack)
        if lo is not None and hi is not None and hi < lo:
            out.append((importer, imported))
    return out


def lines(path: Path) -> int:
    files = [path] if path.is_file() else sorted(path.rglob("*.py"))
    return sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files if "__pycache__" not in f.parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "root",
        nargs="?",
        type=Path,
        default=Path(__file__).resolve().parent.parent,
        help="the repository checkout to measure (default: this one)",
    )
    parser.add_argument(
        "--contract",
        type=Path,
        default=None,
        help="pyproject.toml whose layers contract judges the imports (default: ROOT's)",
    )
    parser.add_argument("--verbose", action="store_true", help="list the chain and the upward imports")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    graph, parsing = import_graph(root)
    chain, cycles = longest_chain(graph)
    stack = layers(args.contract or root / "pyproject.toml")
    up = upward_imports(graph, stack)
    print(f"tree: {root}")
    print(f"modules: {len(graph)}")
    print(f"longest import chain: {len(chain)} modules ({len(chain) - 1} imports); import cycles: {len(cycles)}")
    if args.verbose:
        print("  " + " -> ".join(chain))
        for cycle in cycles:
            print("  cycle: " + ", ".join(cycle))
    print(f"imports that point up a layer: {len(up)} (layers of {args.contract or root / 'pyproject.toml'})")
    if args.verbose:
        for a, b in up:
            print(f"  {a} -> {b}")
    cli = f"{PACKAGE}.cli"
    outside = sorted(m for m in parsing if m != cli and not m.startswith(cli + "."))
    print(f"modules that import argparse: {len(parsing)}, outside {cli}: {len(outside)}")
    if args.verbose and outside:
        print("  " + ", ".join(outside))
    into_cli = sorted(
        (a, b)
        for a, bs in graph.items()
        for b in bs
        if (b == cli or b.startswith(cli + ".") or b == f"{PACKAGE}.cliargs")
        and not (a == cli or a.startswith(cli + "."))
        and a not in parsing
        and a != f"{PACKAGE}.__main__"
    )
    print(
        f"imports of the command line (synthprobe.cli*, cliargs) from modules that parse no arguments: {len(into_cli)}"
    )
    if args.verbose:
        for a, b in into_cli:
            print(f"  {a} -> {b}")
    pkg = root / "src" / PACKAGE
    print("lines per top-level folder of src/synthprobe:")
    loose = sum(lines(f) for f in pkg.glob("*.py"))
    rows = [(d.name + "/", lines(d)) for d in sorted(pkg.iterdir()) if d.is_dir() and d.name != "__pycache__"]
    for name, n in [*rows, ("(modules)", loose)]:
        print(f"  {name:<16} {n:>6}")
    print("lines per top-level folder of the repository (*.py):")
    for name in ("src", "tests", "tools", "bench"):
        if (root / name).is_dir():
            print(f"  {name + '/':<16} {lines(root / name):>6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
