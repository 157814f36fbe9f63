"""The GPT-3 synthetic tasks' exports, owned by GPT-3 and named by string in its
:mod:`synthprobe.benchmarks.gpt3.benchmark` (parts ``lm_eval``, ``hub_results``): the lm-eval tasks
and results files (:mod:`.lm_eval`; their few-shot sampler is
:mod:`synthprobe.export.lm_eval.sampler`, whose path the generated ``synthprobe_fewshot.py`` and
lm-eval's own results name) and the Hub model-card scores (:mod:`.hub`). The generic export
modules reach them only through :mod:`synthprobe.registry`."""
