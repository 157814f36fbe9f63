"""A one-file engine for the tests: a pure-Python character bigram model.

It implements only what :class:`synthprobe.backends.base.BaseBackend` asks of a new engine,
``loglikelihood`` and ``generate``; multiple choice, token counts, ``describe`` and the rest
come from the base class. Register it once and every command takes ``--model toy:<name>``::

    from synthprobe.backends import register_engine
    register_engine("toy", "toy_engine")          # this module, on sys.path

(An engine shipped with synthprobe adds its line to ``synthprobe.backends.ENGINES`` instead.)
"""

from __future__ import annotations

import hashlib
import math

from synthprobe.backends.base import BaseBackend, EndingScore, Generation

ALPHABET = [chr(c) for c in range(32, 127)] + ["\n"]


class ToyBackend(BaseBackend):
    """Every character's probability depends on the one before it through a seeded hash."""

    def __init__(self, name: str):
        self.name = f"toy:{name}"
        self.fingerprint = hashlib.sha256(self.name.encode()).hexdigest()
        self.n_params = len(ALPHABET) ** 2
        self.max_length = 4096
        self._known: dict[str, dict[str, float]] = {}

    def _logits(self, prev: str) -> list[float]:
        return [int(hashlib.sha256(f"{self.name}|{prev}|{c}".encode()).hexdigest()[:4], 16) / 6553.6 for c in ALPHABET]

    def _logprobs(self, prev: str) -> dict[str, float]:
        # a bigram model has one distribution per previous character: worked out once each
        known = self._known.get(prev)
        if known is None:
            logits = self._logits(prev)
            top = max(logits)
            norm = top + math.log(sum(math.exp(x - top) for x in logits))
            known = self._known[prev] = {c: x - norm for c, x in zip(ALPHABET, logits)}
        return known

    def loglikelihood(self, pairs, *, batch_size=32, max_context=1024, progress=False):
        out = []
        for context, continuation in pairs:
            prev, total, greedy = (context[-1:] or "\n"), 0.0, True
            for ch in continuation:
                lp = self._logprobs(prev)
                total += lp.get(ch, -30.0)
                greedy = greedy and ch == max(lp, key=lp.get)
                prev = ch
            out.append(EndingScore(total, len(continuation), len(continuation), greedy))
        return out

    def generate(
        self,
        prompts,
        max_new_tokens,
        stop=None,
        *,
        batch_size=16,
        progress=True,
        details=False,
        skip_leading_whitespace=False,
    ):
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        out = []
        for prompt in prompts:
            prev, text, finish = prompt[-1:] or "\n", "", "length"
            for _ in range(max_new_tokens):
                lp = self._logprobs(prev)
                prev = max(lp, key=lp.get)
                text += prev
                cut = min((text.find(s) for s in stops if s in text), default=-1)
                if cut >= 0:
                    text, finish = text[:cut], "stop"
                    break
            out.append(Generation(text, finish, len(text)) if details else text)
        return out


def load(spec: str, **options) -> ToyBackend:
    return ToyBackend(spec or "default")
