"""The package version, in a module of its own so that every layer can read it without
importing the package root (which offers the public helpers of :mod:`synthprobe.api`)."""

__version__ = "0.1.0"
