"""Import paths that moved, kept working for one release with a DeprecationWarning that names
the new one.

========================================  =============================================
earlier path                              where it lives now
========================================  =============================================
``synthprobe.tasks.deeparithmark.base``   :mod:`synthprobe.plugin` (the family contract)
``synthprobe.tasks.protocols``            :mod:`synthprobe.prompts.protocols`
``synthprobe.tasks.numformat``            :mod:`synthprobe.prompts.numformat`
========================================  =============================================

``synthprobe.tasks`` was a leftover name (it held prompts and number formats, not tasks) and is
gone from the source tree. A finder on ``sys.meta_path`` (installed by ``import synthprobe``)
answers the earlier names: importing one warns once and gives a module whose names are the new
module's own objects, so a family registered through the earlier path is the family the builder
reads. Nothing here imports the new modules until an earlier name is imported, so the layers
stay as they are.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: earlier module -> (module it moved to, what the warning tells the reader to import)
MOVED = {
    "synthprobe.tasks.deeparithmark.base": (
        "synthprobe.benchmarks.deeparithmark.base",
        "synthprobe.plugin instead (from synthprobe.plugin import Problem, Steps, register, require)",
    ),
    "synthprobe.tasks.protocols": ("synthprobe.prompts.protocols", "synthprobe.prompts.protocols instead"),
    "synthprobe.tasks.numformat": ("synthprobe.prompts.numformat", "synthprobe.prompts.numformat instead"),
}

#: the earlier packages above those modules: empty, there only so the modules can be found
PACKAGES = frozenset(p for name in MOVED for p in (name.rsplit(".", k)[0] for k in (1, 2)) if p != "synthprobe")


def message(name: str) -> str:
    return f"{name} is deprecated and will be removed in the next release; import from {MOVED[name][1]}"


class _Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None  # a fresh module, filled below

    def exec_module(self, module: ModuleType) -> None:
        name = module.__name__
        if name in PACKAGES:
            module.__path__ = []
            return
        target = importlib.import_module(MOVED[name][0])
        module.__dict__.update({k: v for k, v in vars(target).items() if not k.startswith("__")})
        if hasattr(target, "__all__"):  # a star import takes what it took from the earlier module
            module.__all__ = list(target.__all__)
        module.__doc__ = f"Deprecated: {message(name)}."
        # stacklevel: the warning names the import in the caller's file, past importlib's frames
        warnings.warn(message(name), DeprecationWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """How far up the stack the first frame outside importlib and this module is."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (
        frame.f_code.co_filename == __file__
        or "importlib" in frame.f_code.co_filename
        or "<frozen" in frame.f_code.co_filename
    ):
        frame, level = frame.f_back, level + 1
    return level


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED or fullname in PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _LOADER, is_package=fullname in PACKAGES)
        return None


_LOADER = _Loader()


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
