"""Role-balanced groups: four items of one template that show the same four values, each value
the key of one item and a named mistake of the other three.

Why. Every decoy of Deep Arithmark is the exact value of a named mistake, a fixed function of the
solution path, so under the legacy selection (pick three usable mistakes for the planned rank) the
*shape* of an item's four values tells where the key sits: a classifier that reads the four values
alone picked the key of 56 % of the release's items (chance 25 %; ``DEEPARITHMARK_DESIGN.md``).
If instead the same four values are shown in four items, each value the key once, a strategy that
reads only the options answers the four items from the same input and so scores exactly one of
four: 25 % in expectation for *any* options-only strategy, whatever it looks at (WinoGrande's twin
sentences and Balanced COPA's mirrored items, generalised to four options).

How the groups are found. Families are forward generators (``generate(rng) -> Problem``); nothing
inverts them. A template's **catalogue** is made by drawing a fixed number of problems from fixed
streams (``derive_seed("deeparithmark/catalogue", template, i)``), keeping each problem's answer and
its pool — the usable values of its ``mistakes`` and ``extra_mistakes`` (:func:`.base.usable_mistakes`
with ``extra=True``: positive, distinct, never the answer ± 1, in the answer's roundness class, clock
values in its half of the day). Four values ``V`` form a group when for every ``v`` in ``V`` some
drawn problem has answer ``v`` and a pool holding the other three. The catalogue keeps, per group
and per member, the first draws (in draw order) that realise that member, so a build can re-run
``generate`` on one of those streams and get the member's story, steps and mistake names back. The
catalogue depends only on the family's code and the number of draws: it is the same on every
machine, and a build from it is byte-identical for a seed.

What it costs the benchmark. Only problems that take part in a group are shown, so each
template's answers follow the catalogue's groups rather than the family's own draws (the design doc
gives the shift per template); every decoy is still a named mistake of its own item. A family whose
mistakes are one-sided transforms of the answer (all above it, or a fixed ratio off) has few or no
groups; its author widens the pool with ``extra_mistakes`` (``docs/write-a-family.md``).
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import Family, GenerationError, Problem, usable_mistakes
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS
from synthprobe.seeding import derive_seed

#: Draws per template that make its catalogue (the built-in families' catalogues ship with the
#: package, so a build does not pay for them).
CATALOGUE_DRAWS = 200_000

#: Draws kept per group member: the stories a build may tell for it (it takes the first whose
#: context no earlier item of the build used).
DRAWS_PER_MEMBER = 8

#: Groups kept per template (in a fixed pseudo-random order); enough for 100,000-item builds.
MAX_GROUPS = 4000

#: Parts a template's catalogue may grow to (part ``k`` draws ``k * CATALOGUE_DRAWS`` onwards):
#: a build that uses up the groups of one part goes on with the next, made when first needed and
#: cached (the release and builds of ordinary sizes never get past part 0, the shipped one).
MAX_PARTS = 8

#: Draws whose signatures make a catalogue's fingerprint (see :func:`fingerprint`).
FINGERPRINT_DRAWS = 2000

#: Where the built-in families' catalogues ship (one gzip'd JSON file per template).
SHIPPED = Path(__file__).resolve().parents[2] / "resources" / "deeparithmark_groups"

Group = tuple[int, int, int, int]  # the four values, ascending


@dataclass(frozen=True)
class Catalogue:
    """A template's role-balanced groups and, per group and member, the draws that realise it."""

    template: str
    draws: int
    fingerprint: str
    groups: tuple[Group, ...]
    members: tuple[tuple[tuple[int, ...], ...], ...]  # [group][value position] -> draw indices
    start: int = 0  # the first draw (part k of a template's catalogue starts at k * CATALOGUE_DRAWS)

    def __len__(self) -> int:
        return len(self.groups)

    def to_json(self) -> dict:
        out = {
            "template": self.template,
            "draws": self.draws,
            "fingerprint": self.fingerprint,
            "groups": [list(g) for g in self.groups],
            "members": [[list(m) for m in ms] for ms in self.members],
        }
        if self.start:
            out["start"] = self.start
        return out

    @classmethod
    def from_json(cls, data: Mapping) -> Catalogue:
        return cls(
            template=data["template"],
            draws=int(data["draws"]),
            fingerprint=data["fingerprint"],
            groups=tuple(tuple(g) for g in data["groups"]),
            members=tuple(tuple(tuple(m) for m in ms) for ms in data["members"]),
            start=int(data.get("start", 0)),
        )


def catalogue_rng(template: str, i: int) -> random.Random:
    """The ``i``-th catalogue stream of ``template``."""
    return random.Random(derive_seed("deeparithmark/catalogue", template, i))


def draw_problem(fam: Family, template: str, i: int) -> Problem | None:
    """The problem of catalogue draw ``i`` (``None`` when the family rejects that draw)."""
    try:
        return fam.generate(catalogue_rng(template, i))
    except GenerationError:
        return None


def pool(problem: Problem) -> dict[str, int]:
    """The values a role-balanced item may show beside the answer, each with its mistake's name."""
    return usable_mistakes(problem, extra=True)


def _signature(problem: Problem) -> tuple[int, frozenset[int]]:
    return problem.answer, frozenset(pool(problem).values())


def fingerprint(fam: Family, template: str, draws: int = FINGERPRINT_DRAWS) -> str:
    """SHA-256 over the answers and pools of the first ``draws`` catalogue draws: it changes when
    the family's numbers or mistakes change, so a shipped catalogue that no longer matches its
    family is found (``tests``; :func:`load_catalogue` with ``verify=True``)."""
    h = hashlib.sha256()
    for i in range(draws):
        p = draw_problem(fam, template, i)
        h.update(b"-" if p is None else f"{p.answer}:{sorted(pool(p).values())};".encode())
    return h.hexdigest()


def _draw_all(fam: Family, template: str, draws: int, progress: bool | None, start: int = 0) -> dict[tuple, list[int]]:
    """Catalogue draw signature -> the draw indices that produce it, in draw order."""
    from tqdm import tqdm

    by_sig: dict[tuple, list[int]] = {}
    shown = None if progress is None else not progress
    for i in tqdm(range(start, start + draws), desc=f"catalogue {template}", disable=shown):
        p = draw_problem(fam, template, i)
        if p is not None:
            by_sig.setdefault(_signature(p), []).append(i)
    return by_sig


def _covers(by_sig: Mapping[tuple, list[int]]) -> dict[tuple[int, tuple[int, ...]], list[int]]:
    """``(answer, three other values ascending)`` -> draws whose problem shows them, for triples
    whose three values are each the answer of some draw (no group can use any other)."""
    answers = {a for a, _ in by_sig}
    cover: dict[tuple[int, tuple[int, ...]], list[int]] = {}
    for (a, values), idx in by_sig.items():
        for triple in itertools.combinations(sorted(v for v in values if v in answers), N_OPTIONS - 1):
            cover.setdefault((a, triple), []).extend(idx)
    return cover


def _groups(cover: Mapping[tuple[int, tuple[int, ...]], list[int]]) -> dict[Group, tuple[tuple[int, ...], ...]]:
    """Every four values that each member's answer can show with the other three."""
    out: dict[Group, tuple[tuple[int, ...], ...]] = {}
    for a, triple in cover:
        group = tuple(sorted((a, *triple)))
        if group in out:
            continue
        members = []
        for v in group:
            draws = cover.get((v, tuple(x for x in group if x != v)))
            if not draws:
                break
            members.append(tuple(sorted(draws)[:DRAWS_PER_MEMBER]))
        else:
            out[group] = tuple(members)
    return out


def build_catalogue(
    fam: Family, template: str, draws: int = CATALOGUE_DRAWS, *, progress: bool | None = None, start: int = 0
) -> Catalogue:
    """The catalogue of ``template`` from ``draws`` fixed draws from draw ``start`` (deterministic)."""
    found = _groups(_covers(_draw_all(fam, template, draws, progress, start)))
    order = sorted(found, key=lambda g: derive_seed("deeparithmark/catalogue-order", template, *g))[:MAX_GROUPS]
    order.sort()
    return Catalogue(
        template=template,
        draws=draws,
        fingerprint=fingerprint(fam, template),
        groups=tuple(order),
        members=tuple(found[g] for g in order),
        start=start,
    )


def write_catalogue(cat: Catalogue, path: Path) -> None:
    """Gzip'd JSON with a zero timestamp, so the bytes depend only on the catalogue."""
    from synthprobe.io.write import atomic_open

    text = json.dumps(cat.to_json(), separators=(",", ":"), sort_keys=True).encode("utf-8")
    with atomic_open(path, "wb") as fh:
        fh.write(gzip.compress(text, mtime=0))


def read_catalogue(path: Path) -> Catalogue:
    return Catalogue.from_json(json.loads(gzip.decompress(Path(path).read_bytes())))


def shipped_path(template: str) -> Path:
    return SHIPPED / f"{template}.json.gz"


def load_catalogue(
    fam: Family,
    template: str,
    *,
    verify: bool = False,
    cache_dir: Path | None = None,
    progress: bool | None = None,
    part: int = 0,
) -> Catalogue:
    """The template's catalogue: the shipped one for a built-in family, else one made now and kept
    in ``cache_dir`` (by fingerprint) for the next build. ``verify``: check a shipped catalogue's
    fingerprint against the family's code first, and make a new one where it differs. ``part``
    ``k`` > 0: the catalogue of the next ``CATALOGUE_DRAWS`` draws after part ``k - 1``'s (for
    builds that use up the groups before it; never shipped, made and cached when first asked for)."""
    if not 0 <= part < MAX_PARTS:
        raise ValueError(f"part {part} is outside 0..{MAX_PARTS - 1}")
    path = shipped_path(template)
    if part == 0 and path.exists():
        cat = read_catalogue(path)
        if not verify or cat.fingerprint == fingerprint(fam, template):
            return cat
    fp = fingerprint(fam, template)
    name = f"{template}-{fp[:16]}-{CATALOGUE_DRAWS}" + (f"-part{part}" if part else "") + ".json.gz"
    cached = None if cache_dir is None else Path(cache_dir) / name
    if cached is not None and cached.exists():
        return read_catalogue(cached)
    cat = build_catalogue(fam, template, progress=progress, start=part * CATALOGUE_DRAWS)
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        write_catalogue(cat, cached)
    return cat


def summarise(cats: Iterable[Catalogue]) -> list[dict]:
    """Per template: groups found and the distinct draws (stories) they can show."""
    rows = []
    for cat in cats:
        stories = {i for ms in cat.members for m in ms for i in m}
        rows.append({"template": cat.template, "groups": len(cat), "stories": len(stories), "draws": cat.draws})
    return rows


def member_options(problem: Problem, group: Sequence[int]) -> list[tuple[str, int]] | None:
    """The three decoys of ``problem`` (the group member whose key is its answer) with their
    mistake names, in the group's ascending order; ``None`` if the problem does not realise it."""
    names = {v: name for name, v in pool(problem).items()}
    out = []
    for v in group:
        if v == problem.answer:
            continue
        if v not in names:
            return None
        out.append((names[v], v))
    return out if problem.answer in group else None
