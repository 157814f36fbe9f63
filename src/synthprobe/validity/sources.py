"""Where training items come from: fresh builds that share no item with the file under test.

* a Deep Arithmark file (the release, a private seed, or a build of a user's families: the
  ``<file>.families.json`` table beside it names them, :func:`synthprobe.benchmarks.deeparithmark.plugins.read_table`)
  trains on builds of the same families at fresh seeds (:func:`fresh_seed`);
* a positive control trains on the same control at fresh seeds;
* any other multiple-choice file needs ``--train FILE`` (items with endings, ArithMark 3.0 layout).

Items whose context appears in the file under test are dropped, so no training item is a test item.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from synthprobe.errors import InputError
from synthprobe.formats.arithmark3 import item_from_record, load_arithmark3
from synthprobe.items import MCItem
from synthprobe.seeding import derive_seed

#: the most fresh builds tried before a request is called impossible
MAX_BUILDS = 64


def fresh_seed(seed: int, purpose: str, k: int = 0) -> int:
    """The ``k``-th build seed for ``purpose`` (``"train"``, ``"control:odd-one-out"``, ...) under
    the run's ``seed``: a hash, so it is never the release's seed by construction of a rule."""
    return derive_seed("synthprobe.validity", purpose, seed, k) % (2**31 - 1) + 1


def _records_to_items(records: Iterable[dict], shown: str) -> list[MCItem]:
    return [item_from_record(r, path=shown, line=i + 1) for i, r in enumerate(records)]


def collect(
    make: Callable[[int, int], Sequence[dict]],
    *,
    n: int,
    seed: int,
    purpose: str,
    exclude: set[str],
    chunk: int = 1000,
    shown: str = "build",
    keep: Callable[[MCItem], bool] | None = None,
) -> list[MCItem]:
    """``n`` items from builds ``make(build_seed, size)`` at fresh seeds, none whose context is in
    ``exclude`` nor repeated; ``keep``: only items it accepts (a family left out)."""
    out: list[MCItem] = []
    seen = set(exclude)
    for k in range(MAX_BUILDS):
        if len(out) >= n:
            break
        s = fresh_seed(seed, purpose, k)
        # always whole builds of ``chunk`` items, so a smaller request is a prefix of a larger one:
        # the first 500 training items are the same whether 500 or 2,000 are asked for
        for it in _records_to_items(make(s, chunk), f"{shown} seed {s}"):
            if it.ctx not in seen and (keep is None or keep(it)):
                seen.add(it.ctx)
                out.append(it)
    if len(out) < n:
        raise InputError(
            f"{MAX_BUILDS} fresh builds gave only {len(out):,} items that are not in the file "
            f"under test; {n:,} were asked for (--sizes)",
            field="--sizes",
        )
    return out[:n]


def deeparithmark_builder(data: str | Path | None) -> Callable[[int, int], list[dict]]:
    """Builds of the families of ``data`` (its ``.families.json`` table, else the release's)."""
    from synthprobe.benchmarks.deeparithmark.build import iter_items
    from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES
    from synthprobe.benchmarks.deeparithmark.plugins import read_table

    templates = TEMPLATES
    if data is not None:
        table = read_table(data)
        if table is not None:
            templates = table[0]

    def make(seed: int, n: int) -> list[dict]:
        return list(iter_items(seed=seed, n=n, templates=templates))

    return make


def control_builder(name: str) -> Callable[[int, int], list[dict]]:
    from synthprobe.benchmarks.deeparithmark.controls import control_lines

    def make(seed: int, n: int) -> list[dict]:
        return [json.loads(line) for line in control_lines(name, seed=seed, n=n)]

    return make


def is_deeparithmark(items: Sequence[MCItem]) -> bool:
    return bool(items) and all(str(it.category).startswith("deeparithmark::") for it in items[:50])


@lru_cache(maxsize=4)
def _read(path: str, stamp: tuple[int, int]) -> tuple[MCItem, ...]:
    # ``stamp`` (size, mtime in ns) keys the cache, so a file rewritten in place is read again
    return tuple(load_arithmark3(path, strict_ids=False))


def from_file(path: str | Path, *, n: int, exclude: set[str]) -> list[MCItem]:
    """The first ``n`` items of ``path`` whose context is not in the file under test (the file is
    read once per run: the check before the model loads and the run share it)."""
    try:
        st = Path(path).stat()
        read = _read(str(path), (st.st_size, st.st_mtime_ns))
    except OSError:  # the reader names the file and what is wrong with it
        read = tuple(load_arithmark3(path, strict_ids=False))
    items = [it for it in read if it.ctx not in exclude]
    if len(items) < n:
        raise InputError(
            f"holds {len(items):,} items that are not in the file under test; --sizes asks for {n:,}", path=path
        )
    return items[:n]
