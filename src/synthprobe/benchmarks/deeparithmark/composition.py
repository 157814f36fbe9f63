"""What Deep Arithmark-1 is made of: the release's template table and its balance plan.

The table below *is* the release: fifteen templates (families), their topic label, depth
tier and item count for the 1,000-item file. Everything else — the composition for other
sizes, the expected slot / rank / depth balance and the per-cell grid — is derived from it,
by the builder and by the selftest alike.

A build from families outside the package (``synthprobe build deeparithmark --family``) uses a
table of its own (:func:`user_table`): every function below takes the table as ``templates``,
defaulting to the release's, and reads each row's ``count`` as a weight.

Composition for N items
    N a multiple of 1,000 scales the table exactly. Any other N is split proportionally:
    first into the four depth tiers (as even as possible, the spare items to the shallower
    tiers first), then each tier among its templates by the largest-remainder method
    (ties to the template listed first).

Balance plan
    Within each depth tier the items are spread over the 4 × 4 grid of correct slot ×
    answer rank (rank 0 = the answer is the smallest of the four values) as evenly as
    possible: every cell holds ``n_tier // 16`` items, and the ``n_tier % 16`` spare items
    go one per cell so that each slot and each rank gains as evenly as possible. Leftover
    spares go to slots in the order 0, 1, 2, 3 and to ranks in the order 1, 3, 0, 2 —
    alternating a middle and an extreme rank, so that "pick a middle value" and "pick an
    extreme value" stay as close to 50 % as the tier size allows. Every tier uses the same
    slot and rank split, so rank is balanced uniformly across depth (no depth-dependent rank
    preference can fake a depth curve). For the release, 250 items per tier give cells of 15
    or 16 items, correct slots 252 / 252 / 248 / 248 and ranks 248 / 252 / 248 / 252.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Number of options per item (the ArithMark 3.0 contract allows ≥ 2; Deep Arithmark uses 4).
N_OPTIONS = 4

#: Depth tiers, shallow to deep.
DEPTHS = (2, 3, 4, 5)

#: Size of the release the table describes.
RELEASE_SIZE = 1000

#: Largest ``--n`` a build accepts: room for ten times a 10-million-item file, while a mistyped
#: size (``--n 1000000000000``) is refused at once instead of running for days.
MAX_BUILD_SIZE = 10**8

#: Default seed of the released file.
RELEASE_SEED = 20261027

#: Release name as it appears in ``activity_label``.
RELEASE_NAME = "deeparithmark-1"

#: How a build chooses decoys: ``groups`` builds role-balanced groups (:mod:`.grouped_build`: the
#: same four values are the options of four items, each the key of one), ``legacy`` picks three
#: usable mistakes for each item's planned rank (the builder of 2026-10, whose options give the key
#: away; kept as the trained audit's positive control).
GROUPS = "groups"
LEGACY = "legacy"
DECOY_MODES = (GROUPS, LEGACY)
#: The release's mode, and so the default of every build, command and fresh-seed build that stands
#: for the release (the trained audit's, the sweep's, validate's seeds).
DEFAULT_DECOYS = GROUPS

#: The released file, relative to the repository root: the default data of every command that
#: reads the release (build --check, score, export, the docs tool).
RELEASE_FILE = Path("data") / f"{RELEASE_NAME}.jsonl"


@dataclass(frozen=True)
class Template:
    """One row of a table: the release's (``count`` = items per 1,000) or a user's (``count`` =
    the family's weight)."""

    name: str
    topic: str
    depth: int
    count: int


#: The Deep Arithmark-1 release: template, topic label, depth, items (1,000 in all, 250 per tier).
TEMPLATES: tuple[Template, ...] = (
    Template("money_discount_fee", "money_discount_fee", 2, 122),
    Template("time_clock_end", "time_clock_end", 2, 128),
    Template("measure_cm_cut", "measure_cm_cut", 3, 33),
    Template("share_then_split", "share_then_split", 3, 44),
    Template("two_rate_pay", "two_rate_pay", 3, 45),
    Template("stock_percent_pack", "stock_percent_pack", 3, 48),
    Template("trip_minutes", "trip_minutes", 3, 33),
    Template("schedule_sessions", "schedule_sessions", 3, 47),
    Template("inventory_boxes", "multi_step_inventory", 4, 62),
    Template("mix_split", "mix_split", 4, 63),
    Template("tank_fill", "tank_fill", 4, 62),
    Template("discount_tax_coupon_split", "discount_tax_coupon_split", 4, 63),
    Template("salary_overtime_tax", "salary_overtime_tax", 5, 84),
    Template("inventory_percent_chain", "multi_step_inventory", 5, 83),
    Template("prize_ratio_charity", "prize_ratio_charity", 5, 83),
)

TEMPLATE_BY_NAME = {t.name: t for t in TEMPLATES}

#: Order in which a tier's spare items go to correct slots and to answer ranks.
SLOT_SPARE_ORDER = (0, 1, 2, 3)
RANK_SPARE_ORDER = (1, 3, 0, 2)


def _check_table() -> None:
    """The table must add up to the release (fails at import, whatever ``-O`` says)."""
    problems = []
    if sum(t.count for t in TEMPLATES) != RELEASE_SIZE:
        problems.append(f"counts add up to {sum(t.count for t in TEMPLATES)}, not {RELEASE_SIZE}")
    for d in DEPTHS:
        got = sum(t.count for t in TEMPLATES if t.depth == d)
        if got != RELEASE_SIZE // len(DEPTHS):
            problems.append(f"depth {d} holds {got} items, not {RELEASE_SIZE // len(DEPTHS)}")
    if [t.depth for t in TEMPLATES] != sorted(t.depth for t in TEMPLATES):
        problems.append("templates must be listed tier by tier")
    if len(TEMPLATE_BY_NAME) != len(TEMPLATES):
        problems.append("template names repeat")
    if problems:
        raise RuntimeError("Deep Arithmark release table: " + "; ".join(problems))


_check_table()


def _largest_remainder(total: int, weights: list[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights``; spare units go to the largest
    fractional remainders, ties to the earlier entry. Exact integer arithmetic."""
    wsum = sum(weights)
    shares = [total * w // wsum for w in weights]
    rema = [total * w % wsum for w in weights]
    spare = total - sum(shares)
    order = sorted(range(len(weights)), key=lambda i: (-rema[i], i))
    for i in order[:spare]:
        shares[i] += 1
    return shares


def tiers(templates: Sequence[Template] = TEMPLATES) -> tuple[int, ...]:
    """The depth tiers a table holds items in, shallow to deep (all four for the release)."""
    return tuple(d for d in DEPTHS if any(t.depth == d for t in templates))


def depth_counts(n: int, templates: Sequence[Template] = TEMPLATES) -> dict[int, int]:
    """Items per depth tier for an ``n``-item file of ``templates`` (default: the release)."""
    if n < 1:
        raise ValueError(f"n must be a positive whole number, got {n}")
    ds = tiers(templates)
    weights = [sum(t.count for t in templates if t.depth == d) for d in ds]
    return dict(zip(ds, _largest_remainder(n, weights)))


def composition(n: int = RELEASE_SIZE, templates: Sequence[Template] = TEMPLATES) -> dict[str, int]:
    """Items per template for an ``n``-item file, in table order (zero counts kept).

    ``templates``: the table (default the release's); its ``count`` fields are weights."""
    per_depth = depth_counts(n, templates)
    out: dict[str, int] = {}
    for d in per_depth:
        rows = [t for t in templates if t.depth == d]
        for t, c in zip(rows, _largest_remainder(per_depth[d], [t.count for t in rows])):
            out[t.name] = c
    return {t.name: out[t.name] for t in templates}


def user_table(rows: Iterable[Template]) -> tuple[Template, ...]:
    """A table of other families (or ours mixed with them): rows listed tier by tier, in the
    order given within a tier, as the builder numbers items. Raises ``ValueError`` on a repeated
    name, a depth outside :data:`DEPTHS` or a weight below 1."""
    rows = list(rows)
    seen: set[str] = set()
    for t in rows:
        if t.name in seen:
            raise ValueError(f"family {t.name!r} is listed twice")
        seen.add(t.name)
        if t.depth not in DEPTHS:
            raise ValueError(f"family {t.name!r} has depth {t.depth}; a family's depth must be one of {list(DEPTHS)}")
        if not isinstance(t.count, int) or t.count < 1:
            raise ValueError(f"family {t.name!r} has weight {t.count!r}; expected a whole number >= 1")
    if not rows:
        raise ValueError("the table lists no family")
    return tuple(sorted(rows, key=lambda t: t.depth))


# ---------------------------------------------------------------------------------------
# Balance plan: how many items each (slot, rank, depth) cell holds
# ---------------------------------------------------------------------------------------


def _spread(spare: int, order: Iterable[int]) -> list[int]:
    """``spare`` units over 4 positions as evenly as possible, leftovers in ``order``."""
    out = [spare // N_OPTIONS] * N_OPTIONS
    for pos in list(order)[: spare % N_OPTIONS]:
        out[pos] += 1
    return out


def _zero_one_matrix(rows: list[int], cols: list[int], rotate: int) -> list[list[int]]:
    """A 4 × 4 0/1 matrix with the given row and column sums (Gale–Ryser greedy).

    Rows are filled largest-sum first, each taking the columns with the most remaining
    demand; ties between columns are broken by a rotation so different tiers put their
    spare cells in different places."""
    need = list(cols)
    mat = [[0] * N_OPTIONS for _ in range(N_OPTIONS)]
    for r in sorted(range(N_OPTIONS), key=lambda i: (-rows[i], i)):
        pick = sorted(range(N_OPTIONS), key=lambda c: (-need[c], (c - rotate) % N_OPTIONS))[: rows[r]]
        for c in pick:
            if need[c] <= 0:
                raise ValueError(f"no 0/1 matrix with row sums {rows} and column sums {cols}")
            mat[r][c] = 1
            need[c] -= 1
    if any(need):
        raise ValueError(f"no 0/1 matrix with row sums {rows} and column sums {cols}")
    return mat


def tier_grid(n_tier: int, tier_index: int = 0) -> list[list[int]]:
    """Items per (slot, rank) cell of one depth tier holding ``n_tier`` items.

    ``grid[slot][rank]``; every cell holds ``n_tier // 16`` or one more."""
    base, spare = divmod(n_tier, N_OPTIONS * N_OPTIONS)
    slot_spare = _spread(spare, SLOT_SPARE_ORDER)
    rank_spare = _spread(spare, RANK_SPARE_ORDER)
    extra = _zero_one_matrix(slot_spare, rank_spare, rotate=tier_index)
    return [[base + extra[s][r] for r in range(N_OPTIONS)] for s in range(N_OPTIONS)]


@dataclass(frozen=True)
class BalancePlan:
    """Expected cell counts and marginals for an ``n``-item file."""

    n: int
    grid: dict[int, list[list[int]]]  # depth -> [slot][rank] -> items

    @property
    def slots(self) -> list[int]:
        return [sum(g[s][r] for g in self.grid.values() for r in range(N_OPTIONS)) for s in range(N_OPTIONS)]

    @property
    def ranks(self) -> list[int]:
        return [sum(g[s][r] for g in self.grid.values() for s in range(N_OPTIONS)) for r in range(N_OPTIONS)]

    @property
    def depths(self) -> dict[int, int]:
        return {d: sum(map(sum, g)) for d, g in self.grid.items()}


def balance_plan(n: int = RELEASE_SIZE, templates: Sequence[Template] = TEMPLATES) -> BalancePlan:
    per_depth = depth_counts(n, templates)
    return BalancePlan(n=n, grid={d: tier_grid(per_depth[d], i) for i, d in enumerate(per_depth)})
