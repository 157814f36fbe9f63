"""The per-step probe's section of the report (``synthprobe probe steps`` results)."""
