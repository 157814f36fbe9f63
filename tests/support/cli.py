"""The one way tests run the ``synthprobe`` command line.

* :func:`synthprobe` runs ``python -m synthprobe ARGS`` in a child process, as a user does: the
  environment is the test's at the time of the call (conftest's per-test score cache included)
  plus ``extra_env``, always offline (no hub download can start), the repository's ``src``
  first on ``PYTHONPATH`` so the checkout is what runs.
* :func:`in_process` calls :func:`synthprobe.cli.main` in this process (fast; for the error
  paths a test reads from the exit status and stderr) and returns ``(status, stdout, stderr)``,
  an argparse refusal included (its ``SystemExit`` becomes the status).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def environment(extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: this process's now, offline, the checkout's ``src`` first."""
    path = os.environ.get("PYTHONPATH")
    src = str(ROOT / "src")
    return {
        **os.environ,
        **OFFLINE,
        "PYTHONPATH": src if not path else f"{src}{os.pathsep}{path}",
        **(extra_env or {}),
    }


def synthprobe(
    *args: object,
    cwd: Path | str | None = None,
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 1800,
    module: str | None = "synthprobe",
    python: Path | str = sys.executable,
    check: bool = False,
) -> subprocess.CompletedProcess:
    """Run ``PYTHON -m MODULE ARGS`` (text output captured; ``module=None``: ``PYTHON ARGS``, a
    script such as ``deeparithmark.py`` first; ``python``: another virtualenv's interpreter);
    with ``check``, a non-zero exit fails the test with the end of its stderr."""
    head = [str(python), "-m", module] if module else [str(python)]
    run = subprocess.run(
        [*head, *map(str, args)],
        cwd=cwd,
        env=environment(extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check:
        assert run.returncode == 0, run.stderr[-3000:]
    return run


def in_process(argv: list, main=None, **main_kwargs) -> tuple[int, str, str]:
    """``main(argv, **main_kwargs)`` here (default :func:`synthprobe.cli.main`; ``deeparithmark.py``'s
    is another); (exit status, stdout, stderr)."""
    if main is None:
        from synthprobe.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv], **main_kwargs)
        except SystemExit as exc:  # argparse refuses a flag or its value
            status = exc.code
    return status, out.getvalue(), err.getvalue()
