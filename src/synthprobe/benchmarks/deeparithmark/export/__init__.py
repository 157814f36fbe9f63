"""Deep Arithmark's exports, owned by Deep Arithmark and named by string in its
:mod:`synthprobe.benchmarks.deeparithmark.benchmark` (parts ``hf``, ``lm_eval``, ``hub_results``):
the release read for export (:mod:`.release`), the Hub dataset folder (:mod:`.hf`), the lm-eval
tasks and results files (:mod:`.lm_eval`) and the Hub model-card scores (:mod:`.hub`). The
generic export modules reach them only through :mod:`synthprobe.registry`."""
