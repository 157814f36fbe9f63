"""The report's one reader: results files → each section's items.

The envelope (any layout, old files converted on read) is read and checked by
:func:`synthprobe.results.read_results`; each section reads its own blocks (a benchmark's
through its ``report`` part, :mod:`synthprobe.report.sections`). Every value used is
type-checked; a missing or wrong field is an :class:`InputError` naming the file and the
field's path inside it (``models[1].results.deeparithmark.summary.by_depth.3.correct``), a JSON
syntax error names the line. The report, the docs and the exports read through here; an
lm-evaluation-harness output folder is first converted into the same document
(:mod:`synthprobe.report.lm_eval`).
"""

from __future__ import annotations

from pathlib import Path

from synthprobe import registry
from synthprobe.results import Results, known_blocks, read_results


def check(results: Results) -> None:
    """Every model entry holds a block some section shows: a benchmark's, a probe's (a companion
    block alone, such as ArithMark 3.0 without its benchmark, is not enough)."""
    known = known_blocks()
    shown = [name for name, what in known.items() if what]
    for e in results.models:
        if not any(known.get(k, k) for k in e.results):  # a registered benchmark's block has its own section
            words = [known[name] for name in shown]
            raise results.reader.fail(
                f"{e.at('results')}.{registry.DEFAULT}",
                f"missing; expected {', '.join(words[:-1])} or {words[-1]} results block",
            )


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


def rows(path: str | Path, benchmark: str, *, required: bool = True) -> list:
    """What ``benchmark``'s section reads from one results file (or lm-eval folder), as parsed:
    its model rows; with ``required``, at least one."""
    results = read_document(path)
    check(results)
    bench = registry.get(benchmark)
    found = bench.part("report").parse(results)
    if required and not found:
        raise results.reader.fail(
            "models", f"holds no {bench.title} results; expected a file written by `synthprobe score {benchmark}`"
        )
    return found


__all__ = ["check", "read_document", "rows"]
