"""GPT-3's ten arithmetic tasks (Brown et al. 2020, §3.9.1), regenerated.

Layout and sampling follow OpenAI's released files, not the paper prose where they differ:

* ``{"context": "\\n\\nQ: What is 98 plus 45?\\n\\nA:", "completion": " 143"}``: the context
  opens with the two-newline delimiter, a blank line separates ``Q:`` and ``A:``; the
  completion is a space and the integer (no separators, negatives as ``-N``);
* d-digit operands are uniform in [0, 10^d) (not forced to d digits); subtraction is a − b as
  drawn, so about half the answers are negative;
* ordered pairs are unique within a task: item ``i`` redraws (from ``item_rng(task, seed, i,
  attempt)``) until its pair is new, so the dedup is deterministic and prefix-stable;
* 1DC is always ``(a o1 b) o2 c`` with digits 1–9 and both operators uniform over + - *.

``number_format="comma"`` or ``"space"`` writes every operand and answer of 1,000 or more with
grouped digits (``12,345``, ``-1 234``; :mod:`synthprobe.prompts.numformat`): the same draws, ids
and order as the plain build, which stays byte-identical to OpenAI's layout.

``format="eleuther"`` writes lm-eval's rewrite instead: ``Question: What is 98 plus 45?\\nAnswer:``
with the same completion.
"""

from __future__ import annotations

from synthprobe.benchmarks.gpt3.registry import BuildConfig, Task, register
from synthprobe.items import GenItem
from synthprobe.prompts.numformat import format_int
from synthprobe.seeding import item_rng

_WORDS = {"+": "plus", "-": "minus", "x": "times"}
_DIGIT_NAMES = {2: "two", 3: "three", 4: "four", 5: "five"}
_OPS_1DC = ("+", "-", "*")


def question_text(question: str, fmt: str) -> str:
    """The context for ``What is …?`` in the given layout."""
    if fmt == "eleuther":
        return f"Question: What is {question}?\nAnswer:"
    return f"\n\nQ: What is {question}?\n\nA:"


def _apply(a: int, op: str, b: int) -> int:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op in ("*", "x"):
        return a * b
    raise ValueError(f"unknown operator {op!r}")


def _unique_draws(task: str, seed: int, n: int, draw):
    """``n`` distinct draws; item i uses item_rng(task, seed, i, attempt) until new."""
    seen = set()
    out = []
    for i in range(n):
        attempt = 0
        while True:
            value = draw(item_rng(task, seed, i, attempt) if attempt else item_rng(task, seed, i))
            if value not in seen:
                break
            attempt += 1
        seen.add(value)
        out.append(value)
    return out


def build_two_operand(name: str, digits: int, op: str, config: BuildConfig) -> list[GenItem]:
    hi = 10**digits

    def draw(rng):
        return rng.randrange(hi), rng.randrange(hi)

    pairs = _unique_draws(name, config.seed, config.size, draw)
    nf = config.number_format
    return [
        GenItem(
            question_text(f"{format_int(a, nf)} {_WORDS[op]} {format_int(b, nf)}", config.format),
            f" {format_int(_apply(a, op, b), nf)}",
        )
        for a, b in pairs
    ]


def build_1dc(name: str, config: BuildConfig) -> list[GenItem]:
    def draw(rng):
        a, b, c = rng.randint(1, 9), rng.randint(1, 9), rng.randint(1, 9)
        o1, o2 = rng.choice(_OPS_1DC), rng.choice(_OPS_1DC)
        return a, o1, b, o2, c

    items = []
    for a, o1, b, o2, c in _unique_draws(name, config.seed, config.size, draw):
        value = _apply(_apply(a, o1, b), o2, c)
        # one-digit operands; |value| <= 729, so every number format writes the same text
        items.append(
            GenItem(
                question_text(f"({a} {o1} {b}) {o2} {c}", config.format), f" {format_int(value, config.number_format)}"
            )
        )
    return items


def _register_all() -> None:
    suffix = {"+": "a", "-": "s"}
    symbol = {"+": "+", "-": "−"}
    released = {"+": "addition", "-": "subtraction"}
    for digits in (2, 3, 4, 5):
        for op in ("+", "-"):
            name = f"arithmetic_{digits}d{suffix[op]}"
            code = f"{digits}D{symbol[op]}"
            register(
                Task(
                    name=name,
                    code=code,
                    family="arithmetic",
                    summary=(
                        f"{digits}-digit {released[op]}: 'What is a {_WORDS[op]} b?', "
                        f"a, b uniform in [0, {10**digits:,})"
                    ),
                    default_n=2000,
                    k_few=50,
                    max_n=10 ** (2 * digits),
                    max_new_tokens=digits + 4,
                    aliases=(f"{digits}D{op}", f"{_DIGIT_NAMES[digits]}_digit_{released[op]}"),
                    build=lambda cfg, _n=name, _d=digits, _o=op: build_two_operand(_n, _d, _o, cfg),
                )
            )
    register(
        Task(
            name="arithmetic_2dm",
            code="2Dx",
            family="arithmetic",
            summary="2-digit multiplication: 'What is a times b?', a, b uniform in [0, 100)",
            default_n=2000,
            k_few=50,
            max_n=10**4,
            max_new_tokens=8,
            aliases=("2D*", "two_digit_multiplication"),
            build=lambda cfg: build_two_operand("arithmetic_2dm", 2, "x", cfg),
        )
    )
    register(
        Task(
            name="arithmetic_1dc",
            code="1DC",
            family="arithmetic",
            summary="1-digit composite: 'What is (a o1 b) o2 c?', digits 1-9, o1, o2 uniform over + - *",
            default_n=2000,
            k_few=50,
            max_n=9**3 * 3**2,
            max_new_tokens=8,
            aliases=("single_digit_three_ops",),
            build=lambda cfg: build_1dc("arithmetic_1dc", cfg),
        )
    )


_register_all()
