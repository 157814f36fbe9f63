"""What the GPT-3 synthetic tasks' report shows about one scored model:
:mod:`synthprobe.benchmarks.gpt3.report.read` fills these from results JSON; its figure, table
and section read only these classes."""

from __future__ import annotations

from dataclasses import dataclass, field

from synthprobe.report.model import Count


@dataclass(frozen=True)
class PaperFigure:
    """One published GPT-3 accuracy (percent) for a task, setting and model size."""

    value: float
    #: text versions of the paper's table disagree on this cell; ``alt`` is the other reading.
    doubtful: bool = False
    alt: float | None = None


@dataclass(frozen=True)
class Gpt3Row:
    """One model's score on one GPT-3 synthetic task in one shot setting, beside the paper's."""

    task: str
    code: str
    family: str
    #: "zero", "one", "few" or "<k>-shot"
    setting: str
    k: int
    count: Count
    shots_mean: float
    shots_min: int
    shots_max: int
    #: items that got fewer demonstrations than ``k`` (the context window was full)
    shots_reduced: int
    #: GPT-3 size label ("125M" … "175B") → published accuracy, smallest size first
    paper: dict[str, PaperFigure] = field(default_factory=dict)
    paper_note: str | None = None
    #: where the score places the model among the GPT-3 sizes, as the scorer worded it
    lands: str | None = None
    #: answers read from generated text (SAT under ``--sat-protocol letters``): the items whose
    #: answer did not count, per outcome (``unparsed``, ``inconsistent``, ``cut_off``); None for
    #: rows scored otherwise
    not_counted: dict[str, int] | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task, self.setting, self.k)

    @property
    def rate(self) -> float:
        return self.count.rate


@dataclass(frozen=True)
class Gpt3Result:
    """One model's GPT-3 synthetic-task results file."""

    model: str
    params: int | None
    rows: tuple[Gpt3Row, ...]
    #: shown in the run table (dtype, device, seed, format, limits, versions, …)
    settings: dict[str, str] = field(default_factory=dict)
    #: the settings that decide which items were scored; files that differ here are not one test set
    test_set: tuple[tuple[str, str], ...] = ()
    source: str = ""
