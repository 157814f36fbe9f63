"""The corpus: its files, cut into shards, and the scan of one shard.

Formats (a folder argument is walked, in sorted order, for these):

* **plain text** (``.txt``, ``.text``, ``.md``; any other explicitly named file too): one document, read as a
  stream; n-grams run across line breaks. Decoded as UTF-8, a bad byte read as U+FFFD.
  Location: the line where the match begins.
* **JSONL** (``.jsonl``, ``.ndjson``): one JSON object per line, the text in ``--text-field``;
  n-grams stay inside a record. Location: the line.
* **Parquet** (``.parquet``): the text column, read one record batch at a time. Location: the
  row (0-based) in the file.
* **a ``datasets`` folder** (``save_to_disk``; a folder with ``state.json``, or a
  ``DatasetDict`` with ``dataset_dict.json``): its Arrow files memory-mapped, one record batch at
  a time. Location: the row in that Arrow file.

Shards: a text or JSONL file is cut into byte ranges of ``shard_bytes`` (a shard owns the lines
that *start* in its range, and a text shard reads on past its end until it has the 12 tokens a
13-gram starting in its last line needs); a Parquet file into its row groups; an Arrow file is
one shard. A shard's scan reports relative lines and how many lines it owns; the driver turns
them into file lines. The single-machine run and the Ray run scan the same shards with the
same function, so their results are identical by construction (and tested).

Memory bound per scanning process: one piece of at most :data:`PIECE_BYTES` (1 MiB) of text, a
token buffer of at most :data:`BUFFER_TOKENS` tokens, one JSONL record of at most
``max_record_bytes`` (default 16 MiB; a longer record is not parsed: it is skipped, and the
results list it under ``corpus.skipped``), one Parquet / Arrow record batch of at most 1,024
rows of the text column. A text line of any length is read in pieces; a token longer than 256
characters is in no item and is read as a non-item token.
"""

from __future__ import annotations

import bisect
import codecs
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synthprobe.contamination import DEFAULT_MAX_RECORD_BYTES, DEFAULT_SHARD_BYTES
from synthprobe.contamination import ngrams as ng
from synthprobe.errors import InputError
from synthprobe.io.read import loads_json

PIECE_BYTES = 1 << 20
BUFFER_TOKENS = 1 << 16
ROWS_PER_BATCH = 1024
TEXT_EXT = (".txt", ".text", ".md")
JSONL_EXT = (".jsonl", ".ndjson")
PARQUET_EXT = (".parquet",)
FIELD = "--corpus"


@dataclass(frozen=True)
class CorpusFile:
    path: str
    format: str  # "text" | "jsonl" | "parquet" | "arrow"
    bytes: int


@dataclass(frozen=True)
class Shard:
    file: int  # position in the file list
    path: str
    format: str
    start: int  # byte offset (text, jsonl) or row group / 0
    end: int  # byte offset (text, jsonl), else start + 1
    row0: int = 0  # parquet: rows before this row group


def _datasets_arrow_files(folder: Path) -> list[Path]:
    """The Arrow files of a ``save_to_disk`` folder, in the order its ``state.json`` lists them."""
    if (folder / "dataset_dict.json").is_file():
        try:
            splits = loads_json((folder / "dataset_dict.json").read_text("utf-8"))["splits"]
        except (InputError, UnicodeDecodeError, KeyError, TypeError, OSError):
            raise InputError(
                "dataset_dict.json is not a datasets DatasetDict description (no 'splits')", path=folder, field=FIELD
            ) from None
        return [f for s in splits for f in _datasets_arrow_files(folder / str(s))]
    try:
        state = loads_json((folder / "state.json").read_text("utf-8"))
        names = [d["filename"] for d in state["_data_files"]]
    except (InputError, UnicodeDecodeError, KeyError, TypeError, OSError):
        raise InputError(
            "not a datasets folder written by save_to_disk (state.json without '_data_files')", path=folder, field=FIELD
        ) from None
    files = [folder / n for n in names]
    for f in files:
        if not f.is_file():
            raise InputError(f"state.json lists {f.name}, which is missing", path=folder, field=FIELD)
    return files


def _is_datasets_folder(folder: Path) -> bool:
    return (folder / "state.json").is_file() or (folder / "dataset_dict.json").is_file()


def _format_of(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(JSONL_EXT):
        return "jsonl"
    if name.endswith(PARQUET_EXT):
        return "parquet"
    if name.endswith(".arrow"):
        return "arrow"
    return "text"


def discover(paths: list[str | Path]) -> list[CorpusFile]:
    """Every corpus file named or found under a named folder, in a fixed order; bad paths raise."""
    out: list[CorpusFile] = []
    seen: set[str] = set()
    found = [0]

    def add(p: Path, fmt: str) -> None:
        found[0] += 1
        real = os.path.realpath(p)
        if real not in seen:  # a file named twice (or through a link) is scanned once
            seen.add(real)
            out.append(CorpusFile(str(p), fmt, p.stat().st_size))

    def walk(folder: Path) -> None:
        if _is_datasets_folder(folder):
            for f in _datasets_arrow_files(folder):
                add(f, "arrow")
            return
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            p = Path(entry.path)
            if entry.is_dir(follow_symlinks=True):
                walk(p)
            elif entry.is_file() and p.name.lower().endswith(TEXT_EXT + JSONL_EXT + PARQUET_EXT):
                add(p, _format_of(p))

    if not paths:
        raise InputError("expected at least one corpus file or folder", field=FIELD)
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise InputError("does not exist", path=p, field=FIELD)
        if p.is_dir():
            before = found[0]
            walk(p)
            if found[0] == before:
                raise InputError(
                    "holds no corpus file (.txt, .text, .md, .jsonl, .ndjson, .parquet or a datasets "
                    "save_to_disk folder)",
                    path=p,
                    field=FIELD,
                )
        elif p.is_file():
            add(p, _format_of(p))
        else:
            raise InputError("is neither a file nor a folder", path=p, field=FIELD)
    return out


def check_columns(files: list[CorpusFile], text_field: str) -> None:
    """Every Parquet / Arrow file has a string column ``text_field`` (checked before the scan)."""
    import pyarrow as pa

    for f in files:
        if f.format not in ("parquet", "arrow"):
            continue
        try:
            if f.format == "parquet":
                import pyarrow.parquet as pq

                schema = pq.ParquetFile(f.path).schema_arrow
            else:
                with pa.memory_map(f.path) as src:
                    schema = pa.ipc.open_stream(src).schema
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot be read as {f.format} ({str(exc)[:120]})", path=f.path, field=FIELD) from None
        if text_field not in schema.names:
            raise InputError(
                f"has no column {text_field!r} (columns: {', '.join(schema.names[:8])}); "
                "name the text column with --text-field",
                path=f.path,
                field="--text-field",
            )
        typ = schema.field(text_field).type
        if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
            raise InputError(f"column {text_field!r} is {typ}, expected strings", path=f.path, field="--text-field")


def shards(files: list[CorpusFile], shard_bytes: int = DEFAULT_SHARD_BYTES) -> list[Shard]:
    out: list[Shard] = []
    for k, f in enumerate(files):
        if f.format in ("text", "jsonl"):
            start = 0
            while True:
                end = min(start + shard_bytes, f.bytes)
                out.append(Shard(k, f.path, f.format, start, end))
                if end >= f.bytes:
                    break
                start = end
        elif f.format == "parquet":
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(f.path).metadata
            row0 = 0
            for g in range(meta.num_row_groups):
                out.append(Shard(k, f.path, f.format, g, g + 1, row0))
                row0 += meta.row_group(g).num_rows
        else:
            out.append(Shard(k, f.path, f.format, 0, 1))
    return out


# -- the scan of one shard -----------------------------------------------------------------------


def test_name(n: int) -> str:
    return f"ngram{n}"


class _Scanner:
    """Token buffer and first hits of one shard. ``hits[test][(task, item)] = (rel_line, extra)``."""

    def __init__(self, index: ng.Index):
        self.index = index
        self.vocab = index.vocab
        self.max_n = max(index.sizes)
        self.ids: list[int] = []
        # the buffer's lines: tokens from position starts[k] on are on line lines[k]
        self.starts: list[int] = []
        self.lines: list[int] = []
        self.hits: dict[str, dict[tuple[int, int], tuple[int, str | None]]] = {}

    def add_tokens(self, toks: list[str], line: int) -> None:
        if not toks:
            return
        if not self.lines or self.lines[-1] != line:
            self.starts.append(len(self.ids))
            self.lines.append(line)
        # a token that is in no item (an over-long one included: no item token is) gets id 0
        self.ids.extend(map(self.vocab.get, toks, itertools.repeat(0)))
        if len(self.ids) >= BUFFER_TOKENS:
            self.flush(keep=True)

    def line_of(self, pos: int) -> int:
        return self.lines[bisect.bisect_right(self.starts, pos) - 1]

    def boundary(self) -> None:
        """A record ends: no n-gram crosses here."""
        if self.ids and self.ids[-1] != 0:
            self.ids.append(0)

    def add_arith(self, normalised: str, line: int) -> str:
        """Search ``normalised`` for the arithmetic forms; returns it as :func:`ng.arith_text`."""
        problems = self.index.problems
        if not problems:
            return ""
        text = ng.arith_text(normalised)
        found = self.hits.setdefault("arithmetic", {})
        for a, op, b, form in ng.arith_matches(text):
            owners = problems.get((a, op, b))
            if owners:
                shown = f"{a} {OP_FORM[form][op]} {b}" + (" =" if form == "symbol" else "")
                for key in owners:
                    found.setdefault(key, (line, shown))
        return text

    def flush(self, keep: bool = False) -> None:
        if not self.ids:
            return
        ids = np.array(self.ids, dtype=np.int64)
        th = self.index.token_hashes[ids]
        zero = np.concatenate(([0], np.cumsum(ids == 0)))
        for n in self.index.sizes:
            table = self.index.sorted_hashes[n]
            w = len(ids) - n + 1
            if w <= 0 or len(table) == 0:
                continue
            clean = (zero[n : n + w] - zero[0:w]) == 0
            if not clean.any():
                continue
            h = ng.window_hashes(th, n)
            cand = np.nonzero(clean & self.index.filters[n][h >> np.uint64(64 - ng.FILTER_BITS)])[0]
            if len(cand) == 0:
                continue
            pos = np.searchsorted(table, h[cand])
            pos[pos == len(table)] = 0
            cand = cand[table[pos] == h[cand]]
            if len(cand) == 0:
                continue
            found = self.hits.setdefault(test_name(n), {})
            entries = self.index.table[n]
            for j in cand.tolist():
                gram = tuple(self.ids[j : j + n])
                for g, owners in entries.get(int(h[j]), ()):
                    if g == gram:
                        for key in owners:
                            if key not in found:
                                found[key] = (self.line_of(j), None)
        base = max(0, len(self.ids) - (self.max_n - 1)) if keep else len(self.ids)
        k = bisect.bisect_right(self.starts, base) - 1
        self.ids = self.ids[base:]
        if self.ids:
            self.starts = [0] + [s - base for s in self.starts[k + 1 :]]
            self.lines = self.lines[k:]
        else:
            self.starts, self.lines = [], []


OP_FORM = {"symbol": ng.OP_SYMBOL, "word": ng.OP_WORD}


def _text_pieces(fh, decoder, limit: int) -> Iterator[tuple[str, bool]]:
    """One line as ``(text, ends_line)`` pieces of at most ``PIECE_BYTES`` bytes each."""
    while True:
        raw = fh.readline(limit)
        if not raw:
            return
        end = raw.endswith(b"\n")
        yield decoder.decode(raw, final=False), end
        if end:
            return


def _tail_split(text: str) -> tuple[str, str, bool]:
    """``text`` cut before its trailing token characters (which may go on in the next piece);
    the flag says the run was over-long and is dropped (the next piece's leading run with it)."""
    i = len(text)
    while i > 0 and (text[i - 1].isalnum()):
        i -= 1
    if len(text) - i > ng.MAX_TOKEN_CHARS:  # an over-long run: no item token, drop it
        return text[:i] + " \x00 ", "", True
    return text[:i], text[i:], False


def _drop_leading_run(text: str) -> tuple[str, bool]:
    """The rest of an over-long token at the start of a piece, read as a non-item token; the
    flag says the run fills the whole piece (and may go on in the next)."""
    i = 0
    while i < len(text) and text[i].isalnum():
        i += 1
    return ("\x00 " + text[i:] if i else text), i == len(text)


def _with_breaks(body: str) -> list[str]:
    """The tokens of ``body``, a dropped over-long run (marked NUL) as the non-item token ""."""
    out: list[str] = []
    for part in body.split("\x00"):
        out += ng.split(part)
        out.append("")
    return out[:-1]


def _seek_line_start(fh, start: int) -> None:
    """Position ``fh`` at the first line that starts at or after byte ``start``."""
    if start == 0:
        fh.seek(0)
        return
    fh.seek(start - 1)
    while True:
        raw = fh.readline(PIECE_BYTES)
        if not raw or raw.endswith(b"\n"):
            return


def _scan_text(shard: Shard, sc: _Scanner) -> dict:
    """Lines starting in [start, end); then on until the last owned line's n-grams are complete."""
    lines = 0
    with open(shard.path, "rb") as fh:
        _seek_line_start(fh, shard.start)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        carry = ""
        long_run = False
        arith_carry = ""
        rel = 0
        extra_tokens = 0
        while True:
            pos = fh.tell()
            owned = pos < shard.end
            if not owned and (extra_tokens >= sc.max_n - 1):
                break
            got = False
            for text, ends in _text_pieces(fh, decoder, PIECE_BYTES):
                got = True
                text = ng.normalise(text).replace("\x00", " ")
                still_long = False
                if long_run:
                    text, still_long = _drop_leading_run(text)
                text = carry + text
                if ends:
                    body, carry, long_run = text, "", False
                else:
                    body, carry, long_run = _tail_split(text)
                    long_run = long_run or still_long
                toks = _with_breaks(body) if "\x00" in body else ng.split(body)
                sc.add_tokens(toks, rel)
                if not owned:
                    extra_tokens += len(toks)
                a = sc.add_arith(arith_carry + body, rel)
                arith_carry = "" if ends else a[-64:]
            if not got:
                break
            if owned:
                lines += 1
            rel += 1
        if carry:
            sc.add_tokens(ng.split(carry), rel - 1)
    sc.flush()
    return {"lines": lines, "records": lines}


def _skip_line(fh) -> int:
    n = 0
    while True:
        raw = fh.readline(PIECE_BYTES)
        n += len(raw)
        if not raw or raw.endswith(b"\n"):
            return n


def _record_text(obj: Any, text_field: str, path: str, line: int) -> str:
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line)
    value = obj.get(text_field)
    if not isinstance(value, str):
        raise InputError(
            f"expected a string in the text field (--text-field {text_field}), got "
            f"{'nothing' if value is None else type(value).__name__}",
            path=path,
            line=line,
            field=text_field,
        )
    return value


def _add_record(sc: _Scanner, text: str, where: int) -> None:
    norm = ng.normalise(text)
    sc.add_tokens(ng.split(norm), where)
    sc.boundary()
    sc.add_arith(norm, where)


def _scan_jsonl(shard: Shard, sc: _Scanner, text_field: str, max_record: int, skipped: list) -> dict:
    from synthprobe.io.read import loads_json

    lines = 0
    with open(shard.path, "rb") as fh:
        _seek_line_start(fh, shard.start)
        while fh.tell() < shard.end:
            raw = fh.readline(max_record + 1)
            if not raw:
                break
            rel = lines
            lines += 1
            if len(raw) > max_record and not raw.endswith(b"\n"):
                size = len(raw) + _skip_line(fh)
                skipped.append({"rel": rel, "bytes": size, "why": f"record over {max_record:,} bytes"})
                continue
            if not raw.strip():
                continue
            if rel == 0 and shard.start == 0 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not valid UTF-8 (byte {exc.start})", path=shard.path, line=rel) from None
            try:
                obj = loads_json(text, path=shard.path)
            except InputError as exc:
                raise InputError(exc.detail, path=shard.path, line=rel, field=exc.field) from None
            _add_record(sc, _record_text(obj, text_field, shard.path, rel), rel)
    sc.flush()
    return {"lines": lines, "records": lines}


def _scan_batches(batches, sc: _Scanner, text_field: str) -> dict:
    rows = 0
    for batch in batches:
        col = batch.column(batch.schema.get_field_index(text_field))
        for value in col.to_pylist():
            if value is not None:
                _add_record(sc, value, rows)
            rows += 1
    sc.flush()
    return {"lines": rows, "records": rows}


def scan_shard(
    shard: Shard, index: ng.Index, *, text_field: str = "text", max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> dict:
    """Scan one shard. Returns ``{"shard", "lines", "records", "bytes", "hits": {test: [[task,
    item, rel, shown], ...]}, "skipped": [...]}``, ``rel`` counted from the shard's first line
    (text, JSONL) or row group (Parquet), or the row in an Arrow file."""
    try:
        return _scan_shard(shard, index, text_field, max_record_bytes)
    except InputError as exc:  # the driver names the file line (a shard knows only its own)
        return {"error": {"message": exc.detail, "rel": exc.line, "field": exc.field}}


def _scan_shard(shard: Shard, index: ng.Index, text_field: str, max_record_bytes: int) -> dict:
    sc = _Scanner(index)
    skipped: list = []
    if shard.format == "text":
        counts = _scan_text(shard, sc)
        size = shard.end - shard.start
    elif shard.format == "jsonl":
        counts = _scan_jsonl(shard, sc, text_field, max_record_bytes, skipped)
        size = shard.end - shard.start
    elif shard.format == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(shard.path)
        counts = _scan_batches(
            pf.iter_batches(batch_size=ROWS_PER_BATCH, row_groups=[shard.start], columns=[text_field]), sc, text_field
        )
        size = pf.metadata.row_group(shard.start).total_byte_size
    else:
        import pyarrow as pa

        with pa.memory_map(shard.path) as src:
            reader = pa.ipc.open_stream(src)
            counts = _scan_batches((b.select([text_field]) for b in reader), sc, text_field)
        size = os.path.getsize(shard.path)
    hits = {
        test: sorted([t, i, rel, shown] for (t, i), (rel, shown) in found.items())
        for test, found in sorted(sc.hits.items())
    }
    return {"lines": counts["lines"], "records": counts["records"], "bytes": size, "hits": hits, "skipped": skipped}
