"""``synthprobe probe``: GPT-3's qualitative probes (``novel-words``, ``grammar``) and
number-format sensitivity (``number-format``), the probes app's commands, registered by the
command line (:data:`synthprobe.cli._ROOMS`) and kept beside the probes they run: ``number-format``
spans both built-in benchmarks, which an app above the benchmarks may name. The per-step
arithmetic probe (``steps``) is Deep Arithmark's own command
(:mod:`synthprobe.benchmarks.deeparithmark.commands.probe`).

Exit status: 0 success; 1 a model that fails to load or a failure while scoring (no results file is
written); 2 bad input.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from synthprobe.commandline import (
    NOTHING_WRITTEN,
    add_max_context_argument,
    add_model_args,
    add_overwrite_argument,
    add_probe_model_args,
    add_yes_argument,
    any_int,
    chat_setup,
    int_at_least,
    load_backend_or_exit,
    nonneg_int,
)
from synthprobe.errors import CommandFailed, InputError
from synthprobe.io.read import sha256_file
from synthprobe.io.write import atomic_write_json, atomic_write_text, check_output_dir
from synthprobe.plan import Cell, Plan, Timed, check_plan, later_model, plural


def _items_label(path: str | None, default_name: str) -> tuple[str, str]:
    from synthprobe.io.paths import resource_path

    if path is None:
        return f"synthprobe:resources/{default_name}", sha256_file(resource_path(default_name))
    return str(path), sha256_file(path)


def _sampling(args):
    from synthprobe.backends.decoding import Sampling

    return Sampling(temperature=args.temperature, top_p=args.top_p, n=args.samples, max_new_tokens=args.max_new_tokens)


def _check_out(out: str) -> Path:
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise InputError(
            "exists and is not a folder; --out names the folder for the JSON and HTML reports", path=p, field="--out"
        )
    return p


def _run_probe(args, probe: str, stem: str, load, default_file, run, to_html, time_first, **options) -> dict:
    """Load the items, print the plan (and, for a long items file, an estimate from the first
    item), generate, and write ``<stem>.json`` and ``<stem>.html`` under ``--out``; returns the
    JSON document."""
    from synthprobe.backends.decoding import describe
    from synthprobe.backends.refs import parse_model_ref

    chat = chat_setup(args)
    items = load(args.items)
    ref = parse_model_ref(args.model)  # --model NAME=SPEC names it, as in every model command
    out = _check_out(args.out)
    check_output_dir(
        out,
        [f"{stem}.json", f"{stem}.html"],
        [(args.items, "--items"), (ref.spec, "--model")],
        overwrite=args.overwrite,
    )
    sampling = _sampling(args)
    label, sha = _items_label(args.items, default_file)
    lm = load_backend_or_exit(ref.spec, args, ref=ref)
    asked = sum(1 for it in items if getattr(it, "output", getattr(it, "sentence", None)) is None)
    how = "chained, one item at a time" if options.get("chain", True) else "in batches"

    def first() -> Timed:  # one item, asked as the run asks it; the run asks it again
        return Timed(time_first(lm, items, sampling, seed=args.seed, chat=chat), 1, asked, 0, kept=False)

    check_plan(
        Plan(
            [Cell(probe, asked, first if asked else None)],
            f"{probe} x {plural(asked, 'item')} x {plural(sampling.n, 'sample')} ({how})",
            shorter="a shorter --items file or fewer --samples",
        ),
        yes=args.yes,
    )
    body = run(lm, items, sampling, seed=args.seed, progress=args.progress, chat=chat, **options)
    doc = {
        "probe": probe,
        "model": ref.shown(lm.name),
        "model_spec": ref.spec,
        "backend": describe(lm),
        "chat": chat.identity(lm, fewshot=True),
        "items_file": label,
        "items_sha256": sha,
        "seed": args.seed,
        "sampling": sampling.to_dict(),
        **body,
    }
    atomic_write_json(out / f"{stem}.json", doc)
    atomic_write_text(out / f"{stem}.html", to_html(doc))
    return doc


def _cmd_novel_words(args) -> int:
    from synthprobe.probes import novel_words, report
    from synthprobe.probes.items import NOVEL_WORDS_FILE, load_novel_words

    doc = _run_probe(
        args,
        "novel-words",
        "novel_words",
        load_novel_words,
        NOVEL_WORDS_FILE,
        novel_words.run,
        report.novel_words_html,
        novel_words.time_first,
    )
    s, out = doc["summary"], Path(args.out)
    print(
        f"novel words: {s['words']} words; first sample uses the word in {s['uses_word_first_sample']}; "
        f"distinct-1 {_num(s['distinct_1'])}, distinct-2 {_num(s['distinct_2'])}, "
        f"{s['shared_frame_first_sample']} share a template sentence "
        f"-> {out / 'novel_words.json'}, {out / 'novel_words.html'}"
    )
    return 0


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _cmd_grammar(args) -> int:
    from synthprobe.probes import grammar, report
    from synthprobe.probes.items import GRAMMAR_FILE, load_grammar

    doc = _run_probe(
        args,
        "grammar",
        "grammar",
        load_grammar,
        GRAMMAR_FILE,
        grammar.run,
        report.grammar_html,
        grammar.time_first,
        chain=not args.no_chain,
    )
    s, out = doc["summary"], Path(args.out)
    scored = (
        f"chrF {s['chrf']:.2f} (copy-the-input baseline {s['copy_baseline_chrf']:.2f}), exact match "
        f"{s['exact_match']}/{s['scored']}"
        if s.get("scored")
        else "no references, not scored"
    )
    print(
        f"grammar: {s['items']} items ({'chained' if s['chained'] else 'each on its own'}); {scored} "
        f"-> {out / 'grammar.json'}, {out / 'grammar.html'}"
    )
    return 0


def _add_common(p: argparse.ArgumentParser, *, items_help: str, max_new: int) -> None:
    p.add_argument("--items", default=None, metavar="FILE", help=items_help)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the JSON and HTML reports")
    add_overwrite_argument(p)
    add_probe_model_args(p, chat=True)
    add_yes_argument(p)
    p.add_argument(
        "--samples",
        type=any_int,
        default=1,
        help="generations per prompt, shown side by side (default: %(default)s; more than 1 needs "
        "--temperature above 0)",
    )
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy decoding (default); above 0 = sampling")
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default: %(default)s)")
    p.add_argument(
        "--max-new-tokens",
        type=any_int,
        default=max_new,
        help="longest answer in tokens; the answer ends at its first line break (default: %(default)s; "
        "answers that reach it are marked as truncated)",
    )


def _register_generation_probes(verbs: dict[str, argparse._SubParsersAction]) -> None:
    sub = verbs["probe"]
    p = sub.add_parser(
        "novel-words",
        help="use a made-up word in a sentence after reading its definition (GPT-3 Fig. 3.16)",
        description="GPT-3's novel-word probe. Each line defines a made-up word ('A \"w\" is ...', 'To do a \"w\" "
        "means to ...', 'To \"w\" something is to ...') and asks for an example sentence. The first "
        "word has a human-written sentence; each later definition is appended after the model's "
        "previous answer. Writes novel_words.json and novel_words.html (prompt beside generations, "
        "and whether each sentence uses the new word).",
    )
    _add_common(
        p,
        items_help="JSONL of {word (3+ letters), pos: noun|verb|verb-object, definition[, sentence]}; "
        "the leading "
        "items with a human-written sentence are the worked examples (default: the "
        "shipped set)",
        max_new=40,
    )
    p.set_defaults(func=_cmd_novel_words)

    p = sub.add_parser(
        "grammar",
        help="correct poor English after a few human-written corrections (GPT-3 Fig. 3.17)",
        description="GPT-3's grammar-correction probe: 'Poor English input: ...' / 'Good English output: ...' "
        "human-written demonstrations, then the items. As in GPT-3's Figure 3.17 the prompts are "
        "chained: each new 'Poor English input:' is appended after the model's previous completion "
        "(--no-chain asks every item on its own, after the demonstrations only). Items with a "
        "'reference' are scored with chrF (sacrebleu) and exact match. Writes grammar.json and "
        "grammar.html.",
    )
    _add_common(
        p,
        items_help="JSONL: demonstrations {input, output} first, then {input[, reference]} (default: the shipped set)",
        max_new=48,
    )
    p.add_argument(
        "--no-chain",
        action="store_true",
        help="ask every item on its own (demonstrations + item) instead of after the model's earlier "
        "completions; these prompts are decoded in batches",
    )
    p.set_defaults(func=_cmd_grammar)


NUMBER_FORMAT_DESCRIPTION = """\
Number-format sensitivity (GPT-3's notes: results move with how numbers are written).
Renders the same items with plain digits (12345), comma groups (12,345) and spaced groups
(12 345, an ordinary space), scores the model on each through the one runner (cached,
resumable) and reports, per format against plain, the accuracy difference and the exact
McNemar test of the paired outcomes:

  * Deep Arithmark: a private variant built from --seed/--n, per depth (acc_norm); only
    items with a number of 1,000 or more change, the others keep their plain score;
  * GPT-3 arithmetic: the first --gpt3-n items of each task in --tasks, --shots, exact match
    against the answer written in the same format.

Writes the one results document with a "number_format" block (version 1) for the model;
'synthprobe report FILE --out DIR' renders it as a report page."""

NUMBER_FORMAT_EPILOG = """Example (small, the embedded model):
  synthprobe probe number-format --seed 1 --n 100 --tasks 4D+,5D-,2Dx \\
      --gpt3-n 40 --output nf.json
  synthprobe report nf.json --out nf-report/"""


def cmd_number_format(args: argparse.Namespace) -> int:
    from synthprobe import results as res
    from synthprobe.backends import check_backend
    from synthprobe.backends.refs import NameRegistry, model_refs, named_model
    from synthprobe.benchmarks.gpt3.prompts import parse_shots
    from synthprobe.benchmarks.gpt3.registry import resolve_tasks
    from synthprobe.commandline import load_backend_or_exit, model_backend_options
    from synthprobe.io.paths import slug
    from synthprobe.io.write import atomic_write_text, check_outputs, default_output
    from synthprobe.probes.number_format import ProbeConfig, parse_formats, run, table_lines
    from synthprobe.version import __version__

    tasks = [] if args.tasks.strip().lower() == "none" else resolve_tasks(args.tasks)
    config = ProbeConfig(
        formats=parse_formats(args.formats),
        seed=args.seed,
        n=args.n,
        tasks=tasks,
        gpt3_n=args.gpt3_n,
        shots=args.shots,
        batch_size=args.batch_size,
        max_context=args.max_context,
        progress=args.progress,
        cache=not args.no_cache,
        chat=chat_setup(args),
    ).validate()
    refs = model_refs(args.models)
    name = (refs[0].name or refs[0].spec) if len(refs) == 1 else f"{len(refs)}models"
    output = (
        Path(args.output) if args.output else default_output(Path("benchmarks") / f"number_format_{slug(name)}.json")
    )
    if output.is_dir():
        raise InputError("is a directory; expected the path of the results file", path=output, field="--output")
    check_outputs([(output, "--output")], [(r.spec, "--model") for r in refs], overwrite=args.overwrite)
    for ref in refs:  # every spec checked before the first model loads
        check_backend(ref.spec, **model_backend_options(args, ref))

    names = NameRegistry()
    entries = []
    for ref in refs:
        started = time.perf_counter()
        backend = load_backend_or_exit(ref.spec, args, ref=ref)
        load_seconds = time.perf_counter() - started
        try:
            names.claim(ref, backend.name)
            if ref is refs[0]:  # the plan and its estimate, once, on the first model
                from synthprobe.probes.number_format import run_plan

                plan = run_plan(backend, config, models=len(refs))
                plan.others = [  # each later model's cached items counted as cached
                    later_model(
                        r.name or r.spec, r.spec, model_backend_options(args, r), lambda s: run_plan(s, config).cells
                    )
                    for r in refs[1:]
                ]
                check_plan(plan, yes=args.yes)
            try:
                block = run(backend, config)
            except (InputError, KeyboardInterrupt):
                raise
            except Exception as exc:  # anything mid-run: no results file, one clear line, exit 1
                raise CommandFailed(f"scoring failed: {type(exc).__name__}: {exc}\n{NOTHING_WRITTEN}") from None
            rt = backend.runtime()
            chat = config.chat.identity(backend, fewshot=any(parse_shots(config.shots, t) > 0 for t in config.tasks))
            model = named_model(backend.describe(), ref)
        finally:
            backend.close()
        settings = {
            "formats": list(config.formats),
            "seed": config.seed,
            "n": config.n,
            "tasks": [t.name for t in config.tasks],
            "gpt3_n": config.gpt3_n,
            "shots": config.shots,
            "batch_size": config.batch_size,
            "max_context": config.max_context,
            "scorer": "onepass",
            "synthprobe": __version__,
            "chat": chat,
            **rt,
        }
        entries.append(
            {
                "model": model,
                "settings": settings,
                "results": {"number_format": block},
                "seconds": {"load": round(load_seconds, 2), "total": round(time.perf_counter() - started, 2)},
            }
        )
    doc = res.results_document(command=shlex.join(["synthprobe", *sys.argv[1:]]), models=entries)
    atomic_write_text(output, res.dumps_results(doc))
    for entry in entries:
        if len(entries) > 1:
            print(f"\n{entry['model']['name']}")
        print("\n".join(table_lines(entry["results"]["number_format"])))
    print(f"\nresults: {output}")
    return 0


def _register_number_format(verbs: dict) -> None:
    from synthprobe.commandline import add_overwrite_argument
    from synthprobe.probes.number_format import DEFAULT_GPT3_N, DEFAULT_N, DEFAULT_SEED, DEFAULT_SHOTS

    p = verbs["probe"].add_parser(
        "number-format",
        help="score the same items with plain, comma-grouped and space-grouped numbers; "
        "paired McNemar test per depth and task",
        description=NUMBER_FORMAT_DESCRIPTION,
        epilog=NUMBER_FORMAT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--formats",
        default="comma,space",
        help="formats to compare with plain, comma-separated: comma, space (default: both)",
    )
    p.add_argument(
        "--seed",
        type=nonneg_int,
        default=DEFAULT_SEED,
        help="seed of the Deep Arithmark variant, the GPT-3 draws and the demonstrations (default: %(default)s)",
    )
    p.add_argument(
        "--n",
        type=int_at_least(0),
        default=DEFAULT_N,
        help="Deep Arithmark items (default: %(default)s; 0: no Deep Arithmark part)",
    )
    p.add_argument(
        "--tasks",
        default="arithmetic",
        help="GPT-3 arithmetic tasks, comma-separated names or codes (4D+, 2Dx, ...), "
        "'arithmetic' for all ten (default) or 'none'",
    )
    p.add_argument(
        "--gpt3-n",
        type=int_at_least(0),
        default=DEFAULT_GPT3_N,
        metavar="N",
        help="items per GPT-3 task, the first N of its seeded pool (default: %(default)s)",
    )
    p.add_argument(
        "--shots",
        default=DEFAULT_SHOTS,
        help="GPT-3 shot setting: zero, one, few or a number K (default: %(default)s: the "
        "demonstration shows the format)",
    )
    add_max_context_argument(p, "longest Deep Arithmark prompt plus ending in tokens (default: %(default)s)", least=8)
    p.add_argument(
        "--output",
        default=None,
        help="results JSON (default benchmarks/number_format_<model>.json, or a new timestamped "
        "name beside it if that file exists)",
    )
    add_overwrite_argument(p)
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="do not read or write the score cache (default: finished items are kept, so a stopped run resumes)",
    )
    add_model_args(p, multiple=True, batch_size=16, chat=True)
    add_yes_argument(p)
    p.set_defaults(func=cmd_number_format)


def register(verbs: dict) -> None:
    """Add ``synthprobe probe novel-words``, ``grammar`` and ``number-format``, in that order."""
    _register_generation_probes(verbs)
    _register_number_format(verbs)
