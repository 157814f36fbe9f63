"""Deep Arithmark in the benchmark registry (:mod:`synthprobe.benchmarks`). Its build, score and
per-step probe keep their own commands (``build deeparithmark``, ``score deeparithmark``,
``probe steps``); what shared code asks the registry for is named here: the metrics
(:func:`synthprobe.scoring.deeparithmark.metrics.summarise`), the report section
(:mod:`synthprobe.report.deeparithmark`) and the exports (:mod:`synthprobe.export.deeparithmark`:
lm-eval tasks and results files, Hub model-card scores, the Hub dataset folder)."""

from __future__ import annotations

from synthprobe.benchmarks import Benchmark

BENCHMARK = Benchmark(
    name="deeparithmark",
    title="Deep Arithmark",
    metrics="synthprobe.scoring.deeparithmark.metrics:summarise",
    report="synthprobe.report.deeparithmark",
    sweep="synthprobe.sweep.deeparithmark",
    lm_eval="synthprobe.export.deeparithmark.lm_eval",
    hub_results="synthprobe.export.deeparithmark.hub:eval_results",
    hf="synthprobe.export.deeparithmark.hf:export_hf",
    tables="synthprobe.report.deeparithmark.paper_tables:tables",
    viewer="synthprobe.report.deeparithmark.items:runs",
    lm_eval_reader="synthprobe.report.deeparithmark.lm_eval",
    outcomes="synthprobe.report.deeparithmark.outcomes",
    summary="Deep, multi-step arithmetic word problems, 4-way, with named mistakes as decoys.",
)
