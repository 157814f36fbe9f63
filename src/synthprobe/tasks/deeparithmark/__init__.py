"""Deprecated home of the Deep Arithmark family contract (it moved to
:mod:`synthprobe.benchmarks.deeparithmark`); only :mod:`.base` is kept, for families written
against it. Import from :mod:`synthprobe.plugin` instead."""
