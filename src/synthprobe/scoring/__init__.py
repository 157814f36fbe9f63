"""``synthprobe score``: a backend on a task, through one runner.

* :mod:`~synthprobe.scoring.runner`: THE batch → cache → resume → Ctrl-C → out-of-memory loop;
* :mod:`~synthprobe.scoring.cache`: per-item records on disk, so interrupted runs resume;
* :mod:`~synthprobe.benchmarks.deeparithmark.scoring.score`: Deep Arithmark and the ArithMark 3.0 comparison
  (what to ask the backend, how to score the answer); :mod:`~synthprobe.scoring.records` its
  per-item records, :mod:`~synthprobe.benchmarks.deeparithmark.scoring.results` its results block and printed table;
* :mod:`~synthprobe.benchmarks.gpt3.scoring.score`: GPT-3's synthetic tasks, zero-/one-/few-shot;
* the commands are each benchmark's own (its registry part ``commands``, e.g.
  :mod:`synthprobe.benchmarks.deeparithmark.commands.score`), :mod:`synthprobe.cli.benchmark` and
  :mod:`synthprobe.cli.cache`.

The model side (tokenisation, the one-pass and per-ending scorers) lives in the engines under
:mod:`synthprobe.backends`; the results document in :mod:`synthprobe.results`.
"""
