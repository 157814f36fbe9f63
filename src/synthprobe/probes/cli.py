"""``synthprobe probe novel-words`` and ``synthprobe probe grammar``."""

from __future__ import annotations

import argparse
from pathlib import Path

from synthprobe.cliargs import add_probe_model_args, any_int, chat_setup, load_backend_or_exit
from synthprobe.errors import InputError
from synthprobe.io import (add_overwrite_argument, atomic_write_json, atomic_write_text, check_output_dir,
                           sha256_file)



def _items_label(path: str | None, default_name: str) -> tuple[str, str]:
    from synthprobe.io import resource_path

    if path is None:
        return f"synthprobe:resources/{default_name}", sha256_file(resource_path(default_name))
    return str(path), sha256_file(path)


def _sampling(args):
    from synthprobe.backends.decoding import Sampling

    return Sampling(temperature=args.temperature, top_p=args.top_p, n=args.samples,
                    max_new_tokens=args.max_new_tokens)


def _check_out(out: str) -> Path:
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise InputError("exists and is not a folder; --out names the folder for the JSON and HTML reports",
                         path=p, field="--out")
    return p


def _run_probe(args, probe: str, stem: str, load, default_file, run, to_html, **options) -> dict:
    """Load the items, generate, and write ``<stem>.json`` and ``<stem>.html`` under ``--out``;
    returns the JSON document."""
    from synthprobe.backends.decoding import describe

    from synthprobe.cliargs import parse_model_ref

    chat = chat_setup(args)
    items = load(args.items)
    ref = parse_model_ref(args.model)  # --model NAME=SPEC names it, as in every model command
    out = _check_out(args.out)
    check_output_dir(out, [f"{stem}.json", f"{stem}.html"], [(args.items, "--items"), (ref.spec, "--model")],
                     overwrite=args.overwrite)
    sampling = _sampling(args)
    label, sha = _items_label(args.items, default_file)
    lm = load_backend_or_exit(ref.spec, args, bos=args.bos)
    body = run(lm, items, sampling, seed=args.seed, progress=args.progress, chat=chat, **options)
    doc = {"probe": probe, "model": ref.shown(lm.name), "model_spec": ref.spec, "backend": describe(lm),
           "chat": chat.identity(lm, fewshot=True), "items_file": label, "items_sha256": sha, "seed": args.seed,
           "sampling": sampling.to_dict(), **body}
    atomic_write_json(out / f"{stem}.json", doc)
    atomic_write_text(out / f"{stem}.html", to_html(doc))
    return doc


def _cmd_novel_words(args) -> int:
    from synthprobe.probes import novel_words, report
    from synthprobe.probes.items import NOVEL_WORDS_FILE, load_novel_words

    doc = _run_probe(args, "novel-words", "novel_words", load_novel_words, NOVEL_WORDS_FILE, novel_words.run,
                     report.novel_words_html)
    s, out = doc["summary"], Path(args.out)
    print(f"novel words: {s['words']} words; first sample uses the word in {s['uses_word_first_sample']}; "
          f"distinct-1 {_num(s['distinct_1'])}, distinct-2 {_num(s['distinct_2'])}, "
          f"{s['shared_frame_first_sample']} share a template sentence "
          f"-> {out / 'novel_words.json'}, {out / 'novel_words.html'}")
    return 0


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _cmd_grammar(args) -> int:
    from synthprobe.probes import grammar, report
    from synthprobe.probes.items import GRAMMAR_FILE, load_grammar

    doc = _run_probe(args, "grammar", "grammar", load_grammar, GRAMMAR_FILE, grammar.run, report.grammar_html,
                     chain=not args.no_chain)
    s, out = doc["summary"], Path(args.out)
    scored = (f"chrF {s['chrf']:.2f} (copy-the-input baseline {s['copy_baseline_chrf']:.2f}), exact match {s['exact_match']}/{s['scored']}" if s.get("scored")
              else "no references, not scored")
    print(f"grammar: {s['items']} items ({'chained' if s['chained'] else 'each on its own'}); {scored} "
          f"-> {out / 'grammar.json'}, {out / 'grammar.html'}")
    return 0


def _add_common(p: argparse.ArgumentParser, *, items_help: str, max_new: int) -> None:
    p.add_argument("--items", default=None, metavar="FILE", help=items_help)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the JSON and HTML reports")
    add_overwrite_argument(p)
    add_probe_model_args(p, chat=True)
    p.add_argument("--samples", type=any_int, default=1,
                   help="generations per prompt, shown side by side (default: %(default)s; more than 1 needs "
                        "--temperature above 0)")
    p.add_argument("--temperature", type=float, default=0.0,
                   help="0 = greedy decoding (default); above 0 = sampling")
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass (default: %(default)s)")
    p.add_argument("--max-new-tokens", type=any_int, default=max_new,
                   help="longest answer in tokens; the answer ends at its first line break (default: %(default)s; "
                        "answers that reach it are marked as truncated)")


def register(verbs: dict[str, argparse._SubParsersAction]) -> None:
    sub = verbs["probe"]
    p = sub.add_parser(
        "novel-words", help="use a made-up word in a sentence after reading its definition (GPT-3 Fig. 3.16)",
        description="GPT-3's novel-word probe. Each line defines a made-up word ('A \"w\" is ...', 'To do a \"w\" "
                    "means to ...', 'To \"w\" something is to ...') and asks for an example sentence. The first "
                    "word has a human-written sentence; each later definition is appended after the model's "
                    "previous answer. Writes novel_words.json and novel_words.html (prompt beside generations, "
                    "and whether each sentence uses the new word).")
    _add_common(p, items_help="JSONL of {word (3+ letters), pos: noun|verb|verb-object, definition[, sentence]}; "
                              "the leading "
                              "items with a human-written sentence are the worked examples (default: the "
                              "shipped set)", max_new=40)
    p.set_defaults(func=_cmd_novel_words)

    p = sub.add_parser(
        "grammar", help="correct poor English after a few human-written corrections (GPT-3 Fig. 3.17)",
        description="GPT-3's grammar-correction probe: 'Poor English input: ...' / 'Good English output: ...' "
                    "human-written demonstrations, then the items. As in GPT-3's Figure 3.17 the prompts are "
                    "chained: each new 'Poor English input:' is appended after the model's previous completion "
                    "(--no-chain asks every item on its own, after the demonstrations only). Items with a "
                    "'reference' are scored with chrF (sacrebleu) and exact match. Writes grammar.json and "
                    "grammar.html.")
    _add_common(p, items_help="JSONL: demonstrations {input, output} first, then {input[, reference]} "
                              "(default: the shipped set)", max_new=48)
    p.add_argument("--no-chain", action="store_true",
                   help="ask every item on its own (demonstrations + item) instead of after the model's earlier "
                        "completions; these prompts are decoded in batches")
    p.set_defaults(func=_cmd_grammar)
