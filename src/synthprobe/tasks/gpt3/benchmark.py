"""The GPT-3 synthetic tasks in the benchmark registry (:mod:`synthprobe.benchmarks`). Their
build and score keep their own commands (``build gpt3``/``build <task>``, ``score gpt3``); what
shared code asks the registry for is named here: the metrics (one results row per task and
shot setting, :func:`synthprobe.scoring.gpt3.metrics.summarize`), the report section
(:mod:`synthprobe.report.gpt3`) and the exports (:mod:`synthprobe.export.gpt3`: lm-eval tasks and
results files, Hub model-card scores)."""

from __future__ import annotations

from synthprobe.benchmarks import Benchmark

BENCHMARK = Benchmark(
    name="gpt3",
    title="GPT-3 synthetic tasks",
    metrics="synthprobe.scoring.gpt3.metrics:summarize",
    report="synthprobe.report.gpt3",
    sweep="synthprobe.sweep.gpt3",
    lm_eval="synthprobe.export.gpt3.lm_eval",
    hub_results="synthprobe.export.gpt3.hub:eval_results",
    tables="synthprobe.report.gpt3.paper_tables:tables",
    viewer="synthprobe.report.gpt3.items:runs",
    lm_eval_reader="synthprobe.report.gpt3.lm_eval",
    outcomes="synthprobe.report.gpt3.outcomes",
    summary="GPT-3's arithmetic, word-unscrambling and SAT-analogy tasks, zero-, one- and few-shot.",
)
