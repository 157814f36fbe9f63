"""Fine-tune a loaded transformers model to choose one of a few options, and read its choices.

What :mod:`synthprobe.validity` trains: a multiple-choice head made of the model itself. A prompt
lists the options under letters and ends with ``Answer:``; the model's next-token logits of the
letters (`` A``, `` B``, ...) at the prompt's last token are the options' scores, and the loss is
the cross-entropy of those scores against the right letter (a contrastive loss over the options).
One sequence per item, not one per option, so an item costs one forward pass; and the loss only
asks which option is right, so the model cannot lower it by learning which numbers are likely in
general (an LM loss on the right ending would).

Training is LoRA (:mod:`peft`) on the attention and MLP projections of the top ``top_layers``
decoder layers: back-propagation stops there, so a step costs a forward pass plus a fraction of a
backward one (``bench/bench_training.py`` measures it). AdamW, constant learning rate, one pass over
the examples in the order given, with checkpoints at given sizes (the items seen so far). The
adapter is injected into the backend's model for the run and removed after it (the backend scores
as before); same seed, same examples, same machine -> the same adapter, byte for byte
(``adapter_sha256``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from synthprobe.backends.base import ModelLoadError, ScoringError
from synthprobe.backends.hf.common import right_padded


@dataclass(frozen=True)
class TrainSettings:
    """How the choice head is trained (recorded in the results as given)."""

    seed: int = 0
    lr: float = 1e-3
    batch_size: int = 16
    rank: int = 8
    alpha: int = 16
    #: LoRA goes on the top ``top_layers`` decoder layers only (0 or more than the model has: all).
    top_layers: int = 6
    weight_decay: float = 0.0
    #: longer prompts lose their beginning (the options and ``Answer:`` stay).
    max_tokens: int = 512
    #: items per point of the loss curve
    loss_window: int = 64

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Checkpoint:
    """The state of a run after ``size`` examples."""

    size: int
    seconds: float = 0.0
    tokens: int = 0
    #: mean loss over the examples since the previous checkpoint (None at size 0)
    loss: float | None = None
    adapter_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 2),
            "tokens": self.tokens,
            "loss": None if self.loss is None else round(self.loss, 6),
            "adapter_sha256": self.adapter_sha256,
        }


@dataclass
class TrainRun:
    checkpoints: list[Checkpoint] = field(default_factory=list)
    #: ``[items seen, mean loss over the last window]``
    loss_curve: list[list[float]] = field(default_factory=list)
    seconds: float = 0.0
    tokens: int = 0
    #: every training setting as used, defaults included (:meth:`TrainSettings.to_dict`)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def tokens_per_s(self) -> float | None:
        return self.tokens / self.seconds if self.seconds > 0 else None


def choice_token_ids(tokenizer, choices: Sequence[str]) -> list[int]:
    """The token id of each choice letter as it follows ``Answer:`` (`` A``): one token each, distinct."""
    ids = []
    for c in choices:
        toks = tokenizer(" " + c, add_special_tokens=False)["input_ids"]
        bare = tokenizer(c, add_special_tokens=False)["input_ids"]
        if len(toks) == 1:
            ids.append(toks[0])
        elif len(bare) == 1:
            ids.append(bare[0])
        else:
            raise ModelLoadError(
                f"the tokenizer writes the choice {c!r} as more than one token; "
                "a choice head needs one token per choice"
            )
    if len(set(ids)) != len(ids):
        raise ModelLoadError(f"the tokenizer gives two choices the same token: {dict(zip(choices, ids))}")
    return ids


def _encode(backend, prompts: Sequence[str], max_tokens: int) -> list[list[int]]:
    tok = backend.tokenizer
    bos = [backend.bos_token_id] if backend.bos and backend.bos_token_id is not None else []
    out = []
    for p in prompts:
        ids = tok(p, add_special_tokens=False)["input_ids"]
        keep = max_tokens - len(bos)
        out.append(bos + ids[-keep:])
    return out


def _head(model, choice_ids: Sequence[int]) -> torch.Tensor:
    return model.get_output_embeddings().weight[list(choice_ids)]


def _choice_logits(model, batch: Sequence[Sequence[int]], head: torch.Tensor, pad_id: int, device: str) -> torch.Tensor:
    """Right-padded batch -> the choice letters' logits at each sequence's last real token."""
    ids, mask = right_padded(batch, pad_id, device)
    hidden = model.get_decoder()(input_ids=ids, attention_mask=mask).last_hidden_state
    last = torch.tensor([len(s) - 1 for s in batch], device=hidden.device)
    h = hidden[torch.arange(len(batch), device=hidden.device), last]
    return (h @ head.T.to(h.dtype)).float()


def _causal_lm(model):
    """The transformers model under a peft wrapper (or the model itself)."""
    inner = getattr(model, "base_model", None)
    return getattr(inner, "model", model) if inner is not None and hasattr(model, "peft_config") else model


def pick_choices(
    backend,
    prompts: Sequence[str],
    choices: Sequence[str],
    *,
    batch_size: int = 32,
    max_tokens: int = 512,
    progress: Callable[[int], None] | None = None,
) -> list[list[float]]:
    """The choice letters' logits after each prompt (the model as it is now, adapter or not)."""
    choice_ids = choice_token_ids(backend.tokenizer, choices)
    model = backend.model
    lm = _causal_lm(model)
    head = _head(lm, choice_ids)
    encoded = _encode(backend, prompts, max_tokens)
    order = sorted(range(len(encoded)), key=lambda i: (len(encoded[i]), i))
    out: list[list[float] | None] = [None] * len(encoded)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                logits = _choice_logits(lm, [encoded[i] for i in idx], head, backend.pad_token_id, backend.device)
                for i, row in zip(idx, logits.tolist()):
                    out[i] = row
                if progress is not None:
                    progress(len(idx))
    finally:
        model.train(was_training)
    return out  # type: ignore[return-value]


def adapter_sha256(model) -> str:
    """SHA-256 over the adapter's tensors (names sorted, float32 bytes): the identity of a trained adapter."""
    from peft import get_peft_model_state_dict

    state = get_peft_model_state_dict(model)
    h = hashlib.sha256()
    for name in sorted(state):
        h.update(name.encode())
        h.update(state[name].detach().to(torch.float32).contiguous().cpu().numpy().tobytes())
    return h.hexdigest()


def _lora_config(model, settings: TrainSettings):
    from peft import LoraConfig

    n_layers = getattr(model.config, "num_hidden_layers", None)
    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    targets = sorted(names & {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"})
    if not targets:
        raise ModelLoadError(
            "the model has none of the projections LoRA is put on "
            "(q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)"
        )
    layers = None
    if n_layers and 0 < settings.top_layers < n_layers:
        layers = list(range(n_layers - settings.top_layers, n_layers))
    return LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=0.0,
        target_modules=targets,
        layers_to_transform=layers,
        bias="none",
    )


@contextmanager
def adapted(backend, settings: TrainSettings) -> Iterator[Any]:
    """The backend's model with a fresh LoRA adapter (initialised from ``settings.seed``), removed on exit."""
    from peft import get_peft_model

    base = backend.model
    torch.manual_seed(settings.seed)
    with warnings.catch_warnings():  # peft asks transformers a deprecated question; nothing for a user to do
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        peft_model = get_peft_model(base, _lora_config(base, settings))
    backend.model = peft_model
    try:
        yield peft_model
    finally:
        backend.model = peft_model.unload()
        backend.model.eval()


def save_adapter(model, folder: str | Path) -> Path:
    """Write the adapter (peft's ``save_pretrained``) into ``folder`` atomically: a sibling temporary
    folder renamed into place, so an interrupted run leaves no half-written adapter."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        model.save_pretrained(str(tmp))
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def train_choices(
    backend,
    prompts: Sequence[str],
    labels: Sequence[int],
    *,
    choices: Sequence[str],
    checkpoints: Sequence[int],
    settings: TrainSettings = TrainSettings(),
    on_checkpoint: Callable[[Checkpoint], None] | None = None,
    adapter_out: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> TrainRun:
    """Train the choice head on ``prompts`` (in order) and call ``on_checkpoint`` at each size of
    ``checkpoints`` (0 = before any training) with the adapted model in place; the adapter is removed
    when this returns. ``adapter_out``: where the final adapter is saved (atomically)."""
    if len(prompts) != len(labels):
        raise ValueError("prompts and labels differ in length")
    sizes = sorted(set(int(s) for s in checkpoints))
    if sizes and sizes[-1] > len(prompts):
        raise ValueError(f"a checkpoint at {sizes[-1]} examples, but only {len(prompts)} were given")
    if any(not 0 <= int(y) < len(choices) for y in labels):
        raise ValueError(f"a label outside 0..{len(choices) - 1}")
    choice_ids = choice_token_ids(backend.tokenizer, choices)
    encoded = _encode(backend, prompts[: sizes[-1] if sizes else 0], settings.max_tokens)
    run = TrainRun(settings=settings.to_dict())
    with adapted(backend, settings) as model:
        lm = _causal_lm(model)
        head = _head(lm, choice_ids).detach()
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=settings.weight_decay)
        seen, stretch_loss, stretch_n, window, window_loss = 0, 0.0, 0, 0, 0.0
        t_start = time.perf_counter()
        for size in sizes:
            while seen < size:
                stop = min(size, seen + settings.batch_size)
                batch, y = encoded[seen:stop], torch.tensor([int(v) for v in labels[seen:stop]])
                model.train()
                logits = _choice_logits(lm, batch, head, backend.pad_token_id, backend.device)
                loss = torch.nn.functional.cross_entropy(logits, y.to(logits.device))
                if not torch.isfinite(loss):
                    raise ScoringError(f"the training loss is {loss.item()} after {seen} examples; try a smaller --lr")
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
                k = stop - seen
                value = float(loss.item())
                stretch_loss += value * k
                stretch_n += k
                window_loss += value * k
                window += k
                run.tokens += sum(len(s) for s in batch)
                seen = stop
                if window >= settings.loss_window:
                    run.loss_curve.append([seen, round(window_loss / window, 6)])
                    window, window_loss = 0, 0.0
                if progress is not None:
                    progress(k)
            run.seconds = time.perf_counter() - t_start
            model.eval()
            ck = Checkpoint(
                size=size,
                seconds=run.seconds,
                tokens=run.tokens,
                loss=stretch_loss / stretch_n if stretch_n else None,
                adapter_sha256=adapter_sha256(model) if size > 0 else None,
            )
            stretch_loss, stretch_n = 0.0, 0
            run.checkpoints.append(ck)
            if on_checkpoint is not None:
                t_eval = time.perf_counter()
                on_checkpoint(ck)
                t_start += time.perf_counter() - t_eval  # evaluation is not training time
        if window:
            run.loss_curve.append([seen, round(window_loss / window, 6)])
        if adapter_out is not None:
            save_adapter(model, adapter_out)
    return run
