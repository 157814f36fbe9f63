"""synthprobe: procedurally generated probe benchmarks for language models.

Build the benchmarks (``synthprobe build``), prove them fair (``selftest``/``audit``)
and score any causal LM on them (``synthprobe score``).
"""

__version__ = "0.1.0"
