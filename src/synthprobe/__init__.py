"""synthprobe: procedurally generated probe benchmarks for language models.

Build the benchmarks (``synthprobe build``), prove them fair (``selftest``/``audit``)
and score any causal LM on them (``synthprobe score``).

Quick helpers (imported on first use, so ``import synthprobe`` stays light):
``synthprobe.loglik(model, context, continuation)`` and
``synthprobe.generate(model, prompt, max_new_tokens=32, stop=None)``, where ``model`` is a
loaded backend or a model spec string; see :mod:`synthprobe.api`.
"""

from synthprobe import moved as _moved
from synthprobe.version import __version__

_moved.install()  # earlier import paths answer for one release, with a warning (synthprobe.moved)

__all__ = ["__version__"]

_HELPERS = ("loglik", "generate")


def __getattr__(name: str):
    if name in _HELPERS:
        from synthprobe import api as helpers

        return getattr(helpers, name)
    raise AttributeError(f"module 'synthprobe' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_HELPERS))
