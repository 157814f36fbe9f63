"""Deep Arithmark's scoring: what to ask the backend and how to read the answer (``score.py``,
with the ArithMark 3.0 comparison; its per-item records come from the shared
:mod:`synthprobe.scoring.records`), the metrics
(``metrics.py``: ``summarise``), the results block and printed table (``results.py``) and the
per-step probe (``steps.py``). Found by shared code through :mod:`synthprobe.registry`."""
