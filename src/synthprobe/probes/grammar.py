"""GPT-3's grammar-correction probe (Brown et al. 2020, §3.9.6, Figure 3.17).

The prompt alternates ``Poor English input: …`` and ``Good English output: …`` lines for the
human-written demonstrations, then gives the item's input and ends with ``Good English
output:`` for the model to complete. Every item is asked on its own (demonstrations + item),
so one bad answer cannot leak into the next prompt.

When items carry a ``reference`` correction, answers are scored with chrF (sacrebleu's
standard implementation; corpus-level and mean sentence-level) and exact match (equal after
collapsing whitespace; case and punctuation count).
"""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from synthprobe.probes.items import GrammarItem
from synthprobe.probes.lm import LoadedLM, Sampling, sample_generate
from synthprobe.seeding import derive_seed

TASK = "probe-grammar"
STOP = ("\n",)
INPUT = "Poor English input:"
OUTPUT = "Good English output:"


def build_prompt(demos: list[GrammarItem], item: GrammarItem) -> str:
    lines = []
    for d in demos:
        lines += [f"{INPUT} {d.input}", f"{OUTPUT} {d.output}"]
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


def run(lm: LoadedLM, items: list[GrammarItem], sampling: Sampling, *, seed: int,
        progress: bool = True) -> dict[str, Any]:
    demos = [g for g in items if g.output is not None]
    targets = [g for g in items if g.output is None]
    results = []
    for index, g in enumerate(tqdm(targets, desc="grammar", unit="item", disable=not progress)):
        prompt = build_prompt(demos, g)
        gens = sample_generate(lm, prompt, sampling, seed=derive_seed(TASK, seed, index), stop=STOP)
        row: dict[str, Any] = {"input": g.input, "line": g.line, "prompt": prompt, "generations": gens,
                               "reference": g.reference}
        if g.reference is not None:
            row["exact_match"] = [exact_match(x, g.reference) for x in gens]
        results.append(row)
    scored = [r for r in results if r["reference"] is not None]
    metrics = score([r["generations"][0] for r in scored], [r["reference"] for r in scored])
    if "sentence_chrf" in metrics:
        for r, s in zip(scored, metrics.pop("sentence_chrf")):
            r["chrf"] = s
    summary = {
        "items": len(results),
        "samples_per_item": sampling.n,
        "with_reference": len(scored),
        "scored_sample": "the first sample of each item" if sampling.n > 1 else "the only sample",
        **metrics,
        "unchanged_inputs": sum(1 for r in results if exact_match(r["generations"][0], r["input"])),
        "empty_generations": sum(1 for r in results for x in r["generations"] if not x),
    }
    return {
        "demonstrations": [{"input": d.input, "output": d.output} for d in demos],
        "results": results,
        "summary": summary,
    }
