"""The role-balanced build (``--decoys groups``): every full group shows one set of four values,
each the key of one of its items and a named mistake of the others; the legacy plan's balance;
byte-identical rebuilds; shipped catalogues that match their families; clear failures."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from synthprobe.benchmarks.deeparithmark import build as B
from synthprobe.benchmarks.deeparithmark import groups as G
from synthprobe.benchmarks.deeparithmark.base import FAMILIES, Problem, usable_mistakes
from synthprobe.benchmarks.deeparithmark.composition import TEMPLATES, Template, balance_plan, composition, user_table
from synthprobe.benchmarks.deeparithmark.grouped_build import GroupBuildError, plan_members

N = 400
SEED = 11

#: The templates whose catalogues ship; the tests build from them (a template without one is
#: made at build time, a minute or more each, or refused when its family has no group at all).
SHIPPED = [t for t in TEMPLATES if G.shipped_path(t.name).exists()]
TABLE = user_table(SHIPPED) if SHIPPED else ()
pytestmark = pytest.mark.skipif(not SHIPPED, reason="no role-balanced catalogue ships yet")


@pytest.fixture(scope="module")
def items():
    return list(B.iter_items(SEED, N, decoys="groups", templates=TABLE))


def _groups(items):
    out = defaultdict(list)
    for it in items:
        out[it["metadata"]["group"]].append(it)
    return out


def test_every_full_group_shows_one_value_set_with_each_value_the_key_once(items):
    full = 0
    for gid, members in _groups(items).items():
        assert len(members) <= 4
        sets = {tuple(sorted(it["metadata"]["option_values"])) for it in members}
        assert len(sets) == 1, gid
        keys = [it["metadata"]["option_values"][int(it["label"])] for it in members]
        assert len(set(keys)) == len(keys), gid  # no value is the key twice
        assert {it["metadata"]["template"] for it in members} == {gid.split("#")[0]}
        if len(members) == 4:
            full += 1
            assert sorted(it["metadata"]["answer_rank"] for it in members) == [0, 1, 2, 3]
    assert full >= N // 4 - len(TABLE)  # at most one partial group per template


def test_every_decoy_is_the_named_mistake_of_its_own_item(items):
    """Re-run each item's story from its catalogue and check every shown decoy against the mistake
    it is named after (mistakes and extra_mistakes of that very problem)."""
    fams = B.load_families()
    cats = {t.name: G.load_catalogue(fams[t.name], t.name) for t in TABLE}
    for it in items[:120]:
        md = it["metadata"]
        cat = cats[md["template"]]
        values = tuple(sorted(md["option_values"]))
        g = cat.groups.index(values)
        position = values.index(int(md["option_values"][int(it["label"])]))
        problem = next(
            p
            for i in cat.members[g][position]
            if (p := G.draw_problem(fams[md["template"]], md["template"], i)) is not None and p.ctx == it["ctx"]
        )
        named = {**problem.mistakes, **problem.extra_mistakes}
        for source, value in zip(md["option_sources"], md["option_values"]):
            if source == "correct":
                assert value == problem.answer
            else:
                assert named[source] == value, (it["source_id"], source)


def test_plan_balance_is_the_legacy_builds(items):
    stats = B.BuildStats()
    list(B.iter_items(SEED, N, decoys="groups", stats=stats, templates=TABLE))
    plan = balance_plan(N, TABLE)
    for d, grid in plan.grid.items():
        for s in range(4):
            for r in range(4):
                assert stats.grid[s, r, d] == grid[s][r]
    assert Counter(it["metadata"]["template"] for it in items) == Counter(composition(N, TABLE))


def test_a_rebuild_is_byte_identical(items):
    again = [B.dumps_item(it) for it in B.iter_items(SEED, N, decoys="groups", templates=TABLE)]
    assert again == [B.dumps_item(it) for it in items]
    other = [B.dumps_item(it) for it in B.iter_items(SEED + 1, N, decoys="groups", templates=TABLE)]
    assert other != again


def test_contexts_never_repeat(items):
    assert len({it["ctx"] for it in items}) == len(items)


@pytest.mark.parametrize("template", [t.name for t in SHIPPED])
def test_shipped_catalogue_matches_its_family(template):
    """A family whose numbers or mistakes changed after its catalogue was made is found here
    (re-make it: python tools/deeparithmark_catalogues.py --write)."""
    B.load_families()
    cat = G.read_catalogue(G.shipped_path(template))
    assert cat.fingerprint == G.fingerprint(FAMILIES[template], template)
    assert len(cat) >= 50, f"{template}: only {len(cat)} groups"


def test_a_template_without_groups_is_refused_with_the_remedy():
    B.load_families()
    empty = G.Catalogue(template="money_discount_fee", draws=10, fingerprint="", groups=(), members=())
    table = user_table([Template("money_discount_fee", "money_discount_fee", 2, 1)])
    with pytest.raises(GroupBuildError, match="extra_mistakes"):
        plan_members(1, 8, table, {"money_discount_fee": empty})


def test_legacy_mode_ignores_extra_mistakes():
    """The legacy selection reads ``mistakes`` alone, so a family's extra mistakes leave the
    release's bytes as they were."""
    p = Problem(
        family="x", topic="x", depth=2, ctx="c", answer=50, unit="u", ending=" {} u.", steps=("a",),
        mistakes={"m": 30}, extra_mistakes={"e": 70},
    )  # fmt: skip
    assert usable_mistakes(p) == {"m": 30}
    assert usable_mistakes(p, extra=True) == {"m": 30, "e": 70}
    assert G.member_options(p, (30, 50, 70, 90)) is None  # 90 is no mistake of this item
