"""GPT-3's grammar-correction probe (Brown et al. 2020, §3.9.6, Figure 3.17).

The prompt alternates ``Poor English input: …`` and ``Good English output: …`` lines. The
human-written demonstrations come first; as in Figure 3.17 they then "serve as conditioning for
subsequent examples where GPT-3 receives successive additional prompts and provides the
completions": by default (chained) every new ``Poor English input:`` is appended after the
model's previous completion, so item *n* sees the demonstrations and the model's answers to
items 1..n-1 (the first sample's, when there are several). ``chain=False`` (``--no-chain``)
asks every item on its own (demonstrations + item), so one bad answer cannot leak into the
next prompt; those prompts are decoded in batches.

When items carry a ``reference`` correction, answers are scored with chrF (sacrebleu's
standard implementation; corpus-level and mean sentence-level) and exact match (equal after
collapsing whitespace; case and punctuation count). ``copy_baseline_chrf`` is the corpus chrF
of copying each input unchanged, reported beside the model's chrF.
"""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from synthprobe.backends.decoding import Sampling, generate
from synthprobe.probes.items import GrammarItem
from synthprobe.seeding import derive_seed

TASK = "probe-grammar"
STOP = ("\n",)
INPUT = "Poor English input:"
OUTPUT = "Good English output:"


def _pair(inp: str, out: str) -> list[str]:
    return [f"{INPUT} {inp}", f"{OUTPUT} {out}" if out else OUTPUT]


def build_prompt(demos: list[GrammarItem], item: GrammarItem, history: list[tuple[GrammarItem, str]] = ()) -> str:
    """Demonstrations, then the earlier items with the model's completions (chained prompting),
    then the item's input and ``Good English output:`` for the model to complete."""
    lines = []
    for d in demos:
        lines += _pair(d.input, d.output)
    for g, completion in history:
        lines += _pair(g.input, completion)
    lines += [f"{INPUT} {item.input}", OUTPUT]
    return "\n".join(lines)


def normalise(text: str) -> str:
    return " ".join(text.split())


def exact_match(hyp: str, ref: str) -> bool:
    return normalise(hyp) == normalise(ref)


def score(hyps: list[str], refs: list[str]) -> dict[str, Any]:
    """chrF (corpus and mean sentence) and exact-match rate of ``hyps`` against single references."""
    from sacrebleu.metrics import CHRF

    if not hyps:
        return {"scored": 0}
    chrf = CHRF()
    corpus = chrf.corpus_score(hyps, [refs])
    sentences = [chrf.sentence_score(h, [r]).score for h, r in zip(hyps, refs)]
    em = sum(exact_match(h, r) for h, r in zip(hyps, refs))
    return {
        "scored": len(hyps),
        "chrf": round(corpus.score, 4),
        "chrf_sentence_mean": round(sum(sentences) / len(sentences), 4),
        "exact_match": em,
        "exact_match_rate": round(em / len(hyps), 4),
        "metric": f"chrF via sacrebleu ({chrf.get_signature()})",
        "sentence_chrf": [round(s, 4) for s in sentences],
    }


def copy_baseline(inputs: list[str], refs: list[str]) -> float:
    """Corpus chrF of handing back every input unchanged: the floor a correction must beat
    (poor-English inputs already share most characters with their corrections)."""
    from sacrebleu.metrics import CHRF

    return round(CHRF().corpus_score(list(inputs), [list(refs)]).score, 4)


def time_first(lm, items: list[GrammarItem], sampling: Sampling, *, seed: int, chat=None) -> float:
    """Seconds to answer the first item to be corrected as :func:`run` asks it (the plan's
    calibration: one item, about 1/n of a run)."""
    import time

    demos = [g for g in items if g.output is not None]
    first = next(g for g in items if g.output is None)
    t0 = time.perf_counter()
    generate(lm, [build_prompt(demos, first)], sampling, seeds=[derive_seed(TASK, seed, 0)], stop=STOP, chat=chat)
    return time.perf_counter() - t0


def run(
    lm, items: list[GrammarItem], sampling: Sampling, *, seed: int, chain: bool = True, progress: bool = True, chat=None
) -> dict[str, Any]:
    """Correct every item without an ``output``; ``lm`` is a synthprobe backend.

    Chained (default): one prompt at a time, each after the previous completions. Not chained:
    all prompts in batches. Item ``i`` samples with the seed ``derive_seed(TASK, seed, i)``. With
    ``chat`` (``--chat-template``) each prompt is asked as one user turn.
    """
    demos = [g for g in items if g.output is not None]
    targets = [g for g in items if g.output is None]
    seeds = [derive_seed(TASK, seed, index) for index in range(len(targets))]
    if chain:
        prompts, runs = _chained(lm, demos, targets, sampling, seeds, progress=progress, chat=chat)
    else:
        prompts = [build_prompt(demos, g) for g in targets]
        runs = generate(lm, prompts, sampling, seeds=seeds, stop=STOP, progress=progress, chat=chat)
    results = [
        _row(g, prompt, run_, index if chain else 0)
        for index, (g, prompt, run_) in enumerate(zip(targets, prompts, runs))
    ]
    summary = _summary(results, sampling, chain)
    return {
        "demonstrations": [{"input": d.input, "output": d.output} for d in demos],
        "results": results,
        "summary": summary,
    }


def _chained(
    lm, demos, targets, sampling: Sampling, seeds: list[int], *, progress: bool, chat
) -> tuple[list[str], list]:
    """One prompt at a time, each after the previous items and the model's own corrections."""
    prompts: list[str] = []
    runs = []
    history: list[tuple[GrammarItem, str]] = []
    for index, g in enumerate(tqdm(targets, desc="grammar", unit="item", disable=not progress)):
        prompts.append(build_prompt(demos, g, history))
        (run_,) = generate(lm, [prompts[-1]], sampling, seeds=[seeds[index]], stop=STOP, chat=chat)
        runs.append(run_)
        history.append((g, run_[0].text))
    return prompts, runs


def _row(g: GrammarItem, prompt: str, run_, earlier: int) -> dict[str, Any]:
    """One item's record: its prompt, the samples and (with a reference) their exact matches."""
    gens = [x.text for x in run_]
    row: dict[str, Any] = {
        "input": g.input,
        "line": g.line,
        "prompt": prompt,
        "earlier_answers": earlier,
        "generations": gens,
        "finished": [x.finished for x in run_],
        "reference": g.reference,
    }
    if g.reference is not None:
        row["exact_match"] = [exact_match(x, g.reference) for x in gens]
    return row


def _summary(results: list[dict[str, Any]], sampling: Sampling, chain: bool) -> dict[str, Any]:
    """The run's figures over the items with a reference (the first sample of each), the copy
    baseline, and the generations that changed nothing, were empty or were cut off; each
    scored item gains its sentence chrF."""
    scored = [r for r in results if r["reference"] is not None]
    metrics = score([r["generations"][0] for r in scored], [r["reference"] for r in scored])
    if scored:
        metrics["copy_baseline_chrf"] = copy_baseline([r["input"] for r in scored], [r["reference"] for r in scored])
    if "sentence_chrf" in metrics:
        for r, s in zip(scored, metrics.pop("sentence_chrf")):
            r["chrf"] = s
    return {
        "items": len(results),
        "chained": chain,
        "samples_per_item": sampling.n,
        "with_reference": len(scored),
        "scored_sample": "the first sample of each item" if sampling.n > 1 else "the only sample",
        **metrics,
        "unchanged_inputs": sum(1 for r in results if exact_match(r["generations"][0], r["input"])),
        "empty_generations": sum(1 for r in results for x in r["generations"] if not x),
        "truncated_generations": sum(1 for r in results for f in r["finished"] if not f),
    }
