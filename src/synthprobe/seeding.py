"""Per-item randomness from a hash of (task, seed, index), never ``seed + index``.

``Random(seed + i)`` makes item i+1 at seed s equal item i at seed s+1; hashing the triple
keeps every (task, seed, index) stream independent, on any machine and any PYTHONHASHSEED.
"""

from __future__ import annotations

import _random
import hashlib
import random

_SEP = "\x1f"


def derive_seed(*parts: object) -> int:
    """A 64-bit integer from the SHA-256 of the parts' ``repr``-free text form."""
    text = _SEP.join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def item_rng(task: str, seed: int, index: int, *extra: object) -> random.Random:
    """The RNG for one item of one task. ``extra`` separates sub-streams (e.g. retries)."""
    return random.Random(derive_seed(task, seed, index, *extra))


class ItemStreams:
    """The sub-streams ``item_rng(task, seed, index, *extra)`` of one item, made cheaply for a
    loop that tries many ``extra`` (a builder's retries).

    The constant ``task, seed, index`` prefix is hashed once and each stream's hash continues a
    copy of it (the same SHA-256 input, so the same seed), and :meth:`rng` reseeds one
    ``random.Random`` instead of building a new one: the returned generator is in exactly the
    state ``item_rng`` would give, but it is the *same object* every call, so a stream must be
    finished with before the next one is asked for.
    """

    __slots__ = ("_prefix", "_rng")

    def __init__(self, task: str, seed: int, index: int) -> None:
        self._prefix = hashlib.sha256(f"{task}{_SEP}{seed}{_SEP}{index}{_SEP}".encode())
        # not seeded here (that costs as much as a stream): every rng() call seeds it
        self._rng = random.Random.__new__(random.Random)

    def seed(self, *extra: object) -> int:
        """``derive_seed(task, seed, index, *extra)``; ``extra`` must not be empty."""
        if not extra:
            raise ValueError("ItemStreams.seed needs at least one extra part")
        h = self._prefix.copy()
        h.update((str(extra[0]) if len(extra) == 1 else _SEP.join(str(p) for p in extra)).encode("utf-8"))
        return int.from_bytes(h.digest()[:8], "big")

    def rng(self, *extra: object) -> random.Random:
        """The generator of ``item_rng(task, seed, index, *extra)``, reseeded in place."""
        rng = self._rng
        # random.Random.seed for an int: the C seeding, then the cached gauss value cleared
        _random.Random.seed(rng, self.seed(*extra))
        rng.gauss_next = None
        return rng


def draw_demos(task: str, seed: int, index: int, pool_size: int, k: int) -> list[int]:
    """``k`` distinct pool indices other than ``index``, from a hash of (task, seed, index): the
    demonstration draw of few-shot prompts, in ``synthprobe score`` and inside lm-eval alike."""
    if not 0 <= index < pool_size:
        raise ValueError(f"index {index} outside a pool of {pool_size}")
    k = min(k, pool_size - 1)
    if k <= 0:
        return []
    rng = random.Random(derive_seed("demos", task, seed, index))
    picks = rng.sample(range(pool_size - 1), k)
    return [j if j < index else j + 1 for j in picks]
