"""The transformers backend and :func:`load_backend`.

``load_backend(spec)`` accepts an alias (``smollm2-135m-instruct``, the embedded default), a
local ``.gguf`` file, a local model folder or a hub id (see :mod:`synthprobe.backends.spec`).
GGUF files are dequantised once into ``$SYNTHPROBE_CACHE/models/<sha256>`` (see
:mod:`synthprobe.backends.hf.gguf`); later loads read the cached safetensors in seconds.

Defaults: ``device="auto"`` picks CUDA when present, else CPU; ``dtype=None`` means bfloat16
on CUDA and float32 on CPU. Remote modelling code runs only with ``trust_remote_code=True``.
Any failure to load raises :class:`~synthprobe.backends.base.ModelLoadError` with a message
that says what to do; nothing is skipped silently.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from synthprobe.backends import bos as bos_rules
from synthprobe.backends.base import (
    ChoiceCallback,
    ChoiceRun,
    EndingScore,
    ItemCallback,
    ModelLoadError,
    TokenizerBackend,
)
from synthprobe.backends.spec import ModelSpec, resolve_spec
from synthprobe.errors import InputError

DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
    "half": "float16",
}
DEVICES = ("auto", "cpu", "cuda")
#: what this engine can do (:func:`synthprobe.backends.engine_can`); ``train``: :mod:`.train`,
#: ``embed``: :mod:`.embed`
CAN = frozenset({"loglikelihood", "generate", "sample", "train", "first_token", "embed"})

#: weights of this many bytes or more are collected at once when a backend closes
COLLECT_FROM_BYTES = 256 * 2**20

# Config keys that do not change what a model computes (paths, versions, load-time choices).
_VOLATILE_CONFIG_KEYS = {
    "_name_or_path",
    "transformers_version",
    "dtype",
    "torch_dtype",
    "_commit_hash",
    "quantization_config",
    "_attn_implementation_autoset",
    "attn_implementation",
    "_attn_implementation",
    "use_cache",
}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def resolve_device(device: str) -> str:
    import torch

    if device not in DEVICES and not device.startswith("cuda:"):
        raise InputError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)}", field="--device")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(
            f"--device {device} was asked for, but this machine has no usable CUDA device; use --device cpu or auto",
            field="--device",
        )
    return device


def resolve_dtype(dtype: str | None, device: str) -> str:
    if dtype is None or dtype == "auto":
        return "bfloat16" if device.startswith("cuda") else "float32"
    key = str(dtype).lower().replace("torch.", "")
    if key not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; expected float32, bfloat16 or float16", field="--dtype")
    return DTYPES[key]


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def config_digest(config) -> str:
    d = {k: v for k, v in config.to_dict().items() if k not in _VOLATILE_CONFIG_KEYS}
    return _sha(d)


def tokenizer_digest(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        text = backend.to_str()
    else:
        text = json.dumps(sorted(tokenizer.get_vocab().items()))
    extra = {"cls": type(tokenizer).__name__, "special": tokenizer.special_tokens_map}
    return hashlib.sha256((text + json.dumps(extra, sort_keys=True, default=str)).encode("utf-8")).hexdigest()


def _weights_identity(spec: ModelSpec, config) -> Any:
    from synthprobe.backends.hf.gguf import file_digest

    if spec.kind == "gguf":
        return {"gguf_sha256": file_digest(spec.gguf_path)}
    if spec.kind == "hub":
        # A hub commit pins every file of the repository.
        return {"hub": spec.location, "revision": getattr(config, "_commit_hash", None)}
    files = sorted(p for p in Path(spec.location).iterdir() if p.name.endswith(_WEIGHT_SUFFIXES))
    return {p.name: file_digest(p) for p in files}


def model_fingerprint(spec: ModelSpec, config, tokenizer, checkpoint: dict[str, Any], engine: str | None = None) -> str:
    """A model's identity in the score cache: its weights (file digests, or a hub commit), config,
    tokenizer and adapter, and the ``engine`` where its scores round differently from torch's
    (vLLM). Read from the files and the tokenizer alone, so a model's entries can be found before
    its weights load (:func:`identify`)."""
    return _sha(
        {
            **({"engine": engine} if engine else {}),
            "weights": _weights_identity(spec, config),
            "config": config_digest(config),
            "tokenizer": tokenizer_digest(tokenizer),
            **({"adapter": checkpoint["adapter"]["files"]} if checkpoint.get("adapter") else {}),
        }
    )


def _max_positions(config) -> int | None:
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx"):
        v = getattr(config, key, None)
        if isinstance(v, int) and v > 0:
            return v
    text = getattr(config, "text_config", None)
    return _max_positions(text) if text is not None else None


class HFBackend(TokenizerBackend):
    """A loaded transformers causal LM plus its tokenizer (see :class:`synthprobe.backends.base.Backend`);
    chat rendering and token counts come from :class:`~synthprobe.backends.base.TokenizerBackend`."""

    def __init__(
        self,
        model,
        tokenizer,
        *,
        spec: ModelSpec,
        name: str,
        dtype: str,
        device: str,
        bos: bool | None = None,
        fingerprint: str | None = None,
        n_params: int | None = None,
        checkpoint: dict[str, Any] | None = None,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.spec = spec
        self.name = name
        self.dtype = dtype
        self.device = device
        #: what the model was trained with (:mod:`synthprobe.backends.bos`); ``bos``: the setting used
        self.bos_need, self.bos = bos_rules.decide(bos, getattr(model.config, "model_type", None), tokenizer)
        self.n_params = n_params if n_params is not None else sum(p.numel() for p in model.parameters())
        self.max_positions = _max_positions(model.config)
        self.max_length = self.max_positions
        #: ``revision``, ``tokenizer`` and ``adapter`` as loaded (only those given): part of the identity.
        self.checkpoint = dict(checkpoint or {})
        self.fingerprint = fingerprint or model_fingerprint(spec, model.config, tokenizer, self.checkpoint)
        #: Filled in by the scoring engine the first time it checks the one-pass layout.
        self.capabilities: dict[str, Any] = {}
        if self.bos and self.bos_token_id is None:
            raise ModelLoadError(f"--bos was given, but the tokenizer of {name} defines no BOS token")

    @property
    def bos_token_id(self) -> int | None:
        return getattr(self.tokenizer, "bos_token_id", None)

    @property
    def pad_token_id(self) -> int:
        for tid in (getattr(self.tokenizer, "pad_token_id", None), getattr(self.tokenizer, "eos_token_id", None)):
            if isinstance(tid, int):
                return tid
        return 0

    # -- scoring -------------------------------------------------------------------------
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
        """Encode (the protocol, left-truncation) and score every ending of every item; see
        :func:`synthprobe.backends.hf.loglik.run_encoded`."""
        import time

        from synthprobe.backends.hf.encode import encode_items
        from synthprobe.backends.hf.loglik import run_encoded

        t0 = time.perf_counter()
        encoded = encode_items(
            self.tokenizer,
            items,
            max_context=max_context,
            bos_id=self.bos_token_id if self.bos else None,
            source=source,
        )
        tokenize_s = time.perf_counter() - t0
        each = None if on_item is None else (lambda k, scores: on_item(k, scores, encoded[k].truncated))
        run = run_encoded(
            self,
            encoded,
            batch_size=batch_size,
            scorer=scorer,
            progress=progress,
            on_item=each,
            desc=desc,
            tokenize_s=tokenize_s,
            max_context=max_context,
        )
        return ChoiceRun(
            scores=run.scores,
            truncated=[e.truncated for e in run.encoded],
            scorer_used=run.scorer_used,
            fallback_reason=run.fallback_reason,
            timing=run.timing(),
        )

    def score_choices(
        self,
        items: Sequence[Any],
        *,
        batch_size: int = 32,
        max_context: int = 1024,
        scorer: str = "onepass",
        progress: bool = True,
        on_item: ItemCallback | None = None,
        source: str | None = None,
    ) -> list[list[EndingScore]]:
        """Score every ending of every item; see :func:`synthprobe.backends.hf.loglik.score_items`."""
        from synthprobe.backends.hf.loglik import score_items

        return score_items(
            self,
            items,
            batch_size=batch_size,
            max_context=max_context,
            scorer=scorer,
            progress=progress,
            on_item=on_item,
            source=source,
        ).scores

    def runtime(self) -> dict[str, Any]:
        import torch
        import transformers

        return {
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "torch_threads": torch.get_num_threads(),
        }

    def loglikelihood(
        self, pairs: Iterable[tuple[str, str]], *, batch_size: int = 32, max_context: int = 1024, progress: bool = False
    ) -> list[EndingScore]:
        """``log P(continuation | context)`` per pair, tokenised separately as in :meth:`score_choices`.

        An empty context is replaced by the BOS token (else EOS), as lm-eval does.
        """
        from synthprobe.backends.hf.loglik import score_pairs

        return score_pairs(self, list(pairs), batch_size=batch_size, max_context=max_context, progress=progress)

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
    ) -> list[str] | list[Any]:
        """Greedy continuations of ``prompts`` (cut at ``stop``), after a BOS token when the
        backend was loaded with ``bos=True`` (``--bos``), as in scoring. ``details`` and
        ``skip_leading_whitespace``: see :func:`synthprobe.backends.hf.generate.greedy_generate`."""
        from synthprobe.backends.hf.generate import greedy_generate

        return greedy_generate(
            self.model,
            self.tokenizer,
            list(prompts),
            max_new_tokens=max_new_tokens,
            stop=stop,
            batch_size=batch_size,
            progress=progress,
            bos_id=self.bos_token_id if self.bos else None,
            details=details,
            skip_leading_whitespace=skip_leading_whitespace,
        )

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
    ) -> list[Any]:
        """The first generated token's distribution and the greedy answer that follows, after a
        BOS token with ``--bos``; see :func:`synthprobe.backends.hf.generate.greedy_first_token`
        (exact log-probabilities over the whole vocabulary: ``top_k`` bounds only ``top``)."""
        from synthprobe.backends.hf.generate import greedy_first_token

        return greedy_first_token(
            self.model,
            self.tokenizer,
            list(prompts),
            candidates,
            max_new_tokens=max_new_tokens,
            stop=stop,
            top_k=top_k,
            batch_size=batch_size,
            progress=progress,
            bos_id=self.bos_token_id if self.bos else None,
        )

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
    ) -> list[list[Any]]:
        """``n`` seeded samples per prompt (one seed per prompt), after a BOS token with ``--bos``;
        see :func:`synthprobe.backends.hf.generate.sample_generate`."""
        from synthprobe.backends.hf.generate import sample_generate

        return sample_generate(
            self.model,
            self.tokenizer,
            list(prompts),
            n=n,
            temperature=temperature,
            seeds=seeds,
            max_new_tokens=max_new_tokens,
            top_p=top_p,
            stop=stop,
            batch_size=batch_size,
            progress=progress,
            bos_id=self.bos_token_id if self.bos else None,
            skip_leading_whitespace=skip_leading_whitespace,
        )

    def pick_choices(
        self,
        prompts: Sequence[str],
        choices: Sequence[str],
        *,
        batch_size: int = 32,
        max_tokens: int = 512,
        progress=None,
    ) -> list[list[float]]:
        """The logits of the choice letters after each prompt; see :mod:`synthprobe.backends.hf.train`."""
        from synthprobe.backends.hf.train import pick_choices

        return pick_choices(self, prompts, choices, batch_size=batch_size, max_tokens=max_tokens, progress=progress)

    def embed(self, texts: Sequence[str], *, batch_size: int = 128, progress=None):
        """Frozen embeddings of ``texts`` (a float32 array, one row per text); see
        :mod:`synthprobe.backends.hf.embed`."""
        from synthprobe.backends.hf.embed import embed_texts

        return embed_texts(self, texts, batch_size=batch_size, progress=progress)

    def train_choices(
        self,
        prompts: Sequence[str],
        labels: Sequence[int],
        *,
        choices: Sequence[str],
        checkpoints: Sequence[int],
        settings: dict[str, Any] | None = None,
        on_checkpoint=None,
        adapter_out=None,
        progress=None,
    ):
        """Fine-tune a LoRA choice head on ``prompts``; see :func:`synthprobe.backends.hf.train.train_choices`.
        ``settings``: fields of :class:`~synthprobe.backends.hf.train.TrainSettings`."""
        from synthprobe.backends.hf.train import TrainSettings, train_choices

        return train_choices(
            self,
            prompts,
            labels,
            choices=choices,
            checkpoints=checkpoints,
            settings=TrainSettings(**(settings or {})),
            on_checkpoint=on_checkpoint,
            adapter_out=adapter_out,
            progress=progress,
        )

    def describe(self) -> dict[str, Any]:
        import torch
        import transformers

        return {
            "spec": self.spec.spec,
            "name": self.name,
            "source": self.spec.kind,
            "params": self.n_params,
            "fingerprint": self.fingerprint,
            "dtype": self.dtype,
            "device": self.device,
            "bos": self.bos,
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            "max_positions": self.max_positions,
            "tokenizer_class": type(self.tokenizer).__name__,
            "special_tokens": special_tokens(self.tokenizer),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            **self.checkpoint,
        }

    def close(self) -> None:
        """Drop the weights (and cached CUDA memory) before the next model is loaded.

        A full garbage collection (whatever reference cycles hold on to the weights) runs on CUDA
        and for weights of :data:`COLLECT_FROM_BYTES` or more: with torch loaded it takes about
        half a second, more than freeing a small model early is worth."""
        import gc

        import torch

        weights = self.n_params * torch.finfo(getattr(torch, self.dtype)).bits // 8
        self.model = None
        on_cuda = torch.cuda.is_available()
        if on_cuda or weights >= COLLECT_FROM_BYTES:
            gc.collect()
        if on_cuda:
            torch.cuda.empty_cache()


def check_checkpoint(resolved: ModelSpec, *, revision: Any = None, tokenizer: Any = None, adapter: Any = None) -> None:
    """The checkpoint options (``--model-arg revision=``, ``tokenizer=``, ``adapter=``) against
    the resolved spec, before anything loads. Shared by the hf and vllm engines."""
    from synthprobe.backends.spec import has_tokenizer

    for key, value in (("revision", revision), ("tokenizer", tokenizer), ("adapter", adapter)):
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InputError(f"{key}= expects a non-empty text, got {value!r}", field="--model-arg")
    if revision is not None and resolved.kind != "hub":
        raise InputError(
            f"revision={revision} names a commit, branch or tag of a hub repository, but "
            f"{resolved.spec!r} is a local {'GGUF file' if resolved.kind == 'gguf' else 'folder'}",
            field="--model-arg",
        )
    if resolved.kind == "hub":
        _check_offline_hub_id(resolved, revision)
    if resolved.kind == "folder" and tokenizer is None and not has_tokenizer(resolved.location):
        raise InputError(
            f"model folder {resolved.spec!r} holds no tokenizer files (tokenizer.json, "
            "tokenizer_config.json, tokenizer.model or vocab.json), as a training run's output "
            "folder often does; pass the tokenizer it was trained with: --model-arg "
            "tokenizer=PATH_OR_ID (a folder or hub id)",
            field="--model",
        )
    if tokenizer is not None:
        tok = Path(tokenizer).expanduser()
        if tok.exists() and not (tok.is_dir() and has_tokenizer(tok)):
            raise InputError(
                f"tokenizer={tokenizer} holds no tokenizer files (tokenizer.json, "
                "tokenizer_config.json, tokenizer.model or vocab.json)",
                field="--model-arg",
            )
        if not tok.exists() and (tokenizer.startswith((".", "/", "~")) or tokenizer.count("/") > 1):
            raise InputError(f"tokenizer={tokenizer}: no such folder", field="--model-arg")
    if adapter is not None:
        folder = Path(adapter).expanduser()
        if not folder.is_dir():
            raise InputError(
                f"adapter={adapter}: no such folder (a PEFT adapter folder holds adapter_config.json)",
                field="--model-arg",
            )
        if not (folder / "adapter_config.json").is_file():
            raise InputError(
                f"adapter={adapter} holds no adapter_config.json; expected a folder written by "
                "a PEFT model's save_pretrained",
                field="--model-arg",
            )
        if importlib.util.find_spec("peft") is None:
            raise InputError(
                "adapter= needs the peft library, which is not installed; run: pip install "
                "'synthprobe[peft]' (or pip install peft)",
                field="--model-arg",
            )


def adapter_identity(adapter: str | None) -> dict[str, Any] | None:
    """What ``adapter=`` adds to a model's identity: the folder and the SHA-256 of its files."""
    if adapter is None:
        return None
    from synthprobe.backends.hf.gguf import file_digest

    folder = Path(adapter).expanduser().resolve()
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith((".json", *_WEIGHT_SUFFIXES)))
    return {"path": str(folder), "files": {p.name: file_digest(p) for p in files}}


def _check_offline_hub_id(resolved: ModelSpec, revision: Any) -> None:
    """A hub id that the offline hub cannot give, refused before anything loads: no local folder
    of that name exists either (``checkpoints/final`` typed before the run that writes it)."""
    from huggingface_hub import constants, try_to_load_from_cache

    if not constants.HF_HUB_OFFLINE or isinstance(
        try_to_load_from_cache(resolved.location, "config.json", revision=revision), str
    ):
        return
    raise ModelLoadError(
        f"could not load model {resolved.spec!r}: {_no_local_folder(resolved)}, and as a hub id it is not in "
        f"the local Hugging Face cache and the hub cannot be reached (HF_HUB_OFFLINE is set); {_HUB_ADVICE}"
    )


def _no_local_folder(resolved: ModelSpec) -> str:
    return f"no local folder of that name exists ({Path(resolved.spec).resolve()})"


def hub_preflight(resolved: ModelSpec, revision: str | None) -> bool:
    """For a hub id: whether to load from the local hub cache only. When the files are not in
    the cache and the hub cannot be reached (``HF_HUB_OFFLINE``, or one quick request fails),
    raise :class:`ModelLoadError` with the advice at once, instead of transformers' retries."""
    if resolved.kind != "hub":
        return False
    from huggingface_hub import constants, try_to_load_from_cache

    cached = try_to_load_from_cache(resolved.location, "config.json", revision=revision)
    cached = isinstance(cached, str)
    if constants.HF_HUB_OFFLINE:
        reachable = False
    else:
        import httpx

        try:
            httpx.head(constants.ENDPOINT, timeout=5.0)
            reachable = True
        except httpx.HTTPError:
            reachable = False
    if reachable:
        return False
    if cached:
        return True
    why = "HF_HUB_OFFLINE is set" if constants.HF_HUB_OFFLINE else f"{constants.ENDPOINT} did not answer"
    raise ModelLoadError(
        f"could not load model {resolved.spec!r}: {_no_local_folder(resolved)}, and as a hub id it is not in "
        f"the local Hugging Face cache and the hub cannot be reached ({why}); {_HUB_ADVICE}"
    )


def special_tokens(tokenizer) -> dict[str, Any]:
    """The tokenizer's special tokens as lm-eval records them beside its results: ``[token, "id"]``
    for pad, EOS and BOS (pad falls back to EOS, as lm-eval sets it), and the EOS id."""

    def pair(token: str | None, tid: int | None) -> list[str] | None:
        return None if token is None else [str(token), str(tid)]

    eos = getattr(tokenizer, "eos_token", None)
    eos_id = getattr(tokenizer, "eos_token_id", None)
    pad = getattr(tokenizer, "pad_token", None)
    pad_id = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        pad, pad_id = eos, eos_id
    return {
        "pad": pair(pad, pad_id),
        "eos": pair(eos, eos_id),
        "bos": pair(getattr(tokenizer, "bos_token", None), getattr(tokenizer, "bos_token_id", None)),
        "eot_token_id": eos_id,
    }


#: What to do about a hub id that is neither cached nor reachable.
_HUB_ADVICE = "download it where the hub is reachable, or pass a local folder or .gguf file"


def _load_error(spec: ModelSpec, exc: BaseException) -> ModelLoadError:
    msg = f"could not load model {spec.spec!r}: {type(exc).__name__}: {exc}"
    text = str(exc)
    if spec.kind == "hub" and (
        os.environ.get("HF_HUB_OFFLINE")
        or "offline" in text.lower()
        or "connection" in text.lower()
        or "cached" in text.lower()
    ):
        msg += (
            " -- it is not in the local Hugging Face cache and the hub cannot be reached (HF_HUB_OFFLINE is "
            f"{os.environ.get('HF_HUB_OFFLINE', 'unset')}); {_HUB_ADVICE}"
        )
    if "trust_remote_code" in text:
        msg += " -- this checkpoint ships its own modelling code; pass --trust-remote-code if you trust it"
    return ModelLoadError(msg)


#: The options :func:`load_backend` takes (``--model-arg`` keys included).
OPTIONS = ("dtype", "device", "trust_remote_code", "bos", "progress", "threads", "revision", "tokenizer", "adapter")


def check(spec: str, *, dtype: str | None = None, device: str = "auto", **options) -> None:
    """Check the spec, options, device and dtype before anything loads (raises :class:`InputError`)."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise InputError(
            f"the hf engine has no option {', '.join(unknown)}; it takes {', '.join(OPTIONS)}", field="--model-arg"
        )
    set_threads_check(options.get("threads"))
    check_checkpoint(
        resolve_spec(spec),
        revision=options.get("revision"),
        tokenizer=options.get("tokenizer"),
        adapter=options.get("adapter"),
    )
    resolve_dtype(dtype, resolve_device(device))


def set_threads_check(threads: int | None) -> None:
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 256):
        raise InputError(f"expected 1..256, got {threads}", field="--threads")


def physical_cores() -> int:
    """Physical CPU cores this process may run on: hyper-threads of one core count once, and a
    cgroup CPU quota (``/sys/fs/cgroup/cpu.max``, as containers set) caps the count.

    Read from Linux's ``/sys/devices/system/cpu/cpuN/topology`` for the CPUs in the process's
    affinity mask; elsewhere, or if that cannot be read, the number of usable CPUs."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
    cores = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            cores.add(((topo / "physical_package_id").read_text().strip(), (topo / "core_id").read_text().strip()))
        except OSError:
            cores = set(cpus)
            break
    n = max(1, len(cores))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max" and int(period) > 0:
            n = min(n, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return n


def set_threads(threads: int | None) -> None:
    """torch's CPU threads: ``threads`` (``--threads``); else at most one per physical core
    (:func:`physical_cores`), since a thread on a hyper-thread sibling only competes for the
    same core and more threads than cores wait on each other. ``None`` never raises a lower
    count the process has already set (``torch.set_num_threads`` before loading)."""
    set_threads_check(threads)
    import torch

    if threads is None:
        threads = min(torch.get_num_threads(), physical_cores())
    if threads != torch.get_num_threads():
        torch.set_num_threads(threads)


def warn_half_on_cpu(dtype_name: str, device: str) -> None:
    """float16 on a CPU: accepted, but say that it is slow and what to use instead."""
    if dtype_name == "float16" and device == "cpu":
        print(
            "synthprobe: warning: --dtype float16 on a CPU runs about 10x slower than float32 (CPUs have no "
            "fast float16 matrix multiply); use --dtype float32 (the CPU default) or bfloat16",
            file=sys.stderr,
        )


def load_checkpoint_parts(
    resolved: ModelSpec,
    location: str,
    *,
    dtype,
    trust_remote_code: bool,
    revision: str | None,
    tokenizer: str | None,
    adapter: str | None,
):
    """The tokenizer and the model (a PEFT adapter merged into it) from ``location``, on the CPU.
    A hub id whose hub cannot be reached fails at once (:func:`hub_preflight`)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    offline = hub_preflight(resolved, revision)
    # named keywords only: no **kwargs that could carry trust_remote_code past the caller's flag
    local_only = bool(offline)
    tok = AutoTokenizer.from_pretrained(
        tokenizer if tokenizer is not None else location,
        trust_remote_code=trust_remote_code,
        revision=revision if tokenizer is None else None,
        local_files_only=local_only if tokenizer is None else False,
    )
    model = AutoModelForCausalLM.from_pretrained(
        location, dtype=dtype, trust_remote_code=trust_remote_code, revision=revision, local_files_only=local_only
    )
    if adapter is not None:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, str(Path(adapter).expanduser())).merge_and_unload()
    return tok, model


def merged_adapter_folder(
    resolved: ModelSpec, location: str, *, adapter: str, revision: str | None = None, tokenizer: str | None = None
) -> str:
    """A model folder holding the base at ``location`` with the PEFT ``adapter`` merged in (and its
    tokenizer), for engines that load a folder (vLLM). Written once into
    ``$SYNTHPROBE_CACHE/models/merged-<key>`` (atomically: a temporary folder renamed) and reused."""
    import shutil
    import tempfile

    from synthprobe.backends.spec import cache_root

    base = location if resolved.kind == "hub" else {p.name: p.stat().st_size for p in Path(location).iterdir()}
    key = _sha(
        {"base": base, "revision": revision, "tokenizer": tokenizer, "adapter": adapter_identity(adapter)["files"]}
    )[:32]
    out = cache_root() / "models" / f"merged-{key}"
    if (out / "config.json").is_file():
        return str(out)
    import torch

    tok, model = load_checkpoint_parts(
        resolved,
        location,
        dtype=torch.float32,
        trust_remote_code=False,
        revision=revision,
        tokenizer=tokenizer,
        adapter=adapter,
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        os.replace(tmp, out)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (out / "config.json").is_file():
            raise
    return str(out)


def checkpoint_record(revision: str | None, tokenizer: str | None, adapter: str | None) -> dict[str, Any]:
    """The results identity of the checkpoint options that were given."""
    out: dict[str, Any] = {}
    if revision is not None:
        out["revision"] = revision
    if tokenizer is not None:
        tok = Path(tokenizer).expanduser()
        out["tokenizer"] = str(tok.resolve()) if tok.exists() else tokenizer
    if adapter is not None:
        out["adapter"] = adapter_identity(adapter)
    return out


def load_backend(
    spec: str,
    *,
    dtype: str | None = None,
    device: str = "auto",
    trust_remote_code: bool = False,
    bos: bool | None = None,
    progress: bool = True,
    threads: int | None = None,
    revision: str | None = None,
    tokenizer: str | None = None,
    adapter: str | None = None,
) -> HFBackend:
    """Resolve ``spec``, load the model and tokenizer, and return a ready :class:`HFBackend`.

    Raises :class:`InputError` for a bad spec, device or dtype (checked before anything loads)
    and :class:`ModelLoadError` when the files cannot be loaded. ``threads``: torch's CPU threads
    (default: one per physical core, see :func:`set_threads`).
    """
    resolved = resolve_spec(spec)
    check_checkpoint(resolved, revision=revision, tokenizer=tokenizer, adapter=adapter)
    device = resolve_device(device)
    dtype_name = resolve_dtype(dtype, device)
    warn_half_on_cpu(dtype_name, device)
    set_threads(threads)

    import torch

    location = resolved.location
    if resolved.kind == "gguf":
        from synthprobe.backends.hf import gguf as gguf_cache

        if not resolved.gguf_path.is_file():
            raise InputError(f"GGUF file {resolved.gguf_path} does not exist", field="--model")
        folder = gguf_cache.convert(resolved.gguf_path, progress=progress)
        location = str(folder)
    from transformers.utils import logging as hf_logging

    bars_were_on = hf_logging.is_progress_bar_enabled()
    if not progress:  # transformers' own "Loading weights" bar obeys --no-progress / --quiet too
        hf_logging.disable_progress_bar()
    try:
        tok, model = load_checkpoint_parts(
            resolved,
            location,
            dtype=getattr(torch, dtype_name),
            trust_remote_code=trust_remote_code,
            revision=revision,
            tokenizer=tokenizer,
            adapter=adapter,
        )
    except ModelLoadError:
        raise
    except Exception as exc:  # transformers/hub raise OSError, ValueError, KeyError, ImportError, ...
        raise _load_error(resolved, exc) from exc
    finally:
        if bars_were_on:
            hf_logging.enable_progress_bar()
    try:
        model.to(device)
    except Exception as exc:
        raise ModelLoadError(f"could not move {spec!r} to {device}: {type(exc).__name__}: {exc}") from exc
    model.eval()
    model.requires_grad_(False)
    return HFBackend(
        model,
        tok,
        spec=resolved,
        name=resolved.display or spec,
        dtype=dtype_name,
        device=device,
        bos=bos,
        checkpoint=checkpoint_record(revision, tokenizer, adapter),
    )


class HFIdentity(TokenizerBackend):
    """A model of this engine as the score cache knows it, with no weights loaded: its name,
    fingerprint, dtype, device, BOS setting and tokenizer (chat templates, token counts). A run of
    several models builds one per later model to count the items its cache already holds before
    the first model's estimate is printed (:mod:`synthprobe.plan`); it scores nothing."""

    def __init__(
        self, *, spec: ModelSpec, name: str, tokenizer, config, dtype: str, device: str, bos, checkpoint, engine=None
    ):
        self.spec, self.name, self.tokenizer, self.dtype, self.device = spec, name, tokenizer, dtype, device
        self.checkpoint = checkpoint
        self.bos_need, self.bos = bos_rules.decide(bos, getattr(config, "model_type", None), tokenizer)
        self.max_positions = self.max_length = _max_positions(config)
        self.fingerprint = model_fingerprint(spec, config, tokenizer, checkpoint, engine)
        self.capabilities: dict[str, Any] = {}


def identify(
    spec: str,
    *,
    dtype: str | None = None,
    device: str = "auto",
    trust_remote_code: bool = False,
    bos: bool | None = None,
    revision: str | None = None,
    tokenizer: str | None = None,
    adapter: str | None = None,
    **_: Any,
) -> HFIdentity | None:
    """The :class:`HFIdentity` of ``spec`` loaded with these options, read from local files only
    (config, tokenizer, weight digests; no weights, nothing downloaded), or None where that cannot
    be done without loading: a GGUF file not yet converted, a hub model not in the local cache."""
    return stand_in(
        spec,
        device=resolve_device(device),
        dtype=dtype,
        trust_remote_code=trust_remote_code,
        bos=bos,
        revision=revision,
        tokenizer=tokenizer,
        adapter=adapter,
    )


def stand_in(
    spec: str,
    *,
    device: str,
    dtype: str | None,
    trust_remote_code: bool,
    bos: bool | None,
    revision: str | None,
    tokenizer: str | None,
    adapter: str | None,
    engine: str | None = None,
) -> HFIdentity | None:
    """:func:`identify` on a resolved ``device``, for an engine that loads a checkpoint as this one
    does (``engine``: its tag in the fingerprint, as its backend writes it)."""
    from transformers import AutoConfig, AutoTokenizer

    resolved = resolve_spec(spec)
    location = resolved.location
    if resolved.kind == "gguf":
        from synthprobe.backends.hf import gguf as gguf_cache

        folder = gguf_cache.cached_folder(resolved.gguf_path) if resolved.gguf_path.is_file() else None
        if folder is None:
            return None
        location = str(folder)
    tok = AutoTokenizer.from_pretrained(
        tokenizer if tokenizer is not None else location,
        trust_remote_code=trust_remote_code,
        revision=revision if tokenizer is None else None,
        local_files_only=True,
    )
    config = AutoConfig.from_pretrained(
        location, trust_remote_code=trust_remote_code, revision=revision, local_files_only=True
    )
    return HFIdentity(
        spec=resolved,
        name=resolved.display or spec,
        tokenizer=tok,
        config=config,
        dtype=resolve_dtype(dtype, device),
        device=device,
        bos=bos,
        checkpoint=checkpoint_record(revision, tokenizer, adapter),
        engine=engine,
    )


def load(spec: str, **options) -> HFBackend:
    """The engine entry point used by :func:`synthprobe.backends.load_backend`: unknown options
    (a misspelt ``--model-arg``) are an :class:`InputError`, not a crash."""
    check(spec, **{k: v for k, v in options.items() if k not in ("dtype", "device")})
    return load_backend(spec, **options)
