"""Pure functions from per-item score records to reported numbers.

:mod:`~synthprobe.metrics.stats`: exact binomial test against chance, Wilson interval,
chi-square homogeneity. :mod:`~synthprobe.benchmarks.deeparithmark.scoring.metrics`: ``summarise(records)`` with the
per-depth / per-template / per-topic breakdowns, rank preference and mistake profile.
"""
