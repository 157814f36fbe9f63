"""The report's one reader: results files → :class:`~synthprobe.report.model.ModelResult` rows
(Deep Arithmark) and :class:`~synthprobe.report.model.Gpt3Result` (GPT-3 synthetic tasks).

The envelope (any layout, old files converted on read) is read and checked by
:func:`synthprobe.results.read_results`; each benchmark's section reads its own blocks
(:mod:`synthprobe.benchmarks.deeparithmark.report.read`, :mod:`synthprobe.benchmarks.gpt3.report.read`). Every value
used is type-checked; a missing or wrong field is an :class:`InputError` naming the file and
the field's path inside it (``models[1].results.deeparithmark.summary.by_depth.3.correct``),
a JSON syntax error names the line. The report, the docs and the exports read through here;
an lm-evaluation-harness output folder is first converted into the same document
(:mod:`synthprobe.report.lm_eval`).
"""

from __future__ import annotations

from pathlib import Path

from synthprobe.report.extras import leaderboard
from synthprobe.report.model import Count, Gpt3Result, MistakeCount, ModelResult
from synthprobe.results import BENCHMARKS, Results, read_results


def parse(results: Results) -> tuple[list[ModelResult], list[Gpt3Result]]:
    """Every model's rows of one read results file, per benchmark."""
    for e in results.models:
        if not any(k in e.results for k in ("deeparithmark", "gpt3", "number_format", "steps")) and not set(
            e.results
        ) - set(BENCHMARKS):  # a registered benchmark's block has its own section
            raise results.reader.fail(
                f"{e.at('results')}.deeparithmark",
                "missing; expected a Deep Arithmark, a GPT-3, a number-format or a per-step probe results block",
            )
    return leaderboard("deeparithmark", "read").parse(results), leaderboard("gpt3", "read").parse(results)


def read_document(path: str | Path) -> Results:
    """One input of the report as the results document: a results file of any layout, or an
    lm-evaluation-harness output folder (or one of its ``results_<time>.json``), converted by
    :func:`synthprobe.report.lm_eval.read_folder`."""
    from synthprobe.errors import InputError
    from synthprobe.report import lm_eval

    if lm_eval.is_lm_eval(path):
        return lm_eval.read_folder(path)
    try:
        return read_results(path)
    except InputError:
        if lm_eval.is_lm_eval_results(path):  # lm-eval's results file under another name
            raise InputError(
                "this is an lm-evaluation-harness results file, not a synthprobe results file; "
                "pass its folder (the one lm_eval --output_path wrote, with its samples_*.jsonl)",
                path=path,
            ) from None
        raise


def load_any(path: str | Path) -> tuple[list[ModelResult], list[Gpt3Result]]:
    """A results file of any layout (or an lm-eval folder): its Deep Arithmark rows and its GPT-3 results."""
    return parse(read_document(path))


def _load(path: str | Path, which: int, what: str, command: str):
    """The Deep Arithmark (``which`` 0) or GPT-3 (1) results of one file; at least one."""
    results = read_document(path)
    found = parse(results)[which]
    if not found:
        raise results.reader.fail(
            "models", f"holds no {what} results; expected a file written by `synthprobe score {command}`"
        )
    return found


def load_results(path: str | Path) -> list[ModelResult]:
    """All Deep Arithmark model rows of one results file (at least one)."""
    return _load(path, 0, "Deep Arithmark", "deeparithmark")


def load_gpt3(path: str | Path) -> list[Gpt3Result]:
    """All GPT-3 synthetic-task results of one results file (at least one)."""
    return _load(path, 1, "GPT-3", "gpt3")


__all__ = [
    "read_document",
    "load_any",
    "load_gpt3",
    "load_results",
    "parse",
    "Count",
    "Gpt3Result",
    "MistakeCount",
    "ModelResult",
]
