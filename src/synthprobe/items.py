"""The item types every task, loader and scorer shares: one per kind of question.

:class:`MCItem` is a multiple-choice item (Deep Arithmark and ArithMark 3.0 records read by
:mod:`synthprobe.formats.arithmark3`, GPT-3's SAT analogies); :class:`GenItem` a free-form one
(GPT-3's arithmetic and word tasks). Core layer: imports nothing else from synthprobe.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class GenItem:
    """One free-form item: the model must continue ``context`` with ``completion``."""

    context: str
    completion: str

    def to_json(self) -> str:
        return json.dumps({"context": self.context, "completion": self.completion})


@dataclass(frozen=True)
class MCItem:
    """One multiple-choice item: finish ``ctx`` with one of ``endings``; ``endings[label]`` is right.

    ``category``: the record's ``activity_label``; ``line``: its line in the file it was read
    from; ``source``: where a built item came from (a SAT question's source line); ``raw``: the
    record as read, other keys included (ArithMark files).
    """

    id: str
    ctx: str
    endings: tuple[str, ...]
    label: int
    category: str = "unknown"
    line: int = 0
    source: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def metadata(self) -> dict[str, Any]:
        md = self.raw.get("metadata")
        return md if isinstance(md, dict) else {}

    @property
    def completion(self) -> str:
        return self.endings[self.label]

    def to_json(self) -> str:
        """The JSON line a GPT-3 build writes for the item (``ind``, ``ctx``, ``endings``,
        ``label``, ``source``)."""
        return json.dumps(
            {"ind": self.id, "ctx": self.ctx, "endings": list(self.endings), "label": self.label, "source": self.source}
        )
