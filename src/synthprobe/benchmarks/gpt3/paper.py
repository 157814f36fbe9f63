"""GPT-3's published results for the synthetic tasks: Table H.1 of Brown et al. (2020).

Accuracy in percent for the eight GPT-3 sizes, zero-, one- and few-shot (K = 50 arithmetic,
K = 100 word tasks, K = 20 SAT). The 175B column equals Tables 3.9/3.10 (up to rounding).

Cells marked ``†`` are doubtful: circulating text versions of Table H.1 disagree there, and
the other reading is kept in :attr:`PaperCell.alt`. Two further caveats are flagged on whole
rows: the 1DC rows below 175B appear in only one text version (unconfirmed), and the 4D−
one-shot row may be misaligned (one version has a stray extra cell).
"""

from __future__ import annotations

from dataclasses import dataclass

SIZES = ("125M", "350M", "760M", "1.3B", "2.7B", "6.7B", "13B", "175B")


@dataclass(frozen=True)
class PaperCell:
    value: float
    doubtful: bool = False
    alt: float | None = None

    def render(self) -> str:
        text = f"{self.value:.1f}" if self.value >= 10 else f"{self.value:.2f}"
        return text + ("†" if self.doubtful else "")

    def to_dict(self) -> dict:
        d: dict = {"value": self.value}
        if self.doubtful:
            d["doubtful"] = True
            if self.alt is not None:
                d["alt"] = self.alt
        return d


# One row per (code, setting): eight cells, 125M ... 175B. "a†b" = doubtful value a, other
# reading b; "a†" = doubtful without a single alternative.
_TABLE_H1 = """
2D+ zero  0.70 0.65 0.70 0.85 1.10 2.54 15.4 76.9
2D+ one   2.00 0.55 3.15 4.00 12.1 19.6 73.0 99.6
2D+ few   2.00 4.10 3.50 4.50 8.90 11.9 55.5 100.0
2D- zero  1.25†0.70 1.25 1.25 1.25 1.60 7.60 12.6 58.0
2D- one   1.15 0.95 1.45 1.95†3.95 3.85†8.15 11.5 44.6 86.4
2D- few   1.15 1.45 2.25 2.70 7.35 13.6 52.4†52.6 98.9
3D+ zero  0.10 0.10 0.05 0.10 0.10 0.25 1.40 34.2
3D+ one   0.15 0.00 0.10 0.30 0.45 0.95 15.4†14.5 65.5
3D+ few   0.15 0.45 0.30 0.55 0.75 0.90†5.49 8.40†9.80 80.4
3D- zero  0.05 0.05 0.05 0.05 0.05 0.45 1.35 48.3
3D- one   0.05 0.15 0.25 0.30 0.55 1.60 6.15†5.18 78.7
3D- few   0.05 0.10 0.15 0.35†0.05 0.65 1.05 9.20 94.2
4D+ zero  0.05 0.05 0.00 0.00†0.05 0.05 0.05 0.15 4.00
4D+ one   0.00 0.00†0.05 0.10 0.00 0.00 0.10 0.80 14.0
4D+ few   0.00 0.05 0.05 0.00†0.05 0.15†0.05 0.15 0.40 25.5
4D- zero  0.00 0.00 0.00 0.00 0.00 0.00 0.10 7.50
4D- one   0.00† 0.00† 0.00† 0.00† 0.00† 0.05† 0.50† 14.0
4D- few   0.00 0.05†0.00 0.00 0.00 0.10†0.00 0.05 0.40 26.8
5D+ zero  0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.65
5D+ one   0.00 0.00 0.00 0.00 0.00 0.00 0.05 3.45
5D+ few   0.00 0.00 0.00 0.00 0.00 0.00 0.05 9.30
5D- zero  0.00 0.00 0.00 0.00 0.00 0.00 0.00 0.80
5D- one   0.00 0.00 0.00 0.00 0.00 0.00 0.05 3.75
5D- few   0.00 0.00 0.00 0.00 0.00 0.00 0.00 9.90
2Dx zero  2.20 2.25 2.65 2.10 2.55 5.80†3.80 6.15 19.8
2Dx one   1.35†1.55 2.35 3.35 2.35 4.75 9.15 11.0 27.4
2Dx few   1.35 2.90 2.70 2.85 4.25 6.10 7.05†17.05 29.2
1DC zero  1.25† 2.95† 2.75† 0.05† 0.30† 2.35† 0.75† 9.75
1DC one   1.90† 2.80† 2.85† 3.65† 6.45† 9.15† 8.20† 14.3
1DC few   1.70† 2.15† 3.90† 5.75† 6.20† 7.60† 9.95† 21.3
CL zero   0.62 0.71 2.85 0.00 0.63 1.35 2.58 3.66
CL one    1.67 4.36 5.68 6.46 6.25 9.41 15.1 21.7
CL few    4.63†4.69 9.27 10.7 14.5 16.7 21.9 27.7 37.9
A1 zero   0.10 0.14 0.40 0.00 0.27 0.69 1.16 2.28
A1 one    0.21 0.61 1.12 1.27 1.60 2.72 3.72 8.62
A1 few    0.50 1.27 2.13 3.05 3.81†1.81 5.49 8.38 15.1
A2 zero   0.81 1.21 2.69 0.01 1.71 3.75 4.53 8.91
A2 one    1.19 2.62 4.70 4.77 6.97 10.2 14.6 25.9
A2 few    1.94 4.80 7.59 9.87 12.6 18.9 25.6 39.7
RI zero   0.00 0.00 0.10 0.00 0.05 0.42 0.89 8.26
RI one    0.03 0.05 0.57 1.18 1.67 3.46 6.62 45.4
RI few    0.11 0.28 2.19 4.18 6.61 11.0 27.3 67.2
RW zero   0.00 0.01 0.01 0.01 0.02 0.03 0.03 0.09
RW one    0.02 0.01 0.01 0.00 0.05 0.07 0.11 0.48
RW few    0.00 0.05 0.00 0.17 0.24 0.30 0.42 0.44
SAT zero  35.6 39.0 45.2 44.1 50.0 49.2 52.7 53.7
SAT one   30.5 41.2 43.1 46.5 55.1 54.3 53.5 59.1
SAT few   30.5 40.4 42.8 40.6 48.4 51.9 53.5 65.2
"""

#: Why a whole row is flagged (beyond single doubtful cells).
ROW_NOTES = {
    ("4D-", "one"): "row alignment uncertain: one text version has a stray extra 0.00 cell",
    ("1DC", "zero"): "sizes below 175B appear in only one text version (unconfirmed)",
    ("1DC", "one"): "sizes below 175B appear in only one text version (unconfirmed)",
    ("1DC", "few"): "sizes below 175B appear in only one text version (unconfirmed)",
}

#: GPT-3's few-shot K per task family (Table H.1, Fig. 3.11).
FEW_SHOT_K = {"arithmetic": 50, "words": 100, "sat": 20}

#: Human reference points quoted with the results.
HUMAN = {"SAT": "college applicants average 57% (chance 20%)"}


def _cell(text: str) -> PaperCell:
    if "†" not in text:
        return PaperCell(float(text))
    value, alt = text.split("†")
    return PaperCell(float(value), True, float(alt) if alt else None)


def _parse(table: str) -> dict[tuple[str, str], tuple[PaperCell, ...]]:
    out = {}
    for line in table.strip().splitlines():
        code, setting, *cells = line.split()
        if len(cells) != len(SIZES):
            raise ValueError(f"Table H.1 row {code} {setting}: {len(cells)} cells, {len(SIZES)} expected")
        out[(code, setting)] = tuple(_cell(c) for c in cells)
    return out


TABLE_H1: dict[tuple[str, str], tuple[PaperCell, ...]] = _parse(_TABLE_H1)


def _code_key(code: str) -> str:
    return code.replace("\u2212", "-")


def paper_row(code: str, setting: str) -> tuple[PaperCell, ...] | None:
    """The eight Table H.1 cells for a paper code (``2D+``, ``2D−``, ``CL``, ``SAT``) and setting."""
    return TABLE_H1.get((_code_key(code), setting))


def land_position(accuracy: float, row: tuple[PaperCell, ...]) -> int:
    """How many of the row's sizes, from 125M up, ``accuracy`` matches or beats without a gap
    (0: below 125M, 8: at least 175B); never decreases as ``accuracy`` grows."""
    return sum(1 for _ in _prefix(row, lambda c: accuracy + 1e-9 >= c.value))


#: ``lands`` when the 95 % interval reaches across more than one GPT-3 cell.
TOO_FEW = "n too small"


def where_it_lands(accuracy: float, row: tuple[PaperCell, ...], ci: tuple[float, float] | None = None) -> str:
    """Place ``accuracy`` among the GPT-3 sizes of one Table H.1 row.

    ``"≥ 1.3B"``: at least as good as GPT-3 at every size from 125M up to 1.3B (and below
    2.7B). ``"< 125M"``: below the smallest model. A zero score is written ``"0, as ≤ 6.7B"``
    when GPT-3 also scored 0 up to that size, so a tie at zero does not read as a win.

    ``ci``: the score's 95 % interval (percent). When its two ends land more than one size
    step apart, the interval reaches past the GPT-3 cells on either side of the verdict (or
    two cells on one side), the data cannot place the model, and the answer is
    :data:`TOO_FEW` (``"n too small"``) instead of a size. Cells of equal value count as one
    (GPT-3's run of zeros is one cell), but the cells the interval holds count too: 0 of 3 on
    5D+ (interval 0-56 %) holds GPT-3's zeros up to 13B *and* 175B's 0.65, so it cannot say
    "0, as ≤ 13B" — whichever check (generation or is-greedy) produced the score.
    """
    if ci is not None:
        lo, hi = ci
        if land_position(hi, row) - land_position(lo, row) >= 2:
            return TOO_FEW
        if len({c.value for c in row if lo - 1e-9 <= c.value <= hi + 1e-9}) >= 2:
            return TOO_FEW
    if accuracy <= 1e-9:
        zeros = [size for size, _ in zip(SIZES, _prefix(row, lambda c: c.value == 0))]
        return f"0, as ≤ {zeros[-1]}" if zeros else f"< {SIZES[0]}"
    passed = land_position(accuracy, row)
    return f"≥ {SIZES[passed - 1]}" if passed else f"< {SIZES[0]}"


def _prefix(row, keep):
    for cell in row:
        if not keep(cell):
            return
        yield cell
