"""The build record beside a Deep Arithmark file: how ``build deeparithmark`` made it.

``synthprobe build deeparithmark --out FILE`` writes ``FILE.build.json`` beside the file (not for
the release's default build, so the repository's tracked files do not change): the seed, size,
decoy mode and number format it was built with and the file's SHA-256. ``synthprobe build twins
--data FILE`` reads it, so a file's twins need no ``--seed``: twins are drawn from the build
itself, and the record says which build that was. A record whose SHA-256 is not the file's is
refused (the file changed since it was built), as is one of the wrong shape: one
:class:`~synthprobe.errors.InputError` naming the record and its field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.composition import DECOY_MODES, MAX_BUILD_SIZE
from synthprobe.errors import InputError
from synthprobe.prompts.numformat import NUMBER_FORMATS

#: What a build record declares itself as.
RECORD_FORMAT = "synthprobe/deeparithmark-build"
RECORD_VERSION = 1

#: A build record's name: the data file's name plus this.
RECORD_SUFFIX = ".build.json"


def record_path(data: str | Path) -> Path:
    """Where the build record of ``data`` lives: ``<data>.build.json`` beside it."""
    data = Path(data)
    return data.with_name(data.name + RECORD_SUFFIX)


@dataclass(frozen=True)
class BuildRecord:
    """What a build record says: the build's parameters and the file's SHA-256."""

    path: Path  # the record itself
    seed: int
    n: int
    decoys: str
    number_format: str
    sha256: str


def record_doc(data: str | Path, *, seed: int, n: int, decoys: str, number_format: str, sha256: str) -> dict:
    """The JSON document of a build record for the file ``data``."""
    from synthprobe import __version__

    return {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "synthprobe_version": __version__,
        "data": Path(data).name,
        "sha256": sha256,
        "seed": seed,
        "n": n,
        "decoys": decoys,
        "number_format": number_format,
    }


def write_record(data: str | Path, **fields) -> Path:
    """Write the build record of ``data`` atomically (fields: :func:`record_doc`'s); its path."""
    from synthprobe.io.write import atomic_write_json

    path = record_path(data)
    atomic_write_json(path, record_doc(data, **fields))
    return path


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_record(data: str | Path, *, check_digest: bool = True) -> BuildRecord | None:
    """The build record beside ``data``, checked; ``None`` when there is none. Raises
    :class:`InputError` (naming the record and the field) on a record of the wrong shape and,
    with ``check_digest``, when the file's SHA-256 is not the one recorded."""
    from synthprobe.io.read import loads_json, sha256_file

    path = record_path(data)
    if not path.is_file():
        return None
    try:
        doc = loads_json(path.read_text(encoding="utf-8"), path=path)
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason})", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot be read ({exc.strerror})", path=path) from None
    if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT:
        raise InputError(f'expected a JSON object with "format": "{RECORD_FORMAT}"', path=path, field="format")
    if doc.get("version") != RECORD_VERSION:
        raise InputError(f"expected version {RECORD_VERSION}, got {doc.get('version')!r}", path=path, field="version")
    seed, n = doc.get("seed"), doc.get("n")
    if not _whole(seed) or seed < 0:
        raise InputError(f"expected the build's seed, a whole number >= 0, got {seed!r}", path=path, field="seed")
    if not _whole(n) or not 1 <= n <= MAX_BUILD_SIZE:
        raise InputError(
            f"expected the build's number of items, 1 to {MAX_BUILD_SIZE:,}, got {n!r}", path=path, field="n"
        )
    decoys = doc.get("decoys")
    if decoys not in DECOY_MODES:
        raise InputError(f"expected one of {', '.join(DECOY_MODES)}, got {decoys!r}", path=path, field="decoys")
    fmt = doc.get("number_format")
    if fmt not in NUMBER_FORMATS:
        raise InputError(f"expected one of {', '.join(NUMBER_FORMATS)}, got {fmt!r}", path=path, field="number_format")
    digest = doc.get("sha256")
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InputError(
            f"expected the file's SHA-256, 64 lower-case hex digits, got {digest!r}", path=path, field="sha256"
        )
    if check_digest:
        have = sha256_file(data)
        if have != digest:
            raise InputError(
                f"records SHA-256 {digest[:12]}…, but {Path(data).name} has {have[:12]}…: the file changed "
                "since it was built; rebuild it with 'synthprobe build deeparithmark', or remove this "
                "stale record and name the seed with --seed",
                path=path,
                field="sha256",
            )
    return BuildRecord(path=path, seed=seed, n=n, decoys=decoys, number_format=fmt, sha256=digest)
