"""Scoring causal LMs on multiple-choice items under the ArithMark 3.0 protocol.

* :mod:`~synthprobe.scoring.requests`: tokenisation and left-truncation (the protocol);
* :mod:`~synthprobe.scoring.reference`: one row per (context, ending), as lm-eval does;
* :mod:`~synthprobe.scoring.onepass`: each context once, endings in a tree mask (the default);
* :mod:`~synthprobe.scoring.engine`: picks and checks the scorer for a loaded backend;
* :mod:`~synthprobe.scoring.cache`: per-item records on disk, so interrupted runs resume;
* :mod:`~synthprobe.scoring.records`: per-item records; :mod:`~synthprobe.scoring.results`:
  the results JSON schema and the printed table; :mod:`~synthprobe.scoring.run` and
  :mod:`~synthprobe.scoring.cli`: ``synthprobe score deeparithmark``.
"""
