"""Per-step probes built from a Deep Arithmark item's solution steps (``synthprobe probe steps``).

Every step ``<what>: a op b = c`` (parsed by :func:`.steps.check_step`, the one step parser)
gives two multiple-choice questions with the same four options:

* **isolation** — the operation alone in a neutral frame: ``a op b =`` (``p% of a =``,
  ``H:MM a.m. + m min =``; a whole-unit division is answered as ``q (remainder r)``);
* **chain** (teacher-forced) — the item's problem text, then steps ``1 … k-1`` with their
  correct results, then step ``k`` up to ``=``.

The options are the step's correct result and three values of *named* per-step mistakes
(:func:`step_mistakes`: carry and borrow errors, the wrong operation, one, two or ten groups too
many, a dropped remainder, ten percent too many, the percent of the wrong base, the clock without
a carry into the hour …; multiplications and percents have mistakes that keep the answer's
factors, so that a decoy can be as "nice" as a correct product of round operands),
under the release's decoy rules (:func:`.base.usable_mistakes` on the same :class:`.base.Problem`
contract: whole, positive, not the answer ± 1, one roundness class, the same half of the day).

Balance (:func:`build_probes`), kept per operation so that knowing the step's operation gives no
edge either: each probe's answer rank and slot are balanced over the probes in order, so that
picking the largest, smallest or roundest option, or a fixed slot, stays at chance. Among the
decoy triples that realise that rank, the builder takes the one that keeps the text-level
shortcuts at chance too (:class:`_Balance`): picking the longest or shortest option text and
the option with the most or fewest small divisors (:func:`divisors` — a correct result of
arithmetic on round operands is "nicer" than a carry error next to it; the divisors are kept
at chance over all probes only, the text lengths per operation too; the decoys' order is chosen
as well, since the shortcuts break ties to the first option), options
of the answer's text length where the mistakes allow, and decoys whose character trigrams have
so far been seen in correct options more than in wrong ones (so that a classifier over option
text learns nothing that tells right from wrong). :func:`audit_probes` runs the release's
shortcut audit on them. Deterministic: the same file gives the same probes, and ``--limit N``
gives the first probes of the full run (the balance only looks back).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from synthprobe.benchmarks.deeparithmark.audit import AuditItem, argbest, audit
from synthprobe.benchmarks.deeparithmark.base import Problem, feasible_ranks, fmt_clock, fmt_num, usable_mistakes
from synthprobe.benchmarks.deeparithmark.composition import N_OPTIONS
from synthprobe.benchmarks.deeparithmark.steps import CheckedStep, StepError, check_step
from synthprobe.errors import InputError
from synthprobe.items import MCItem
from synthprobe.seeding import item_rng

#: Bump when probe texts, mistakes or the balancing change: it keys the score cache.
PROBE_VERSION = 3

#: The operations the report groups by, in order, with the step form each comes from.
OPERATIONS = {
    "+": "add",
    "-": "subtract",
    "×": "multiply",
    "/": "divide",
    "divmod": "divide with remainder",
    "%": "percent",
    "clock": "clock",
}

CHAIN_HEAD = "Problem: {ctx} …\nWorking:\n"


@dataclass(frozen=True)
class StepProbe:
    """One step of one item, with its two prompts and its four options."""

    #: ``<item id>#<step number>`` (1-based); names the probe in the score cache.
    id: str
    item: str
    depth: int
    template: str
    #: 1-based step number and the item's number of steps.
    step: int
    n_steps: int
    op: str
    #: Digits of the larger operand (whole part; minutes for a clock step).
    digits: int
    isolation: str
    chain: str
    #: Option texts (without the leading space that the prompts' endings get).
    options: tuple[str, ...]
    values: tuple[int, ...]
    sources: tuple[str, ...]
    label: int
    kind: str

    @property
    def answer(self) -> str:
        return self.options[self.label]

    @property
    def operation(self) -> str:
        return OPERATIONS[self.op]

    def mc_items(self) -> tuple[MCItem, MCItem]:
        endings = tuple(" " + o for o in self.options)
        return (
            MCItem(id=f"{self.id}/isolation", ctx=self.isolation, endings=endings, label=self.label),
            MCItem(id=f"{self.id}/chain", ctx=self.chain, endings=endings, label=self.label),
        )


@dataclass(frozen=True)
class Skipped:
    item: str
    step: int
    op: str
    why: str


# -- named mistakes per step -------------------------------------------------------------------


def _carry_error(a: Fraction, b: Fraction) -> int | None:
    """``a + b`` with the lowest carry dropped (None when no column carries)."""
    if a.denominator != 1 or b.denominator != 1 or a < 0 or b < 0:
        return None
    x, y, place = int(a), int(b), 1
    while x or y:
        if x % 10 + y % 10 >= 10:
            return int(a + b) - 10 * place
        x, y, place = x // 10, y // 10, place * 10
    return None


def _no_borrow(a: Fraction, b: Fraction) -> int | None:
    """``a - b`` digit by digit as |digit difference|, the classic no-borrow error."""
    if a.denominator != 1 or b.denominator != 1 or not 0 <= b <= a:
        return None
    x, y, place, out = int(a), int(b), 1, 0
    while x or y:
        out += abs(x % 10 - y % 10) * place
        x, y, place = x // 10, y // 10, place * 10
    return out if out != a - b else None


def _col(c: Fraction) -> dict[str, Fraction]:
    return {
        "carry error in the tens": c + 10,
        "borrow error in the tens": c - 10,
        "carry error in the hundreds": c + 100,
        "borrow error in the hundreds": c - 100,
    }


def step_mistakes(s: CheckedStep) -> dict[str, Fraction]:
    """Named wrong results of one step (exact values; the builder's rules drop the unusable)."""
    c = s.result
    if s.op == "+":
        a, b = s.operands
        m = {
            "subtracted instead of adding": abs(a - b),
            "multiplied instead of adding": a * b,
            "counted the first number twice": c + a,
            "counted the second number twice": c + b,
        }
        if (k := _carry_error(a, b)) is not None:
            m["dropped a carry"] = Fraction(k)
        return {**m, **_col(c)}
    if s.op == "-":
        a, b = s.operands
        m = {
            "added instead of subtracting": a + b,
            "subtracted the second number twice": c - b,
            "kept the first number": a,
        }
        if (k := _no_borrow(a, b)) is not None:
            m["forgot to borrow"] = Fraction(k)
        return {**m, **_col(c)}
    if s.op == "×":
        a, b = s.operands
        m = {
            "added instead of multiplying": a + b,
            "one group too many": c + a,
            "one group too few": c - a,
            "one group too many (of the other factor)": c + b,
            "one group too few (of the other factor)": c - b,
            "dropped a zero": c / 10,
            "added a zero": c * 10,
            "two groups too many": c + 2 * a,
            "two groups too few": c - 2 * a,
            "two groups too many (of the other factor)": c + 2 * b,
            "two groups too few (of the other factor)": c - 2 * b,
            "ten groups too many": c + 10 * a,
            "ten groups too few": c - 10 * a,
            "ten groups too many (of the other factor)": c + 10 * b,
            "ten groups too few (of the other factor)": c - 10 * b,
            "doubled the product": c * 2,
            "halved the product": c / 2,
        }
        return {**m, **_col(c)}
    if s.op == "/":
        a, b = s.operands
        m = {
            "multiplied instead of dividing": a * b,
            "subtracted instead of dividing": a - b,
            "divided by one more": a / (b + 1),
            "dropped a zero": c / 10,
            "added a zero": c * 10,
            "divided by twice the divisor": c / 2,
            "divided by half the divisor": c * 2,
        }
        if b > 1:
            m["divided by one less"] = a / (b - 1)
        return {**m, **_col(c)}
    if s.op == "%":
        p, a = s.operands
        return {
            "took the rest instead of the share": a - c,
            "added the share to the base": a + c,
            "moved the decimal point right": c * 10,
            "moved the decimal point left": c / 10,
            "one percent too many": (p + 1) * a / 100,
            "one percent too few": (p - 1) * a / 100,
            "percent of the wrong base (of the share)": c * p / 100,
            "percent of the wrong base (ten more)": p * (a + 10) / 100,
            "percent of the wrong base (ten less)": p * (a - 10) / 100,
            "ten percent too many": (p + 10) * a / 100,
            "ten percent too few": (p - 10) * a / 100,
            "five percent too many": (p + 5) * a / 100,
            "five percent too few": (p - 5) * a / 100,
            "doubled the share": c * 2,
            "halved the share": c / 2,
            **_col(c),
        }
    if s.op == "clock":
        t, mins = s.operands
        u = c % 1440
        m = {
            "no carry into the hour": u - 60,
            "carried an extra hour": u + 60,
            "ten minutes short": u - 10,
            "ten minutes over": u + 10,
            "half an hour short": u - 30,
            "half an hour over": u + 30,
        }
        n = int(mins)
        if n >= 100 and n % 100 < 60:
            m["read the minutes as hours and minutes"] = t + (n // 100) * 60 + n % 100
        return m
    raise ValueError(f"no mistakes for step form {s.op!r}")


def _divmod_pairs(s: CheckedStep) -> dict[str, tuple[int, int]]:
    a, b = (int(x) for x in s.operands)
    q, r = int(s.result), int(s.remainder or 0)
    m = {
        "one group too many": (q + 1, r),
        "one group too few": (q - 1, r),
        "quotient off by ten (over)": (q + 10, r),
        "quotient off by ten (under)": (q - 10, r),
        "divided by one more": divmod(a, b + 1),
        "dropped the remainder": (q, 0),
        "remainder not reduced": (q - 1, r + b),
        "swapped quotient and remainder": (r, q),
    }
    if b > 2:
        m["divided by one less"] = divmod(a, b - 1)
    return m


def _code(q: int, r: int, width: int) -> int | None:
    """A whole-unit division's result as one number, quotient digits then remainder digits, as
    the options read (so the audit's largest/smallest compare them as a reader would)."""
    if q < 0 or not 0 <= r < 10**width:
        return None
    return q * 10**width + r


# -- one step → options ------------------------------------------------------------------------


def _whole(x: Fraction) -> int | None:
    return int(x) if x.denominator == 1 else None


def _digits(s: CheckedStep) -> int:
    nums = [s.operands[1]] if s.op == "clock" else list(s.operands)
    if s.op == "%":
        nums = [s.operands[1]]
    return max(len(str(int(abs(x)))) for x in nums)


@dataclass(frozen=True)
class _Plan:
    problem: Problem
    render: dict[int, str]


def _plan(s: CheckedStep) -> _Plan | str:
    """The step as a :class:`Problem` (answer, named mistakes, kind) plus the text of each value;
    or why it cannot be probed."""
    money = "$" in s.rhs
    if s.op == "divmod":
        width = len(str(int(s.operands[1])))
        answer = _code(int(s.result), int(s.remainder or 0), width)
        pairs = {name: (q, r) for name, (q, r) in _divmod_pairs(s).items() if q >= 0 and r >= 0}
        coded = {name: _code(q, r, width) for name, (q, r) in pairs.items()}
        mistakes = {name: v for name, v in coded.items() if v is not None}
        render = {v: f"{q} (remainder {r})" for name, (q, r) in pairs.items() if (v := coded[name]) is not None}
        render[answer] = s.rhs
        kind = "count"
    elif s.op == "clock":
        answer = int(s.result) % 1440
        mistakes = {name: _whole(v) for name, v in step_mistakes(s).items()}
        mistakes = {k: v for k, v in mistakes.items() if v is not None and 0 <= v < 1440}
        render = {v: fmt_clock(v) for v in [answer, *mistakes.values()]}
        kind = "clock"
    else:
        answer = _whole(s.result)
        if answer is None:
            return "result is not a whole number"
        mistakes = {name: w for name, v in step_mistakes(s).items() if (w := _whole(v)) is not None}
        render = {v: fmt_num(v, money=money) for v in [answer, *mistakes.values()] if v > 0}
        kind = "count"
    problem = Problem(
        family="steps",
        topic=s.op,
        depth=1,
        ctx="",
        answer=answer,
        unit="",
        ending="{}",
        steps=(),
        mistakes=mistakes,
        kind=kind,
    )
    return _Plan(problem, render)


def _steps_of(item: MCItem, path) -> list[CheckedStep]:
    steps = item.metadata.get("solution_steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(x, str) for x in steps):
        raise InputError(
            "expected a non-empty list of solution steps",
            path=path,
            line=item.line or None,
            field="metadata.solution_steps",
        )
    out = []
    for i, line in enumerate(steps):
        try:
            out.append(check_step(line))
        except StepError as exc:
            raise InputError(
                str(exc), path=path, line=item.line or None, field=f"metadata.solution_steps[{i}]"
            ) from None
    return out


def _depth(item: MCItem, path) -> int:
    d = item.metadata.get("depth")
    if not isinstance(d, int) or isinstance(d, bool):
        raise InputError(f"expected an integer, got {d!r}", path=path, line=item.line or None, field="metadata.depth")
    return d


def divisors(value: int) -> int:
    """How many of 2 … 12 divide ``value``: the "niceness" that the balance keeps at chance."""
    return sum(value % k == 0 for k in range(2, 13))


def _trigrams(text: str) -> list[str]:
    """Character trigrams of an option as the prompts' endings give it (leading space,
    lowercased), as the audit's classifier reads them."""
    t = (" " + text).lower()
    return [t[i : i + 3] for i in range(len(t) - 2)]


#: Text- and value-level shortcuts that the decoy choice keeps at chance, each as its pick
#: (option texts, option values) → index, ties to the lowest index as in the audit.
SHORTCUTS = {
    "longest text": lambda texts, values: argbest([len(t) for t in texts]),
    "shortest text": lambda texts, values: argbest([-len(t) for t in texts]),
    "most divisors": lambda texts, values: argbest([divisors(v) for v in values]),
    "fewest divisors": lambda texts, values: argbest([-divisors(v) for v in values]),
}


#: The shortcuts kept at chance within each operation as well as over all probes (the divisor
#: counts only over all probes: multiplications and percents cannot be balanced on their own, and
#: holding every other operation at chance too would leave nothing to make up for them).
PER_OPERATION = ("longest text", "shortest text")


class _Balance:
    """What the builder has emitted so far: per operation, answer ranks, probes and shortcut
    hits; over all probes, shortcut hits and how often each character trigram was in a correct
    or a wrong option."""

    def __init__(self) -> None:
        self.ranks: dict[str, list[int]] = {}
        self.last_rank: dict[str, int] = {}
        self.n: Counter[str] = Counter()
        self.hits: dict[str, list[int]] = {}
        self.all_hits = [0] * len(SHORTCUTS)
        self.right: Counter[str] = Counter()
        self.wrong: Counter[str] = Counter()

    def rank(self, op: str, feasible: Sequence[int]) -> int:
        """Among the feasible ranks, the one used least for this operation (ties: the one after
        the last rank used)."""
        count = self.ranks.setdefault(op, [0] * N_OPTIONS)
        last = self.last_rank.get(op, N_OPTIONS - 1)
        return min(feasible, key=lambda r: (count[r], (r - last - 1) % N_OPTIONS))

    def slot(self, op: str) -> int:
        return self.n[op] % N_OPTIONS

    def _need(self, text: str) -> float:
        """How much a wrong option with this text evens out the trigram counts (a fair file has
        three wrong sightings per correct one)."""
        r, w = self.right, self.wrong
        return sum((3 * r[t] - w[t]) / (r[t] + w[t] + 1) for t in _trigrams(text))

    def cost(self, op: str, texts: Sequence[str], values: Sequence[int], slot: int) -> tuple[float, list[int]]:
        """How far an arrangement of options moves the file from chance (lower is better), and
        which shortcuts would pick its answer: the squared drift of each shortcut's hits from a
        quarter of the probes, over all operations and, for :data:`PER_OPERATION`, per operation
        (where one operation's mistakes cannot balance a shortcut, the others make up for it), plus one per option whose
        text length differs from the answer's, minus the trigram :meth:`_need` of the decoys."""
        hits = [int(pick(texts, values) == slot) for pick in SHORTCUTS.values()]
        target = (self.n[op] + 1) / N_OPTIONS
        past = self.hits.get(op, [0] * len(SHORTCUTS))
        drift = sum((h0 + h - target) ** 2 for h0, h, name in zip(past, hits, SHORTCUTS) if name in PER_OPERATION)
        every = (sum(self.n.values()) + 1) / N_OPTIONS
        drift += sum((h0 + h - every) ** 2 for h0, h in zip(self.all_hits, hits))
        off_length = sum(len(t) != len(texts[slot]) for t in texts)
        need = sum(self._need(t) for i, t in enumerate(texts) if i != slot)
        return drift + off_length - need, hits

    def add(self, op: str, rank: int, texts: Sequence[str], slot: int, hits: Sequence[int]) -> None:
        self.ranks[op][rank] += 1
        self.last_rank[op] = rank
        self.n[op] += 1
        past = self.hits.setdefault(op, [0] * len(SHORTCUTS))
        self.hits[op] = [a + b for a, b in zip(past, hits)]
        self.all_hits = [a + b for a, b in zip(self.all_hits, hits)]
        for i, t in enumerate(texts):
            (self.right if i == slot else self.wrong).update(_trigrams(t))


def _options(
    plan: _Plan, op: str, rank: int, slot: int, rng, balance: _Balance
) -> tuple[list[tuple[str, int]], list[int]]:
    """The answer at ``slot`` and three named mistakes (below it: ``rank`` of them) in the
    arrangement (which mistakes, in which order) of least :meth:`_Balance.cost`; ties are broken
    by ``rng``."""
    answer = plan.problem.answer
    usable = usable_mistakes(plan.problem)
    below = [(n, v) for n, v in usable.items() if v < answer]
    above = [(n, v) for n, v in usable.items() if v > answer]
    best: float | None = None
    out: list[tuple[list[tuple[str, int]], list[int]]] = []
    for lo in itertools.combinations(below, rank):
        for hi in itertools.combinations(above, N_OPTIONS - 1 - rank):
            for chosen in itertools.permutations(lo + hi):
                options = [*chosen[:slot], ("correct", answer), *chosen[slot:]]
                texts = [plan.render[v] for _, v in options]
                c, hits = balance.cost(op, texts, [v for _, v in options], slot)
                if best is None or c < best:
                    best, out = c, [(options, hits)]
                elif c == best:
                    out.append((options, hits))
    return rng.choice(out)


def build_probes(items: Sequence[MCItem], *, path=None, seed: int = 0) -> tuple[list[StepProbe], list[Skipped]]:
    """Every step of every item as a :class:`StepProbe` (and the steps that cannot be probed).

    Balance (per operation, looking only back, so a prefix of the items gives a prefix of the
    probes): the ``j``-th probe of an operation goes to slot ``j mod 4``; its answer rank is,
    among the ranks its mistakes can realise, the one used least so far (ties: the one after
    the last rank used); its decoys are the arrangement of least :meth:`_Balance.cost`.
    """
    probes: list[StepProbe] = []
    skipped: list[Skipped] = []
    balance = _Balance()
    for item in items:
        steps = _steps_of(item, path)
        depth = _depth(item, path)
        template = item.metadata.get("template") if isinstance(item.metadata.get("template"), str) else ""
        lines = item.metadata["solution_steps"]
        for k, s in enumerate(steps, start=1):
            plan = _plan(s)
            ranks = sorted(feasible_ranks(plan.problem)) if isinstance(plan, _Plan) else []
            if not ranks:
                why = plan if isinstance(plan, str) else "fewer than three usable named mistakes"
                skipped.append(Skipped(item.id, k, s.op, why))
                continue
            rank = balance.rank(s.op, ranks)
            slot = balance.slot(s.op)
            rng = item_rng("deeparithmark-steps", seed, len(probes), item.id, k)
            options, hits = _options(plan, s.op, rank, slot, rng, balance)
            texts = tuple(plan.render[v] for _, v in options)
            balance.add(s.op, rank, texts, slot, hits)
            head = CHAIN_HEAD.format(ctx=item.ctx) + "".join(f"{ln}\n" for ln in lines[: k - 1])
            probes.append(
                StepProbe(
                    id=f"{item.id}#{k}",
                    item=item.id,
                    depth=depth,
                    template=template,
                    step=k,
                    n_steps=len(steps),
                    op=s.op,
                    digits=_digits(s),
                    isolation=f"{s.lhs} =",
                    chain=f"{head}{s.what}: {s.lhs} =",
                    options=texts,
                    values=tuple(v for _, v in options),
                    sources=tuple(n for n, _ in options),
                    label=slot,
                    kind=plan.problem.kind,
                )
            )
    return probes, skipped


def audit_items(probes: Sequence[StepProbe]):
    """The probes as the release audit's items (endings as the prompts get them)."""
    return [
        AuditItem(endings=tuple(" " + o for o in p.options), values=p.values, label=p.label, kind=p.kind, template=p.op)
        for p in probes
    ]


def audit_probes(probes: Sequence[StepProbe], *, classifier: bool = True):
    """The release's shortcut audit (:func:`.audit.audit`) on the step probes' options."""
    return audit(audit_items(probes), classifier=classifier)


__all__ = [
    "OPERATIONS",
    "PROBE_VERSION",
    "SHORTCUTS",
    "Skipped",
    "StepProbe",
    "audit_items",
    "audit_probes",
    "build_probes",
    "divisors",
    "step_mistakes",
]
