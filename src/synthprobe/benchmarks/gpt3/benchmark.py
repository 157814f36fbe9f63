"""The GPT-3 synthetic tasks in the benchmark registry (:mod:`synthprobe.registry`). Their own
sub-commands (``build gpt3``/``build <task>``, ``score gpt3``) are their ``commands`` part
(:mod:`synthprobe.benchmarks.gpt3.commands`); what else shared code asks the registry for is
named here too: the metrics (one results row per task and
shot setting, :func:`synthprobe.benchmarks.gpt3.scoring.metrics.summarise`), the report section
(:mod:`synthprobe.benchmarks.gpt3.report`) and the exports (:mod:`synthprobe.benchmarks.gpt3.export`: lm-eval tasks and
results files, Hub model-card scores)."""

from __future__ import annotations

from synthprobe.registry import Benchmark

BENCHMARK = Benchmark(
    name="gpt3",
    title="GPT-3 synthetic tasks",
    metrics="synthprobe.benchmarks.gpt3.scoring.metrics:summarise",
    layout="synthprobe.benchmarks.gpt3.layout",
    report="synthprobe.benchmarks.gpt3.report",
    sweep="synthprobe.benchmarks.gpt3.sweep",
    lm_eval="synthprobe.benchmarks.gpt3.export.lm_eval",
    hub_results="synthprobe.benchmarks.gpt3.export.hub:eval_results",
    tables="synthprobe.benchmarks.gpt3.report.paper_tables:tables",
    viewer="synthprobe.benchmarks.gpt3.report.items:runs",
    lm_eval_reader="synthprobe.benchmarks.gpt3.report.lm_eval",
    outcomes="synthprobe.benchmarks.gpt3.report.outcomes",
    commands="synthprobe.benchmarks.gpt3.commands",
    summary="GPT-3's arithmetic, word-unscrambling and SAT-analogy tasks, zero-, one- and few-shot.",
)
