"""The GPT-3 synthetic tasks' scoring: prompts, the backend calls and the run (``score.py``), and
the metrics of one task in one shot setting beside the paper's figures (``metrics.py``). Found
by shared code through :mod:`synthprobe.registry`."""
