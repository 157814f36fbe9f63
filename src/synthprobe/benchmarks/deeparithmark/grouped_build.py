"""The role-balanced build: every item belongs to a group of four items of its template that show
the same four values, each value the key of one of them (:mod:`.groups`).

How an N-item file is made (reproducible from ``seed`` and ``N``, byte-identical on any machine):

1. **Composition** — as the legacy build: :func:`.composition.composition` gives each template its
   item count ``n_t``; item ``k`` of a template is member ``k % 4`` of its group ``k // 4``.
2. **Groups** — each template takes ``ceil(n_t / 4)`` groups from its catalogue in a seeded order
   (a catalogue smaller than that is gone through again, so a group can recur with other stories).
   A full group shows its four values in four items; the member whose key is the ``j``-th smallest
   value has answer rank ``j``, so full groups balance rank by construction. When ``n_t`` is not a
   multiple of 4 the last group shows ``n_t % 4`` of its members, chosen so that each depth tier's
   rank counts are the balance plan's; which member is shown is fixed before any value is known.
3. **Slots** — within a tier the items of each rank are dealt the plan's slots for that rank (a
   seeded deck), so the slot × rank × depth grid is the legacy build's, cell for cell.
4. **Order** — the legacy build's seeded shuffle of all items.
5. **Items**, in file order: the member's story is one of the catalogue draws that realise it
   (``generate`` re-run on that draw's stream), the first, from a seeded start, whose context no
   earlier item used and whose ending (unit and wording) every shown member of the group can
   share (the first unused story where they cannot); its three decoys are the group's other
   values with the names of the mistakes that give them on *this* item; they fill the other
   slots in a seeded order. Every item is
   re-checked against the per-item rules and the counts against the plan, as in the legacy build.

What it guarantees. Within a full group, any strategy that reads only the options sees the same
four values four times with the key at each of them once; it is right exactly once. Over a file,
a strategy that reads only options therefore scores 25 % in expectation whatever it computes (the
partial groups too, since which member is shown does not depend on the values). Its limits: the
stories of a group's members differ (names, goods), and where no four of their stories share an
ending, their units too, so a strategy that reads the ending sees four different inputs; a unit
drawn with the story can constrain the answers it admits, and so tell a member's role. Members are
therefore told with one ending wherever their stories allow (before this rule, 79 of the release's
244 full groups mixed units and a tree adversary reached 35-43 % on share_then_split's items). The
guarantee is in expectation, not item by item; the trained audit (:mod:`.trained_audit`) measures
it.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.base import Family, Problem
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS, Template, balance_plan, composition
from synthprobe.benchmarks.deeparithmark.groups import (
    MAX_PARTS,
    Catalogue,
    Group,
    draw_problem,
    load_catalogue,
    member_options,
)
from synthprobe.benchmarks.deeparithmark.item import item_json
from synthprobe.seeding import derive_seed, item_rng


class GroupBuildError(RuntimeError):
    """A role-balanced build cannot be made (a template without groups, a catalogue that no
    longer matches its family, a size beyond the stories a template's groups can tell)."""


@dataclass(frozen=True)
class Member:
    """Item ``k`` of ``template``: member ``position`` (answer rank) of the build's group ``serial``
    (which catalogue group that is, is settled when its first item is made: :class:`_Groups`)."""

    template: str
    k: int
    depth: int
    serial: int  # the group's number within this build (its id in the file)
    position: int  # which of the group's four values (ascending) is this item's answer
    slot: int = -1


class _Groups:
    """A template's groups in a seeded order (a small catalogue is gone through again), and the
    catalogue group and stories each of the build's groups is given.

    A build's group is settled when its first item is made: the next catalogue group in the
    seeded order for which every member the build shows has a story whose context no item has
    used yet; those stories are reserved at once. A catalogue group that cannot be told again
    (its members' stories used up by earlier groups sharing them) is passed over. When no group
    of the catalogue can be told any more, the build goes on with the catalogue's next part
    (``more(part)``: the groups of the next draws; a large build's only)."""

    def __init__(
        self,
        fam: Family,
        cat: Catalogue,
        template: str,
        seed: int,
        used: set[str],
        more: Callable[[int], Catalogue] | None = None,
    ) -> None:
        self.fam, self.cat, self.template, self.seed, self.used = fam, cat, template, seed, used
        self.more, self.part = more, 0
        self.rng = random.Random(derive_seed("deeparithmark/groups", seed, template))
        self.queue: list[int] = []
        self.settled: dict[int, tuple[Group, dict[int, Problem]]] = {}

    def _next(self) -> int:
        if not self.queue:
            self.queue = list(range(len(self.cat)))
            self.rng.shuffle(self.queue)
            self.queue.reverse()  # popped from the end: the shuffled order
        return self.queue.pop()

    def member(self, m: Member, positions: Sequence[int]) -> tuple[Sequence[int], Problem]:
        """The group's four values and the story of member ``m`` (``positions``: the members of
        its group the build shows)."""
        if m.serial not in self.settled:
            self.settled[m.serial] = self._settle(m, positions)
        values, stories = self.settled[m.serial]
        problem = stories.pop(m.position)
        if not stories:
            del self.settled[m.serial]
        return values, problem

    def _settle(self, m: Member, positions: Sequence[int]) -> tuple[Group, dict[int, Problem]]:
        while True:
            for _ in range(len(self.cat) + 1):
                group = self._next()
                stories = _one_ending({j: self._stories(group, j, m) for j in positions})
                if stories is not None:
                    self.used.update(p.ctx for p in stories.values())
                    return self.cat.groups[group], stories
            if self.more is None or self.part + 1 >= MAX_PARTS:
                break
            self.part += 1
            self.cat, self.queue = self.more(self.part), []
        raise GroupBuildError(
            f"template {self.template!r}: no catalogue group has unused stories left for group {m.serial} "
            f"({len(self.cat):,} groups in part {self.part} of its catalogue, {self.cat.draws:,} draws a part); "
            "the catalogue is too small for a build of this size"
        )

    def _stories(self, group: int, position: int, m: Member) -> list[Problem]:
        """The draws realising the member whose context is unused, from a seeded start."""
        draws = self.cat.members[group][position]
        start = item_rng(f"deeparithmark/{self.template}", self.seed, m.serial, position).randrange(len(draws))
        out = []
        for i in draws[start:] + draws[:start]:
            problem = draw_problem(self.fam, self.template, i)
            if problem is None or member_options(problem, self.cat.groups[group]) is None:
                raise GroupBuildError(
                    f"template {self.template!r}: catalogue draw {i} no longer realises group "
                    f"{self.cat.groups[group]} (the family changed since its catalogue was made: re-make it with "
                    "tools/deeparithmark_catalogues.py)"
                )
            if problem.ctx not in self.used:
                out.append(problem)
        return out


def _one_ending(candidates: Mapping[int, list[Problem]]) -> dict[int, Problem] | None:
    """One story per member: where the members can all be told with the same ending (unit and
    its wording), the first such stories, so the four items of a group show the same four endings
    and the unit cannot tell a member's role (a unit drawn with the story can constrain which
    answers it admits); else each member's first story. None when a member has none left."""
    if not all(candidates.values()):
        return None
    for ending in dict.fromkeys(p.ending for p in next(iter(candidates.values()))):
        chosen = {j: next((p for p in ps if p.ending == ending), None) for j, ps in candidates.items()}
        if all(p is not None for p in chosen.values()) and len({p.ctx for p in chosen.values()}) == len(chosen):
            return chosen
    first = {j: ps[0] for j, ps in candidates.items()}
    return first if len({p.ctx for p in first.values()}) == len(first) else None


def _partial_positions(residual: list[int], size: int, rng: random.Random) -> list[int]:
    """``size`` distinct ranks for a partial group: those the tier still lacks most (seeded ties)."""
    ranks = list(range(N_OPTIONS))
    rng.shuffle(ranks)
    ranks.sort(key=lambda r: -residual[r])
    chosen = sorted(ranks[:size])
    for r in chosen:
        residual[r] -= 1
    return chosen


def plan_members(seed: int, n: int, templates: Sequence[Template], catalogues: Mapping[str, Catalogue]) -> list[Member]:
    """Every item of the build in canonical order (template by template, ``k`` ascending) with
    its group, rank and slot (steps 1-3 of the module docstring)."""
    comp = composition(n, templates)
    plan = balance_plan(n, templates)
    by_template: dict[str, list[Member]] = {}
    serial = 0
    for d in plan.grid:
        tier = [t for t in templates if t.depth == d and comp[t.name]]
        full = sum(comp[t.name] // N_OPTIONS for t in tier)
        residual = [sum(plan.grid[d][s][r] for s in range(N_OPTIONS)) - full for r in range(N_OPTIONS)]
        rng = random.Random(derive_seed("deeparithmark/groups-partial", seed, d))
        tier_members: list[Member] = []
        for t in tier:
            count = comp[t.name]
            if not len(catalogues[t.name]):
                raise GroupBuildError(
                    f"template {t.name!r} has no role-balanced group in its catalogue "
                    f"({catalogues[t.name].draws:,} draws): its mistakes cannot show the same four values with "
                    "each as the key; widen its pool with extra_mistakes (docs/write-a-family.md)"
                )
            k = 0
            for g in range(-(-count // N_OPTIONS)):
                size = min(N_OPTIONS, count - N_OPTIONS * g)
                positions = range(N_OPTIONS) if size == N_OPTIONS else _partial_positions(residual, size, rng)
                for position in positions:
                    tier_members.append(Member(t.name, k, d, serial, position))
                    k += 1
                serial += 1
        if any(residual):
            raise GroupBuildError(f"depth {d}: the partial groups cannot meet the plan's rank counts ({residual})")
        for m in _deal_slots(tier_members, plan.grid[d], seed, d):
            by_template.setdefault(m.template, []).append(m)
    # canonical order: template by template in table order, k ascending (the legacy layout's)
    return [m for t in templates for m in by_template.get(t.name, ())]


def _deal_slots(tier: list[Member], grid: Sequence[Sequence[int]], seed: int, depth: int) -> list[Member]:
    """The tier's members with slots: the items of rank ``r`` get the plan's slots for ``r``."""
    out = list(tier)
    for r in range(N_OPTIONS):
        deck = [s for s in range(N_OPTIONS) for _ in range(grid[s][r])]
        random.Random(derive_seed("deeparithmark/groups-slots", seed, depth, r)).shuffle(deck)
        idx = [i for i, m in enumerate(out) if m.position == r]
        if len(idx) != len(deck):
            raise GroupBuildError(f"depth {depth}, rank {r}: {len(idx)} items for {len(deck)} planned slots")
        for i, s in zip(idx, deck):
            m = out[i]
            out[i] = Member(m.template, m.k, m.depth, m.serial, m.position, s)
    return out


def grouped_item(problem: Problem, decoys: list[tuple[str, int]], m: Member, ind: int, rng: random.Random) -> dict:
    """The item's JSON object, with the group's id as ``metadata.group``."""
    rng.shuffle(decoys)
    options = decoys[: m.slot] + [("correct", problem.answer)] + decoys[m.slot :]
    item = item_json(problem, options, template=m.template, ind=ind, slot=m.slot, rank=m.position)
    item["metadata"]["group"] = f"{m.template}#{m.serial}"
    return item


def catalogue_cache() -> Path:
    from synthprobe.backends.spec import cache_root

    return cache_root() / "deeparithmark_groups"


def load_catalogues(families: Mapping[str, Family], templates: Sequence[Template]) -> dict[str, Catalogue]:
    """Each template's catalogue (shipped, or made now and cached for a family from outside)."""
    cache = catalogue_cache()
    return {t.name: load_catalogue(families[t.name], t.name, cache_dir=cache) for t in templates}


def _more(fam: Family, template: str) -> Callable[[int], Catalogue]:
    """Part ``k`` of the template's catalogue, made (and cached) when a large build first needs it."""
    return lambda part: load_catalogue(fam, template, cache_dir=catalogue_cache(), part=part)


def iter_grouped(
    seed: int, n: int, families: Mapping[str, Family], templates: Sequence[Template], order: Sequence[int]
) -> Iterator[tuple[dict, Problem, Member]]:
    """The items in file order (``order``: file position -> canonical index), unchecked."""
    catalogues = load_catalogues(families, templates)
    members = plan_members(seed, n, templates, catalogues)
    shown: dict[int, list[int]] = {}
    for m in members:
        shown.setdefault(m.serial, []).append(m.position)
    used: set[str] = set()
    resolvers = {
        t.name: _Groups(families[t.name], catalogues[t.name], t.name, seed, used, _more(families[t.name], t.name))
        for t in templates
    }
    for ind, c in enumerate(order):
        m = members[c]
        group, problem = resolvers[m.template].member(m, shown[m.serial])
        decoys = member_options(problem, group)
        rng = item_rng(f"deeparithmark/{m.template}", seed, m.k, "decoys")
        yield grouped_item(problem, decoys, m, ind, rng), problem, m


def group_sizes(items: Sequence[dict]) -> Counter:
    """Items per group id in a file (4 for a full group)."""
    return Counter(it["metadata"].get("group") for it in items)
