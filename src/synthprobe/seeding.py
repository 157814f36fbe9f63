"""Per-item randomness from a hash of (task, seed, index), never ``seed + index``.

``Random(seed + i)`` makes item i+1 at seed s equal item i at seed s+1; hashing the triple
keeps every (task, seed, index) stream independent, on any machine and any PYTHONHASHSEED.
"""

from __future__ import annotations

import hashlib
import random


def derive_seed(*parts: object) -> int:
    """A 64-bit integer from the SHA-256 of the parts' ``repr``-free text form."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def item_rng(task: str, seed: int, index: int, *extra: object) -> random.Random:
    """The RNG for one item of one task. ``extra`` separates sub-streams (e.g. retries)."""
    return random.Random(derive_seed(task, seed, index, *extra))
