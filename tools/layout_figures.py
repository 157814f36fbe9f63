"""The package's layout in figures: modules, lines per top-level folder, the longest chain of
imports inside synthprobe, and what a benchmark's folder holds.

    python tools/layout_figures.py [SRC]      # SRC: the folder holding synthprobe/ (default: src)

Prints a Markdown table. The longest import chain is the longest path through the graph of
synthprobe's own imports (grimp, as import-linter reads them; a cycle counts as one module), so
it says how many layers a change can ripple through."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path


def _lines(path: Path) -> int:
    return sum(1 for _ in path.open(encoding="utf-8"))


def longest_chain(src: Path) -> list[str]:
    import grimp

    sys.path.insert(0, str(src))
    graph = grimp.build_graph("synthprobe")
    mods = sorted(graph.modules)
    # strongly connected components (Tarjan, iterative) so cycles count as one node
    index, low, on, stack, comp = {}, {}, set(), [], {}
    counter = [0]
    for root in mods:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.find_modules_directly_imported_by(nxt)))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    m = stack.pop()
                    on.discard(m)
                    comp[m] = node
                    if m == node:
                        break
    best: dict[str, list[str]] = {}

    def chain(c: str) -> list[str]:
        if c in best:
            return best[c]
        best[c] = [c]
        members = [m for m in mods if comp[m] == c]
        tails = [chain(comp[d]) for m in members for d in graph.find_modules_directly_imported_by(m) if comp[d] != c]
        best[c] = [c] + max(tails, key=len, default=[])
        return best[c]

    sys.setrecursionlimit(10000)
    return max((chain(comp[m]) for m in mods), key=len)


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src").resolve()
    pkg = src / "synthprobe"
    files = sorted(p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts)
    per: Counter = Counter()
    count: Counter = Counter()
    for p in files:
        rel = p.relative_to(pkg).parts
        top = rel[0] if len(rel) > 1 else "(top-level modules)"
        if top == "benchmarks" and len(rel) > 2:
            top = f"benchmarks/{rel[1]}"
        per[top] += _lines(p)
        count[top] += 1
    print(f"modules: {len(files)}, lines: {sum(per.values()):,}\n")
    print("| folder | modules | lines |\n|---|---:|---:|")
    for top in sorted(per):
        print(f"| {top} | {count[top]} | {per[top]:,} |")
    chain = longest_chain(src)
    print(f"\nlongest import chain: {len(chain)} modules: " + " → ".join(chain))
    for name in ("deeparithmark", "gpt3"):
        mine = [p for p in files if name in p.relative_to(pkg).as_posix()]
        tops = sorted(
            {
                "/".join(p.relative_to(pkg).parts[: 2 if p.relative_to(pkg).parts[0] == "benchmarks" else 1])
                for p in mine
            }
        )
        lines = sum(_lines(p) for p in mine)
        where = f"{len(tops)} top-level folder(s): {', '.join(tops)}"
        print(f"\n{name}: {len(mine)} modules whose path names it, {lines:,} lines, in {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
