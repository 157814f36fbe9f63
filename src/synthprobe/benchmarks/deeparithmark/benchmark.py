"""Deep Arithmark in the benchmark registry (:mod:`synthprobe.registry`). Its own sub-commands
(``build deeparithmark``, ``score deeparithmark``) are its ``commands`` part
(:mod:`synthprobe.benchmarks.deeparithmark.commands`); what else shared code asks the registry
for is named here too: the metrics
(:func:`synthprobe.benchmarks.deeparithmark.scoring.metrics.summarise`), the report section
(:mod:`synthprobe.benchmarks.deeparithmark.report`) and the exports (:mod:`synthprobe.benchmarks.deeparithmark.export`:
lm-eval tasks and results files, Hub model-card scores, the Hub dataset folder)."""

from __future__ import annotations

from synthprobe.registry import Benchmark

BENCHMARK = Benchmark(
    name="deeparithmark",
    title="Deep Arithmark",
    metrics="synthprobe.benchmarks.deeparithmark.scoring.metrics:summarise",
    layout="synthprobe.benchmarks.deeparithmark.layout",
    report="synthprobe.benchmarks.deeparithmark.report",
    sweep="synthprobe.benchmarks.deeparithmark.sweep",
    lm_eval="synthprobe.benchmarks.deeparithmark.export.lm_eval",
    hub_results="synthprobe.benchmarks.deeparithmark.export.hub:eval_results",
    hf="synthprobe.benchmarks.deeparithmark.export.hf:export_hf",
    tables="synthprobe.benchmarks.deeparithmark.report.paper_tables:tables",
    viewer="synthprobe.benchmarks.deeparithmark.twins.report.items:runs",
    lm_eval_reader="synthprobe.benchmarks.deeparithmark.report.lm_eval",
    outcomes="synthprobe.benchmarks.deeparithmark.report.outcomes",
    sections=(
        "synthprobe.benchmarks.deeparithmark.step_probe.report",
        "synthprobe.benchmarks.deeparithmark.report.protocol_effect",
        "synthprobe.benchmarks.deeparithmark.twins.report",
    ),
    commands="synthprobe.benchmarks.deeparithmark.commands",
    summary="Deep, multi-step arithmetic word problems, 4-way, with named mistakes as decoys.",
)
