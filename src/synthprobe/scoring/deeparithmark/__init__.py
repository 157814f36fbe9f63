"""Deep Arithmark's scoring: what to ask the backend and how to read the answer (``score.py``,
with the ArithMark 3.0 comparison), the per-item records (``records.py``), the metrics
(``metrics.py``: ``summarise``), the results block and printed table (``results.py``) and the
per-step probe (``steps.py``). Found by shared code through :mod:`synthprobe.benchmarks`."""
