"""A test engine that answers Deep Arithmark's first items with fixed texts.

No real model writes a refusal, a doubled letter or ``ANSWER: $B$`` on demand, so the answers
the extraction must handle are fixed here (a stub for answer texts only; log-likelihoods come
from the toy bigram engine). ``render_chat`` wraps each turn in ``<role>...</role>`` so the
chat path (``generate_chat`` -> ``render_chat`` -> ``generate``) runs as it does in process.
"""

from __future__ import annotations

import json
from pathlib import Path

from toy_engine import ToyBackend

ROOT = Path(__file__).resolve().parents[2]
_ITEMS = [json.loads(line) for line in (ROOT / "data" / "deeparithmark-1.jsonl").read_text().splitlines()[:6]]

#: per release item (0-5): the letters answer, the free answer
#: (written for the release re-rendered with role-balanced decoys, sha256 a3050d7e…; the right
#: options: B, A, B, C, A, D)
ANSWERS = [
    ("ANSWER: $B$", "The total is $66."),  # item 0: B ($66) is right -> both right
    ("A or B", "637 litres"),  # item 1: ambiguous; free writes a named mistake's value (C)
    ("(B)", "It held 999 litres."),  # item 2: letters right; free a value that is no option
    ("I cannot help with that.", "I cannot help with that."),  # refusals
    ("Answer: B. Then again maybe not.", "ANSWER: 54 pallets"),  # item 4: A is right; both wrong
    ("C", "ANSWER: 5:12 p.m."),  # item 5: D is right; a clock time for litres
]


class FixedAnswers(ToyBackend):
    #: every conversation rendered, in order (the tests read the turns back)
    SEEN: list = []
    #: the prompts of every ``generate`` call, one list per batch asked
    BATCHES: list = []

    def render_chat(self, conversations, *, template=None):
        FixedAnswers.SEEN.extend(conversations)
        return [
            "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in conv) + "<assistant>"
            for conv in conversations
        ]

    def chat_template_text(self, name=None):
        return "<{{role}}>{{content}}</{{role}}>"

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
        from synthprobe.backends.base import Generation

        FixedAnswers.BATCHES.append(list(prompts))
        out = []
        for p in prompts:
            k = next((i for i, it in enumerate(_ITEMS) if it["ctx"].rstrip() in p), None)
            if k is None:  # not a Deep Arithmark item: a letter for lettered questions, else the bigram's text
                text = "B" if "Reply with the letter" in p else super().generate([p], max_new_tokens, stop)[0]
            else:
                text = ANSWERS[k][0 if "Reply with the letter" in p else 1]
            out.append(Generation(text, "stop", len(text)))
        return out if details else [g.text for g in out]


def load(spec: str, **options) -> FixedAnswers:
    return FixedAnswers(spec)
