"""Scoring causal LMs on multiple-choice items under the ArithMark 3.0 protocol.

* :mod:`~synthprobe.backends.hf.encode`: tokenisation and left-truncation (the protocol);
* :mod:`~synthprobe.backends.hf.reference`: one row per (context, ending), as lm-eval does;
* :mod:`~synthprobe.backends.hf.onepass`: each context once, endings in a tree mask (the default);
* :mod:`~synthprobe.backends.hf.loglik`: picks and checks the scorer for a loaded backend;
* :mod:`~synthprobe.scoring.cache`: per-item records on disk, so interrupted runs resume;
* :mod:`~synthprobe.scoring.records`: per-item records; :mod:`~synthprobe.scoring.results`:
  the results JSON schema and the printed table; :mod:`~synthprobe.scoring.deeparithmark` and
  :mod:`~synthprobe.scoring.cli`: ``synthprobe score deeparithmark``.
"""
