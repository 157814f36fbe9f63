"""Files and folders that really cannot be read or written, for the tests of the output and input
rules, whoever runs the suite: CI runs as root, which permission bits do not stop.

* :func:`unwritable_folder` — a folder where no file can be created: ``chmod 0o500`` for an
  ordinary user; for root the folder is made immutable (``chattr +i``, which root obeys too).
* :func:`unreadable_file` — a file with mode 0, read inside :func:`as_nobody` when the suite runs
  as root (the effective user dropped to ``nobody`` for the block, restored after it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = 65534


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def unwritable_folder(path: Path) -> Iterator[Path]:
    """``path`` made, then locked against writes for the block; unlocked after it."""
    path.mkdir(parents=True, exist_ok=True)
    if not is_root():
        path.chmod(0o500)
        try:
            yield path
        finally:
            path.chmod(0o700)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root on a file system without immutable folders (chattr +i)")
    try:
        yield path
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


@contextlib.contextmanager
def as_nobody(*folders: Path) -> Iterator[None]:
    """Run the block as the user ``nobody`` when the suite runs as root (``folders`` made writable
    for it, their parents and the working folder's traversable first: a command reads its default
    files, ``data/…``, from there); a no-op otherwise."""
    if not is_root():
        yield
        return
    for folder in folders:
        folder.chmod(0o777)
    for folder in (*folders, Path.cwd() / "data"):
        for p in folder.parents:
            p.chmod(p.stat().st_mode | 0o011)
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def unreadable_file(path: Path, content: bytes) -> Path:
    """``path`` written with ``content``, then made unreadable (mode 0): read it inside
    :func:`as_nobody` so that root is refused too."""
    path.write_bytes(content)
    path.chmod(0)
    return path
