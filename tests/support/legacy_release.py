"""The 2026-10 release of Deep Arithmark-1: the legacy-decoy build of the card's seed, which the
role-balanced release replaced. Tests that read texts or figures measured on it rebuild it byte for
byte (the builder keeps the legacy mode as the trained audit's positive control)."""

from __future__ import annotations

import hashlib
from pathlib import Path

#: SHA-256 of the 2026-10 release
LEGACY_RELEASE_SHA256 = "ecb834bf82217f4c747657dc564a9fd991f4cb6034b8674e3a54f75443daafc0"


def write_legacy_release(folder: Path) -> Path:
    """The 2026-10 release rebuilt into ``folder``, checked against its digest."""
    from synthprobe.benchmarks.deeparithmark.build import render_bytes

    data = render_bytes(decoys="legacy")
    assert hashlib.sha256(data).hexdigest() == LEGACY_RELEASE_SHA256
    path = Path(folder) / "deeparithmark-1_2026-10.jsonl"
    path.write_bytes(data)
    return path
