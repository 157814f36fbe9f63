"""Deprecated: the family contract's earlier import path, kept for one release so that a family
written against it still builds. It warns once, naming the stable import, and gives the
contract's own objects (a family registered here is the family the builder reads)."""

from __future__ import annotations

import warnings

from synthprobe.benchmarks.deeparithmark.base import *  # noqa: F403  (the whole contract, as it was here)
from synthprobe.benchmarks.deeparithmark.base import (  # noqa: F401  (names a star import leaves out)
    IRRELEVANT,
    GenerationError,
    NoTwin,
    Problem,
    Steps,
    insert_sentence,
    no_twin,
    register,
    require,
    twin,
)

warnings.warn(
    "synthprobe.tasks.deeparithmark.base is deprecated and will be removed in the next release; "
    "import from synthprobe.plugin instead (from synthprobe.plugin import Problem, Steps, register, require)",
    DeprecationWarning,
    stacklevel=2,
)
