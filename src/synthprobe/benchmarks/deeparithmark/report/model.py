"""What Deep Arithmark's report shows about one scored model, independent of the results file
layout: :mod:`synthprobe.benchmarks.deeparithmark.report.read` fills these from results JSON;
its figures, leaderboard and sections read only these classes."""

from __future__ import annotations

from dataclasses import dataclass, field

from synthprobe.report.model import Count


@dataclass(frozen=True)
class MistakeCount:
    """How often one named option source was offered in a template, and chosen."""

    source: str
    offered: int
    chosen: int

    @property
    def rate(self) -> float:
        return self.chosen / self.offered if self.offered else float("nan")


#: a wrong option offered fewer times than this is never called "preferred", and a template none
#: of whose wrong options was offered this often gets no panel in the mistake figure
MIN_OFFERS = 10


def preferred_mistake(rows) -> tuple[MistakeCount | None, bool]:
    """The wrong option picked most often when offered, and whether it may be called preferred.

    Only options offered at least :data:`MIN_OFFERS` times compete for "preferred" (a 2-of-3 pick
    rate says little). When none was offered that often, the most picked one is returned with
    ``False``; ``(None, False)`` when no wrong option was offered at all.
    """
    wrong = [mc for mc in rows if mc.source != "correct" and mc.offered]
    if not wrong:
        return None, False
    enough = [mc for mc in wrong if mc.offered >= MIN_OFFERS]
    pool = enough or wrong
    return max(pool, key=lambda mc: (mc.rate, mc.chosen, mc.source)), bool(enough)


def mistake_templates(results) -> tuple[list[str], list[str]]:
    """The templates of the mistake profile in reading order, split in two: those where some
    model has a preferred mistake (a wrong option offered at least :data:`MIN_OFFERS` times and
    picked at least once), the strongest preference first; then the rest (too few offers to read,
    or no wrong option ever picked, as under ``free``), by depth."""
    with_m = [r for r in results if r.mistakes]
    depth_of: dict[str, int] = {}
    for r in with_m:
        depth_of.update(r.template_depth)
    strongest: dict[str, float] = {}
    rest: set[str] = set()
    for r in with_m:
        for t, rows in r.mistakes.items():
            top, enough = preferred_mistake(rows)
            if enough and top.chosen:  # a wrong option never picked is no preference
                strongest[t] = max(strongest.get(t, 0.0), top.rate)
            else:
                rest.add(t)
    readable = sorted(strongest, key=lambda t: (-strongest[t], depth_of.get(t, 0), t))
    return readable, sorted(rest - set(strongest), key=lambda t: (depth_of.get(t, 0), t))


@dataclass(frozen=True)
class PartialBaseline:
    """One partial-input baseline over a set of items (``score deeparithmark --partial-inputs``):
    its accuracy, and the items whose pick is the full-context pick (agreement)."""

    accuracy: Count
    agree: Count
    p_value: float | None = None


@dataclass(frozen=True)
class PartialRow:
    """The partial-input baselines over all items (``depth`` None) or one depth tier: the
    full-context accuracy, each baseline, and question reliance = full - the best baseline."""

    depth: int | None
    full: Count
    baselines: dict[str, PartialBaseline]
    best: str
    reliance: float


@dataclass(frozen=True)
class PartialInputs:
    """A model's partial-input baselines: all items first, then each depth; each baseline's
    design in one line; items whose other-context donor came from another template."""

    rows: tuple[PartialRow, ...]
    designs: dict[str, str] = field(default_factory=dict)
    cross_template: int = 0


@dataclass(frozen=True)
class ModelResult:
    """One model's Deep Arithmark scores under its run's primary metric (:attr:`metric`:
    acc_norm, per-token normalised, for log-likelihood; accuracy for generated answers)."""

    model: str
    params: int | None
    chance: float
    overall: Count
    soft: float | None
    p_value: float | None
    by_depth: dict[int, Count]
    by_template: dict[str, Count]
    template_depth: dict[str, int]
    #: ArithMark 3.0 acc_norm in [0, 1] on the same weights, when scored in the same run.
    arithmark3: float | None = None
    #: picks per answer-rank position: index 0 = smallest option chosen, … last = largest.
    rank_picks: tuple[int, ...] | None = None
    #: how often the correct answer sits at each rank (same order), when the file records it.
    answer_ranks: tuple[int, ...] | None = None
    #: template → option source → offered / chosen counts ("correct" included).
    mistakes: dict[str, tuple[MistakeCount, ...]] = field(default_factory=dict)
    #: free-form settings shown in the run table (dtype, device, versions, …).
    settings: dict[str, str] = field(default_factory=dict)
    #: the results file and its position there, for messages.
    source: str = ""
    #: what decides which items were scored (data SHA-256, limit, item count): rows that differ
    #: here are not comparable with each other
    test_set: tuple = ()
    #: the summary's primary metric: ``acc_norm`` (log-likelihood) or ``accuracy`` (generated answers)
    metric: str = "acc_norm"
    #: one line naming that metric (the summary's ``primary_label``)
    metric_label: str = ""
    #: how the model was asked: ``loglik``, ``letters``, ``letterprob`` or ``free``
    protocol: str = "loglik"
    #: generated answers: items per outcome (answered, unparsed, inconsistent, echo, cut_off)
    outcomes: dict[str, int] | None = None
    #: generated answers: the share of items each rule read (strict, lax, last, value, unparsed)
    rule_shares: dict[str, float] | None = None
    #: generated answers: correct of the answered items only
    answered: Count | None = None
    #: which checkpoint: the model spec as given (a path or hub id) and the weights' fingerprint
    checkpoint: str = ""
    fingerprint: str | None = None
    #: the partial-input baselines, when the run scored them (``--partial-inputs``)
    partial: PartialInputs | None = None

    @property
    def acc_norm(self) -> float:
        """The primary score (acc_norm for log-likelihood rows, accuracy for generated ones)."""
        return self.overall.rate

    @property
    def rate(self) -> float:
        return self.overall.rate

    @property
    def generated(self) -> bool:
        """Whether the row scores generated answers (no log-likelihood columns)."""
        return self.metric != "acc_norm"

    @property
    def has_chance(self) -> bool:
        """Whether the score has a chance level to test against (a free answer has none)."""
        return self.protocol != "free"

    @property
    def delta(self) -> float | None:
        return None if self.arithmark3 is None else self.acc_norm - self.arithmark3
