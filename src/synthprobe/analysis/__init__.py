"""Pure functions from per-item score records to reported numbers.

:mod:`~synthprobe.analysis.stats`: exact binomial test against chance, Wilson interval,
chi-square homogeneity. :mod:`~synthprobe.analysis.summary`: ``summarise(records)`` with the
per-depth / per-template / per-topic breakdowns, rank preference and mistake profile.
"""
