"""lm-evaluation-harness both ways: ``export lm-eval`` writes task YAMLs (:mod:`.tasks`),
``export lm-eval-results`` and ``score ... --output-format lm-eval`` write a results document as
lm-eval's output files (:mod:`.files`); :mod:`.yaml` is the YAML writing they share. What each
benchmark contributes is its own ``lm_eval`` part (see docs/write-a-benchmark.md).

``demo_sampler`` is importable from here because the ``synthprobe_fewshot.py`` that ``export
lm-eval`` writes beside the GPT-3 YAMLs imports it from this path (those bytes stay as they
are). It draws as :func:`synthprobe.seeding.draw_demos` does, for any task (:mod:`.sampler`)."""

from synthprobe.export.lm_eval.sampler import demo_sampler

__all__ = ["demo_sampler"]
