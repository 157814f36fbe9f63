"""SAT analogies (Brown et al. 2020, §3.9.3): Turney's file format and GPT-3's prompt.

The 374 questions GPT-3 used are distributed only on request (Peter Turney's
``SAT-package-V3.txt``) and are never shipped here; :func:`load_sat` reads a user-supplied
copy. synthprobe ships a small self-written sample in the same format
(``synthprobe/resources/sat_sample.txt``) for tests and demos; it is *not* the SAT set.

File format: ``#`` comment lines; records separated by blank lines; the last 8 lines of a
record are the source line, the stem (``lull trust v:n``: two words and a part-of-speech
pair), five choices in the stem's format, and the answer letter ``a``–``e``.

GPT-3's prompt (App. G.12): context ``"lull is to trust as"``, candidate completions
``" cajole is to compliance"``, ...; the choice with the highest per-token mean
log-likelihood wins.
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.gpt3.registry import BuildConfig, Task, register
from synthprobe.errors import InputError
from synthprobe.items import MCItem

LETTERS = "abcde"
_POS = re.compile(r"^[A-Za-z]+:[A-Za-z]+$")


@dataclass(frozen=True)
class Pair:
    """``first`` is to ``second``, with the part-of-speech pair (``v:n``)."""

    first: str
    second: str
    pos: str


@dataclass(frozen=True)
class SATQuestion:
    source: str
    stem: Pair
    choices: tuple[Pair, ...]
    answer: int
    line: int  # line of the record's source line

    def to_item(self, index: int) -> MCItem:
        return MCItem(
            id=f"sat-{index + 1:03d}",
            ctx=f"{self.stem.first} is to {self.stem.second} as",
            endings=tuple(f" {c.first} is to {c.second}" for c in self.choices),
            label=self.answer,
            source=self.source,
            line=self.line,
        )


def sample_path() -> Path:
    """The shipped, self-written sample file (not the SAT set)."""
    return Path(str(importlib.resources.files("synthprobe") / "resources" / "sat_sample.txt"))


def is_sample(path: str | Path | None) -> bool:
    """True when ``path`` is ``None`` (the default) or a file with the shipped sample's bytes."""
    if path is None:
        return True
    from synthprobe.io.read import sha256_file

    try:
        return sha256_file(path) == sha256_file(sample_path())
    except OSError:
        return False


def _is_answer(text: str) -> bool:
    """Whether a line is an answer line: one of the letters a-e alone."""
    t = text.strip().lower()
    return len(t) == 1 and t in LETTERS


def _pair(text: str, *, path: Path, line: int, field: str) -> Pair:
    parts = text.split()
    if len(parts) != 3 or not _POS.match(parts[2]):
        raise InputError(
            f"expected two words and a part-of-speech pair such as 'lull trust v:n', got {text.strip()!r}",
            path=path,
            line=line,
            field=field,
        )
    return Pair(parts[0], parts[1], parts[2])


def load_sat(path: str | Path | None = None) -> list[SATQuestion]:
    """Parse a SAT analogy file strictly; ``None`` reads the shipped sample."""
    path = Path(path) if path is not None else sample_path()
    if not path.exists():
        raise InputError(
            "file does not exist (GPT-3's SAT set, SAT-package-V3.txt, is available from Peter Turney on request)",
            path=path,
        )
    if not path.is_file():
        raise InputError("not a regular file", path=path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    lines = raw.split(b"\n")
    records: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for lineno, chunk in enumerate(lines, start=1):
        try:
            text = chunk.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 (byte {exc.start})", path=path, line=lineno) from None
        if text.lstrip().startswith("#"):
            continue
        if not text.strip():
            if current:
                records.append(current)
                current = []
            continue
        current.append((lineno, text))
    if current:
        records.append(current)
    if not records:
        raise InputError(
            "holds no analogy records; expected blank-line-separated records of "
            "source, stem, five choices and an answer letter",
            path=path,
        )

    questions = []
    for record in records:
        if len(record) < 8:
            raise InputError(
                f"record has {len(record)} line(s); expected 8: source, stem, five choices, answer letter",
                path=path,
                line=record[0][0],
            )
        if len(record) > 8 and _is_answer(record[-2][1]) and _is_answer(record[-1][1]):
            raise InputError(
                f"a second answer line ({record[-1][1].strip()!r} after {record[-2][1].strip()!r}); expected one "
                "answer letter after the five choices, then a blank line",
                path=path,
                line=record[-1][0],
            )
        (src_line, source), (stem_line, stem), *rest = record[-8:]
        choice_lines, (ans_line, answer) = rest[:5], rest[5]
        stem_pair = _pair(stem, path=path, line=stem_line, field="stem")
        choices = tuple(
            _pair(text, path=path, line=ln, field=f"choice {LETTERS[k]}") for k, (ln, text) in enumerate(choice_lines)
        )
        shown: dict[tuple[str, str], int] = {}
        for k, (c, (ln, _)) in enumerate(zip(choices, choice_lines)):
            if (c.first, c.second) in shown:
                raise InputError(
                    f"repeats choice {LETTERS[shown[c.first, c.second]]} ({c.first} is to {c.second}); "
                    "expected five distinct choices",
                    path=path,
                    line=ln,
                    field=f"choice {LETTERS[k]}",
                )
            shown[c.first, c.second] = k
        letter = answer.strip().lower()
        if len(letter) != 1 or letter not in LETTERS:
            raise InputError(
                f"expected one answer letter a-e, got {answer.strip()!r}", path=path, line=ans_line, field="answer"
            )
        questions.append(SATQuestion(source.strip(), stem_pair, choices, LETTERS.index(letter), src_line))
    return questions


def build_sat(config: BuildConfig) -> list[MCItem]:
    questions = load_sat(config.sat_file)
    if config.n is not None:
        if config.n > len(questions):
            raise InputError(
                f"the file holds {len(questions)} questions, got n={config.n}",
                path=config.sat_file or sample_path(),
                field="n",
            )
        questions = questions[: config.n]
    return [q.to_item(i) for i, q in enumerate(questions)]


register(
    Task(
        name="sat_analogies",
        code="SAT",
        family="sat",
        summary="SAT analogies: 'a is to b as' -> ' c is to d', five choices, per-token mean log-likelihood",
        default_n=None,
        k_few=20,
        kind="choice",
        aliases=("sat",),
        build=build_sat,
    )
)
