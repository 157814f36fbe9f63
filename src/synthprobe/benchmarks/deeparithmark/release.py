"""Where the release file is, in a checkout and in an installed package.

In a checkout the release is ``data/deeparithmark-1.jsonl`` (the card's path). An installed
package has no ``data/`` folder, so when a command is left at its default data path and that
file is not there, :func:`locate_release` renders the release once into
``$SYNTHPROBE_CACHE/data/deeparithmark-1.jsonl`` (a fraction of a second) and checks it against
the pinned SHA-256 before anything reads it. A path the user names explicitly is never
replaced: a missing one stays an error.
"""

from __future__ import annotations

import sys
from pathlib import Path

from synthprobe.benchmarks.deeparithmark.composition import RELEASE_FILE, RELEASE_SEED, RELEASE_SIZE
from synthprobe.errors import InputError

#: SHA-256 of the release bytes, as the card's audit line states.
RELEASE_SHA256 = "6bc14eb787488885b66824d37252c01bb8c0cc9a2e028398d2b2bd192b2b3f83"


def cached_release() -> Path:
    """The release in the cache, rendered (and checked) the first time it is asked for."""
    import hashlib

    from synthprobe.backends.spec import cache_root
    from synthprobe.io.read import sha256_file
    from synthprobe.io.write import atomic_write_bytes

    path = cache_root() / "data" / RELEASE_FILE.name
    if path.is_file() and sha256_file(path) == RELEASE_SHA256:
        return path
    from synthprobe.benchmarks.deeparithmark.build import render_bytes

    data = render_bytes(RELEASE_SEED, RELEASE_SIZE)
    digest = hashlib.sha256(data).hexdigest()
    if digest != RELEASE_SHA256:  # a generator change would silently alter the benchmark
        raise InputError(
            f"the release rendered by this synthprobe has SHA-256 {digest}, not the pinned "
            f"{RELEASE_SHA256}; this installation cannot reproduce Deep Arithmark-1",
            path=path,
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
    except OSError as exc:
        raise InputError(
            f"cannot write the release into the cache ({exc.strerror}); set SYNTHPROBE_CACHE to a "
            "writable folder, or pass --data PATH",
            path=path,
        ) from None
    print(f"synthprobe: rendered the Deep Arithmark-1 release into {path} (SHA-256 checked)", file=sys.stderr)
    return path


def is_default_release(path: str | Path) -> bool:
    """Whether ``path`` is the card's release path (``data/deeparithmark-1.jsonl``, relative)."""
    p = Path(path)
    return not p.is_absolute() and p.parts[-2:] == RELEASE_FILE.parts


def _present(p: Path) -> bool:
    """Whether ``p`` exists; True where it cannot be told (a folder on the way that this user may
    not enter), so the path is kept and reading it gives the located "cannot be read" error."""
    try:
        return p.exists()
    except OSError:
        return True


def locate_release(path: str | Path) -> Path:
    """``path`` itself when it exists or is not the default release path; else the cached release."""
    p = Path(path)
    if _present(p) or not is_default_release(p):
        return p
    return cached_release()


def default_shown(path: str | Path) -> str:
    """What ``--help`` names as a default data path: ``path`` where it exists (a checkout), else
    where :func:`locate_release` renders the release (an installed package)."""
    p = Path(path)
    if _present(p) or not is_default_release(p):
        return str(p)
    from synthprobe.backends.spec import cache_root

    return f"the release, rendered once into {cache_root() / 'data' / RELEASE_FILE.name}"
