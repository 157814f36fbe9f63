"""Deep Arithmark families from outside the package: a module file or an installed entry point.

A family written elsewhere follows the contract of ours (:mod:`.base`): a module whose
``generate(rng)`` is decorated with :func:`.base.register` and returns a :class:`.base.Problem`
(the story, the solution steps, the answer and the named mistakes). It is found

* from a path: ``synthprobe build deeparithmark --family my_units.py`` (repeatable), or
* from an installed distribution's entry point in the group :data:`GROUP`
  (``[project.entry-points."synthprobe.families"] units = "my_pkg.units"``), named by the entry
  point's name: ``--family units``. Entry points are looked up only when one is named, and
  only the named one is imported.

Before a build draws a single item, :func:`preflight` draws :data:`PREFLIGHT_DRAWS` problems
from each outside family and refuses it, with one error naming the family and what it
returned, when a draw is not a well-formed problem of that family, its steps do not
re-evaluate to its answer, its mistakes cannot put the answer at every rank, or the item made
from a draw breaks a rule of :mod:`.checks`.

Which families a file holds, their weights and where each came from is written beside the
data as ``<file>.families.json`` (:func:`table_path`): the selftest reads its composition
from there, so a file of other families is checked as strictly as the release.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib.util
import sys
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import (
    FAMILIES,
    Family,
    GenerationError,
    Problem,
    decoy_problem,
    feasible_ranks,
    usable_mistakes,
)
from synthprobe.benchmarks.deeparithmark.composition import (
    DEPTHS,
    N_OPTIONS,
    TEMPLATE_BY_NAME,
    TEMPLATES,
    Template,
    user_table,
)
from synthprobe.benchmarks.deeparithmark.steps import StepError, check_chain
from synthprobe.errors import InputError
from synthprobe.io.read import loads_json, sha256_file
from synthprobe.seeding import item_rng
from synthprobe.version import __version__

#: The entry-point group an installed package registers its families under.
GROUP = "synthprobe.families"

#: Problems drawn from each outside family before a build (about a second for a slow family).
PREFLIGHT_DRAWS = 200

#: What ``<data>.families.json`` declares itself as.
TABLE_SCHEMA = "synthprobe.deeparithmark.families"
TABLE_VERSION = 1
TABLE_SUFFIX = ".families.json"

#: A source as the build's worker processes receive it: ``("path", "/abs/file.py")`` or
#: ``("entry_point", "name")``.
Source = tuple[str, str]

_LOADED: dict[Source, tuple[list[str], dict]] = {}


@contextlib.contextmanager
def _deprecations_shown():
    """While a family's code is imported, a DeprecationWarning it triggers is printed (Python hides
    those outside ``__main__``): its author learns that an import path is going, and the new one."""
    with warnings.catch_warnings():
        warnings.simplefilter("default", DeprecationWarning)
        yield


def _ours() -> None:
    import synthprobe.benchmarks.deeparithmark.families  # noqa: F401  (registers every family of ours)


def source_of(spec: str) -> Source:
    """``--family`` value → source: an existing path or one ending in ``.py`` is a file,
    anything else the name of an entry point."""
    p = Path(spec)
    if p.suffix == ".py" or p.exists() or "/" in spec:
        return ("path", str(p.resolve()))
    return ("entry_point", spec)


def load_source(source: Source, *, shown: str | None = None) -> tuple[list[str], dict]:
    """Import one outside family module; returns the names it registered and where it came
    from (for the families table). Loading the same source again returns the first result."""
    if source in _LOADED:
        return _LOADED[source]
    _ours()
    kind, value = source
    shown = shown or value
    before = set(FAMILIES)
    if kind == "path":
        path = Path(value)
        if not path.is_file():
            raise InputError(
                "no such file; expected a Python module that defines a family", path=shown, field="--family"
            )
        digest = sha256_file(path)
        modname = f"synthprobe_family_{hashlib.sha256(value.encode()).hexdigest()[:12]}_{path.stem}"
        spec = importlib.util.spec_from_file_location(modname, path)
        if spec is None or spec.loader is None:
            raise InputError("cannot be imported as a Python module", path=shown, field="--family")
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        try:
            with _deprecations_shown():
                spec.loader.exec_module(module)
        except Exception as exc:  # the user's code: any failure is bad input, named
            _forget(before)
            sys.modules.pop(modname, None)
            raise InputError(
                f"the family module failed to import: {type(exc).__name__}: {exc}", path=shown, field="--family"
            ) from None
        origin = {"path": value, "sha256": digest}
    else:
        from importlib.metadata import entry_points

        found = [ep for ep in entry_points(group=GROUP) if ep.name == value]
        if not found:
            names = sorted({ep.name for ep in entry_points(group=GROUP)})
            raise InputError(
                f"{value!r} is neither a file nor an installed family: no entry point of that "
                f"name in the group {GROUP!r} (installed: {', '.join(names) or 'none'})",
                field="--family",
            )
        ep = found[0]
        try:
            with _deprecations_shown():
                ep.load()
        except Exception as exc:
            _forget(before)
            raise InputError(
                f"the entry point {value!r} ({ep.value}) failed to import: {type(exc).__name__}: {exc}",
                field="--family",
            ) from None
        dist = ep.dist
        origin = {
            "entry_point": value,
            "value": ep.value,
            "distribution": dist.metadata["Name"] if dist is not None else None,
            "version": dist.version if dist is not None else None,
        }
    names = [n for n in FAMILIES if n not in before]
    if not names:
        raise InputError(
            "registers no family: decorate its generate(rng) with "
            "@register(NAME, topic=..., depth=...) from synthprobe.plugin",
            path=shown if kind == "path" else None,
            field="--family",
        )
    _LOADED[source] = (names, origin)
    return names, origin


def _forget(before: set[str]) -> None:
    for name in [n for n in FAMILIES if n not in before]:
        del FAMILIES[name]


def load_sources(sources: Sequence[Source]) -> dict[str, dict]:
    """Load every source; family name → where it came from."""
    out: dict[str, dict] = {}
    for source in sources:
        names, origin = load_source(source)
        for name in names:
            out[name] = origin
    return out


def read_composition(path: Path, outside: Sequence[str]) -> list[Template]:
    """The rows of a composition table: a CSV file with the header ``family,weight``, one row
    per family (one of ours or one loaded with ``--family``), the weight a whole number >= 1
    (the release's rows are its item counts per 1,000)."""
    _ours()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"cannot be read ({getattr(exc, 'strerror', None) or exc})", path=path, field="--composition"
        ) from None
    rows = list(csv.reader(text.splitlines()))
    if not rows or [c.strip() for c in rows[0]] != ["family", "weight"]:
        raise InputError("expected the header 'family,weight' on the first line", path=path, line=1)
    out: list[Template] = []
    for lineno, row in enumerate(rows[1:], start=2):
        if not row or not "".join(row).strip():
            continue
        if len(row) != 2:
            raise InputError(f"expected 2 fields (family,weight), got {len(row)}", path=path, line=lineno)
        name, weight = row[0].strip(), row[1].strip()
        fam = FAMILIES.get(name)
        if fam is None:
            raise InputError(
                f"no family {name!r}: expected one of ours ({', '.join(t.name for t in TEMPLATES)}) "
                "or one loaded with --family",
                path=path,
                line=lineno,
                field="family",
            )
        if not weight.isdigit() or int(weight) < 1:
            raise InputError(f"expected a whole number >= 1, got {weight!r}", path=path, line=lineno, field="weight")
        out.append(Template(name, fam.topic, fam.depth, int(weight)))
    missing = [n for n in outside if n not in {t.name for t in out}]
    if missing:
        raise InputError(
            f"lists no row for {', '.join(map(repr, missing))}, loaded with --family; add a "
            "row per family the file should hold",
            path=path,
            field="--composition",
        )
    return out


def family_table(outside: Sequence[str], composition: Path | None) -> tuple[Template, ...]:
    """The table a build draws from: the rows of ``composition``, or else every outside family
    with weight 1 (an equal share each; depth tiers in proportion to their families)."""
    if composition is not None:
        rows = read_composition(composition, outside)
    else:
        rows = [Template(n, FAMILIES[n].topic, FAMILIES[n].depth, 1) for n in outside]
    try:
        return user_table(rows)
    except ValueError as exc:
        raise InputError(str(exc), path=composition, field=None if composition else "--family") from None


# ---------------------------------------------------------------------------------------
# Preflight: refuse a family that cannot make valid items, naming what it returned
# ---------------------------------------------------------------------------------------


def _short(obj: object, limit: int = 240) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[:limit] + "…"


def preflight(fam: Family, by_name: Mapping[str, Template], *, shown: str, draws: int = PREFLIGHT_DRAWS) -> None:
    """Draw ``draws`` problems from ``fam`` as the builder would and raise :class:`InputError`
    (one line naming the family and what it returned) at the first that cannot make an item:
    not a :class:`.base.Problem` of this family, a depth outside the tiers, an answer that is
    not a positive whole number, steps that do not re-evaluate to the answer or are not
    ``depth`` long, an item that breaks a rule of :mod:`.checks`; and, after all the draws,
    when every draw was rejected or some answer rank was never possible (too few usable
    mistakes on one side of the answer)."""
    from synthprobe.benchmarks.deeparithmark.checks import ITEM_RULES, item_faults
    from synthprobe.benchmarks.deeparithmark.item import decoy_sets, make_item

    name = fam.name
    where = f"family {name!r} ({shown})"
    if fam.depth not in DEPTHS:
        raise InputError(
            f"{where} is registered with depth {fam.depth}; expected one of {list(DEPTHS)}", field="--family"
        )
    ranks: Counter = Counter()
    rejected: list[str] = []
    example: Problem | None = None
    for i in range(draws):
        rng = item_rng(f"deeparithmark/preflight/{name}", 0, i)
        try:
            problem = fam.generate(rng)
        except GenerationError as exc:
            rejected.append(str(exc))
            continue
        except Exception as exc:
            raise InputError(
                f"{where}: generate(rng) raised {type(exc).__name__}: {exc} (draw {i})", field="--family"
            ) from None
        if not isinstance(problem, Problem):
            raise InputError(
                f"{where}: generate(rng) returned {type(problem).__name__} {_short(problem)}; expected a Problem",
                field="--family",
            )
        if (problem.family, problem.topic, problem.depth) != (name, fam.topic, fam.depth):
            raise InputError(
                f"{where}: returned a problem with family {problem.family!r}, topic "
                f"{problem.topic!r}, depth {problem.depth}; it is registered with topic "
                f"{fam.topic!r}, depth {fam.depth}",
                field="--family",
            )
        if not isinstance(problem.answer, int) or isinstance(problem.answer, bool) or problem.answer <= 0:
            raise InputError(
                f"{where}: returned the answer {problem.answer!r}; expected a positive whole number", field="--family"
            )
        steps = list(problem.steps)
        if len(steps) != problem.depth:
            raise InputError(
                f"{where}: returned {len(steps)} solution steps at depth {problem.depth}: {_short(steps)}",
                field="--family",
            )
        try:
            check_chain(steps, problem.answer)
        except StepError as exc:
            raise InputError(
                f"{where}: its steps do not re-evaluate to its answer {problem.answer}: {exc}; "
                f"it returned the steps {_short(steps)}",
                field="--family",
            ) from None
        feasible = feasible_ranks(problem)
        ranks.update(feasible)
        if example is None:
            example = problem
        for rank in sorted(feasible)[:1]:
            _, sets = decoy_sets(problem, rank)
            item = make_item(problem, sets, template=name, ind=0, slot=rank % N_OPTIONS, rank=rank, rng=rng)
            faults = item_faults(item, 0, by_name)
            if faults:
                rule, msg = faults[0]
                raise InputError(
                    f"{where}: an item made from draw {i} breaks the rule '{ITEM_RULES[rule]}': {msg}", field="--family"
                )
    if example is None:
        raise InputError(
            f"{where}: rejected all {draws} draws (GenerationError: {Counter(rejected).most_common(1)[0][0]})",
            field="--family",
        )
    never = [r for r in range(N_OPTIONS) if not ranks[r]]
    if never:
        usable = usable_mistakes(example)
        why = {k: decoy_problem(example.answer, v, example.kind) or "usable" for k, v in example.mistakes.items()}
        raise InputError(
            f"{where} cannot produce enough valid decoys: in {draws} draws the answer could never be "
            f"put at rank {', '.join(map(str, never))} (rank 0 = smallest of the {N_OPTIONS} options), "
            f"which needs {N_OPTIONS - 1} usable mistakes on the right sides of the answer; the first "
            f"draw returned the answer {example.answer} with the mistakes {_short(dict(example.mistakes))} "
            f"({len(usable)} usable: {_short(why)})",
            field="--family",
        )


# ---------------------------------------------------------------------------------------
# The families table written beside a file built from them
# ---------------------------------------------------------------------------------------


def table_path(data: str | Path) -> Path:
    """Where the families table of ``data`` lives: ``<data>.families.json`` beside it."""
    data = Path(data)
    return data.with_name(data.name + TABLE_SUFFIX)


def describe(
    templates: Sequence[Template], origins: Mapping[str, dict], *, seed: int, n: int, number_format: str
) -> dict:
    """The families table of a build (without the data's digest, which the build adds)."""
    ours = {"package": "synthprobe", "version": __version__}
    return {
        "schema": TABLE_SCHEMA,
        "schema_version": TABLE_VERSION,
        "synthprobe_version": __version__,
        "seed": seed,
        "n": n,
        "number_format": number_format,
        "families": [
            {"name": t.name, "topic": t.topic, "depth": t.depth, "weight": t.count, "source": origins.get(t.name, ours)}
            for t in templates
        ],
    }


def read_table(data: str | Path) -> tuple[tuple[Template, ...], dict] | None:
    """The table beside ``data`` as ``(templates, the whole document)``, or None when there is
    none (the file is then checked against the release table). Bad content: :class:`InputError`."""
    path = table_path(data)
    if not path.is_file():
        return None
    try:
        doc = loads_json(path.read_text(encoding="utf-8"), path=path)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=path) from None
    if not isinstance(doc, dict) or doc.get("schema") != TABLE_SCHEMA:
        raise InputError(f'expected a JSON object with "schema": "{TABLE_SCHEMA}"', path=path, field="schema")
    if doc.get("schema_version") != TABLE_VERSION:
        raise InputError(
            f"expected schema_version {TABLE_VERSION}, got {doc.get('schema_version')!r}",
            path=path,
            field="schema_version",
        )
    rows = doc.get("families")
    if not isinstance(rows, list) or not rows:
        raise InputError("expected a non-empty list of families", path=path, field="families")
    out = []
    for i, row in enumerate(rows):
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("name"), str)
            or not isinstance(row.get("topic"), str)
            or not isinstance(row.get("depth"), int)
            or not isinstance(row.get("weight"), int)
        ):
            raise InputError(
                "expected an object with name, topic (strings), depth and weight (integers)",
                path=path,
                field=f"families[{i}]",
            )
        out.append(Template(row["name"], row["topic"], row["depth"], row["weight"]))
    try:
        templates = user_table(out)
    except ValueError as exc:
        raise InputError(str(exc), path=path, field="families") from None
    if [(t.name, t.topic, t.depth, t.count) for t in templates] == [
        (t.name, t.topic, t.depth, t.count) for t in TEMPLATES
    ]:
        templates = TEMPLATES
    return templates, doc


def by_name(templates: Sequence[Template]) -> Mapping[str, Template]:
    return TEMPLATE_BY_NAME if templates is TEMPLATES else {t.name: t for t in templates}
